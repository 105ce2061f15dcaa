"""Memory and speed of ``sbatchlint diagnose`` on a large generated job log.

    python bench/diagnose.py [--size-mb 2048] [--repeat 1]

Writes a log of ordinary training lines (srun labels, ranks, time stamps, losses, the kind of
line a long run is made of) with a failure near its end into a temporary directory, runs the
command on it in a child process, and prints the child's peak memory (ru_maxrss) and the
throughput, by the wall clock and by the child's CPU time (user + system: what the command
itself costs, which a busy shared machine inflates much less than the wall clock). The log is
deleted afterwards. Targets: peak memory at most 100 MB and at least 150 MB/s of CPU time; exits 1
when one is missed, so it can gate a release but stays out of the test suite (timings are
machine-bound).
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_MB = 100
SPEED_MB_S = 150

FAILURE = (
    "13: [rank13]: Traceback (most recent call last):\n"
    '13: [rank13]:   File "/lustre/proj/train.py", line 301, in forward_step\n'
    "13: [rank13]: KeyError: 'labels'\n"
    "srun: error: gpu-b02: task 13: Exited with exit code 1\n"
    "slurmstepd: error: *** STEP 4242.0 ON gpu-b01 CANCELLED AT 2026-12-01T12:00:09 ***\n"
    "srun: error: gpu-b01: tasks 0-7: Terminated\n"
    "srun: error: gpu-b02: tasks 8-12,14-15: Terminated\n"
)


def block(seed: int, size: int = 1 << 20) -> bytes:
    """About ``size`` bytes of ordinary lines from 16 ranks."""
    rng = random.Random(seed)
    lines = []
    total = 0
    step = seed * 1000
    while total < size:
        rank = rng.randrange(16)
        step += 1
        second = step % 60
        line = (f"{rank}: [2026-12-01 11:{(step // 60) % 60:02d}:{second:02d},{rng.randrange(1000):03d}] [rank{rank}] "
                f"iteration {step:8d}/ 500000 | consumed samples: {step * 512:12d} | elapsed time per iteration (ms): "
                f"{rng.uniform(900, 1100):.1f} | learning rate: {rng.uniform(1e-5, 3e-4):.3E} | global batch size: 512 | "
                f"lm loss: {rng.uniform(1.5, 3.0):.6E} | loss scale: 1.0 | grad norm: {rng.uniform(0.1, 1.5):.3f} | "
                f"number of skipped iterations: 0 |\n")
        if step % 97 == 0:
            line = f"{rank}: [2026-12-01 11:00:{second:02d},000] [rank{rank}] INFO saved checkpoint to /lustre/ckpt/iter_{step:07d}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()


def generate(path: str, size_mb: int) -> int:
    blocks = [block(seed) for seed in range(8)]
    written = 0
    with open(path, "wb") as handle:
        for i in range(size_mb):
            data = blocks[i % len(blocks)]
            handle.write(data)
            written += len(data)
        tail = FAILURE.encode()
        handle.write(tail)
        written += len(tail)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sbatchlint-diagnose-bench-") as directory:
        path = os.path.join(directory, "job.log")
        t0 = time.perf_counter()
        size = generate(path, args.size_mb)
        print(f"generated {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s")
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        best = best_cpu = None
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "sbatchlint", "diagnose", path],
                                  capture_output=True, text=True, env=env)
            elapsed = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
            if done.returncode != 0 or "task 13 on gpu-b02 failed first" not in done.stdout:
                print(done.stdout + done.stderr)
                print("diagnose did not find the failure")
                return 1
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    speed = size / 1e6 / best
    cpu_speed = size / 1e6 / best_cpu
    print(f"peak memory {peak_mb:.0f} MB (target <= {MEMORY_MB})")
    print(f"wall clock {best:.2f} s: {speed:.0f} MB/s (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"CPU time {best_cpu:.2f} s: {cpu_speed:.0f} MB/s (target >= {SPEED_MB_S})")
    return 0 if peak_mb <= MEMORY_MB and cpu_speed >= SPEED_MB_S else 1


if __name__ == "__main__":
    sys.exit(main())

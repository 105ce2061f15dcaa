"""Scaling benchmark: does the cost of linting grow linearly with the script?

    python bench/scaling.py [--scripts 8] [--repeat 3]

Lints the shared generator's scripts (``tests/scriptgen.py``: steps, variables, loops, mounts
and branch alternatives all scale with ``size``) at 1x, 2x, 4x, 8x and 16x the size, the same
seeds at every size, and prints the time per KB at each. Target: every size within 2x of the
smallest's time per KB. Seconds are machine-bound, so this is a benchmark, not a test; the test
suite holds the machine-independent form (``tests/test_scaling.py`` counts Python calls).
Exits 1 when the target is missed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

SIZES = (1, 2, 4, 8, 16)


def time_size(size: int, scripts: int, repeat: int) -> "tuple[float, int]":
    """CPU seconds to lint the generator's ``scripts`` scripts of this size (best of ``repeat``), and their bytes."""
    import scriptgen

    from sbatchlint.linter import lint
    from sbatchlint.source import Source

    texts = [scriptgen.generate(seed=seed, size=size).text.encode() for seed in range(scripts)]
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()  # CPU time: other work sharing the cores does not stretch it
        for index, data in enumerate(texts):
            lint(Source(data, f"job{index}.sh"))
        best = min(best, time.process_time() - start)
    return best, sum(len(t) for t in texts)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scripts", type=int, default=8, help="Scripts per size (seeds 0..N-1).")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    try:
        import scriptgen
    except ImportError:
        print("bench/scaling.py needs the shared script generator, tests/scriptgen.py")
        return 2

    from sbatchlint.linter import lint
    from sbatchlint.source import Source

    lint(Source(scriptgen.generate(seed=10_000).text.encode(), "warmup.sh"))  # imports, parser set-up
    rows = []
    for size in SIZES:
        seconds, size_bytes = time_size(size, options.scripts, options.repeat)
        rows.append((size, seconds, size_bytes, seconds * 1000 / (size_bytes / 1024)))
    smallest = rows[0][3]
    print(f"{'size':>5} {'KB':>8} {'ms':>9} {'ms/KB':>8} {'vs 1x':>6}")
    for size, seconds, size_bytes, per_kb in rows:
        print(f"{size:>4}x {size_bytes / 1024:8.1f} {seconds * 1000:9.1f} {per_kb:8.2f} {per_kb / smallest:6.2f}")
    worst = max(per_kb / smallest for _size, _s, _b, per_kb in rows)
    ok = worst <= 2.0
    print(f"worst time per KB: {worst:.2f}x the smallest's (target <= 2x): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

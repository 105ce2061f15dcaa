"""``sbatchlint plan`` against what really runs on the local 2-node cluster.

The shared generator (tests/scriptgen.py) writes runnable job scripts whose values are all
literal; each is planned, then submitted with a tiny payload as every entry point. The payload
writes, per process, its host, SLURM_PROCID, SLURM_LOCALID, the step's task count, torchrun's
RANK/WORLD_SIZE where torchrun runs it, and how many GPUs CUDA_VISIBLE_DEVICES lists. Which
``srun`` of the script started a step is recorded by an ``srun`` shell function that the batch
shell reads from BASH_ENV (it prints the line of the call, then runs the real srun), so the
steps of loops and of the branch alternatives taken are matched to the plan's steps by line.

Every field the plan gives must match what ran, or be unknown; at most 5% of the plan's fields
may be unknown on these scripts, and the count is printed. CI cost: SBATCHLINT_PLAN_SCRIPTS
scripts (default 24), at most 2 processes per torchrun; set it higher for a longer local run.
"""
from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from slurm_cluster import JobTimeout, clean_env, parse_lines, read_output, wait

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import scriptgen  # noqa: E402
from sbatchlint.plan import Planner, is_unknown  # noqa: E402
from sbatchlint.source import Source  # noqa: E402

pytestmark = pytest.mark.slurm

SCRIPTS = int(os.environ.get("SBATCHLINT_PLAN_SCRIPTS", "24"))
SEED = int(os.environ.get("SBATCHLINT_PLAN_SEED", "0"))

# Each process writes its own file (lines of several tasks printed through srun may interleave).
PAYLOAD = """\
import os
e = os.environ
cvd = e.get("CUDA_VISIBLE_DEVICES")
gpus = len([d for d in cvd.split(",") if d]) if cvd is not None else "unset"
line = "PROC step=%s host=%s procid=%s localid=%s ntasks=%s rank=%s world=%s gpus=%s\\n" % (
    e.get("SLURM_STEP_ID"), e.get("SLURMD_NODENAME"), e.get("SLURM_PROCID"), e.get("SLURM_LOCALID"),
    e.get("SLURM_STEP_NUM_TASKS", e.get("SLURM_NTASKS")), e.get("RANK", "-"), e.get("WORLD_SIZE", "-"), gpus)
with open(os.path.join(e["SBL_RESULTS"], "%s.%s.%d" % (e.get("SLURM_STEP_ID"), e.get("SLURM_PROCID"), os.getpid())), "w") as out:
    out.write(line)
"""

# Read by the batch shell (BASH_ENV): number every srun call and print the line it is on.
TRACE = """\
SBL_STEPS=${SBL_STEPS:-0}
srun() {
    echo "STEP n=$SBL_STEPS line=${BASH_LINENO[0]}"
    SBL_STEPS=$((SBL_STEPS + 1))
    command srun "$@"
}
"""


def _torch_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def _fields(plan_step: dict) -> dict:
    launcher = plan_step["launcher"]
    return {
        "nodes": plan_step["nodes"],
        "ntasks": plan_step["ntasks"],
        "tasks_per_node": plan_step["tasks_per_node"],
        "processes_per_task": launcher["processes_per_task"],
        "world_size": plan_step["world_size"],
        "gpus": plan_step["gpus_per_task_visible"],
    }


def _observed(rows: list, plan_step: dict) -> dict:
    procids = {r["procid"] for r in rows}
    per_host = defaultdict(set)
    for r in rows:
        per_host[r["host"]].add(r["procid"])
    per_task = Counter(r["procid"] for r in rows)
    elastic = plan_step["launcher"]["kind"] in ("torchrun", "torch.distributed.launch")
    worlds = {r["world"] if elastic else r["ntasks"] for r in rows}
    counts = {len(v) for v in per_host.values()}
    gpus = {int(r["gpus"]) if r["gpus"].isdigit() else r["gpus"] for r in rows}
    return {
        "nodes": len(per_host),
        "ntasks": len(procids),
        "tasks_per_node": counts.pop() if len(counts) == 1 else sorted(counts),
        "processes_per_task": set(per_task.values()).pop() if len(set(per_task.values())) == 1 else sorted(set(per_task.values())),
        "world_size": int(worlds.pop()) if len(worlds) == 1 and "-" not in worlds else sorted(worlds),
        "gpus": gpus.pop() if len(gpus) == 1 else sorted(gpus),
    }


def test_plan_matches_what_runs(slurm, tmp_path):
    if not _torch_available():
        pytest.skip("torch is not importable: run tests/slurm/ensure-torch.sh")
    bin_dir = str(Path(sys.executable).parent)
    trace = tmp_path / "trace.sh"
    trace.write_text(TRACE)
    env = clean_env({"BASH_ENV": str(trace), "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")})
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)

    jobs = []
    for job in scriptgen.corpus(SCRIPTS, seed=SEED, runnable=True, workdir=str(tmp_path / "work")):
        work = tmp_path / "work"
        for entry in job.entries:
            path = work / entry
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PAYLOAD)
        script = slurm.script(job.text, f"gen{job.seed}.sbatch")
        plan = Planner(Source(job.data, script.name), findings=False).build()
        results = tmp_path / "results" / str(job.seed)
        results.mkdir(parents=True)
        jobs.append((job, plan, slurm.submit(script, env={**env, "SBL_RESULTS": str(results)})))

    compared = unknown = 0
    disagreements = []
    failed = []
    for job, plan, job_id in jobs:
        try:
            info = wait(job_id, timeout=600)
        except JobTimeout:
            slurm.cancel(job_id)
            failed.append((job.seed, "timeout"))
            continue
        out = read_output(info)
        if not info.ok:
            failed.append((job.seed, info.state, out[-2000:]))
            continue
        procs = defaultdict(list)
        results = tmp_path / "results" / str(job.seed)
        text = "".join(path.read_text() for path in sorted(results.iterdir()))
        for row in parse_lines(text, "PROC"):
            procs[row["step"]].append(row)
        for call in parse_lines(out, "STEP"):
            line = int(call["line"])
            matches = [s for s in plan["steps"] if s["line"] <= line <= s["end_line"]]
            assert len(matches) == 1, (job.seed, line, [s["line"] for s in plan["steps"]])
            plan_step = matches[0]
            rows = procs.get(call["n"], [])
            assert rows, (job.seed, call, out[-2000:])
            seen = _observed(rows, plan_step)
            for name, predicted in _fields(plan_step).items():
                compared += 1
                if is_unknown(predicted):
                    unknown += 1
                    continue
                actual = seen[name]
                if name == "gpus" and actual == "unset":
                    actual = 0
                if predicted != actual:
                    disagreements.append((job.seed, line, name, predicted, actual))
    total_unknown = sum(plan["unknown"]["count"] for _j, plan, _id in jobs)
    total_fields = sum(plan["unknown"]["fields"] for _j, plan, _id in jobs)
    print(f"\nplan vs Slurm: {len(jobs)} scripts, {compared} step fields compared, {unknown} unknown; "
          f"plan fields unknown: {total_unknown} of {total_fields}")
    for row in disagreements:
        print("  disagreement: seed %s line %s %s: plan %r, ran %r" % row)
    assert not failed, failed
    assert not disagreements
    assert total_unknown <= 0.05 * total_fields

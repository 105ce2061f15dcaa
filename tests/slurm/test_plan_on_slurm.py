"""``sbatchlint plan`` against what really runs on the local 2-node cluster.

The shared generator (tests/scriptgen.py) writes runnable job scripts whose values are all
literal; each is planned, then submitted with a tiny payload as every entry point. The payload
writes, per process, its host, SLURM_PROCID, SLURM_LOCALID, the step's task count, torchrun's
RANK/WORLD_SIZE where torchrun runs it, and how many GPUs CUDA_VISIBLE_DEVICES lists. Which
``srun`` of the script started a step is recorded by an ``srun`` shell function that the batch
shell reads from BASH_ENV (it prints the line of the call, then runs the real srun), so the
steps of loops and of the branch alternatives taken are matched to the plan's steps by line.

The values of the variables the plan lists are checked too: the ``srun`` function prints the
batch shell's value of each variable the plan says the batch shell expands, at that call; the
payload writes the value each process's environment holds of those the plan says the task
expands. A few hand-written jobs add what the generator does not write: settings files sourced
relative to the submission directory, through ``$SLURM_SUBMIT_DIR``, from a sourced file's own
directory and under ``--chdir``, and one sourced through ``$(dirname "$0")``, which names slurmd's
spooled copy of the script (the plan must say unknown, and the job shows the file is not found).

Every field the plan gives must match what ran, or be unknown; at most 5% of the plan's fields
may be unknown on these scripts, and the count is printed. CI cost: SBATCHLINT_PLAN_SCRIPTS
scripts (default 24), at most 2 processes per torchrun; set it higher for a longer local run.
"""
from __future__ import annotations

import base64
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from slurm_cluster import JobTimeout, clean_env, parse_lines, read_output, wait

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import scriptgen  # noqa: E402
from sbatchlint.plan import PER_TASK_VALUE, Planner, is_unknown  # noqa: E402
from sbatchlint.source import Source  # noqa: E402

pytestmark = pytest.mark.slurm

SCRIPTS = int(os.environ.get("SBATCHLINT_PLAN_SCRIPTS", "24"))
SEED = int(os.environ.get("SBATCHLINT_PLAN_SEED", "0"))

# Each process writes its own file (lines of several tasks printed through srun may interleave).
PAYLOAD = """\
import base64, json, os
e = os.environ
cvd = e.get("CUDA_VISIBLE_DEVICES")
gpus = len([d for d in cvd.split(",") if d]) if cvd is not None else "unset"
seen = {name: e.get(name) for name in e.get("SBL_TASK_VARS", "").split()}
line = "PROC step=%s host=%s procid=%s localid=%s ntasks=%s rank=%s world=%s gpus=%s vars=%s\\n" % (
    e.get("SLURM_STEP_ID"), e.get("SLURMD_NODENAME"), e.get("SLURM_PROCID"), e.get("SLURM_LOCALID"),
    e.get("SLURM_STEP_NUM_TASKS", e.get("SLURM_NTASKS")), e.get("RANK", "-"), e.get("WORLD_SIZE", "-"), gpus,
    base64.b64encode(json.dumps(seen).encode()).decode())
with open(os.path.join(e["SBL_RESULTS"], "%s.%s.%d" % (e.get("SLURM_STEP_ID"), e.get("SLURM_PROCID"), os.getpid())), "w") as out:
    out.write(line)
"""

# Read by the batch shell (BASH_ENV): number every srun call and print the line it is on.
TRACE = """\
SBL_STEPS=${SBL_STEPS:-0}
srun() {
    echo "STEP n=$SBL_STEPS line=${BASH_LINENO[0]}"
    for sbl_name in $SBL_BATCH_VARS; do
        if [ -n "${!sbl_name+x}" ]; then
            echo "VAR n=$SBL_STEPS name=$sbl_name value=$(printf '%s' "${!sbl_name}" | base64 -w0)"
        else
            echo "VAR n=$SBL_STEPS name=$sbl_name unset=1"
        fi
    done
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


class Written:
    """A job of our own (not from the generator), with the settings files it sources."""

    def __init__(self, seed: str, text: str, files: dict, entries=("probe.py",)) -> None:
        self.seed, self.text, self.files, self.entries = seed, text, files, list(entries)
        self.data = text.encode()


def _written_jobs(work: Path) -> list:
    """Settings files sourced the ways real job scripts source them; ``{probe}`` is the payload."""
    probe = str(work / "probe.py")
    header = ("#!/bin/bash\n#SBATCH --job-name=sbl-sourced\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
              "#SBATCH --time=00:05:00\n")
    return [
        Written("sourced-submit-dir", header + f"""\
MODEL_SIZE=7b
source ./sbl_site.sh
. "$SLURM_SUBMIT_DIR/sbl_conf/extra.sh"
srun python3 {probe} --tag "$RUN_TAG" --data "$DATA_ROOT"
srun bash -c "python3 {probe} --cache \\$HF_HOME --flag \\$NESTED_FLAG"
""", {
            "sbl_site.sh": "# site settings\nexport HF_HOME=/shared/cache/hf\nRUN_TAG=probe-$MODEL_SIZE\n",
            "sbl_conf/extra.sh": 'export DATA_ROOT="$HF_HOME/data"\nsource "$(dirname "${BASH_SOURCE[0]}")/nested.sh"\n',
            "sbl_conf/nested.sh": "export NESTED_FLAG=on\n",
        }),
        Written("sourced-chdir", header + f"""\
#SBATCH --chdir=sbl_sub
source sbl_sub_settings.sh
srun python3 {probe} --value "$SUB_VALUE"
""", {"sbl_sub/sbl_sub_settings.sh": "SUB_VALUE=from-the-working-directory\n"}),
        Written("sourced-spool", header + f"""\
echo "ZERO dir=$(dirname "$0")"
source "$(dirname "$0")/sbl_spool_site.sh" 2>/dev/null || echo "ZERO sourced=no"
srun python3 {probe} --cache "$SPOOL_CACHE"
""", {"sbl_spool_site.sh": "export SPOOL_CACHE=/shared/cache/spool\n"}),
    ]


def _variables(out: str, rows: list, call: str, plan_step: dict) -> list:
    """(name, predicted, actual) of every listed variable with one value the plan gives."""
    batch = {row["name"]: row for row in parse_lines(out, "VAR") if row["n"] == call}
    out_rows = []
    for variable in plan_step["environment"]:
        name, predicted = variable["name"], variable["value"]
        if predicted == PER_TASK_VALUE:
            continue  # each task its own: not one value
        if variable["expanded_by"] == "batch":
            row = batch[name]
            actual = None if "unset" in row else base64.b64decode(row["value"]).decode()
        else:
            seen = {json.loads(base64.b64decode(r["vars"]))[name] for r in rows}
            actual = seen.pop() if len(seen) == 1 else sorted(seen, key=str)
        out_rows.append((name, predicted if is_unknown(predicted) or predicted is None else str(predicted), actual))
    return out_rows


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
    work = tmp_path / "work"
    generated = list(scriptgen.corpus(SCRIPTS, seed=SEED, runnable=True, workdir=str(work)))
    for job in generated + _written_jobs(work):
        for entry in job.entries:
            path = work / entry
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PAYLOAD)
        script = slurm.script(job.text, f"gen{job.seed}.sbatch")
        for name, text in getattr(job, "files", {}).items():
            (script.parent / name).parent.mkdir(parents=True, exist_ok=True)
            (script.parent / name).write_text(text)
        # a job of our own is planned from where it is submitted (its settings files resolve there)
        plan = Planner(Source(job.data, str(script) if isinstance(job, Written) else script.name), findings=False).build()
        results = tmp_path / "results" / str(job.seed)
        results.mkdir(parents=True)
        names = {kind: " ".join(sorted({v["name"] for s in plan["steps"] for v in s["environment"] if v["expanded_by"] == kind}))
                 for kind in ("batch", "task")}
        job_env = {**env, "SBL_RESULTS": str(results), "SBL_BATCH_VARS": names["batch"], "SBL_TASK_VARS": names["task"]}
        jobs.append((job, plan, slurm.submit(script, env=job_env)))

    compared = unknown = 0
    values_compared = values_unknown = 0
    disagreements = []
    failed = []
    outputs = {}
    for job, plan, job_id in jobs:
        try:
            info = wait(job_id, timeout=600)
        except JobTimeout:
            slurm.cancel(job_id)
            failed.append((job.seed, "timeout"))
            continue
        out = outputs[job.seed] = read_output(info)
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
            for name, predicted, actual in _variables(out, rows, call["n"], plan_step):
                values_compared += 1
                if is_unknown(predicted):
                    values_unknown += 1
                elif predicted != actual:
                    disagreements.append((job.seed, line, "$" + name, predicted, actual))
    total_unknown = sum(plan["unknown"]["count"] for _j, plan, _id in jobs)
    total_fields = sum(plan["unknown"]["fields"] for _j, plan, _id in jobs)
    print(f"\nplan vs Slurm: {len(jobs)} scripts, {compared} step fields compared, {unknown} unknown; "
          f"{values_compared} variable values compared, {values_unknown} unknown; "
          f"plan fields unknown: {total_unknown} of {total_fields}")
    for row in disagreements:
        print("  disagreement: seed %s line %s %s: plan %r, ran %r" % row)
    assert not failed, failed
    assert not disagreements
    # the settings files were read where Slurm reads them, and their values checked above
    plans = {job.seed: plan for job, plan, _id in jobs}
    for seed in ("sourced-submit-dir", "sourced-chdir"):
        read = [entry["read"] for entry in plans[seed]["job"]["sourced"]]
        assert read and all(read), plans[seed]["job"]["sourced"]
        assert plans[seed]["job"]["sourced"][-1]["nested"] == [] or all(n["read"] for n in plans[seed]["job"]["sourced"][-1]["nested"])
    # $0 of a batch script names the spooled copy: the plan says so, and the file is not found there
    (spool,) = plans["sourced-spool"]["job"]["sourced"]
    assert spool["unknown"] == "spool-directory"
    zero = {k: v for row in parse_lines(outputs["sourced-spool"], "ZERO") for k, v in row.items()}
    assert zero["dir"] != str(slurm.workdir) and zero["sourced"] == "no", zero
    (step,) = plans["sourced-spool"]["steps"]
    assert step["environment"] == [{"name": "SPOOL_CACHE", "expanded_by": "batch", "value": {"unknown": "sourced-file"}}]
    assert total_unknown <= 0.05 * total_fields

"""``sbatchlint diagnose --job ID`` without a cluster: sacct's answers recorded on the local
cluster (``tests/data/sacct/``, written by tests/slurm/test_diagnose_jobs.py with
``SBATCHLINT_SAVE_SACCT=1``), the controller's answer in the shape ``scontrol --oneliner show job``
prints, the order of the sources, where the log is, and bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main
from sbatchlint.diagnose import slurm
from sbatchlint.diagnose.job import JobRecord
from sbatchlint.diagnose.slurm import (JobError, check_job_id, expand, first_node, log_paths, look_up,
                                       parse_sacct, parse_scontrol)

SACCT = Path(__file__).resolve().parent / "data" / "sacct"


def recorded(name: str) -> str:
    """A recorded sacct answer, without the comment line that names the command."""
    return "".join(line for line in (SACCT / f"{name}.txt").read_text().splitlines(keepends=True)
                   if not line.startswith("#"))


def asked(name: str) -> str:
    return (SACCT / f"{name}.txt").read_text().splitlines()[0].split(" -j ")[1].split()[0]


def step_states(record: JobRecord):
    return {s.step_id.split(".", 1)[1]: (s.state, s.exit_code) for s in record.steps}


# -- sacct, as recorded on the cluster --------------------------------------------------------------
def test_sacct_a_rank_that_raised():
    record = parse_sacct(recorded("diagnose-raise"), asked("diagnose-raise"))
    assert (record.source, record.state, record.exit_code, record.nodes) == ("sacct", "FAILED", "15:0", "n[1-2]")
    # srun --kill-on-bad-exit ended the step: this time Slurm recorded it as cancelled
    assert step_states(record) == {"batch": ("FAILED", "15:0"), "0": ("CANCELLED", "0:15")}
    assert record.partition == "batch" and record.name == "diagnose-raise"
    assert record.submit_line.startswith("sbatch ") and record.work_dir == "/home/user/run"


def test_sacct_time_limit_and_cancelled_steps():
    record = parse_sacct(recorded("diagnose-time-limit"), asked("diagnose-time-limit"))
    assert record.state == "TIMEOUT" and "TIMEOUT" in record.states()
    assert step_states(record)["0"][0] == "CANCELLED"
    hang = parse_sacct(recorded("diagnose-hang"), asked("diagnose-hang"))
    assert hang.state == "TIMEOUT" and step_states(hang)["0"] == ("FAILED", "1:0")
    cancelled = parse_sacct(recorded("diagnose-cancelled"), asked("diagnose-cancelled"))
    assert cancelled.state.startswith("CANCELLED") and cancelled.states()[0] == "CANCELLED"


def test_sacct_launch_failure():
    record = parse_sacct(recorded("diagnose-launch-failure"), asked("diagnose-launch-failure"))
    assert (record.state, record.exit_code) == ("FAILED", "0:53") and record.launch_failed


def test_sacct_array_element():
    job_id = asked("diagnose-array")
    record = parse_sacct(recorded("diagnose-array"), job_id)
    assert job_id.endswith("_1") and record.job_id == job_id
    assert (record.state, record.exit_code) == ("FAILED", "1:0")
    assert record.raw_id != job_id.split("_")[0]  # the element's own number
    assert all(s.step_id.startswith(job_id + ".") for s in record.steps)


def test_sacct_het_job():
    job_id = asked("diagnose-het")
    record = parse_sacct(recorded("diagnose-het"), job_id)
    assert [c.step_id for c in record.components] == [f"{job_id}+0", f"{job_id}+1"]
    assert record.state == "FAILED"
    assert all("+" in s.step_id for s in record.steps)


def test_sacct_without_rows_is_no_record():
    assert parse_sacct("", "5") is None
    assert parse_sacct("garbage without separators\n", "5") is None


# OUT_OF_MEMORY needs cgroups, which the local cluster lacks: this answer is written by hand in the
# shape of the recorded ones (sacct's --parsable2 fields, in SACCT_FIELDS order).
OOM = ("4242|4242|train|batch|proj|OUT_OF_MEMORY|0:125|0:0|None|n1|1|||2026-01-05T10:00:00|2026-01-05T10:05:00|00:05:00|"
       "01:00:00|alice|/home/alice/run|sbatch job.sh\n"
       "4242.batch|4242.batch|batch||proj|OUT_OF_MEMORY|0:125|||n1|1|1|2026-01-05T10:00:00|2026-01-05T10:05:00|"
       "00:05:00||||\n")


def test_sacct_out_of_memory_explains_a_silent_log(tmp_path):
    from sbatchlint.diagnose import diagnose

    record = parse_sacct(OOM, "4242")
    assert record.state == "OUT_OF_MEMORY" and step_states(record)["batch"] == ("OUT_OF_MEMORY", "0:125")
    log = tmp_path / "slurm-4242.out"
    log.write_text("step 10 loss 2.3\n")
    result = diagnose([str(log)], job=record)
    assert [f.id for f in result.verdict.findings] == ["host-out-of-memory"] and result.verdict.found


# -- scontrol ----------------------------------------------------------------------------------------
SCONTROL_HET = (
    "JobId=7001 HetJobId=7001 HetJobOffset=0 JobName=pipe UserId=alice(1000) Account=proj JobState=COMPLETED "
    "Reason=None ExitCode=0:0 Partition=batch NodeList=n1 WorkDir=/home/alice/run "
    "StdErr=/home/alice/run/slurm-7001.out StdIn=/dev/null StdOut=/home/alice/run/slurm-7001.out Power=\n"
    "JobId=7002 HetJobId=7001 HetJobOffset=1 JobName=pipe UserId=alice(1000) Account=proj JobState=FAILED "
    "Reason=NonZeroExitCode ExitCode=1:0 Partition=batch NodeList=n2 WorkDir=/home/alice/run "
    "StdErr=/home/alice/run/slurm-7001.out StdIn=/dev/null StdOut=/home/alice/run/slurm-7001.out Power=\n")


def test_scontrol_het_job():
    record = parse_scontrol(SCONTROL_HET, "7001")
    assert record.source == "scontrol"
    assert (record.state, record.exit_code, record.reason) == ("FAILED", "1:0", "NonZeroExitCode")
    assert [(c.step_id, c.state) for c in record.components] == [("7001+0", "COMPLETED"), ("7001+1", "FAILED")]
    assert record.nodes == "n1,n2"
    assert log_paths(record, None) == ["/home/alice/run/slurm-7001.out"]


def test_scontrol_values_with_spaces_and_separate_error_file():
    text = ("JobId=9 JobName=a b JobState=CANCELLED Reason=None ExitCode=0:15 Partition=batch NodeList=n[3-4] "
            "WorkDir=/w Command=/w/run job.sh StdErr=/w/err-9.txt StdIn=/dev/null StdOut=/w/out-9.txt\n")
    record = parse_scontrol(text, "9")
    assert record.name == "a b" and record.reason is None
    assert log_paths(record, None) == ["/w/out-9.txt", "/w/err-9.txt"]


# -- where the log is when only sacct knows the job --------------------------------------------------
def test_output_file_from_the_submission_line_then_the_header_then_the_default():
    record = JobRecord(job_id="300", raw_id="300", name="train", nodes="gpu[07-08]", user="alice",
                       work_dir="/runs", submit_line="sbatch -o logs/%x-%j.out --parsable job.sh")
    header = b"#!/bin/bash\n#SBATCH --output=from-header-%j.out\n#SBATCH -e err/%N-%j.err\n"
    assert log_paths(record, header) == ["/runs/logs/train-300.out", "/runs/err/gpu07-300.err"]
    record = JobRecord(job_id="300", raw_id="300", name="train", work_dir="/runs", submit_line="sbatch job.sh")
    assert log_paths(record, header[:48]) == ["/runs/from-header-300.out"]
    assert log_paths(record, b"#!/bin/bash\nsrun x\n") == ["/runs/slurm-300.out"]
    element = JobRecord(job_id="300_4", raw_id="305", work_dir="/runs", submit_line="sbatch --array=0-7 job.sh")
    assert log_paths(element, None) == ["/runs/slurm-300_4.out"]


def test_filename_patterns():
    record = JobRecord(job_id="300_4", raw_id="305", name="sweep", nodes="n[1-2]", user="bob")
    assert expand("%x_%A_%a_%j_%3a_%u_%N_%%.out", record) == "sweep_300_4_305_004_bob_n1_%.out"
    assert first_node("gpu-a[010-012,020],gpu-b1") == "gpu-a010"
    assert first_node("n3") == "n3" and first_node(None) is None


@pytest.mark.parametrize("text", ["12345", "12345_7", "12345+1", " 42 "])
def test_job_ids(text):
    assert check_job_id(text) == text.strip()


@pytest.mark.parametrize("text", ["abc", "12_", "12.batch", "12345_[1-3]", "-1", ""])
def test_bad_job_ids(text):
    with pytest.raises(JobError, match="not a job id"):
        check_job_id(text)


# -- the order of the sources -----------------------------------------------------------------------
def fake_slurm(sacct=None, scontrol=None, script=None):
    calls = []

    def runner(argv):
        calls.append(argv[:3])
        if argv[0] == "sacct" and "--batch-script" in argv:
            return (0, f"Batch Script for {argv[2]}\n{'-' * 80}\n{script}\n", "") if script else (1, "", "no script")
        if argv[0] == "sacct":
            return (0, sacct, "") if sacct is not None else (1, "", "sacct: error: Problem talking to the database")
        if argv[:2] == ["scontrol", "write"]:
            return (0, script, "") if script and scontrol else (1, "", "Invalid job id specified")
        if argv[0] == "scontrol":
            return (0, scontrol, "") if scontrol else (1, "", "slurm_load_jobs error: Invalid job id specified")
        raise FileNotFoundError(argv[0])

    runner.calls = calls
    return runner


def test_sacct_first_and_the_controller_names_the_log():
    scontrol = ("JobId=4242 JobName=train JobState=OUT_OF_MEMORY Reason=OutOfMemory ExitCode=0:125 "
                "NodeList=n1 WorkDir=/home/alice/run StdErr=/home/alice/run/o.txt StdOut=/home/alice/run/o.txt\n")
    found = look_up("4242", runner=fake_slurm(sacct=OOM, scontrol=scontrol, script="#!/bin/bash\nsrun x\n"))
    assert found.record.source == "sacct" and found.record.partition == "batch"
    assert found.logs == ["/home/alice/run/o.txt"] and found.script_from == "scontrol write batch_script"
    assert found.notes == []


def test_scontrol_when_there_is_no_accounting():
    scontrol = "JobId=5 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=n1 StdOut=/r/o.txt\n"
    found = look_up("5", runner=fake_slurm(scontrol=scontrol))
    assert found.record.source == "scontrol" and found.record.exit_code == "1:0"
    assert found.notes[0] == "sacct gave no answer (sacct: error: Problem talking to the database)"


def test_unknown_everywhere():
    found = look_up("5", runner=fake_slurm(sacct=""))
    assert found.record is None
    assert found.notes == ["sacct has no record of job 5",
                           "scontrol does not know job 5 (slurm_load_jobs error: Invalid job id specified)"]


def test_no_slurm_commands_at_all():
    def missing(argv):
        raise FileNotFoundError(argv[0])

    found = look_up("5", runner=missing)
    assert found.record is None and found.notes == ["sacct gave no answer (sacct not found)",
                                                    "scontrol does not know job 5 (scontrol not found)"]


# -- the command -------------------------------------------------------------------------------------
@pytest.fixture
def slurm_answers(monkeypatch):
    def use(**answers):
        monkeypatch.setattr(slurm, "run", fake_slurm(**answers))
    return use


def test_cli_unknown_job_without_log_is_bad_input(slurm_answers):
    slurm_answers(sacct="")
    result = CliRunner().invoke(main, ["diagnose", "--job", "77"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "job 77: sacct has no record of job 77" in result.output and "--log FILE" in result.output


def test_cli_bad_job_id_is_bad_input():
    result = CliRunner().invoke(main, ["diagnose", "--job", "12;rm"])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "Traceback" not in result.output


def test_cli_falls_back_to_the_log_and_says_so(slurm_answers, tmp_path):
    slurm_answers(sacct="")
    log = tmp_path / "slurm-77.out"
    log.write_text("0: ValueError: bad shard\nsrun: error: n1: task 0: Exited with exit code 1\n")
    result = CliRunner().invoke(main, ["diagnose", "--job", "77", "--log", str(log), "--output-format", "json"])
    data = json.loads(result.output)
    assert result.exit_code == 0 and data["job"]["source"] == "log"
    assert "the verdict comes from the log alone" in data["notes"]


def test_cli_text_shows_the_record_and_its_source(slurm_answers, tmp_path):
    log = tmp_path / "o.txt"
    log.write_text("step 10 loss 2.3\n")
    scontrol = f"JobId=4242 JobName=train JobState=OUT_OF_MEMORY ExitCode=0:125 NodeList=n1 StdOut={log}\n"
    slurm_answers(sacct=OOM, scontrol=scontrol, script="#!/bin/bash\nsrun python train.py\n")
    result = CliRunner().invoke(main, ["diagnose", "--job", "4242"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2] == "job 4242 (train), partition batch: OUT_OF_MEMORY 0:125 on n1; source: sacct (Slurm's accounting)"
    assert lines[3].split() == ["step", "4242.batch", "OUT_OF_MEMORY", "0:125", "n1"]
    assert f"  log: {log}" in lines
    assert "cause: host-out-of-memory" in result.output


def test_sacct_keeps_a_submission_line_with_newlines_in_its_row():
    record = parse_sacct(recorded("diagnose-het"), asked("diagnose-het"))
    assert [s.step_id.split("+")[1] for s in record.steps] == ["0.batch", "0.0", "1.0"]
    assert [s.tasks for s in record.steps] == [1, 1, 1]


def test_het_job_tasks_are_numbered_across_components(tmp_path):
    """srun labels a het step's output across its components (``1:``) but names a task by its
    number inside its component (``n2: task 0``): the record says which component ran where."""
    from sbatchlint.diagnose import diagnose

    job_id = asked("diagnose-het")
    record = parse_sacct(recorded("diagnose-het"), job_id)
    assert record.het_task_offsets() == {"n2": 1}
    log = tmp_path / f"slurm-{job_id}.out"
    log.write_text("0: component None rank 0\n1: component None rank 1\n1: Traceback (most recent call last):\n"
                   '1:   File "<string>", line 5, in <module>\n'
                   "1: RuntimeError: the reader component found no input files\n"
                   "srun: error: n2: task 0: Exited with exit code 1\n")
    verdict = diagnose([str(log)], job=record).verdict
    assert (verdict.first.task, verdict.first.host) == (1, "n2")
    assert [(code, [u.task for u in units]) for code, units, _ in verdict.exit_codes] == [("1", [1])]
    # without the record, the reader cannot know: the exit is pinned on task 0
    alone = diagnose([str(log)]).verdict
    assert [(code, [u.task for u in units]) for code, units, _ in alone.exit_codes] == [("1", [0])]


def test_cli_json_with_a_record_follows_the_schema(slurm_answers, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "sbatchlint" / "diagnose" / "schema.json").read_text())
    log = tmp_path / "o.txt"
    log.write_text("step 10 loss 2.3\n")
    slurm_answers(sacct=OOM, scontrol=f"JobId=4242 JobName=train JobState=OUT_OF_MEMORY StdOut={log}\n")
    result = CliRunner().invoke(main, ["diagnose", "--job", "4242", "--output-format", "json"])
    data = json.loads(result.output)
    jsonschema.validate(data, schema)
    assert data["job"]["steps"] == [{"id": "4242.batch", "state": "OUT_OF_MEMORY", "exit_code": "0:125", "nodes": "n1"}]
    assert (data["job"]["source"], data["job"]["std_out"]) == ("sacct", str(log))


def test_cli_a_job_whose_log_is_gone(slurm_answers, tmp_path):
    gone = tmp_path / "slurm-5.out"
    slurm_answers(scontrol=f"JobId=5 JobName=x JobState=FAILED ExitCode=1:0 NodeList=n1 StdOut={gone}\n")
    result = CliRunner().invoke(main, ["diagnose", "--job", "5"])
    assert result.exit_code == 1
    assert result.output.startswith("no known cause: there is no log to read; Slurm recorded FAILED 1:0\n")
    assert f"note: the job's log {gone} is not there: the verdict rests on what Slurm recorded" in result.output


def test_a_job_cancelled_before_it_started_has_no_log_but_a_cause(tmp_path):
    from sbatchlint.diagnose import diagnose

    record = parse_sacct(recorded("diagnose-cancelled"), asked("diagnose-cancelled"))
    pending = JobRecord(job_id="88", state="CANCELLED by 1000", exit_code="0:0", source="sacct")
    for job in (record, pending):
        verdict = diagnose([str(tmp_path / "slurm-88.out")], job=job).verdict
        assert [f.id for f in verdict.findings] == ["cancelled"] and verdict.found
    # a failed job whose step srun cancelled is no cancelled job
    failed = parse_sacct(recorded("diagnose-raise"), asked("diagnose-raise"))
    assert not diagnose([str(tmp_path / "slurm-88.out")], job=failed).verdict.found


def test_cli_a_running_job_is_said_to_be_running(slurm_answers, tmp_path):
    log = tmp_path / "o.txt"
    log.write_text("step 10 loss 2.3\n")
    slurm_answers(scontrol=f"JobId=6 JobName=x JobState=RUNNING ExitCode=0:0 NodeList=n1 StdOut={log}\n")
    result = CliRunner().invoke(main, ["diagnose", "--job", "6"])
    assert result.exit_code == 1
    assert "note: job 6 is RUNNING: its log may not hold its end yet" in result.output

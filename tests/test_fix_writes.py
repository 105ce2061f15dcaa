"""--fix writes where the user's file really is and loses nothing: through symbolic links (the
link stays), into every hard link, never into a read-only file, and never half a file, even when
the run is stopped with Ctrl-C."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BROKEN = "#SBATCH --nodes=1\nsrun hostname\n"  # SBL002: no shebang; the safe fix inserts one
FIXED = "#!/bin/bash\n" + BROKEN


def sbatchlint(cwd: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "sbatchlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300, **kwargs)


def write(path: Path, text: str = BROKEN) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def leftovers(directory: Path) -> list:
    return [p.name for p in directory.rglob(".sbatchlint-*")]


def test_fix_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = write(tmp_path / "real" / "job.sh")
    link = tmp_path / "job.sh"
    link.symlink_to("real/job.sh")
    done = sbatchlint(tmp_path, "--fix", "job.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert link.is_symlink() and os.readlink(link) == "real/job.sh"
    assert target.read_text() == FIXED
    assert leftovers(tmp_path) == []


def test_fix_through_a_chain_of_links(tmp_path):
    target = write(tmp_path / "c" / "job.sh")
    (tmp_path / "b.sh").symlink_to("c/job.sh")
    (tmp_path / "a.sh").symlink_to("b.sh")
    done = sbatchlint(tmp_path, "--fix", "a.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.readlink(tmp_path / "a.sh") == "b.sh" and os.readlink(tmp_path / "b.sh") == "c/job.sh"
    assert target.read_text() == FIXED


def test_a_file_reached_by_two_links_is_fixed_once(tmp_path):
    target = write(tmp_path / "shared.sh")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.sh").symlink_to("../shared.sh")
    (tmp_path / "jobs" / "b.sh").symlink_to("../shared.sh")
    for jobs in ("1", "2"):  # serial and in worker processes
        target.write_text(BROKEN)
        done = sbatchlint(tmp_path, "--fix", "-j", jobs, "jobs")
        assert done.returncode == 0, done.stdout + done.stderr
        assert target.read_text() == FIXED
        assert done.stdout.splitlines()[-1] == "Fixed 1 problem. All checks passed (1 file)."


def test_hard_links_keep_sharing_the_fixed_file(tmp_path):
    first = write(tmp_path / "job.sh")
    second = tmp_path / "copy.sh"
    os.link(first, second)
    inode = first.stat().st_ino
    done = sbatchlint(tmp_path, "--fix", "job.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert first.stat().st_ino == inode and second.stat().st_ino == inode and first.stat().st_nlink == 2
    assert second.read_text() == FIXED


def test_a_read_only_file_is_left_untouched_and_reported(tmp_path):
    readonly = write(tmp_path / "a-readonly.sh")
    readonly.chmod(0o444)
    other = write(tmp_path / "b-writable.sh")
    try:
        done = sbatchlint(tmp_path, "--fix", "--output-format", "concise", "a-readonly.sh", "b-writable.sh")
        assert readonly.read_text() == BROKEN and stat.S_IMODE(readonly.stat().st_mode) == 0o444
    finally:
        readonly.chmod(0o644)
    assert other.read_text() == FIXED
    assert done.returncode == 2
    assert done.stderr == "sbatchlint: error: a-readonly.sh: read-only file (mode 0444): not fixed\n"
    assert "a-readonly.sh:1:1: SBL002" in done.stdout  # its findings are still reported
    assert "b-writable.sh" not in done.stdout


def test_the_summary_names_an_unfixed_file_as_such(tmp_path):
    readonly = write(tmp_path / "job.sh")
    readonly.chmod(0o444)
    try:
        done = sbatchlint(tmp_path, "--fix", "job.sh")
    finally:
        readonly.chmod(0o644)
    assert done.returncode == 2
    last = done.stdout.splitlines()[-1]
    assert last.endswith("1 file could not be fixed.") and "could not be read" not in last


def test_mode_owner_line_endings_and_encoding_are_kept(tmp_path):
    job = tmp_path / "job.sh"
    job.write_bytes(b"#SBATCH --nodes=1\r\n# r\xe9sum\xe9\r\nsrun hostname\r\n")
    job.chmod(0o750)
    owner = None
    if os.geteuid() == 0:
        owner = (65534, 65534)
        os.chown(job, *owner)
    done = sbatchlint(tmp_path, "--fix", "--select", "SBL002", "job.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert job.read_bytes() == b"#!/bin/bash\r\n#SBATCH --nodes=1\r\n# r\xe9sum\xe9\r\nsrun hostname\r\n"
    info = job.stat()
    assert stat.S_IMODE(info.st_mode) == 0o750
    if owner:
        assert (info.st_uid, info.st_gid) == owner
    assert leftovers(tmp_path) == []


# -- -j and Ctrl-C ---------------------------------------------------------------------------------
def _jobs(directory: Path, count: int) -> list:
    paths = []
    for index in range(count):
        text = f"#SBATCH --job-name=job{index:04d}\n#SBATCH --nodes=1\nsrun hostname\n"
        paths.append(write(directory / f"job{index:04d}.sh", text))
    return paths


def test_parallel_output_is_the_serial_output(tmp_path):
    _jobs(tmp_path / "jobs", 24)
    serial = sbatchlint(tmp_path, "-j", "1", "jobs")
    default = sbatchlint(tmp_path, "jobs")  # 24 files: one process per CPU
    explicit = sbatchlint(tmp_path, "-j", "3", "jobs")
    assert serial.returncode == default.returncode == explicit.returncode == 1
    assert serial.stdout == default.stdout == explicit.stdout
    named = [line.split(":")[0] for line in serial.stdout.splitlines() if ": SBL002 " in line]
    assert named == sorted(named) and len(named) == 24


def test_workers_default_to_the_cpus_from_16_files_up():
    from sbatchlint.runner import PARALLEL_FROM, cpu_count, workers_for

    assert PARALLEL_FROM == 16
    assert workers_for(15, 0) == 1
    assert workers_for(16, 0) == cpu_count()
    assert workers_for(3, 4) == 4  # an explicit -j is obeyed


@pytest.mark.parametrize("jobs", ["1", "0"])
def test_ctrl_c_exits_130_and_leaves_no_half_written_file(tmp_path, jobs):
    paths = _jobs(tmp_path / "jobs", 400)
    before = {path: path.read_bytes() for path in paths}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    # Ctrl-C as a terminal delivers it, to a command started as a terminal starts one: a suite
    # run in the background (``pytest &``, ``nohup``) has SIGINT ignored, and a child inherits that
    process = subprocess.Popen([sys.executable, "-m", "sbatchlint", "--fix", "-j", jobs, "jobs"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:  # wait until it is writing fixes
        if sum(1 for path in paths[:40] if path.read_bytes() != before[path]) >= 2:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be interrupted"
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    out, err = process.communicate(timeout=240)
    assert process.returncode == 130, err.decode()
    assert err.decode().endswith("sbatchlint: interrupted\n") and b"Traceback" not in err
    fixed = 0
    for path in paths:
        now = path.read_bytes()
        assert now in (before[path], b"#!/bin/bash\n" + before[path]), path
        fixed += now != before[path]
    assert 0 < fixed < len(paths)
    assert leftovers(tmp_path) == []


def test_a_temporary_file_is_new_private_and_named_as_asked(tmp_path, monkeypatch):
    from sbatchlint import files

    first_fd, first = files.create_temporary(str(tmp_path), ".entry-", ".tmp")
    second_fd, second = files.create_temporary(str(tmp_path), ".entry-", ".tmp")
    os.close(first_fd)
    os.close(second_fd)
    assert first != second and os.path.dirname(first) == str(tmp_path)
    assert os.path.basename(first).startswith(".entry-") and first.endswith(".tmp")
    assert os.stat(first).st_mode & 0o777 == 0o600
    # a name already taken (by another process, or a link planted there) is never opened
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    fd, path = files.create_temporary(str(tmp_path), "x-")
    os.close(fd)
    taken = iter([b"\x00" * 8, b"\x01" * 8])
    monkeypatch.setattr(os, "urandom", lambda n: next(taken))
    fd, other = files.create_temporary(str(tmp_path), "x-")
    os.close(fd)
    assert path.endswith("0" * 16) and other.endswith("01" * 8)
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    with pytest.raises(FileExistsError):
        files.create_temporary(str(tmp_path), "x-")

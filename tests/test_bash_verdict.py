"""What ``bash -n`` says of a script the parser could not read (SBL001 reports bash's complaint,
SBL016 notes regions bash accepts): the verdict, the line bash names, and the way bash is given
the script (a seekable file: read from a pipe, bash takes one read per byte)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from sbatchlint.model.bash import bash_syntax_error

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def _long_job(lines: int, broken_at: "int | None" = None) -> bytes:
    out = ["#!/bin/bash", "#SBATCH --nodes=2"]
    for index in range(3, lines + 1):
        if index == broken_at:
            out.append(f"if [ -n \"$STAGE_{index}\" ]; then echo open")
        else:
            out.append(f"echo \"stage {index}: ${{DATA_ROOT:-/scratch}}/part_{index}\"")
    return ("\n".join(out) + "\n").encode()


def test_a_long_script_bash_accepts():
    assert bash_syntax_error(_long_job(3000)) == (True, None)


def test_a_long_script_with_an_if_left_open_gets_bash_s_complaint():
    accepted, complaint = bash_syntax_error(_long_job(3000, broken_at=2500))
    assert accepted is False
    assert "unexpected end of file" in complaint
    assert not complaint.startswith("/dev/stdin")


def test_bash_reads_the_script_from_a_seekable_file(monkeypatch):
    seen = []
    run = subprocess.run

    def watching(args, **kwargs):
        stdin = kwargs.get("stdin")
        assert "input" not in kwargs, "the script went through a pipe"
        seen.append(os.lseek(stdin.fileno(), 0, os.SEEK_CUR))  # raises on a pipe
        return run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", watching)
    assert bash_syntax_error(b"echo 'open\n")[0] is False
    assert seen == [0]


def test_without_memfd_create_the_verdict_is_the_same(monkeypatch):
    script = _long_job(200, broken_at=150)
    expected = bash_syntax_error(script)

    def refused(*_args, **_kwargs):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    assert bash_syntax_error(script) == expected
    monkeypatch.delattr(os, "memfd_create", raising=False)
    assert bash_syntax_error(script) == expected

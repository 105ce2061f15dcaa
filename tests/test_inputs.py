"""Bad input gets one clear line and exit 2, never a traceback; odd encodings still lint."""
from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main
from sbatchlint.source import MAX_BYTES


def run(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def errors(result):
    return [line for line in result.output.splitlines() if line.startswith("sbatchlint: error:")]


@pytest.mark.parametrize(
    "name,data,reason",
    [
        ("empty.sh", b"", "file is empty"),
        ("blank.sh", b"\n\n  \n", "file is empty"),
        ("binary.sh", b"\x7fELF\x02\x01\x00\x00binary", "binary file"),
    ],
)
def test_unlintable_files(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    result = run(str(path))
    assert result.exit_code == 2
    lines = errors(result)
    assert len(lines) == 1 and lines[0].startswith(f"sbatchlint: error: {path}: {reason}")
    assert "Traceback" not in result.output


def test_missing_file(tmp_path):
    result = run(str(tmp_path / "nope.sh"))
    assert result.exit_code == 2
    assert errors(result) == [f"sbatchlint: error: {tmp_path / 'nope.sh'}: no such file or directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.sh"
    path.write_text("#!/bin/bash\n")
    os.chmod(path, 0)
    result = run(str(path))
    assert result.exit_code == 2
    assert "permission denied" in result.output


def test_huge_file(tmp_path):
    path = tmp_path / "huge.sh"
    with open(path, "wb") as handle:
        handle.write(b"#!/bin/bash\n")
        handle.truncate(MAX_BYTES + 10)
    result = run(str(path))
    assert result.exit_code == 2
    assert "file too large" in errors(result)[0]


def test_errors_do_not_stop_other_files(tmp_path):
    good = tmp_path / "good.sh"
    good.write_text("#SBATCH --nodes=1\nsrun hostname\n")
    empty = tmp_path / "empty.sh"
    empty.write_bytes(b"")
    result = run("--output-format", "concise", str(empty), str(good))
    assert result.exit_code == 2
    assert f"{good}:1:1: SBL002" in result.output


def test_non_utf8_file_is_linted_and_positions_are_right(tmp_path):
    path = tmp_path / "job.sh"
    path.write_bytes(b"#!/bin/bash\n# r\xe9sum\xe9\nset -e\n#SBATCH --time=10\n")
    result = run("--output-format", "concise", str(path))
    assert result.exit_code == 1
    assert f"{path}:4:1: SBL003" in result.output


def test_bom_and_crlf(tmp_path):
    path = tmp_path / "job.sh"
    path.write_bytes(b"\xef\xbb\xbf#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun hostname\r\n")
    result = run("--output-format", "concise", "--select", "SBL002", str(path))
    assert "SBL002" in result.output and "byte-order mark" in result.output
    run("--fix", "--select", "SBL002", str(path))
    assert path.read_bytes() == b"#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun hostname\r\n"


def test_unparseable_shell_is_reported_not_crashed(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text("#!/bin/bash\n#SBATCH --nodes=1\nfor x in; do (( ; done ]] }}\nsrun hostname\n")
    result = run("--output-format", "concise", str(path))
    assert result.exit_code == 1
    assert "SBL001" in result.output


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
def test_valid_bash_the_parser_cannot_read_is_information_not_an_error():
    from lintutil import lint_text

    # tree-sitter-bash gives an ERROR node for this valid test command
    valid = "#!/bin/bash\n#SBATCH --nodes=1\n[ $A/b_$B.c = x ] && echo same\nsrun hostname\n"
    assert lint_text(valid, ["SBL001"]) == []
    (finding,) = lint_text(valid, ["SBL016"])
    assert finding.severity.value == "info"
    assert "bash accepts" in finding.message and "not analysed" in finding.message
    broken = "#!/bin/bash\n#SBATCH --nodes=1\nif [ -n \"$X\" ]; then\nsrun hostname\n"
    (finding,) = lint_text(broken, ["SBL001"])
    assert finding.severity.value == "error" and finding.message.startswith("bash: ")


def test_without_bash_an_unreadable_region_stays_an_error(monkeypatch):
    import shutil as shutil_module

    from lintutil import lint_text

    monkeypatch.setattr(shutil_module, "which", lambda name: None)
    valid = "#!/bin/bash\n#SBATCH --nodes=1\n[ $A/b_$B.c = x ] && echo same\nsrun hostname\n"
    (finding,) = lint_text(valid, ["SBL001"])
    assert finding.severity.value == "error"
    assert finding.message == "lines 3-4 could not be parsed and were not checked"


def test_directory_as_file_argument_is_searched(tmp_path):
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    result = run(str(tmp_path))
    assert result.exit_code == 0
    assert "All checks passed (1 file)" in result.output

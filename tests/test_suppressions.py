"""Suppression comments: line, next line, file-wide, prefixes, unused and unknown codes."""
from __future__ import annotations

from lintutil import codes, fix_text, lint_text

LATE = "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n"


def test_trailing_comment_silences_its_line():
    text = LATE + "#SBATCH --time=00:10:00  # sbatchlint: disable=SBL003 -- set by the wrapper\nsrun hostname\n"
    assert codes(text) == []


def test_comment_line_silences_the_next_line_only():
    text = LATE + "# sbatchlint: disable=SBL003\n#SBATCH --time=00:10:00\n#SBATCH --partition=batch\n"
    found = lint_text(text)
    assert [(d.code, d.span.start) for d in found] == [("SBL003", text.index("#SBATCH --partition"))]


def test_prefix_and_list():
    text = LATE + "#SBATCH --time=00:10:00  # sbatchlint: disable=SBL0, SBL999\n"
    found = lint_text(text)
    assert [d.code for d in found] == ["SBL901"]
    assert "SBL999" in found[0].message


def test_file_wide():
    text = "#!/bin/bash\n# sbatchlint: disable-file=SBL003\n#SBATCH --nodes=1\nset -e\n#SBATCH --time=1\n#SBATCH -p x\n"
    assert codes(text) == []


def test_unused_suppression_is_reported_and_removed():
    text = "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname  # sbatchlint: disable=SBL003\n"
    assert codes(text) == ["SBL900"]
    assert fix_text(text) == "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"


def test_partly_used_suppression_keeps_the_used_code():
    text = LATE + "#SBATCH --time=1  # sbatchlint: disable=SBL002,SBL003 -- wrapper\n"
    assert codes(text) == ["SBL900"]
    assert fix_text(text) == LATE + "#SBATCH --time=1  # sbatchlint: disable=SBL003 -- wrapper\n"


def test_unused_is_not_reported_for_rules_that_did_not_run():
    text = "#!/bin/bash\nsrun hostname  # sbatchlint: disable=SBL003\n"
    assert codes(text, select=["SBL002", "SBL900"]) == []


def test_text_inside_a_string_is_not_a_suppression():
    text = LATE + 'echo "# sbatchlint: disable=SBL003"\n#SBATCH --time=1\n'
    assert codes(text) == ["SBL003"]


def test_suppression_findings_can_be_suppressed():
    text = "#!/bin/bash\nsrun hostname  # sbatchlint: disable=SBL003,SBL900\n"
    assert codes(text) == []

"""Values read from loop variables: ``read <<<`` fields, and iterations that stay together."""
from __future__ import annotations

import subprocess

import pytest

from sbatchlint.model.script import Script
from sbatchlint.model.values import consistent
from sbatchlint.source import Source


def script(text: str) -> Script:
    return Script(Source(text.encode("utf-8"), "job.sh"))


def alternatives(word):
    return [v.text for v in (word.alternatives or [word.value])]


@pytest.mark.parametrize("ifs", [",", ", ", None])
@pytest.mark.parametrize("line", ["1,2,4", "1,2,", " 1 , 2 , 4 ", "1,2,3,4", "1", "1,,3", "a b,c"])
def test_read_fields_match_bash(ifs, line):
    prefix = f"IFS='{ifs}' " if ifs is not None else ""
    text = f"#!/bin/bash\nX='{line}'\n{prefix}read -r a b c <<< \"$X\"\necho \"[$a][$b][$c]\"\n"
    echo = script(text).commands[-1]
    value = echo.argv[1].value
    assert value.known
    done = subprocess.run(["bash", "-c", text], capture_output=True, text=True)
    if done.returncode == 0:
        assert value.text == done.stdout.strip()


def test_loop_read_keeps_each_configuration_together():
    s = script(
        '#!/bin/bash\nCONFIGS=("2,2,4" "4,1,4" "8,1,2")\n'
        'for CONFIG in "${CONFIGS[@]}"; do\n'
        '  IFS=, read -r TP PP EP <<< "$CONFIG"\n'
        '  CMD="python train.py --tp $TP --pp $PP --ep $EP"\n'
        '  srun bash -c "$CMD"\n'
        '  srun python train.py --tp $TP --pp $PP\n'
        "done\n"
    )
    string_step, direct_step = s.steps
    assert alternatives(string_step.task_argv[2]) == [
        "python train.py --tp 2 --pp 2 --ep 4",
        "python train.py --tp 4 --pp 1 --ep 4",
        "python train.py --tp 8 --pp 1 --ep 2",
    ]
    tp, pp = direct_step.task_argv[3], direct_step.task_argv[5]
    assert alternatives(tp) == ["2", "4", "8"] and alternatives(pp) == ["2", "1", "1"]
    pairs = [(a.text, b.text) for a in tp.alternatives for b in pp.alternatives
             if consistent(a.pieces + b.pieces)]
    assert pairs == [("2", "2"), ("4", "1"), ("8", "1")]
    # each field still points at its bytes in the array element
    first = tp.alternatives[0].pieces[0]
    assert s.data[first.span.start:first.span.end] == b"2"


def test_independent_loops_combine_freely():
    s = script("#!/bin/bash\nfor TP in 1 2; do\n  for PP in 1 2; do\n    echo \"$TP-$PP\"\n  done\ndone\n")
    assert sorted(alternatives(s.commands[-1].argv[1])) == ["1-1", "1-2", "2-1", "2-2"]


def test_unreadable_sources_stay_unknown():
    s = script("#!/bin/bash\nwhile IFS=, read -r TP PP; do\n  echo \"$TP\"\ndone < configs.txt\n"
               "read -ra PARTS <<< \"1 2\"\necho \"$PARTS\"\n")
    first, second = [c for c in s.commands if c.program == "echo"]
    assert not first.argv[1].known and not second.argv[1].known

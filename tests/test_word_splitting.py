"""Unquoted expansions split and globbed as bash does: on the IFS the script sets before the
use, into unknown words when the model cannot follow that IFS, and into unknown words where
pathname expansion would put the names of files."""
from __future__ import annotations

from lintutil import codes
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


def argv(text: str, program: str) -> list:
    script = Script(Source(text.encode(), "job.sh"))
    (command,) = [c for c in script.commands if c.program == program]
    return [w.text if w.known else None for w in command.argv]


def test_a_comma_ifs_splits_an_option_list_as_bash_does():
    text = HEADER + 'STEP_OPTS="--ntasks-per-node=8,--kill-on-bad-exit=1"\nIFS=,\nsrun $STEP_OPTS python train.py\n'
    assert argv(text, "srun") == ["srun", "--ntasks-per-node=8", "--kill-on-bad-exit=1", "python", "train.py"]
    assert codes(text, ["SBL107"]) == []  # srun reads the kill option
    # with bash's default IFS the list is one word: srun sees no kill option
    default = text.replace("IFS=,\n", "")
    assert argv(default, "srun")[1] == "--ntasks-per-node=8,--kill-on-bad-exit=1"
    assert codes(default, ["SBL107"]) == ["SBL107"]


def test_ifs_fields_empty_fields_and_white_space():
    text = HEADER + 'LIST="a,,b, c ,"\nIFS=", "\nprintf "%s" $LIST\n'
    assert argv(text, "printf") == ["printf", "%s", "a", "", "b", "c"]
    lead = HEADER + 'LIST=",a"\nIFS=,\nprintf "%s" $LIST\n'
    assert argv(lead, "printf") == ["printf", "%s", "", "a"]
    lines = HEADER + "IFS=$'\\n'\nLIST=\"a b\nc\"\nprintf \"%s\" $LIST\n"
    assert argv(lines, "printf") == ["printf", "%s", "a b", "c"]


def test_an_ifs_restored_unset_or_local_to_a_function_is_bash_s_default():
    restored = HEADER + 'L="a b,c"\nOLD_IFS=$IFS\nIFS=,\nread -ra PARTS <<< "$L"\nIFS=$OLD_IFS\nprintf "%s" $L\n'
    assert argv(restored, "printf") == ["printf", "%s", "a", "b,c"]
    unset = HEADER + 'L="a b,c"\nIFS=,\nunset IFS\nprintf "%s" $L\n'
    assert argv(unset, "printf") == ["printf", "%s", "a", "b,c"]
    local = HEADER + 'L="a b,c"\njoin() { local IFS=,; echo "$*"; }\nprintf "%s" $L\n'
    assert argv(local, "printf") == ["printf", "%s", "a", "b,c"]


def test_an_ifs_the_model_cannot_follow_leaves_the_words_unknown_and_no_finding():
    for setting in ("IFS=$SEPARATOR\n", 'if [ -n "$CSV" ]; then IFS=,; fi\n'):
        text = HEADER + f'STEP_OPTS="--ntasks-per-node=8 --exclusive"\n{setting}srun $STEP_OPTS python train.py\n'
        assert argv(text, "srun")[:2] == ["srun", None], setting
        script = Script(Source(text.encode(), "job.sh"))
        assert script.steps[0].options_incomplete
        assert codes(text, ["SBL104", "SBL107"]) == [], setting  # unknown: neither read nor assumed absent


def test_pathname_expansion_makes_a_pattern_unknown_unless_globbing_is_off():
    text = HEADER + 'CONFIGS="configs/*.yaml --tag=run[1] model?"\nsrun -K python train.py $CONFIGS\n'
    # the pattern words name files found at run time; an option is not taken for a file name
    assert argv(text, "srun")[4:] == [None, "--tag=run[1]", None]
    off = "set -f\n" + text
    assert argv(off, "srun")[4:] == ["configs/*.yaml", "--tag=run[1]", "model?"]


def test_a_globbed_entry_point_is_no_known_entry_point():
    text = HEADER.replace("=8\n#SBATCH --gpus", "=1\n#SBATCH --gpus") + (
        'ENTRY="train_v*.py"\nsrun -K torchrun --nproc_per_node=8 $ENTRY\n'
    )
    (launch,) = Script(Source(text.encode(), "job.sh")).launches
    assert launch.entry is None or not launch.entry.known  # an unknown word: maybe options, maybe the script
    assert codes(text, ["SBL103"]) == []  # which script runs is not known: no finding about it
    assert codes(text.replace("train_v*.py", "train_v2.py"), ["SBL103"]) == ["SBL103"]

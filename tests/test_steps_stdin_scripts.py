"""Task strings a step's shell reads: ``bash -c STRING``, here-documents and here-strings."""
from __future__ import annotations

from sbatchlint.model.script import Script
from sbatchlint.source import Source


def script(text: str) -> Script:
    return Script(Source(text.encode("utf-8"), "job.sh"))


def unknowns(command):
    return [(p.name, p.task) for w in command.argv for p in w.pieces if not p.known]


def test_unquoted_heredoc_is_a_task_string_expanded_by_the_batch_shell():
    s = script(
        "#!/bin/bash\nPORT=1\n"
        "srun --ntasks-per-node=8 bash -s <<EOF\n"
        "python train.py --port \\$PORT --rank $SLURM_PROCID\n"
        "EOF\n"
    )
    (step,) = s.steps
    assert step.is_string_command and step.string_word is not None
    (command,) = step.task_commands
    assert command.program == "python"
    assert unknowns(command) == [("PORT", True), ("SLURM_PROCID", False)]
    early = [p for p in step.task_string.pieces if not p.known]
    assert [s.data[p.span.start : p.span.end] for p in early] == [b"$SLURM_PROCID"]


def test_quoted_heredoc_is_expanded_by_the_task():
    s = script("#!/bin/bash\nsrun bash <<'EOF'\nX=1\necho $SLURM_PROCID $X\nEOF\n")
    (step,) = s.steps
    echo = step.task_commands[-1]
    assert unknowns(echo) == [("SLURM_PROCID", True)]
    assert echo.argv[2].text == "1"  # the task's own assignment
    assert step.task_values is not None and step.task_values.defined("X")


def test_herestring_is_a_task_string():
    s = script('#!/bin/bash\nCMD="hostname"\nsrun bash <<< "$CMD"\n')
    (step,) = s.steps
    assert step.task_string.text == "hostname\n"
    assert [c.program for c in step.task_commands] == ["hostname"]


def test_script_file_or_redirected_input_is_not_a_task_string():
    s = script(
        "#!/bin/bash\n"
        "srun bash run.sh <<EOF\n$SLURM_NODEID\nEOF\n"
        "srun --input=0 bash <<EOF\necho $SLURM_NODEID\nEOF\n"
        "cat <<EOF\necho $SLURM_NODEID\nEOF\n"
    )
    assert [st.task_string for st in s.steps] == [None, None]


def test_shell_options_with_arguments_before_dash_c():
    s = script('#!/bin/bash\nsrun bash -o pipefail -lc "echo \\$PORT | tee log"\n')
    (step,) = s.steps
    assert step.task_string is not None and step.string_word is step.task_argv[4]
    assert [c.program for c in step.task_commands] == ["echo", "tee"]


def test_string_word_keeps_every_alternative():
    s = script(
        "#!/bin/bash\n"
        "for TP in 1 2; do\n"
        '  srun bash -c "python train.py --tp $TP"\n'
        "done\n"
    )
    (step,) = s.steps
    texts = [v.text for v in step.string_word.alternatives]
    assert texts == ["python train.py --tp 1", "python train.py --tp 2"]

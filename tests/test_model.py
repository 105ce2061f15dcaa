"""The parsed model on scripts in the shapes people write: steps found however srun is spelled,
argv evaluated through assignments, and every character traced back to its source bytes."""
from __future__ import annotations

import os

from sbatchlint.model.script import Script
from sbatchlint.source import Source

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "model")


def script(name: str) -> Script:
    with open(os.path.join(HERE, name), "rb") as handle:
        return Script(Source(handle.read(), name))


def text_script(text: str) -> Script:
    return Script(Source(text.encode(), "job.sh"))


def test_arrays_arithmetic_tests_case_functions_heredocs_parse_cleanly():
    model = script("sweep.sh")
    assert model.errors == []
    assert model.header.get("nodes").value == "2"
    assert model.header.first_command_line == 7


def test_step_in_a_loop_with_a_string_task_command():
    model = script("sweep.sh")
    assert len(model.steps) == 1
    step = model.steps[0]
    assert step.command.in_loop
    assert step.option("kill-on-bad-exit").value == "1"
    assert step.task_string is not None
    commands = [c.texts() for c in step.task_commands]
    assert commands[0] == ["cd", "/lustre/team/repo"]
    launcher = commands[1]
    assert launcher[:4] == ["python", "-m", "torch.distributed.run", "--nproc_per_node=8"]
    # escaped in the batch script: the task's shell expands them
    node_rank = next(w for w in step.task_commands[1].argv if w.text.startswith("--node_rank="))
    unknown = [p for p in node_rank.pieces if not p.known]
    assert [(p.name, p.task) for p in unknown] == [("SLURM_NODEID", True)]


def test_case_branches_are_alternatives():
    model = script("sweep.sh")
    alternatives = {a.text for a in model.steps[0].string_word.alternatives}
    assert any("--layers 12 " in a for a in alternatives)
    assert any("--layers 48 " in a for a in alternatives)


def test_piece_spans_point_at_the_assignment_that_wrote_them():
    model = script("sweep.sh")
    data = model.data
    word = next(w for w in model.steps[0].task_commands[1].argv if w.text == "train.py")
    (piece,) = word.pieces
    assert data[piece.span.start : piece.span.end] == b"train.py"
    assert piece.span.start > data.index(b'CMD="')


def test_srun_through_variables_and_wrappers():
    model = script("wrappers.sh")
    assert [s.command.program for s in model.steps] == ["time", "exec"]
    first, second = model.steps
    assert first.option("container-image").value == "nvcr.io/nvidia/pytorch:25.01"
    assert first.option("container-mounts").value == "/data:/data"
    assert first.option("ntasks").value == "1"
    assert [w.text for w in first.task_argv] == ["python", "prepare.py"]
    assert second.option("label") is not None
    assert [w.text for w in second.task_argv] == ["python", "train.py", "--data", "/data/train"]
    # the option that came from SRUN_CMD points into the assignment's string
    span = first.option("container-mounts").source_span()
    assert model.data[span.start : span.end] == b"--container-mounts=/data:/data"


def test_quoted_array_expands_to_one_word_per_element():
    model = text_script(
        '#!/bin/bash\nFLAGS=(--container-image="$IMG" "--container-mounts=/a:/a")\nIMG=x\n'
        'srun "${FLAGS[@]}" hostname\n'
    )
    step = model.steps[0]
    assert [o.name for o in step.options] == ["container-image", "container-mounts"]
    assert [w.text for w in step.task_argv] == ["hostname"]


def test_unquoted_expansion_is_split_and_quoted_is_not():
    model = text_script('#!/bin/bash\nARGS="-N 2 --ntasks-per-node=8"\nsrun $ARGS x "$ARGS"\n')
    step = model.steps[0]
    assert [o.name for o in step.options] == ["nodes", "ntasks-per-node"]
    assert [w.text for w in step.task_argv] == ["x", "-N 2 --ntasks-per-node=8"]


def test_defaults_and_environment_variables():
    model = text_script('#!/bin/bash\nNNODES=${NODES:-2}\nsrun -N "$NNODES" hostname\n')
    value = model.steps[0].option("nodes")
    word = value.value_word
    texts = [a.text for a in word.alternatives]
    assert texts == ["${NODES}", "2"]
    # Slurm sets SLURM_JOB_NUM_NODES in every job: its default never applies there
    model = text_script('#!/bin/bash\nNNODES=${SLURM_JOB_NUM_NODES:-2}\nsrun -N "$NNODES" hostname\n')
    word = model.steps[0].option("nodes").value_word
    assert word.alternatives is None and not word.known and word.text == "${SLURM_JOB_NUM_NODES}"


def test_export_marks_variables():
    model = text_script("#!/bin/bash\nA=1\nexport A\nB=2\nexport C=3\nsrun x\n")
    values = model.values
    end = len(model.data)
    assert values.is_exported("A", end) and values.is_exported("C", end)
    assert not values.is_exported("B", end)


def test_glued_assignments_before_elif_are_read_as_bash_reads_them():
    # the grammar glues ``A=1 B=2`` to the next line and makes ``elif`` a command name; the
    # model parses it with the statement ended at the newline, as bash does
    model = text_script("#!/bin/bash\nif [ -n \"$A\" ]; then\n  A=1 B=2\nelif true; then\n  x\nfi\n")
    assert model.errors == []
    assert [n.type for n in model.nodes_of_type("elif_clause")] == ["elif_clause"]
    assert [c.program for c in model.commands] == ["true", "x"]


def test_reserved_word_misparse_is_an_error_region():
    # continued onto the elif line, the assignments make ``elif`` a command word for bash too
    model = text_script("#!/bin/bash\nif true; then\n  A=1 B=2 \\\nelif true; then\n  x\nfi\n")
    assert model.errors, "the elif line is parsed as a command: must be reported, not trusted"


def test_crlf_and_bom_keep_byte_offsets():
    data = b"\xef\xbb\xbf#!/bin/bash\r\n#SBATCH --nodes=2\r\nsrun hostname\r\n"
    model = Script(Source(data, "job.sh"))
    directive = model.header.get("nodes")
    assert data[directive.span.start : directive.span.end] == b"--nodes=2"
    assert model.steps[0].task_argv[0].text == "hostname"


def test_short_options_with_an_attached_run_time_value():
    # ``-o log_$X`` written as one word is srun's -o with the rest as its value, like --output=…
    text = b"#!/bin/bash\nsrun -olog_${SLURM_PROCID}.txt -N$NODES -lK python x.py\n"
    (step,) = Script(Source(text, "job.sh")).steps
    assert not step.options_incomplete
    output, nodes = step.option("output"), step.option("nodes")
    assert (output.written, output.value, output.value_known) == ("-o", "log_${SLURM_PROCID}.txt", False)
    assert (nodes.written, nodes.value, nodes.value_known) == ("-N", "${NODES}", False)
    assert [o.name for o in step.options][2:] == ["label", "kill-on-bad-exit"]
    assert [w.text for w in step.task_argv] == ["python", "x.py"]


def test_an_unknown_word_among_srun_options_is_still_incomplete():
    (step,) = Script(Source(b"#!/bin/bash\nsrun $SRUN_ARGS -$FLAGS python x.py\n", "job.sh")).steps
    assert step.options_incomplete


def _every_script_of_the_repository():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ("tests/fixtures", "examples"):
        for directory, _dirs, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith((".sh", ".sbatch", ".slurm", ".sub")):
                    with open(os.path.join(directory, name), "rb") as handle:
                        yield name, handle.read()


def test_program_and_wrappers_without_the_argv_agree_with_the_argv():
    # A batch command evaluates its argv only when asked; its program (from a plain first word)
    # and where the real program starts must be what the evaluated argv says.
    from sbatchlint.model.steps import _basename, unwrap

    extra = b"#!/bin/bash\nA=/opt/bin/python\n$A x.py\n/usr/bin/env X=1 srun hostname\n\\srun y\n\"srun\" z\nexec time srun w\n"
    checked = 0
    for name, data in list(_every_script_of_the_repository()) + [("extra.sh", extra)]:
        lazy, eager = Script(Source(data, name)), Script(Source(data, name))
        for fast, full in zip(lazy.commands, eager.commands):
            argv = full.argv  # evaluated first: program and begin are then read from it
            expected = _basename(argv[0].text) if argv and argv[0].known else ""
            assert (fast.program, fast.begin) == (expected, unwrap(argv)), (name, fast.node.start_byte)
            begin = unwrap(argv)
            if begin < len(argv) and argv[begin].known:  # may_run never rules out the real program
                assert fast.may_run((_basename(argv[begin].text),)), (name, fast.node.start_byte)
            assert "argv" not in fast.__dict__ or fast.program not in ("echo", "cd", "mkdir")
            checked += 1
        assert [s.command.node.start_byte for s in lazy.steps] == [s.command.node.start_byte for s in eager.steps]
    assert checked > 200

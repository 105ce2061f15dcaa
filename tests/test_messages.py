"""How findings read: a first line of at most 100 characters, the rest in help and note lines;
subject and verb agree whatever the count a message names."""
from __future__ import annotations

from lintutil import lint_text


def messages(text: str, code: str, path: str = "job.sh", settings=None):
    return [d.message for d in lint_text(text, [code], path, settings or {}) if d.code == code]


def test_sbl109_one_step_runs_several_steps_run():
    header = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=12\n#SBATCH --time=01:00:00\n"

    def notes(text):
        [d] = [d for d in lint_text(text, ["SBL109"], "job.sh", {"slurm_version": "23.02"}) if d.code == "SBL109"]
        assert d.message == "`--cpus-per-task=12` is not passed on to srun by Slurm 23.02"
        return d.notes[0]

    assert notes(header + "srun python train.py\n").startswith("the step on line 5 runs each task on one CPU")
    assert notes(header + "srun python prep.py\nsrun python train.py\n").startswith(
        "the steps on lines 5, 6 run each task on one CPU")


def test_sbl502_every_other_rank_waits_the_other_ranks_wait():
    everyone = (
        "import torch.distributed as dist\n\n"
        "dist.init_process_group(\"nccl\")\n"
        "if dist.get_rank() == 0:\n"
        "    export_checkpoint()\n"
        "dist.barrier()\n"
    )
    [message] = messages(everyone, "SBL502", path="train.py")
    assert "while every other rank waits in `dist.barrier`" in message
    others = (
        "import torch.distributed as dist\n\n"
        "dist.init_process_group(\"nccl\")\n"
        "if dist.get_rank() == 0:\n"
        "    export_checkpoint()\n"
        "else:\n"
        "    dist.barrier()\n"
    )
    found = messages(others, "SBL502", path="train.py")
    assert found and all("while the other ranks wait in `dist.barrier`" in m for m in found), found


# -- the first line ------------------------------------------------------------------------------
import pytest  # noqa: E402

from sbatchlint import registry  # noqa: E402

FIRST_LINE = 100  # characters: what a finding says first; the rest goes into its help and notes


def _findings(rule):
    path = "script.py" if rule.language == "python" else "job.sh"
    for example in rule.bad_examples():
        for d in lint_text(example.source, [rule.code, *example.also], path, dict(example.settings)):
            if d.code == rule.code:
                yield d


RULES = [pytest.param(rule, id=rule.code) for rule in registry.all_rules()]


@pytest.mark.parametrize("rule", RULES)
def test_first_line_of_every_finding_fits(rule):
    long = [d.message for d in _findings(rule) if len(d.message) > FIRST_LINE or "\n" in d.message]
    assert not long, f"{rule.code}: first lines over {FIRST_LINE} characters (put the rest in help/notes): {long}"


def test_help_and_notes_are_printed_after_the_frame():
    from sbatchlint.diagnostics import Diagnostic, Severity
    from sbatchlint.report import FileResult
    from sbatchlint.report.text import frame
    from sbatchlint.source import Source, Span

    source = Source(b"#!/bin/bash\nsrun hostname\n", "job.sh")
    d = Diagnostic("SBL107", "missing-kill-on-bad-exit", Severity.WARNING, Span(12, 16), "first line",
                   help="add --kill-on-bad-exit=1", notes=("one rank's failure leaves the others waiting",))
    text = frame(FileResult("job.sh", source, [d]), d, color=False)
    assert text.splitlines()[-2:] == ["  = help: add --kill-on-bad-exit=1",
                                      "  = note: one rank's failure leaves the others waiting"]


def test_notes_and_help_reach_the_formats_with_one_text_per_finding():
    import io
    import json

    from sbatchlint.diagnostics import Diagnostic, Severity
    from sbatchlint.report import FileResult, formatter
    from sbatchlint.source import Source, Span

    source = Source(b"#!/bin/bash\nsrun hostname\n", "job.sh")
    d = Diagnostic("SBL107", "missing-kill-on-bad-exit", Severity.WARNING, Span(12, 16), "first line",
                   help="add --kill-on-bad-exit=1", notes=("the others wait",))
    results = [FileResult("job.sh", source, [d])]
    rendered = {}
    for name in ("github", "sarif", "json", "junit", "gitlab"):
        out = io.StringIO()
        formatter(name)(results, out)
        rendered[name] = out.getvalue()
    assert rendered["github"].rstrip().endswith(
        "::first line%0Anote: the others wait%0Ahelp: add --kill-on-bad-exit=1")
    assert (json.loads(rendered["sarif"])["runs"][0]["results"][0]["message"]["text"]
            == "first line\nnote: the others wait\nhelp: add --kill-on-bad-exit=1")
    assert "\n    note: the others wait\n    help: add --kill-on-bad-exit=1" in rendered["junit"]
    [issue] = json.loads(rendered["gitlab"])
    assert issue["content"]["body"] == "note: the others wait\nhelp: add --kill-on-bad-exit=1"
    [finding] = json.loads(rendered["json"])
    assert (finding["message"], finding["help"], finding["notes"]) == ("first line", "add --kill-on-bad-exit=1",
                                                                        ["the others wait"])

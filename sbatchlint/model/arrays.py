"""Directories every element of a job array writes to.

The elements of ``#SBATCH --array=0-7`` run the same script at the same time, each with its own
``SLURM_ARRAY_TASK_ID`` (and its own ``SLURM_JOB_ID``). A checkpoint or output directory that
names neither, or Bridge's default ``nemo_experiments`` in a working directory they share, is one
directory for all of them: they overwrite each other's files or resume each other's checkpoints.

Left alone: arrays of one element, arrays throttled to one element at a time (``%1``: the usual
way to chain a long training, each element resuming the previous one's checkpoint), and paths
with any part the model cannot show to be the same for every element.

Entry point: ``build_array_outputs(script)``, that is ``Script.array_outputs``.
"""
from __future__ import annotations


from ..lazyclass import dataclass
from ..lazyre import lazy
from ..source import Span
from .values import Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional, Tuple
    from .script import Script
    from .workload import Run

# Arguments that name where a run writes its checkpoints or results.
OUTPUT_OPTION = lazy(
    r"^(--?(save|save[_-]dir|output[_-]dir|checkpoint[_-]dir|ckpt[_-]dir|checkpoints[_-]dir|log[_-]dir|results[_-]dir))(=|$)"
    r"|^(checkpoint\.save|checkpoint\.save_dir|logger\.log_dir)="
)
# Variables with the same value in every element of an array.
JOB_CONSTANT = frozenset(
    {"USER", "LOGNAME", "HOME", "SLURM_ARRAY_JOB_ID", "SLURM_JOB_NAME", "SLURM_SUBMIT_DIR", "SLURM_JOB_ACCOUNT", "SLURM_JOB_PARTITION"}
)
_SINGLE = lazy(r"^\s*\d+\s*$")
_THROTTLE = lazy(r"%\s*1\s*$")


@dataclass(frozen=True)
class SharedDirectory:
    """A directory every element of the array writes to."""

    path: str  # as the model reads it (unknown job-wide parts as ``${NAME}``)
    kind: str  # "checkpoint" (an output option's value) or "experiments" (Bridge's nemo_experiments)
    option: str  # the argument that names it (``--save``), or "" for nemo_experiments
    span: Span  # where to point
    run: "Run"


def _same_everywhere(value: Value) -> bool:
    """No part of the value can differ between the elements of an array."""
    for piece in value.pieces:
        if not piece.known and (piece.task or piece.name not in JOB_CONSTANT):
            return False
    return bool(value.pieces)


def array_spec(script: "Script") -> Optional[Tuple[str, Span]]:
    """The header's ``--array`` value and span, when it makes several elements that may run at
    the same time."""
    directive = script.header.get("array")
    if directive is None or not directive.value or directive.value_span is None:
        return None
    value = directive.value
    if _SINGLE.match(value) or _THROTTLE.search(value):
        return None
    return value, directive.value_span


def build_array_outputs(script: "Script") -> List[SharedDirectory]:
    if array_spec(script) is None:
        return []
    from .containers import command_pieces, site_span

    out: List[SharedDirectory] = []
    for run in script.runs:
        step = run.step
        context = command_pieces(step.command)
        args = list(run.args)
        found = False
        for index, word in enumerate(args):
            match = OUTPUT_OPTION.match(word.text)
            if match is None:
                continue
            text = word.text
            if "=" in text:
                cut = len(text[: text.index("=") + 1].encode("utf-8"))
                value = word.value.slice(cut, len(text.encode("utf-8")))
                option = text[: text.index("=")]
            elif index + 1 < len(args):
                value = args[index + 1].value
                option = text
            else:
                continue
            found = True
            if not value.pieces or not _same_everywhere(value) or any(p.task for p in value.pieces):
                continue
            span = site_span(value.pieces, context) or word.span
            out.append(SharedDirectory(value.text, "checkpoint", option, span, run))
        if found or not run.bridge_training or run.resumes or run.saves_explicitly:
            continue
        directory = _experiments_directory(script, run)
        if directory is not None:
            span = site_span(run.words[0].pieces, context) if run.words else None
            out.append(SharedDirectory(directory, "experiments", "", span or step.srun_word.span, run))
    return out


def _experiments_directory(script: "Script", run: "Run") -> Optional[str]:
    """Where Bridge's ``nemo_experiments`` lands for the run when every element shares it (its
    persistent working directory), else None."""
    from .containers import PathValue, batch_directory, containers, option_value

    step = run.step
    analysis = containers(script)
    container = analysis.for_step(step)
    for other in step.task_commands:
        if other is run.command:
            break
        if other.program == "cd" and len(other.argv) > 1:
            value = other.argv[1].value
            return value.text.rstrip("/") + "/nemo_experiments" if _same_everywhere(value) else None
    if container.containerized:
        if container.workdir is None or container.workdir.value is None:
            return None  # the image's WORKDIR: nothing outlives the step
        value = option_value(container.workdir)
        if not _same_everywhere(value) or container.mounted(PathValue.of(value)) is False:
            return None
        return value.text.rstrip("/") + "/nemo_experiments"
    batch = batch_directory(script, step)
    if batch is None:
        return "nemo_experiments"  # the job's directory, the same for every element
    return batch.text.rstrip("/") + "/nemo_experiments" if _same_everywhere(batch) else None

"""SBL301–SBL309: containers, shared storage and job hygiene."""
from __future__ import annotations

import posixpath

from .. import options as option_table
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..lazyclass import dataclass
from ..model.containers import (
    CACHE_DEFAULTS,
    CACHE_LEAVES,
    CACHE_VARIABLES,
    Containers,
    EnvSetting,
    PathUse,
    PathValue,
    STOCK_IMAGE,
    StepContainer,
    batch_directory,
    command_pieces,
    containers,
    image_workdir,
    is_home_cache,
    normalize,
    option_value,
    site_span,
)
from ..model.geometry import geometry
from ..model.sourced import origin_of
from ..model.workload import Run, prepares_packed_data
from ..model.steps import Command, Step, StepOption
from ..model.tasks import tasks_running
from ..model.values import Piece, Value, Word
from ..registry import register
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Sequence, Tuple

# -- what a task command launches ----------------------------------------------------------------
UV_RUN_VALUE_OPTIONS = frozenset(
    (
        "--with --with-editable --with-requirements --python -p --project --directory --extra --group "
        "--only-group --no-group --env-file --index --default-index --index-url --extra-index-url "
        "--find-links -f --package --config-file --cache-dir --refresh-package --reinstall-package "
        "--upgrade-package -P --no-binary-package --no-build-package --resolution --prerelease "
        "--link-mode --index-strategy --keyring-provider --exclude-newer --color --python-preference "
        "--python-platform --no-extra --config-setting -C"
    ).split()
)
UV_GLOBAL_VALUE_OPTIONS = frozenset("--directory --project --cache-dir --config-file --color".split())
# uv run options that also decide what ``uv sync`` installs (copied into the warm-up step).
UV_SYNC_OPTIONS = frozenset(
    (
        "--extra --all-extras --no-extra --group --no-group --only-group --all-groups --no-default-groups "
        "--dev --no-dev --only-dev --frozen --locked --package --all-packages --python -p --no-editable "
        "--index --default-index --index-url --extra-index-url --find-links -f --active --directory --project"
    ).split()
)
TRIVIAL_PROGRAMS = frozenset(
    "true false hostname nvidia-smi echo env printenv sleep date pwd uname id whoami nproc".split()
)


# -- editing helpers -----------------------------------------------------------------------------
def statement_line(script, step):
    """A new line before the statement that runs a step: model/placement.py places shell edits
    (imported when a check first asks: a script with no container finding needs none)."""
    from ..model import placement

    return placement.statement_start(script, step)


def quote_context(script, offset: int) -> str:
    """The quoting at a byte of the batch script: '' , '"', "'" or "$'"."""
    node = script.root.descendant_for_byte_range(offset, offset)
    while node is not None:
        if node.type == "raw_string":
            return "'"
        if node.type == "ansi_c_string":
            return "$'"
        if node.type in ("string", "translated_string"):
            return '"'
        if node.type in ("heredoc_body", "heredoc_content"):
            return "heredoc"
        node = node.parent
    return ""


SIMPLE = lazy(r"^(?:[\w./:@%+,=-]|\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*\})+$")
SAFE_LITERAL = lazy(r"^[\w./:@%+,=-]+$")
NEMO_IMAGE_NAME = lazy(r"(^|[/#:_.\-])nemo([:_.\-]|$)")
NODE_LOCAL_DIRECTORY = lazy(r"^/(tmp|dev/shm|var/tmp)(/|$)")
PRETRAIN_ENTRY = lazy(r"(^|/)pretrain_\w+\.py$")


def shell_text(script, value: Value, context: Sequence, inside: str) -> Optional[str]:
    """How to write a value at a new place so the batch shell gives it the same text.

    ``inside`` is the quoting at the new place: '' (a bare word), '"' (inside a double-quoted
    string). Reuses the script's own spelling (``$WORKDIR``) when it is a plain run of variables
    and path characters; else the literal value when it is fully known.
    """
    if any(not p.known and p.task for p in value.pieces):
        return None
    site = site_span(value.pieces, context)
    if site is not None:
        written = script.data[site.start : site.end].decode("utf-8", "replace")
        if SIMPLE.match(written):
            if inside == '"' or "$" not in written:
                return written
            return f'"{written}"'
    if value.known:
        text = value.text
        if SAFE_LITERAL.match(text):
            return text
        if inside == "":
            return _quote(text)
    return None


def _option_span(opt: StepOption, step: Step) -> Span:
    return site_span([p for w in opt.words for p in w.pieces], command_pieces(step.command)) or opt.span


def _header_has(script, name: str) -> bool:
    return script.header.get(name) is not None


def _multi_node(script, step: Step) -> bool:
    return geometry(script, step).multi_node


def _single_task(script, step: Step) -> bool:
    shape = geometry(script, step)
    if shape.ntasks.value == 1:
        return True
    return shape.nodes.value == 1 and shape.tasks_per_node.value == 1


def _trivial(step: Step) -> bool:
    programs = [c.program for c in step.task_commands]
    return bool(programs) and all(p in TRIVIAL_PROGRAMS for p in programs)


# == SBL301 ======================================================================================
KIND_WORDS = {
    "workdir": "the container working directory",
    "cd": "the task's working directory",
    "argument": "a path in the task command",
    "environment": "a path in the task's environment",
    "cache": "the cache directory",
}


@register
class PathNotMounted(Rule):
    code = "SBL301"
    name = "path-not-mounted"
    severity = Severity.ERROR
    summary = "A shared-filesystem path a containerized step uses is under no `--container-mounts` destination."
    what = """
        Collects the paths each containerized step uses inside its container: the
        `--container-workdir`, the directories the task command enters with `cd`, absolute paths
        among its arguments (`--data-path /lustre/…`, `checkpoint.save=/lustre/…`), and the cache
        variables (`HF_HOME`, `UV_CACHE_DIR`, `NEMO_HOME`…) its environment carries, all resolved
        through the script's variables. A path on a shared filesystem that no destination of the
        step's `--container-mounts` covers is reported. Shared means: under a configured
        `shared-roots` prefix or, without configuration, under a mount source, a well-known shared
        filesystem (`/lustre`, `/gpfs`, `/scratch`, `/fsx`, `/shared`, home directories) or a
        directory the batch shell itself uses on the host. Paths that only exist in the image
        (`/opt/…`, `/workspace`) are left alone, and so are paths or mounts the model cannot
        resolve. Directories the cluster mounts into every container by itself can be listed in
        the `container-auto-mounts` setting.
    """
    why = """
        A container sees only its image and what pyxis mounts into it. A repository, dataset,
        checkpoint directory or cache on the shared filesystem that is not mounted does not exist
        inside the container: the step fails with "No such file or directory" or, worse, writes
        checkpoints and caches into the container's own filesystem, where they are lost when the
        step ends and are never shared between nodes.
    """
    fix_safety = """
        There is no automatic fix: which directory to mount (the path itself or a parent that
        holds other inputs too) is a decision about the cluster's storage layout.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                #SBATCH --output=/lustre/fsw/proj/logs/train_%j.log
                IMAGE=nvcr.io/nvidia/pytorch:25.01-py3
                DATA=/lustre/datasets/c4
                srun --container-image=$IMAGE \\
                     --container-mounts=/lustre/fsw/proj:/lustre/fsw/proj \\
                     --container-workdir=/lustre/fsw/proj/repo \\
                     python train.py --data-path $DATA/train
                """
            ),
            contains="/lustre/datasets/c4/train",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                export HF_HOME=/scratch/alice/hf_cache
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/scratch/alice/repo:/scratch/alice/repo \\
                     --container-workdir=/scratch/alice/repo \\
                     python convert.py
                """
            ),
            title="a cache directory outside the mounts",
            contains="HF_HOME",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                IMAGE=nvcr.io/nvidia/pytorch:25.01-py3
                MOUNTS=/lustre/fsw/proj:/lustre/fsw/proj
                MOUNTS="$MOUNTS,/lustre/datasets:/lustre/datasets"
                srun --container-image=$IMAGE --container-mounts=$MOUNTS \\
                     --container-workdir=/lustre/fsw/proj/repo \\
                     python train.py --data-path /lustre/datasets/c4/train --save /opt/results
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     python /opt/Megatron-Bridge/examples/conversion/convert.py --out /lustre/out
                """
            ),
            title="mounts the model cannot read: nothing is claimed",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        reported = set()
        for use in analysis.container_paths:
            step = use.step
            if step is None:
                continue
            container = analysis.for_step(step)
            if not container.containerized or not container.has_mounts or container.uncertain:
                continue
            path = use.path
            if not (path.absolute or path.home) or not analysis.is_shared(path):
                continue
            if container.mounted(path) is not False:
                continue
            key = (use.span, path.text)
            if key in reported or (id(step), path.directory) in reported:
                continue
            reported.add(key)
            reported.add((id(step), path.directory))
            yield self._report(script, analysis, container, use)

    def _report(self, script, analysis: Containers, container: StepContainer, use: PathUse) -> Diagnostic:
        path = use.path
        if use.kind in ("cache", "environment") and use.variable:
            what = f"`{use.variable}`"
        elif use.variable and use.kind == "argument":
            what = f"`${use.variable}` in the task command"
        else:
            what = KIND_WORDS.get(use.kind, "a path")
        destinations = [normalize(m.destination.text) for m in container.mounts if m.destination.absolute]
        mounted = ", ".join(f"`{d}`" for d in destinations[:4]) or "nothing usable"
        if use.kind == "workdir":
            consequence = "pyxis cannot enter it and the step fails at start"
        elif use.kind == "cache":
            consequence = "the cache is written inside the container, separately on every node, and lost when the step ends"
        else:
            consequence = "it does not exist inside the container, so the task fails or its output stays in the container and is lost"
        message = f"`{path.text}` ({what}) is not mounted in the container"
        notes = [
            "it is on the shared filesystem but no `--container-mounts` destination of this step covers it "
            f"(mounted: {mounted})",
            consequence,
        ]
        other = container.mount_from(path)
        if other is not None and other.same_path is False:
            rest = normalize(path.directory)[len(normalize(other.source.text)) :]
            notes.append(f"the mount `{other.text}` shows it at `{normalize(other.destination.text) + rest}` instead")
        directory = path.directory
        return self.report(
            script,
            use.span,
            message,
            label="not mounted in the container",
            help=f"mount it (or a directory above it) at the same path: `--container-mounts=…,{directory}:{directory}`",
            notes=notes,
        )


# == SBL302 ======================================================================================
@register
class MountPathDiffers(Rule):
    code = "SBL302"
    name = "mount-path-differs"
    severity = Severity.WARNING
    summary = "A mount `SRC:DST` with SRC ≠ DST for a directory the job uses both in the batch shell and in the container."
    what = """
        Looks at every `--container-mounts` entry whose destination differs from its source and
        reports it when the job uses that directory on both sides: the batch shell under the
        source path, and the containerized task under either name. The log files of
        `--output`/`--error` do not count: Slurm opens them on the host, and no path crosses
        between the two sides through them.
    """
    why = """
        One directory with two names is a trap: a path the task writes into a log, a checkpoint's
        config or a file list (`/data/run1/iter_100`) does not exist for the batch shell and for
        later jobs, and a path the batch shell passes into the task (`$LOGDIR`, expanded early)
        names nothing inside the container. Mounting shared directories at their own path
        (`/lustre/x:/lustre/x`) keeps every path valid everywhere.
    """
    fix_safety = """
        There is no automatic fix: renaming the destination changes every container-side path
        the job and its configs use.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                #SBATCH --output=/lustre/fsw/alice/logs/%x_%j.log
                RUN=/lustre/fsw/alice/runs/exp1
                mkdir -p $RUN
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice/runs:/runs \\
                     python train.py --save /runs/exp1
                """
            ),
            contains="/runs",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                RUN=/lustre/fsw/alice/runs/exp1
                mkdir -p $RUN
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice/runs:/lustre/fsw/alice/runs \\
                     python train.py --save $RUN
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/datasets/imagenet:/data:ro \\
                     python train.py --data /data
                """
            ),
            title="a read-only input under another name, never used by the batch shell",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=/lustre/fsw/alice/jobs/run7/batch_%j.out
                srun --output=/lustre/fsw/alice/jobs/run7/task_%j.out \\
                     --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice/jobs/run7:/job \\
                     --container-workdir=/job python train.py --out /job/results
                """
            ),
            title="only the log files Slurm opens on the host lie in the directory",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        reported = set()
        for container in analysis.containerized:
            for mount in container.mounts:
                if mount.same_path is not False or not mount.source.absolute or not mount.destination.absolute:
                    continue
                source, destination = mount.source, mount.destination
                if not (source.complete and destination.complete):
                    continue
                host = analysis.shell_index.first_under(source.text)
                if host is None:
                    continue
                inside = analysis.step_index(container.step).first_under(source.text, destination.text)
                if inside is None:
                    continue
                key = (mount.span, mount.text)
                if key in reported:
                    continue
                reported.add(key)
                rest = normalize(host.path.directory)[len(normalize(source.text)) :]
                seen_as = normalize(destination.text) + rest
                yield self.report(
                    script,
                    mount.span,
                    f"`{normalize(source.text)}` is mounted at another path, `{normalize(destination.text)}`",
                    label="mounted under another path",
                    help=f"mount it at its own path: `{normalize(source.text)}:{normalize(source.text)}`",
                    notes=(
                        f"the batch shell uses `{host.path.text}`, which the task sees as `{seen_as}`",
                        "a path written on one side (logs, checkpoints, configs) names nothing on the other",
                    ),
                )


# == SBL303 / SBL304: caches that must be shared ==================================================
def _shared_root(script, analysis: Containers, container: StepContainer, name: str):
    """A shared directory for a cache, from the script alone: (value text, anchor, reason).

    First the parent of another cache the same task already keeps on a mounted shared path;
    else the same-path mount that covers the task's working directory. The text reuses the
    script's own spelling of the other cache's value when it can (``$SHARED/cache``).
    """
    step = container.step
    leaf = CACHE_LEAVES.get(name, name.lower())
    for other in CACHE_VARIABLES:
        if other == name:
            continue
        setting = analysis.task_env(step, other)
        if setting.where != "batch" or setting.assignment is None or len(setting.values) != 1:
            continue
        path = setting.path
        if path is None or not path.complete or not path.absolute or not analysis.is_shared(path):
            continue
        if container.containerized and container.mounted(path) is not True:
            continue
        parent = posixpath.dirname(normalize(path.text))
        if parent in ("", "/") or parent.count("/") < 2:
            continue
        basename = posixpath.basename(parent)
        suffix = leaf if basename in ("cache", ".cache", "caches") else "cache/" + leaf
        written = _written_parent(script, setting, path)
        text = (written + "/" + suffix) if written is not None else (parent + "/" + suffix)
        return text, setting, f"next to `{other}`"
    workdir = _workdir_value(container)
    if workdir is not None:
        path = PathValue.of(workdir)
        mount = container.mount_for(path)
        if (
            mount is not None
            and mount.same_path
            and mount.destination.complete
            and analysis.is_shared(mount.destination)
            and normalize(mount.destination.text).count("/") >= 2
        ):
            return normalize(mount.destination.text) + "/cache/" + leaf, None, "in the mount that holds the working directory"
    return None


def _written_parent(script, setting: EnvSetting, path: PathValue) -> Optional[str]:
    """The other cache's value as written, minus its last component (``$SHARED/cache``)."""
    assignment = setting.assignment
    if assignment is None or assignment.value_node is None:
        return None
    raw = script.data[assignment.value_node.start_byte : assignment.value_node.end_byte].decode("utf-8", "replace")
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        raw = raw[1:-1]
    if not SIMPLE.match(raw):
        return None
    leaf = posixpath.basename(normalize(path.text))
    trimmed = raw.rstrip("/")
    if not trimmed.endswith("/" + leaf):
        return None
    parent = trimmed[: -len(leaf) - 1]
    if not parent or parent.endswith("/") or "$" not in parent and normalize(parent) != posixpath.dirname(normalize(path.text)):
        return None
    return parent


def _workdir_value(container: StepContainer) -> Optional[Value]:
    value = None
    if container.workdir is not None and container.workdir.value is not None:
        value = option_value(container.workdir)
    for command in container.step.task_commands:
        if command.program == "cd" and len(command.argv) > 1 and command.argv[1].text.startswith("/"):
            value = command.argv[1].value
            break
    return value


def _quoted(text: str) -> str:
    return text if SAFE_LITERAL.match(text) else f'"{text}"'


def _cache_fix(script, analysis: Containers, container: StepContainer, name: str, setting: EnvSetting) -> Optional[Fix]:
    """Point the cache at a shared directory inferred from the script, or export it."""
    if setting.where not in ("unset", "batch", "batch-unexported"):
        return None
    assignment = setting.assignment
    value = setting.value
    path = PathValue.of(value) if value is not None and setting.where != "unset" else None
    local = True
    if path is not None and container.containerized:
        local = analysis.is_container_local(container, path)
    edits: List[Edit] = []
    if setting.where == "batch-unexported" and not local and assignment is not None:
        spot = _export_spot(script, assignment)
        if spot is None:
            return None
        return Fix.unsafe(f"export `{name}` so the tasks see it", Edit.insert(spot, "export "))
    found = _shared_root(script, analysis, container, name)
    if found is None:
        return None
    text, anchor, reason = found
    written = _quoted(text)
    if setting.where in ("batch", "batch-unexported") and assignment is not None:
        places = {a.span for a in script.values.assignments.get(name, []) if a.kind in ("assign", "append")}
        if len(places) > 1 or len(setting.values) != 1 or assignment.value_node is None:
            return None  # set in several places: one edit would not decide it
        edits.append(Edit(Span(assignment.value_node.start_byte, assignment.value_node.end_byte), written))
        if setting.where == "batch-unexported":
            spot = _export_spot(script, assignment)
            if spot is None:
                return None
            edits.append(Edit.insert(spot, "export "))
        return Fix.unsafe(f"set `{name}` to `{text}` ({reason})", *edits)
    # not set at all: a new export line
    line = f"export {name}={written}"
    if anchor is not None and anchor.assignment is not None:
        place = _line_after(script, anchor.assignment)
        if place is None:
            return None
        offset, indent = place
        newline = script.source.preferred_newline()
        return Fix.unsafe(f"add `{line}` ({reason})", Edit.insert(offset, indent + line + newline))
    place = statement_line(script, container.step)
    if place is None:
        return None
    offset, indent = place
    newline = script.source.preferred_newline()
    return Fix.unsafe(f"add `{line}` ({reason})", Edit.insert(offset, indent + line + newline))


def _statement_of(assignment) -> Optional[object]:
    node = assignment.node
    if node.parent is not None and node.parent.type == "declaration_command":
        node = node.parent
    if node.parent is None or node.parent.type not in ("program", "compound_statement", "do_group"):
        return None
    return node


def _export_spot(script, assignment) -> Optional[int]:
    if assignment.sourced is not None:
        return None  # set in a sourced file: the export belongs there
    node = assignment.node
    if node.parent is None or node.parent.type not in ("program", "compound_statement", "do_group"):
        return None
    return node.start_byte


def _line_after(script, assignment) -> Optional[Tuple[int, str]]:
    node = _statement_of(assignment)
    if node is None:
        return None
    data = script.data
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    indent = data[line_start : node.start_byte]
    if indent.strip(b" \t"):
        return None
    end = data.find(b"\n", node.end_byte)
    if end < 0 or data[node.end_byte : end].strip(b" \t\r"):
        return None  # something else follows on the line
    return end + 1, indent.decode("utf-8", "replace")


def _nemo_image(container: StepContainer) -> bool:
    """The step runs in a NeMo container (``nvcr.io/nvidia/nemo:25.09``, ``…/nemo-25.09.sqsh``)."""
    image = container.image
    if image is None or image.value is None:
        return False
    return bool(NEMO_IMAGE_NAME.search(posixpath.basename(image.value.replace("#", "/")).lower())) or (
        "nvidia/nemo" in image.value.replace("#", "/").lower()
    )


def _default_mounted(analysis: Containers, container: StepContainer, name: str) -> bool:
    """A shared directory mounted over the default cache location (``/lustre/hf:/root/.cache/huggingface``)."""
    leaf = CACHE_LEAVES.get(name)
    for mount in container.mounts:
        destination = mount.destination
        if not destination.complete:
            continue
        target = normalize(destination.text)
        if leaf is not None and target.endswith("/.cache/" + leaf) or target.endswith("/.cache"):
            if not mount.source.complete or analysis.is_shared(mount.source):
                return True
    return False


def _passes_environment(step: Step) -> bool:
    """Whether srun passes the batch shell's whole environment to the tasks (no ``--export``
    naming only some variables)."""
    export = step.option(option_table.EXPORT)
    if export is None:
        return True
    return export.value is not None and any(part.split("=", 1)[0] == "ALL" for part in export.value.split(","))


def _cache_problem(analysis: Containers, container: StepContainer, setting: EnvSetting) -> Optional[str]:
    name = setting.name
    if setting.where in ("unset", "batch-unexported") and _default_mounted(analysis, container, name):
        return None
    if setting.where == "unset" and analysis.from_submission(name) and _passes_environment(container.step):
        return None  # required from, or exported as, the submitter's value: the script has no say
    default = CACHE_DEFAULTS.get(name, "~/.cache")
    if setting.where in ("unset", "batch-unexported"):
        if setting.where == "unset":
            lead = f"`{name}` is not set by the script, so the tasks use the default `{default}`"
        else:
            lead = f"`{name}` is set but not exported, so the tasks never see it and use the default `{default}`"
        if default.startswith("~"):
            site = _home_left_to_site(analysis, container)
            if site is None:
                return None
            if site:
                return lead + site
        return lead + " inside the container"
    if setting.where == "image":
        path = setting.path
        if path is None or not analysis.is_container_local(container, path):
            return None
        wins = ""
        if setting.overrides is not None:
            wins = (
                f", which wins over the script's `{setting.overrides}` (pyxis keeps the image's own values unless "
                f"`--container-env={name}`)"
            )
        return f"the image sets `{name}` to `{path.text}`{wins}, a directory local to each node's container"
    path = setting.path
    if path is None or not (path.absolute or path.home):
        return None
    if path.home and not is_home_cache(path) and not path.absolute:
        return None
    if not analysis.is_container_local(container, path):
        return None
    where = ""
    if setting.assignment is not None and setting.assignment.sourced is not None and origin_of(setting.assignment) is None:
        where = f" (set by the sourced file `{setting.assignment.sourced.operand}`)"
    if is_home_cache(path):
        site = _home_left_to_site(analysis, container)
        if site is None:
            return None
        if site:
            return f"`{name}` is `{path.text}`{where}" + site
    return f"`{name}` is `{path.text}`{where}, a directory local to each node's container"


def _setting_origin(setting: EnvSetting):
    """The line of a sourced file that sets ``setting``, where its finding is reported."""
    if setting.origin is not None:
        return setting.origin  # set by a file the task string sources
    if setting.where == "unset" or setting.assignment is None or setting.assignment.sourced is None:
        return None
    return origin_of(setting.assignment)


def _home_left_to_site(analysis: Containers, container: StepContainer) -> Optional[str]:
    """For a cache under the home directory: None when the step mounts the home directory
    (``--container-mount-home``: the cache is the user's own, on the host), the wording when the
    step leaves home mounting to the site's enroot configuration, "" when it turns it off."""
    if container.mount_home:
        return None
    if container.mount_home is None and not analysis.roots_configured:
        return (
            "; whether that is shared depends on the site: unless its enroot configuration mounts the "
            "home directory (the step gives no `--container-mount-home`), it is inside each node's container"
        )
    return ""


HF_HINT = lazy(r"(?i)hugging|(^|[^a-z])hf([_\-.]|$)|hf_model|--hf|transformers|from_pretrained|hub")


def _fills_uv_cache(analysis: Containers, step: Step) -> bool:
    """Whether the task downloads or builds into the uv cache: a sync (even a guarded one), a
    syncing ``uv run``, ``uv pip install``, ``uv tool``/``uvx`` (``uv run --no-sync`` does not)."""
    if _uv_syncs(analysis, step):
        return True
    for command in step.task_commands:
        argv = command.argv
        i = command.begin
        if i >= len(argv) or not argv[i].known:
            continue
        program = posixpath.basename(argv[i].text)
        rest = [w.text for w in argv[i + 1 : i + 3]]
        if program == "uvx" or (program == "uv" and rest[:1] in (["tool"], ["pip"])):
            return True
    return False


def _uses_huggingface(script, step: Step) -> bool:
    for launch in script.runs:
        if launch.step is step and (launch.bridge_training or launch.program == "nemo"):
            return True
    for command in step.task_commands:
        if command.program in ("huggingface-cli", "hf"):
            return True
        for word in command.argv:
            if word.known and HF_HINT.search(word.text):
                return True
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HOME"):
        if script.values.defined(name):
            return True
    return False


@register
class NemoHomeNotShared(Rule):
    code = "SBL303"
    name = "nemo-home-not-shared"
    severity = Severity.ERROR
    summary = "Multi-node NeMo/Bridge fine-tuning on packed data with `NEMO_HOME` unset or local to each node's container."
    what = """
        Finds multi-node steps (`#SBATCH --nodes` above 1, or the step's own `--nodes`) that run
        a NeMo or Megatron-Bridge fine-tuning launch (a Bridge entry point, `nemo llm finetune`,
        or any launch in a NeMo container image, with an SFT/PEFT recipe or script name,
        `--peft lora`, `peft=lora` or `--mode finetune`) on data prepared under `NEMO_HOME`, and
        checks the `NEMO_HOME` the tasks see: not set, set but not exported, or pointing at a
        container-local directory such as `/root/.cache/nemo`.

        The signals that data is prepared under `NEMO_HOME`: a packed-sequence option or override
        that is not switched off (`--packed-sequence`,
        `dataset.packed_sequence_specs.packed_sequence_size=4096`,
        `dataset.enable_offline_packing=true`, `pack_sequences=true`, `seq_packing=true`,
        `packed_train_data_path=…`), also when the script collects it in a variable first; a
        packed dataset file (`…/packed_4096.npy`); a packing recipe or entry point
        (`--recipe llama3_8b_sft_packed_config`, `finetune_packed.py`); a packing preparation
        step anywhere in the job (`prepare_packed_sequences.py`). An unpacked run, in-batch
        packing (`dataset.enable_in_batch_packing=true`, which packs each batch in memory from
        the dataset as loaded) and an explicit off (`=false`, `=-1`) are not reported, nor is a
        script that passes the submitter's own `NEMO_HOME` through (`export NEMO_HOME` with no
        value).
    """
    why = """
        Fine-tuning on packed sequences prepares them (`.npy` files) under `NEMO_HOME`, on one
        node. Left at the container default, every node has its own
        empty copy and the ranks of the other nodes fail with
        `TypeError: 'NoneType' object is not an iterator` once training starts.
    """
    fix_safety = """
        Unsafe, and offered only when a shared directory can be read from the script itself: next
        to another cache the job already keeps on a mounted shared path (`HF_HOME`,
        `UV_CACHE_DIR`), or inside the same-path mount that holds the working directory. The fix
        sets `export NEMO_HOME=<that directory>/…/nemo`; it never invents a path.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_sft_config --peft lora \\
                     dataset.enable_offline_packing=true
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                export NEMO_HOME=/lustre/fsw/alice/cache/nemo
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_sft_config --peft lora \\
                     dataset.enable_offline_packing=true
                """
            ),
            unsafe=True,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=4
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export NEMO_HOME=/root/.cache/nemo
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/gpfs/proj:/gpfs/proj \\
                     python /opt/Megatron-Bridge/scripts/training/run_recipe.py \\
                     --recipe qwen3_8b_finetune_config dataset.packed_sequence_specs.packed_sequence_size=4096
                """
            ),
            title="container-local NEMO_HOME and nothing to infer a shared directory from",
            contains="/root/.cache/nemo",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export NEMO_HOME=/lustre/fsw/alice/cache/nemo
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_sft_config \\
                     dataset.enable_offline_packing=true
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_sft_config \\
                     dataset.enable_offline_packing=true
                """
            ),
            title="one node: the packed data is where every rank looks",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_sft_config \\
                     dataset.enable_in_batch_packing=true
                """
            ),
            title="in-batch packing prepares nothing under NEMO_HOME",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export NEMO_HOME
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_sft_packed_config
                """
            ),
            title="the submitter's own NEMO_HOME passed through",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        for launch in script.runs:
            step = launch.step
            if not _multi_node(script, step):
                continue
            container = analysis.for_step(step)
            if not (launch.bridge_training or launch.program == "nemo" or _nemo_image(container)):
                continue
            why = launch.fine_tuning
            if why is None:
                continue
            prepared = launch.prepared_data or prepares_packed_data(script)
            if prepared is None:
                continue  # nothing is prepared under NEMO_HOME: an unpacked or in-batch packed run
            setting = analysis.task_env(step, "NEMO_HOME")
            if setting.where == "unset" and script.values.is_exported("NEMO_HOME", step.command.node.start_byte):
                continue  # `export NEMO_HOME`: the submitter's own NEMO_HOME passed through
            if container.containerized:
                problem = _cache_problem(analysis, container, setting)
            else:
                path = setting.path
                problem = None
                if path is not None and path.complete and NODE_LOCAL_DIRECTORY.match(path.text):
                    problem = f"`NEMO_HOME` is `{path.text}`, a directory local to each node"
            if problem is None:
                continue
            span = setting.span if setting.span is not None and setting.where != "unset" else step.srun_word.span
            fix = _cache_fix(script, analysis, container, "NEMO_HOME", setting)
            yield self.report(
                script,
                span,
                "`NEMO_HOME` is not shared by the nodes of this multi-node fine-tuning",
                fix,
                label="NEMO_HOME not shared",
                help="export NEMO_HOME on the shared filesystem (and mount it), e.g. next to HF_HOME",
                notes=(
                    f"the job fine-tunes on packed data ({why}, {prepared})",
                    problem,
                    "packed data prepared on the first node is missing on the others, whose ranks fail with "
                    "`TypeError: 'NoneType' object is not an iterator`",
                ),
                origin=_setting_origin(setting),
            )
            return


@register
class CacheNotShared(Rule):
    code = "SBL304"
    name = "cache-not-shared"
    severity = Severity.WARNING
    summary = "`HF_HOME` or `UV_CACHE_DIR` unset or container-local in a containerized multi-node job."
    what = """
        For every containerized step that runs on several nodes, checks the `HF_HOME` (when the
        task uses Hugging Face: Bridge/NeMo launches, HF model paths, `huggingface-cli`) and the
        `UV_CACHE_DIR` (when the task syncs or installs with uv on every node; a one-task warm-up
        followed by `uv run --no-sync` does not) that each task sees: not set by the script, set
        but not exported, or a directory local to each node's container (`/root/.cache/…`,
        `~/.cache/…`, an unmounted image path). A value the script takes from the submission
        environment (`${HF_HOME:?…}`, `export HF_HOME` without assigning it) is the submitter's
        and is not reported. The home directory is mounted into the container only with
        `--container-mount-home` or by the site's enroot configuration: with the first, a default
        under `~/.cache` is the user's own and is not reported; with neither, the finding says
        that it depends on the site; with `--no-container-mount-home`, it is per node. A value the
        image sets itself wins over the host's unless the variable is named in `--container-env`
        (pyxis): for the site's images listed in the `image-environment` setting (image pattern →
        {NAME: value}), the image's value is the one checked.
    """
    why = """
        Each node then downloads the same models and builds the same wheels into its own
        container, which costs time and bandwidth, and the container's small writable layer fills
        up: `No space left on device` in the middle of a download or a `uv sync`.
    """
    fix_safety = """
        Unsafe, and offered only when a shared directory can be read from the script: next to
        another cache already kept on a mounted shared path, or inside the same-path mount that
        holds the working directory (or, for a variable set but not exported, by exporting it).
        It never invents a path.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/root/.cache/huggingface
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run --no-sync python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run --no-sync python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
            unsafe=True,
            contains="/root/.cache/huggingface",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     bash -c 'if [ "$SLURM_LOCALID" = 0 ]; then uv sync; else sleep 10; fi && uv run --no-sync python examples/conversion/convert_checkpoints.py'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     bash -c 'if [ "$SLURM_LOCALID" = 0 ]; then uv sync; else sleep 10; fi && uv run --no-sync python examples/conversion/convert_checkpoints.py'
                """
            ),
            unsafe=True,
            title="unset, one sync per node: a directory inside the mount that holds the working directory",
            contains="UV_CACHE_DIR",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run --no-sync python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     uv run python /lustre/fsw/alice/infer.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
            title="a single node",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        done = set()
        for container in analysis.containerized:
            step = container.step
            if not _multi_node(script, step) or container.uncertain:
                continue
            for name in ("HF_HOME", "UV_CACHE_DIR"):
                if name in done:
                    continue
                setting = analysis.task_env(step, name)
                if name == "UV_CACHE_DIR" and not _fills_uv_cache(analysis, step):
                    continue
                if name == "HF_HOME" and not (setting.is_set or _uses_huggingface(script, step)):
                    continue
                problem = _cache_problem(analysis, container, setting)
                if problem is None:
                    continue
                done.add(name)
                span = setting.span if setting.span is not None and setting.where != "unset" else step.srun_word.span
                fix = _cache_fix(script, analysis, container, name, setting)
                what = "downloads models" if name == "HF_HOME" else "builds and caches wheels"
                yield self.report(
                    script,
                    span,
                    f"`{name}` is not shared by the nodes of this multi-node step",
                    fix,
                    label=f"{name} not shared",
                    notes=(
                        problem,
                        f"every node {what} separately into its container, which can run out of space "
                        "(`No space left on device`)",
                    ),
                    help=f"export {name} on the shared filesystem and mount it into the container",
                    origin=_setting_origin(setting),
                )


# == SBL305 / SBL306 ==============================================================================
@register
class MountsWithoutImage(Rule):
    code = "SBL305"
    name = "mounts-without-image"
    severity = Severity.WARNING
    summary = "`--container-mounts` on a step with neither `--container-image` nor `--container-name`: pyxis ignores it."
    what = """
        Reports a step that passes `--container-mounts` (or other container options) without
        `--container-image` or `--container-name` on the same `srun`.
    """
    why = """
        Pyxis only starts a container for a command that names an image or a named container;
        otherwise the mounts are silently ignored and the task runs on the host, with the host's
        Python and libraries. An `#SBATCH --container-image` does not help: it containerizes only
        the batch step, never the `srun` steps.
    """
    fix_safety = "There is no automatic fix: only the author knows which image the step should run in."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                srun --ntasks-per-node=1 --container-mounts=$MOUNTS bash -c 'nvidia-smi -L'
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     python /lustre/fsw/alice/train.py
                """
            ),
            count=1,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                srun --container-name=nemo --container-mounts=$MOUNTS python /lustre/fsw/alice/train.py
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        for container in analysis.steps:
            if container.containerized or not container.mount_options or container.uncertain:
                continue
            if container.environment_unknown:
                continue  # a file the model cannot read may export PYXIS_CONTAINER_IMAGE
            step = container.step
            opt = container.mount_options[0]
            notes = ["pyxis ignores the mounts and the task runs on the host"]
            if _header_has(script, option_table.CONTAINER_IMAGE):
                notes.append("the `#SBATCH --container-image` containerizes only the batch step")
            yield self.report(
                script,
                _option_span(opt, step),
                "`--container-mounts` on a step with neither `--container-image` nor `--container-name`",
                label="ignored without an image",
                help="give this srun the same --container-image as the other steps, or drop the mounts",
                notes=notes,
            )


@register
class ContainerStepWithoutMounts(Rule):
    code = "SBL306"
    name = "container-step-without-mounts"
    severity = Severity.WARNING
    summary = "A containerized step with no `--container-mounts` at all: the shared filesystem is invisible to it."
    what = """
        Reports an `srun` with `--container-image` or `--container-name` and no
        `--container-mounts` (in any of the forms the script may build), unless the task only
        runs a probe such as `nvidia-smi` or `hostname`, or the step attaches to a named
        container an earlier step started in the background (`srun --container-name=X … &`):
        pyxis then keeps the running container's mounts. A step that reuses the name of a
        container that has already stopped gets only its own mounts, and is reported.

        Self-contained images are not reported either: a step that uses no host path (no
        argument, working directory or cache on the shared filesystem or in the home directory)
        and whose program lives in its image: a known benchmark (`all_reduce_perf` and the other
        NCCL tests, `ib_write_bw`, `osu_latency`, `nvbandwidth`, `gpu_burn`, `dcgmi`), an
        absolute path not on the shared filesystem (`/opt/bench/bin/run`), or, in an image that is
        not a stock framework or base image (`./bench.sqsh`, not `nvcr.io/nvidia/pytorch`), a
        Python module or a relative script, which then resolves inside the image.
    """
    why = """
        Without mounts the container sees only its image (and perhaps the home directory): the
        repository, the data, the caches and the log or checkpoint directories on the shared
        filesystem are all missing, so the step fails on its first file access or writes results
        that vanish with the container.
    """
    fix_safety = "There is no automatic fix: which directories to mount depends on the cluster."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-workdir=/lustre/fsw/alice/repo \\
                     python train.py --data /lustre/fsw/alice/data
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --ntasks-per-node=1 --container-image=nvcr.io/nvidia/nemo:25.09 nvidia-smi
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/repo python train.py
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-name=server \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice python serve.py &
                sleep 60
                srun --overlap --container-name=server python /lustre/fsw/alice/client.py
                """
            ),
            title="a step attached to a named container that is still running keeps its mounts",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --mpi=pmix --container-image=registry.example.org/perf/nccl-tests:2.13 \\
                     all_reduce_perf -b 8 -e 8G -f 2 -g 1
                srun --mpi=pmix --container-image=./fabric-probe.sqsh /usr/local/fabric/bin/put_latency
                """
            ),
            title="benchmarks that their images carry, using no host path",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        for container in analysis.containerized:
            if container.has_mounts or container.uncertain or _trivial(container.step):
                continue
            if container.environment_unknown:
                continue  # a file the model cannot read may export PYXIS_CONTAINER_MOUNTS
            if _attaches_to_running(analysis, container):
                continue
            if analysis.program_in_image(container) is not None:
                continue  # a self-contained image: a benchmark or a program of its own
            opt = container.image or container.name
            assert opt is not None
            notes = ["the repository, data, caches and logs on the shared filesystem are invisible inside the container"]
            if _header_has(script, option_table.CONTAINER_MOUNTS):
                notes.append("the `#SBATCH --container-mounts` does not reach `srun` steps")
            yield self.report(
                script,
                _option_span(opt, container.step),
                "containerized step without `--container-mounts`",
                label="no mounts",
                help="add --container-mounts=SRC:DST for the shared directories the task uses (same path on both sides)",
                notes=notes,
            )


def _attaches_to_running(analysis: Containers, container: StepContainer) -> bool:
    """The step names a container that an earlier step started in the background (``srun
    --container-name=X … &``): while that one runs, pyxis attaches the step to it and keeps its
    mounts, whatever the step asks for."""
    name = container.name
    if name is None or not name.value_known or not name.value:
        return False
    at = container.step.span.start
    for other in analysis.steps:
        if other is container or other.step.span.start >= at or not other.step.background:
            continue
        if other.name is not None and other.name.value_known and other.name.value == name.value:
            return True
    return False


# == SBL307 ======================================================================================
@dataclass
class UvSync:
    command: Command
    kind: str  # "sync" or "run"
    options: List[Word]  # the uv options that also apply to ``uv sync``
    unknown: bool = False  # an option word the model cannot read


def _uv_syncs(analysis: Containers, step: Step) -> List[UvSync]:
    """The task's commands that sync a uv environment (``uv sync``, a syncing ``uv run``)."""
    env_no_sync = None  # whether the task's environment sets UV_NO_SYNC: read at the first ``uv run``
    out = []
    for command in step.task_commands:
        argv = command.argv
        i = command.begin
        if i >= len(argv) or not argv[i].known or posixpath.basename(argv[i].text) != "uv":
            continue
        options: List[Word] = []  # global options that say where the project is
        unknown = False
        i += 1
        while i < len(argv) and argv[i].text.startswith("-"):
            name = argv[i].text.split("=", 1)[0]
            takes = argv[i].text in UV_GLOBAL_VALUE_OPTIONS
            if name in ("--directory", "--project"):
                options.extend(argv[i : i + (2 if takes else 1)])
            i += 2 if takes else 1
        if i >= len(argv):
            continue
        sub = argv[i].text
        if sub == "sync":
            rest = argv[i + 1 :]
            texts = [w.text for w in rest]
            if "--check" in texts or "--dry-run" in texts:
                continue
            unknown = any(not w.known for w in rest + options)
            out.append(UvSync(command, "sync", options + list(rest), unknown))
        elif sub == "run":
            if any(e.name == "UV_NO_SYNC" for e in command.env):
                continue
            if env_no_sync is None:
                setting = analysis.task_env(step, "UV_NO_SYNC")
                env_no_sync = setting.is_set and setting.value is not None and setting.value.text not in ("", "0", "false")
            if env_no_sync:
                continue
            j = i + 1
            syncing = True
            while j < len(argv) and argv[j].text.startswith("-") and argv[j].text not in ("-m", "--module"):
                text = argv[j].text
                name = text.split("=", 1)[0]
                if name in ("--no-sync", "--no-project"):
                    syncing = False
                takes = name in UV_RUN_VALUE_OPTIONS and "=" not in text
                if name in UV_SYNC_OPTIONS:
                    options.append(argv[j])
                    if takes and j + 1 < len(argv):
                        options.append(argv[j + 1])
                if not argv[j].known:
                    unknown = True
                j += 2 if takes else 1
            if syncing:
                out.append(UvSync(command, "run", options, unknown))
    return out


def _warmup(script, analysis: Containers, step: Step, sync: UvSync) -> Optional[str]:
    """The one-task ``srun … uv sync`` line for a step, with the step's container flags."""
    data = script.data
    srun = step.srun_word
    context = command_pieces(step.command)
    srun_text = data[srun.span.start : srun.span.end].decode("utf-8", "replace")
    if srun_text != "srun" and not SIMPLE.match(srun_text):
        return None
    if step.task_argv and step.task_argv[0].span == srun.span:
        return None  # the variable holds the task command too
    parts = [srun_text, "--nodes=1", "--ntasks=1"]
    seen = {srun.span}
    wanted = [o for o in step.options if (o.spec is not None and o.spec.pyxis) or o.name in ("export", "chdir")]
    for opt in wanted:
        for word in opt.words:
            if word.span in seen:
                continue
            seen.add(word.span)
            parts.append(data[word.span.start : word.span.end].decode("utf-8", "replace"))
    counts = (option_table.NODES, option_table.NTASKS, option_table.NTASKS_PER_NODE, option_table.NTASKS_PER_GPU)
    if any(o.name in counts and any(w.span in seen for w in o.words) for o in step.options):
        # the copied words may hold the step's own node and task counts, and srun takes the last
        # value given: the one-task counts go after them, or the sync step runs every task again
        parts = [srun_text] + parts[3:] + ["--nodes=1", "--ntasks=1"]
    uv = ["uv", "sync"]
    if sync.unknown:
        return None
    for word in sync.options:
        text = word.text
        uv.append(text if SAFE_LITERAL.match(text) else _quote(text))
    # the directory the task's uv runs in, when the task string enters one first
    directory = None
    for command in step.task_commands:
        if command is sync.command:
            break
        if command.program == "cd":
            if len(command.argv) < 2:
                return None
            directory = shell_text(script, command.argv[1].value, context, "")
            if directory is None:
                return None
        elif any(e.name.startswith("UV_") for e in command.env):
            return None
    if any(e.name.startswith("UV_") for e in sync.command.env):
        return None
    if any(name.startswith("UV_") for name in _task_assigned_names(script, step)):
        return None
    if directory is not None:
        uv += ["--directory", directory]
    return " ".join(parts + uv)


def _task_assigned_names(script, step: Step) -> List[str]:
    from ..model.containers import task_string_assignments

    return list(task_string_assignments(script, step))


@register
class ConcurrentUvSync(Rule):
    code = "SBL307"
    name = "concurrent-uv-sync"
    severity = Severity.WARNING
    summary = "Every task of a multi-node step runs `uv sync` or a syncing `uv run`, with no single-task warm-up first."
    what = """
        Finds multi-node steps whose task runs `uv sync`, or `uv run` without `--no-sync` or
        `--no-project` (and without `UV_NO_SYNC` set), in every task: no earlier one-task step
        ran the sync, and no per-task test limits it to some tasks.
        `uv run --frozen` and `--locked` still sync the environment, so they count.

        Which tasks run the sync is read from the test that decides whether the task's shell
        reaches it (an `if`/`elif`/`while` condition, a `case` pattern, the left side of `&&` or
        `||`), never from the block's body or the command's own arguments: an
        `echo "task $SLURM_PROCID"` next to the sync, or `--node_rank=$SLURM_NODEID` on the
        launch it runs, limits nothing. The verdict for each answer:

        - every task of the step: reported;
        - one task (`[ "$SLURM_PROCID" = 0 ]`, a `--ntasks=1` step): not reported, that is the
          warm-up;
        - one task per node (`[ "$SLURM_LOCALID" -eq 0 ]`): not reported, the usual pattern when
          each node's container holds its own environment (where the environment is on a
          shared filesystem those per-node syncs still race, which the rule cannot tell);
        - the tasks of one node (`$SLURM_NODEID`), another part of the tasks (an `else` branch,
          a `-lt` test) or a het-job component: not reported;
        - unknown, not reported: a test of a launcher's variable (`[ "$RANK" = 0 ]`: srun sets
          no `RANK`, so the test is false or an error in every task unless the task string sets
          it), or a test the rule cannot read;
        - a test the batch shell expanded while building a double-quoted string
          (`bash -c "if [ $SLURM_LOCALID -eq 0 ]; …"`) holds task 0's value in every task: it
          limits nothing, and the sync is reported (SBL201 reports the expansion).
    """
    why = """
        Every task then resolves, downloads and installs into the same shared cache and virtual
        environment at once: dozens of writers race on the shared filesystem, which is slow at
        best and leaves a half-installed environment or corrupted cache entries at worst. One
        warm-up `uv sync` in a single task first makes the later syncs no-ops.
    """
    fix_safety = """
        Safe: the fix inserts, right before the step, a one-task step with the same container
        flags (`srun --nodes=1 --ntasks=1 … uv sync`), which only fills the cache and environment
        the step would fill anyway; the step itself is unchanged.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                srun --nodes=1 --ntasks=1 --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS --container-workdir=/lustre/fsw/alice/Megatron-Bridge uv sync
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                WORKDIR=/lustre/fsw/alice/Megatron-Bridge
                SRUN_CMD="srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw"
                CMD="cd $WORKDIR && uv sync --all-extras && uv run --no-sync python scripts/training/run_recipe.py"
                for RECIPE in llama3_8b_pretrain_config; do
                    rm -rf $WORKDIR/nemo_experiments
                    $SRUN_CMD bash -c "$CMD --recipe $RECIPE"
                done
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                WORKDIR=/lustre/fsw/alice/Megatron-Bridge
                SRUN_CMD="srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw"
                CMD="cd $WORKDIR && uv sync --all-extras && uv run --no-sync python scripts/training/run_recipe.py"
                for RECIPE in llama3_8b_pretrain_config; do
                    rm -rf $WORKDIR/nemo_experiments
                    $SRUN_CMD --nodes=1 --ntasks=1 uv sync --all-extras --directory "$WORKDIR"
                    $SRUN_CMD bash -c "$CMD --recipe $RECIPE"
                done
                """
            ),
            title="srun through a variable, the task enters the repository first",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                srun --nodes=1 --ntasks=1 --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge uv sync
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=$MOUNTS \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     uv run python examples/conversion/convert_checkpoints.py --hf-model meta-llama/Llama-3.1-8B
                """
            ),
            title="phase 1, then phase 2",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                CMD="if [ \\"\\$SLURM_LOCALID\\" -eq 0 ]; then uv sync; else sleep 10; fi && uv run --no-sync python convert.py"
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge bash -c "$CMD"
                """
            ),
            title="a local-rank guard",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        warmed: List[Step] = []
        batch_sync_at: Optional[int] = None
        step_commands = {id(s.command) for s in script.steps}
        for command in script.commands:
            if command.in_string or id(command) in step_commands:
                continue
            if not command.may_run(("uv",)):
                continue  # cannot be `uv sync` (its argv is left unevaluated)
            argv = command.argv
            i = command.begin
            if i + 1 < len(argv) and argv[i].text == "uv" and argv[i + 1].text == "sync":
                batch_sync_at = command.node.start_byte if batch_sync_at is None else batch_sync_at
        for step in script.steps:
            syncs = _uv_syncs(analysis, step)
            if not syncs:
                continue
            if _single_task(script, step):
                warmed.append(step)
                continue
            if not _multi_node(script, step):
                continue
            start = step.command.node.start_byte
            if any(w.command.node.start_byte < start for w in warmed):
                continue
            container = analysis.for_step(step)
            if batch_sync_at is not None and batch_sync_at < start and not container.containerized:
                continue
            racing = [(s, tasks_running(script, s.command)) for s in syncs]
            racing = [(s, who) for s, who in racing if not who.tested]  # no per-task test narrows it
            if not racing:
                continue
            sync, who = racing[0]
            fix = None
            place = statement_line(script, step)
            text = _warmup(script, analysis, step, sync) if place is not None else None
            if place is not None and text is not None:
                offset, indent = place
                newline = script.source.preferred_newline()
                fix = Fix.safe("run `uv sync` once in a single task before the step", Edit.insert(offset, indent + text + newline))
            what = "`uv sync`" if sync.kind == "sync" else "`uv run`"
            shape = geometry(script, step)
            count = shape.ntasks.value
            tasks = "both tasks" if count == 2 else f"all {count} tasks" if count else "every task"
            run = "run" if count else "runs"  # every task runs, all 16 tasks run
            notes = [] if sync.kind == "sync" else ["`uv run` syncs the environment first"]
            notes.append("they race on the shared uv cache and virtual environment")
            uv_word = sync.command.argv[sync.command.begin]
            span = site_span(uv_word.pieces, command_pieces(step.command)) or step.srun_word.span
            yield self.report(
                script,
                span,
                f"{tasks} of this multi-node step {run} {what} at once, with no single-task warm-up before it",
                fix,
                label="concurrent uv sync",
                help="run `srun --nodes=1 --ntasks=1 <same container flags> uv sync` first, then `uv run --no-sync`",
                notes=notes,
            )


# == SBL308 ======================================================================================
MLM_DIR = "3rdparty/Megatron-LM"


def _pythonpath_ok(script, analysis: Containers, launch: Run) -> Optional[bool]:
    """Whether the launch's PYTHONPATH holds 3rdparty/Megatron-LM (None: cannot tell)."""
    command = launch.command
    values: List[Value] = []
    for env in command.env:
        if env.name == "PYTHONPATH":
            values.append(env.value)
    start = command.begin
    for word in command.argv[:start]:
        if word.text.startswith("PYTHONPATH="):
            values.append(word.value)
    if not values:
        setting = analysis.task_env(launch.step, "PYTHONPATH")
        if setting.is_set:
            values.extend(setting.values)
        elif setting.where == "unknown":
            return None  # a file the model cannot read is sourced before the step: it may set it
    if not values:
        return False
    for value in values:
        if MLM_DIR in value.text or "Megatron-LM" in value.text:
            return True
    if any(not p.known and p.name != "PYTHONPATH" for v in values for p in v.pieces):
        return None
    return False


def _mlm_fix(script, analysis: Containers, launch: Run) -> Optional[Fix]:
    step = launch.step
    command = launch.command
    context = command_pieces(step.command)
    first = command.argv[0]
    located = [p for p in first.pieces if p.span is not None]
    if not located or not first.known:
        return None
    site = site_span(first.pieces, context)
    if site is None:
        return None
    offset = site.start
    inside = quote_context(script, offset)
    if inside not in ('"', "'"):
        return None
    script_word = launch.script
    assert script_word is not None
    path = script_word.text
    cut = path.find(MLM_DIR)
    workdir_text: Optional[str] = None
    if cut > 0:
        prefix = script_word.value.slice(0, len(path[:cut].rstrip("/").encode("utf-8")))
        workdir_text = shell_text(script, prefix, context, '"') if inside == '"' else (
            prefix.text if prefix.known and SAFE_LITERAL.match(prefix.text) else None
        )
    elif cut == 0 or path.startswith("./" + MLM_DIR):
        value = None
        for other in step.task_commands:
            if other is command:
                break
            if other.program == "cd" and len(other.argv) > 1:
                value = other.argv[1].value
        if value is None:
            container = analysis.for_step(step)
            if container.workdir is not None and container.workdir.value is not None:
                value = option_value(container.workdir)
        if value is not None:
            workdir_text = shell_text(script, value, context, '"') if inside == '"' else (
                value.text if value.known and SAFE_LITERAL.match(value.text) else None
            )
    if workdir_text is None or workdir_text.startswith('"'):
        return None
    keep = "\\${PYTHONPATH:-}" if inside == '"' else "${PYTHONPATH:-}"
    text = f"PYTHONPATH={workdir_text}/{MLM_DIR}:{keep} "
    return Fix.safe(f"prepend `PYTHONPATH={workdir_text}/{MLM_DIR}:…` to the task command", Edit.insert(offset, text))


@register
class MlmMissingPythonpath(Rule):
    code = "SBL308"
    name = "mlm-missing-pythonpath"
    severity = Severity.ERROR
    summary = "Megatron-LM's `pretrain_*.py` from `3rdparty/Megatron-LM` launched without it on `PYTHONPATH`."
    what = """
        Finds task commands that run a `pretrain_*.py` script of the `3rdparty/Megatron-LM`
        checkout inside a Megatron-Bridge tree (`pretrain_gpt.py`, `pretrain_mamba.py`…), through
        python, torchrun or `uv run`, and checks that the `PYTHONPATH` the command sees (set on
        the command, inside the task string, or exported by the batch shell) contains
        `3rdparty/Megatron-LM`.
    """
    why = """
        The container ships its own `megatron-core`, which shadows the submodule's `megatron`
        package: the script then imports a different Megatron than the one it belongs to and dies
        with `ModuleNotFoundError: No module named 'megatron.core.…'` or, worse, trains with
        mismatched code.
    """
    fix_safety = """
        Safe: prepending the submodule to `PYTHONPATH` (and keeping whatever was there) only makes
        the script import the code it was written for. Inside a double-quoted task string the
        existing value is escaped (`\\${PYTHONPATH:-}`) so each task expands its own.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                WORKDIR=/lustre/fsw/alice/Megatron-Bridge
                TRAIN_CMD="cd ${WORKDIR} && uv run --no-sync python -m torch.distributed.run --nproc_per_node=8 \\
                  --nnodes=\\${SLURM_JOB_NUM_NODES} --node_rank=\\${SLURM_NODEID} \\
                  ${WORKDIR}/3rdparty/Megatron-LM/pretrain_gpt.py --tensor-model-parallel-size 2 --mock-data"
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     bash -c "$TRAIN_CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                export UV_CACHE_DIR=/lustre/fsw/alice/cache/uv
                WORKDIR=/lustre/fsw/alice/Megatron-Bridge
                TRAIN_CMD="cd ${WORKDIR} && PYTHONPATH=${WORKDIR}/3rdparty/Megatron-LM:\\${PYTHONPATH:-} uv run --no-sync python -m torch.distributed.run --nproc_per_node=8 \\
                  --nnodes=\\${SLURM_JOB_NUM_NODES} --node_rank=\\${SLURM_NODEID} \\
                  ${WORKDIR}/3rdparty/Megatron-LM/pretrain_gpt.py --tensor-model-parallel-size 2 --mock-data"
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     bash -c "$TRAIN_CMD"
                """
            ),
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     bash -c 'torchrun --nproc_per_node=8 3rdparty/Megatron-LM/pretrain_gpt.py --mock-data'
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     bash -c 'PYTHONPATH=/lustre/fsw/alice/Megatron-Bridge/3rdparty/Megatron-LM:${PYTHONPATH:-} torchrun --nproc_per_node=8 3rdparty/Megatron-LM/pretrain_gpt.py --mock-data'
                """
            ),
            title="a relative script path in a single-quoted string",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                WORKDIR=/lustre/fsw/alice/Megatron-Bridge
                export PYTHONPATH=$WORKDIR/3rdparty/Megatron-LM:${PYTHONPATH:-}
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     torchrun --nproc_per_node=8 $WORKDIR/3rdparty/Megatron-LM/pretrain_gpt.py --mock-data
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --ntasks-per-node=1
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre/fsw:/lustre/fsw \\
                     --container-workdir=/lustre/fsw/alice/Megatron-LM \\
                     torchrun --nproc_per_node=8 pretrain_gpt.py --mock-data
                """
            ),
            title="a standalone Megatron-LM checkout finds its own package",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        for launch in script.runs:
            script_word = launch.script
            if script_word is None or not script_word.known:
                continue
            path = script_word.text
            if MLM_DIR not in path or not PRETRAIN_ENTRY.search(path):
                continue
            if _pythonpath_ok(script, analysis, launch) is not False:
                continue
            span = site_span(script_word.pieces, command_pieces(launch.step.command)) or script_word.span
            yield self.report(
                script,
                span,
                f"`{posixpath.basename(path)}` from `{MLM_DIR}` runs without `{MLM_DIR}` on `PYTHONPATH`",
                _mlm_fix(script, analysis, launch),
                label="PYTHONPATH lacks 3rdparty/Megatron-LM",
                notes=(
                    "the container's own megatron-core is imported instead (`ModuleNotFoundError: No module named "
                    "'megatron.core.…'` or mismatched code)",
                ),
                help="prefix the command with `PYTHONPATH=$WORKDIR/3rdparty/Megatron-LM:${PYTHONPATH:-}` (escape `$` inside a task string)",
            )


# == SBL309 ======================================================================================
def _removes_experiments(command: Command) -> bool:
    return command.program == "rm" and any("nemo_experiments" in w.text for w in command.args)


def _task_directory(analysis: Containers, launch: Run) -> Tuple[Optional[Value], str]:
    """The directory the launch runs in: (value, "cd" | "workdir" | "chdir" | "host" | "image")."""
    step = launch.step
    value = None
    for other in step.task_commands:
        if other is launch.command:
            break
        if other.program == "cd" and len(other.argv) > 1:
            value = other.argv[1].value
    if value is not None:
        return value, "cd"
    container = analysis.for_step(step)
    if container.containerized:
        if container.workdir is not None and container.workdir.value is not None:
            return option_value(container.workdir), "workdir"
        return None, "image"
    chdir = step.option(option_table.CHDIR)
    if chdir is not None and chdir.value is not None:
        return option_value(chdir), "chdir"
    return None, "host"


def _image_start(script, container: StepContainer, step: Step) -> Optional[Tuple[Optional[Value], Optional[str]]]:
    """Where a containerized step with no ``--container-workdir`` and no ``cd`` of its own starts,
    when that directory outlives the job: (the directory, None) when the image's known WORKDIR is
    itself a mount; (None, the batch directory) when the image's WORKDIR is unknown and the batch
    shell's directory is mounted at the same path; None when the task starts inside the fresh
    container (a known WORKDIR that is not mounted, or nothing says the job's directory is mounted)."""
    if container.environment_unknown:
        return None  # a file the model cannot read may export PYXIS_CONTAINER_WORKDIR
    workdir = image_workdir(container, script.settings)
    if workdir is not None:
        for mount in container.mounts:
            if mount.destination.complete and normalize(mount.destination.text) == workdir:
                return Value((Piece(workdir, None),)), None
        return None
    image = container.image.value if container.image is not None and container.image.value_known else None
    if image and not STOCK_IMAGE.search(image):
        return None  # the site's own image: its WORKDIR is its own business (list it in image-workdirs)
    batch = batch_directory(script, step)
    batch_path = PathValue.of(batch) if batch is not None else None
    if batch_path is None or not batch_path.complete or not batch_path.absolute:
        return None
    mount = container.mount_for(batch_path)
    if mount is None or not mount.same_path:
        return None
    return None, batch_path.text


@register
class StaleExperimentDir(Rule):
    code = "SBL309"
    name = "stale-experiment-dir"
    severity = Severity.WARNING
    summary = "Bridge training with no earlier `rm -rf nemo_experiments` and no explicit resume/load setting."
    what = """
        Finds Megatron-Bridge (or NeMo) training launches that run in a persistent directory (the
        host's, or a mounted container working directory) where nothing earlier in the script
        removes `nemo_experiments`, and whose arguments set no resume or load option
        (`checkpoint.load=…`, `--load`, a resume flag) and no checkpoint directory of their own
        (`checkpoint.save=…`, `--save …`: the checkpoints then do not go to `nemo_experiments`).
        A containerized step with no `--container-workdir` starts where pyxis starts it (as for
        SBL312): in the image's WORKDIR, gone with the container (not reported, unless that
        WORKDIR is itself a mount), or, for an image whose WORKDIR is not known (a `.sqsh` file,
        a variable), in the batch shell's directory when it is mounted at the same path: an info,
        since it depends on the image.
    """
    why = """
        Bridge writes checkpoints under `nemo_experiments/` in the working directory by default
        and, on start, picks up the latest one it finds there. A checkpoint left by an earlier
        run, possibly of another model or configuration, is then silently resumed: the job
        skips its first iterations, fails on a shape mismatch, or trains on from a wrong state.
    """
    fix_safety = """
        Unsafe: the fix inserts `rm -rf <working directory>/nemo_experiments` right before the
        step, which deletes the previous run's checkpoints. Resume on purpose with an explicit
        `checkpoint.load=…` instead when they matter. The removal is guarded by
        `SLURM_RESTART_COUNT`: a job that Slurm requeues (node failure, `--requeue`) runs the
        script again with it set to 1 or more, and must resume from its own checkpoints rather
        than wipe them.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                if [ "${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then rm -rf /lustre/fsw/alice/Megatron-Bridge/nemo_experiments; fi
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config
                """
            ),
            unsafe=True,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                CKPT=/lustre/fsw/alice/checkpoints/llama3_8b
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config \\
                     checkpoint.save=$CKPT checkpoint.load=$CKPT
                """
            ),
            title="an explicit resume",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                export HF_HOME=/lustre/fsw/alice/cache/huggingface
                cd /lustre/fsw/alice/Megatron-Bridge
                rm -rf nemo_experiments
                srun --container-image=nvcr.io/nvidia/nemo:25.09 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/Megatron-Bridge \\
                     python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        reported = set()
        for launch in script.runs:
            if not launch.bridge_training or launch.resumes or launch.saves_explicitly:
                continue
            step = launch.step
            if id(step) in reported:
                continue
            start = step.command.node.start_byte
            if any(
                _removes_experiments(c) and c.node.start_byte < start
                for c in script.commands
                if not c.in_string
            ):
                continue
            if any(_removes_experiments(c) for c in step.task_commands if c is not launch.command):
                continue
            container = analysis.for_step(step)
            directory, where = _task_directory(analysis, launch)
            unknown_image: Optional[str] = None  # the batch directory, where an image without WORKDIR starts
            if where == "image" and container.name is None:
                # pyxis starts the task in the image's WORKDIR, else in the job's directory when it is
                # mounted (the same semantics as SBL312, DOMAIN.md §9)
                landing = _image_start(script, container, step)
                if landing is None:
                    continue  # inside a fresh container: nothing survives from an earlier run
                directory, unknown_image = landing
            if container.containerized and directory is not None:
                if container.mounted(PathValue.of(directory)) is False and container.name is None:
                    continue
            reported.add(id(step))
            span = (site_span(launch.words[0].pieces, command_pieces(step.command)) if launch.words else step.srun_word.span
                    or step.srun_word.span)
            if unknown_image is not None:
                image = container.image.value if container.image is not None and container.image.value_known else None
                what = f"the image `{image}`" if image else "the image"
                yield self.report(
                    script,
                    span,
                    "Bridge training with no `rm -rf nemo_experiments` and no resume setting may resume a stale checkpoint",
                    label="may resume a stale checkpoint",
                    help="remove nemo_experiments before the launch, or resume on purpose with checkpoint.load=…",
                    severity=Severity.INFO,
                    notes=(
                        f"unless {what} sets a WORKDIR, pyxis starts the task in the batch shell's directory "
                        f"`{unknown_image}`, mounted at the same path: `nemo_experiments` lands there and outlives the job",
                        "a checkpoint an earlier run left there is then silently resumed",
                    ),
                )
                continue
            fix = self._fix(script, analysis, launch, directory, where)
            yield self.report(
                script,
                span,
                "Bridge training starts with no `rm -rf nemo_experiments` before it and no resume setting",
                fix,
                label="may resume a stale checkpoint",
                help="remove nemo_experiments before the launch, or resume on purpose with checkpoint.load=…",
                notes=("a checkpoint left in `nemo_experiments` by an earlier run is silently resumed",),
            )

    def _fix(self, script, analysis: Containers, launch: Run, directory: Optional[Value], where: str) -> Optional[Fix]:
        step = launch.step
        place = statement_line(script, step)
        if place is None:
            return None
        context = command_pieces(step.command)
        container = analysis.for_step(step)
        if directory is None:
            if where != "host":
                return None
            target = "nemo_experiments"
        else:
            path = PathValue.of(directory)
            text: Optional[str] = None
            if container.containerized:
                mount = container.mount_for(path)
                if mount is None:
                    return None
                if mount.same_path:
                    text = shell_text(script, directory, context, "")
                elif path.complete:
                    host = mount.host_path(path.text)
                    text = _quote(host) if host else None
            else:
                text = shell_text(script, directory, context, "")
            if text is None:
                return None
            if not (text.startswith("/") or text.startswith('"/') or text.startswith("$") or text.startswith('"$')):
                return None  # a relative directory: relative to what the batch shell does not know
            target = text.rstrip("/") + "/nemo_experiments"
        offset, indent = place
        newline = script.source.preferred_newline()
        # a requeued job (node failure, --requeue) runs the script again with SLURM_RESTART_COUNT
        # >= 1: it must resume from its own checkpoints, not wipe them (DOMAIN.md §9)
        guard = 'if [ "${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then'
        return Fix.unsafe(
            f"remove `{target}` before the launch, unless the job was requeued",
            Edit.insert(offset, f"{indent}{guard} rm -rf {target}; fi{newline}"),
        )


# == SBL310 ======================================================================================
def _merged_mounts(script, step: Step, flags: List[StepOption]) -> Optional[Fix]:
    """One ``--container-mounts`` holding every flag's list, when each flag is written out on
    srun's command line: the last flag's value becomes the comma-separated list (each value as
    written, variables included, inside double quotes when it expands one), the other flags go."""
    context = command_pieces(step.command)
    command = step.command.span
    sites: List[Span] = []
    spans: List[Span] = []
    for opt in flags:
        value = option_value(opt)
        pieces = [p for w in opt.words for p in w.pieces]
        if not value.pieces or any(p.span is None or p.loop or p.task for p in pieces):
            return None  # built by a loop or inside a task string: not one place to edit
        if any(w.alternatives for w in opt.words):
            return None
        site = site_span(value.pieces, context)
        span = opt.span  # the whole words, quotes included
        if site is None or site.start >= site.end:
            return None
        if not (command.start <= span.start and span.end <= command.end and span.start <= site.start):
            return None  # the flag is written in a variable's value, not on srun's command line
        sites.append(site)
        spans.append(span)
    if len({(s.start, s.end) for s in spans}) != len(spans):
        return None
    texts = [script.text(site) for site in sites]
    if not all(SIMPLE.match(text) for text in texts):
        return None  # quotes or blanks inside a value: merging them is for a person
    quotes = {p.quote for p in option_value(flags[-1]).pieces}
    merged = ",".join(texts)
    if quotes == {""}:
        merged = f'"{merged}"' if "$" in merged else merged
    elif quotes != {'"'}:
        return None
    edits = [Edit(sites[-1], merged)]
    edits += [Edit.delete_word(script.data, span) for span in spans[:-1]]
    return Fix.safe("merge the mounts into one `--container-mounts` list", *edits)


@register
class RepeatedContainerMounts(Rule):
    code = "SBL310"
    name = "repeated-container-mounts"
    severity = Severity.ERROR
    summary = "`--container-mounts` given more than once on one step: only the last list is mounted."
    what = """
        Finds steps that give pyxis's `--container-mounts` two or more times
        (`--container-mounts=/a:/a --container-mounts=/b:/b`), written out or through a variable
        that holds several flags, and loops that append one flag per entry of a list
        (`for m in $MOUNTS; do ARGS="$ARGS --container-mounts=$m"; done`): an error when the loop's
        list is written out with two or more entries, a warning when it comes from a variable or
        the submission (the mounts are lost as soon as it holds two). A list that grows by commas
        in a loop (`MOUNTS="$MOUNTS,$m"`) is one flag and is fine.
    """
    why = """
        srun hands a SPANK option to the remote side once: slurmstepd, where pyxis sets up the
        container, receives only the last value. Every mount of the earlier flags is missing in
        the container: their paths do not exist there, or name the image's own directories.
        One comma-separated list (`--container-mounts=/a:/a,/b:/b`) mounts them all.
    """
    fix_safety = """
        Safe when every flag is written on srun's command line: the values are joined, as
        written, into the last flag, and the others are removed. None when a flag comes from a
        variable or a loop: the place to merge them is where the list is built (join the
        entries with commas in the loop, and give the flag once after it).
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice/data:/lustre/fsw/alice/data \\
                     --container-mounts="$HOME/.cache:/root/.cache" \\
                     python train.py --data /lustre/fsw/alice/data
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=8
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts="/lustre/fsw/alice/data:/lustre/fsw/alice/data,$HOME/.cache:/root/.cache" \\
                     python train.py --data /lustre/fsw/alice/data
                """
            ),
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                MOUNTS="--container-mounts=/lustre/data:/data --container-mounts=/lustre/ckpt:/ckpt"
                srun --container-image=nvcr.io/nvidia/nemo:25.04 $MOUNTS python train.py
                """
            ),
            title="flags from a variable: reported, merged by hand",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                SRUN_CMD="srun --container-image=nvcr.io/nvidia/nemo:25.09"
                for m in /lustre/data:/data /lustre/ckpt:/ckpt; do
                    SRUN_CMD="$SRUN_CMD --container-mounts=$m"
                done
                $SRUN_CMD python /ckpt/train.py --data /data/c4
                """
            ),
            title="one flag per entry of a loop: reported, merged by hand",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                MOUNTS=/lustre/fsw/alice:/lustre/fsw/alice
                for m in /lustre/data:/data /lustre/ckpt:/ckpt; do
                    MOUNTS="$MOUNTS,$m"
                done
                srun --container-image=nvcr.io/nvidia/nemo:25.09 --container-mounts="$MOUNTS" \\
                     python /ckpt/train.py --data /data/c4
                """
            ),
            title="one list, grown in a loop",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/data:/lustre/data,/lustre/ckpt:/lustre/ckpt \\
                     python train.py
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        loops = set()
        for step in script.steps:
            loop = analysis.for_step(step).loop_flags
            if loop is not None:
                # one literal entry is one flag; steps that share the loop's variable: reported once
                if (loop.count is None or loop.count >= 2) and loop.span not in loops:
                    loops.add(loop.span)
                    yield self._loop_built(script, step, loop)
                continue
            flags = [opt for opt in step.options if opt.name == option_table.CONTAINER_MOUNTS]
            if len(flags) < 2:
                continue
            last = flags[-1]
            kept = f"`{last.value}`" if last.value_known and last.value else "the last list"
            lost = ", ".join(f"`{opt.value}`" for opt in flags[:-1] if opt.value_known and opt.value) or "the others"
            yield self.report(
                script,
                _option_span(flags[0], step),
                f"`--container-mounts` is given {len(flags)} times on this step: only the last one counts",
                _merged_mounts(script, step, flags),
                label="repeated --container-mounts",
                help="give one comma-separated list: `--container-mounts=SRC:DST,SRC2:DST2`",
                notes=(
                    f"the remote side, where pyxis builds the container, receives only the last one ({kept}), so "
                    f"{lost} is not mounted",
                ),
            )

    def _loop_built(self, script, step: Step, loop) -> Diagnostic:
        line = script.source.line_of(loop.loop.start)
        listed = f" of `${loop.listed}`" if loop.listed else ""
        if loop.count is not None and loop.count >= 2:
            return self.report(
                script,
                loop.span,
                f"the loop on line {line} appends one `--container-mounts` to `${loop.variable}` for each of its "
                f"{loop.count} entries",
                label="one --container-mounts per entry",
                help="append the entries to one comma-separated list and give `--container-mounts` once, after the loop",
                notes=(
                    "the remote side, where pyxis builds the container, receives only the last flag, so every mount "
                    "but the last entry's is lost",
                ),
            )
        return self.report(
            script,
            loop.span,
            f"the loop on line {line} appends a `--container-mounts` to `${loop.variable}` per entry{listed}",
            label="one --container-mounts per entry",
            help="append the entries to one comma-separated list and give `--container-mounts` once, after the loop",
            severity=Severity.WARNING,
            notes=(
                "when the list holds two or more entries, pyxis receives only the last flag and every other mount is "
                "lost",
            ),
        )


# == SBL311 ======================================================================================
@register
class ScriptDirectoryFromSpool(Rule):
    code = "SBL311"
    name = "script-directory-from-spool"
    severity = Severity.ERROR
    summary = "The batch shell finds files through the directory of `$0` or `${BASH_SOURCE[0]}`: in a job that is slurmd's spool directory."
    what = """
        Finds the script's own directory read by the batch shell from `$0` or
        `${BASH_SOURCE[0]}` (`$(dirname "$0")`, `${0%/*}`, `$(cd "$(dirname
        "${BASH_SOURCE[0]}")" && pwd)`) and used, directly or through the variables it is
        assigned to, to find files: `source`/`.`, `cd`, a test, a step's command or entry point, a
        program's argument. Printing it is no use, and neither is the script file itself
        (`cp "$0" "$LOG_DIR"` copies the right text). Guarded forms get no finding:
        `${SLURM_SUBMIT_DIR:-$(dirname "$0")}`, a reading inside an `if` or `&&`/`||` that tests
        `SLURM_JOB_ID` or `SLURM_SUBMIT_DIR`, a variable also set from `$SLURM_SUBMIT_DIR`. In a
        sourced file, a `bash -c` string a task runs, or a script that srun runs, `$0` is a real
        path: only the batch script's own reading is checked.
    """
    why = """
        sbatch stores a copy of the script and slurmd runs that copy: in a batch job `$0` and
        `${BASH_SOURCE[0]}` are `…/slurmd/job00155/slurm_script`, not the submitted file. Their
        directory holds nothing of yours, so `source "$(dirname "$0")/env.sh"` fails with "No such
        file or directory", and `python "$SCRIPT_DIR/train.py"` with "can't open file". The
        script works when run with `bash job.sh` and breaks only under sbatch.
    """
    fix_safety = """
        Unsafe: the fix puts the reading behind `${SLURM_SUBMIT_DIR:-…}`. `$SLURM_SUBMIT_DIR` is
        the directory sbatch was run from, which is the script's directory only when the job is
        submitted from there (`cd scripts && sbatch job.sh`, not `sbatch scripts/job.sh`);
        outside Slurm the script reads `$0` as before. Write the real path instead when the
        job is submitted from elsewhere.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
                source "$SCRIPT_DIR/env.sh"
                srun python "$SCRIPT_DIR/train.py" --config "$SCRIPT_DIR/llama.yaml"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                SCRIPT_DIR="${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
                source "$SCRIPT_DIR/env.sh"
                srun python "$SCRIPT_DIR/train.py" --config "$SCRIPT_DIR/llama.yaml"
                """
            ),
            unsafe=True,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                source "$(dirname "$0")/cluster_env.sh"
                srun python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                source "${SLURM_SUBMIT_DIR:-$(dirname "$0")}/cluster_env.sh"
                srun python train.py
                """
            ),
            unsafe=True,
            title="sourcing a settings file next to the script",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                if [ -n "${SLURM_JOB_ID:-}" ]; then
                    SCRIPT_DIR="$SLURM_SUBMIT_DIR"
                else
                    SCRIPT_DIR="$(dirname "$0")"
                fi
                source "$SCRIPT_DIR/env.sh"
                echo "job script: $0"
                srun python train.py
                """
            ),
            title="guarded for a batch job",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for use in script.self_directory_uses:
            reading = script.text(use.reading)
            line = script.source.line_of(use.use.start)
            through = ""
            if use.through:
                through = " (through " + ", ".join(f"`${name}`" for name in use.through) + ")"
            fix = None
            if use.fixable:
                fix = Fix.unsafe(
                    "read the directory from `$SLURM_SUBMIT_DIR` in a job (right when the job is submitted from the "
                    "script's directory)",
                    Edit(use.reading, "${SLURM_SUBMIT_DIR:-" + reading + "}"),
                )
            yield self.report(
                script,
                use.reading,
                f"`{use.origin}` is slurmd's spooled copy in a batch job: this is its spool directory",
                fix,
                label="slurmd's spool directory in a job",
                help="use the script's real directory, or `$SLURM_SUBMIT_DIR` when the job is submitted from it",
                notes=(
                    f"in a batch job `{use.origin}` is `…/slurmd/jobNNNNN/slurm_script`, so `{reading}` is not the "
                    "script's directory",
                    f"`{use.program}` on line {line}{through} looks for files there",
                ),
            )


# == SBL312 ======================================================================================
@register
class ContainerStartsInImageWorkdir(Rule):
    code = "SBL312"
    name = "relative-path-in-image-workdir"
    severity = Severity.WARNING
    summary = "A containerized step runs a relative entry point with no `--container-workdir`: pyxis starts it in the image's WORKDIR."
    what = """
        Finds containerized steps whose launch runs an entry point given by a relative path
        (`python train.py`, `torchrun … scripts/pretrain.py`) with no `--container-workdir` (nor
        `PYXIS_CONTAINER_WORKDIR`) and no `cd` in the task command before it. A warning when the
        image is known to set a WORKDIR: the NGC framework images (`nvcr.io/nvidia/pytorch`,
        `nemo`, `tensorflow`, `jax`: `/workspace`) and the site's images listed in the
        `image-workdirs` setting (image pattern → directory). An info when the image is unknown (a
        variable, a `.sqsh` file) and the batch shell `cd`s into a directory the step mounts at
        the same path: it depends on whether the image sets one. Without that `cd`, or with a
        site's own image (neither stock nor listed), the entry point may be the image's own, and
        there is no finding; nor when a mount puts the job's files at the WORKDIR itself
        (`--container-mounts=$PWD:/workspace`).
    """
    why = """
        Without `--container-workdir`, pyxis starts a step in the image's WORKDIR when the image
        sets one, and in the job's directory only when it does not. The `cd` of the batch shell
        into a mounted checkout does not move the task: on NGC images it starts in `/workspace`,
        and `python train.py` fails with "can't open file '/workspace/train.py'"; outputs written
        to relative paths (`nemo_experiments`, `logs/`) land in the container and are lost.
    """
    fix_safety = """
        Unsafe, and offered only when the batch shell `cd`s into a directory that a mount of the
        step keeps at the same path: the fix adds `--container-workdir="$PWD"` to the srun, which
        starts the task where the batch shell is. The entry point may live in the image's own
        WORKDIR instead (a custom image): then write its absolute path.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/recipes
                srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     python train.py --data /lustre/fsw/alice/data
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                cd /lustre/fsw/alice/recipes
                srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-workdir="$PWD" \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     python train.py --data /lustre/fsw/alice/data
                """
            ),
            unsafe=True,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     --container-workdir=/lustre/fsw/alice/recipes \\
                     python train.py --data /lustre/fsw/alice/data
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --gpus-per-node=8
                srun --kill-on-bad-exit=1 --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
                     --container-mounts=/lustre/fsw/alice:/lustre/fsw/alice \\
                     bash -c 'cd /lustre/fsw/alice/recipes && python train.py --data /lustre/fsw/alice/data'
                """
            ),
            title="a cd inside the task",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        analysis = containers(script)
        reported = set()
        for launch in script.launches:
            step = launch.step
            entry = launch.entry
            if id(step) in reported or entry is None or entry.kind != "script" or not entry.known:
                continue
            if entry.name.startswith(("/", "~")) or not entry.name:
                continue
            container = analysis.for_step(step)
            if not container.containerized or container.workdir is not None or container.uncertain:
                continue
            if container.environment_unknown:
                continue  # a file the model cannot read may export PYXIS_CONTAINER_WORKDIR
            _, where = _task_directory(analysis, launch)
            if where != "image":
                continue  # a cd in the task command sets it
            batch = batch_directory(script, step)
            batch_path = PathValue.of(batch) if batch is not None else None
            if batch_path is not None and batch_path.absolute and container.mounted(batch_path) is False:
                continue  # the batch directory is not mounted at all: a path-not-mounted problem
            workdir = image_workdir(container, script.settings)
            if any(
                m.destination.complete and normalize(m.destination.text) == (workdir or "/workspace") for m in container.mounts
            ):
                continue  # the job's files are mounted at the WORKDIR itself
            image = container.image.value if container.image is not None else None
            known_image = container.image is not None and container.image.value_known and image
            if workdir is None:
                if known_image and not STOCK_IMAGE.search(image):
                    continue  # the site's own image: its WORKDIR may well hold the entry point
                mount = container.mount_for(batch_path) if batch_path is not None and batch_path.complete else None
                if mount is None or not mount.same_path:
                    continue  # nothing says the entry point is the host's: it may be the image's
            reported.add(id(step))
            where_batch = f" (`{batch_path.text}`)" if batch_path is not None else ""
            span = site_span(entry.word.pieces, command_pieces(step.command)) or step.srun_word.span
            fix = self._fix(script, container, step, batch_path)
            if workdir is not None:
                yield self.report(
                    script,
                    span,
                    f"`{entry.name}` is resolved in the image's WORKDIR `{workdir}`",
                    fix,
                    label=f"resolved in {workdir}",
                    help='add `--container-workdir="$PWD"` (the directory must be mounted at the same path), or give the absolute path',
                    notes=(
                        "the step gives no `--container-workdir`: pyxis starts the task in the image's WORKDIR, not in "
                        f"the batch shell's directory{where_batch}",
                        f"so it looks for `{posixpath.join(workdir, entry.name)}`",
                    ),
                )
            else:
                what = f"the image `{image}`" if known_image else "the image"
                yield self.report(
                    script,
                    span,
                    f"`{entry.name}` is resolved in the image's WORKDIR, if it sets one",
                    fix,
                    label="depends on the image's WORKDIR",
                    help='add `--container-workdir="$PWD"` (the directory must be mounted at the same path), or list the image in `image-workdirs`',
                    severity=Severity.INFO,
                    notes=(
                        f"the step gives no `--container-workdir`: if {what} sets a WORKDIR (NGC images use `/workspace`), "
                        "pyxis starts the task there, not in "
                        f"the batch shell's directory{where_batch}, and `{entry.name}` is not found",
                    ),
                )

    def _fix(self, script, container: StepContainer, step: Step, batch: Optional[PathValue]) -> Optional[Fix]:
        from ..model import placement

        if batch is None or not batch.complete or not batch.absolute:
            return None
        mount = container.mount_for(batch)
        if mount is None or not mount.same_path:
            return None
        edit = placement.add_step_options(script, step, ['--container-workdir="$PWD"'])
        if edit is None:
            return None
        return Fix.unsafe("start the task in the batch shell's directory (`--container-workdir=\"$PWD\"`)", edit)


# == SBL313 ======================================================================================
@register
class ArrayElementsShareDirectory(Rule):
    code = "SBL313"
    name = "array-elements-share-directory"
    severity = Severity.WARNING
    summary = "The elements of a job array write their checkpoints or results to one directory."
    what = """
        In a job array (`#SBATCH --array=0-7`), finds runs whose checkpoint or output directory
        (`--save`, `--output_dir`, `--checkpoint-dir`, `checkpoint.save=…`, …) is the same for every
        element: no `$SLURM_ARRAY_TASK_ID` or `$SLURM_JOB_ID` in it, nothing else that may differ.
        Also Bridge training with no explicit directory, whose `nemo_experiments` lands in a
        working directory the elements share. Arrays of one element and arrays throttled to one
        element at a time (`%1`, the usual way to chain a long training) are left alone.
    """
    why = """
        The elements run at the same time, each with its own `SLURM_ARRAY_TASK_ID`. With one
        directory for all of them, they overwrite each other's checkpoints and results, or an
        element resumes from another's checkpoint (another learning rate, another dataset) and
        reports its results as its own.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --array=0-3
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                LRS=(1e-4 3e-4 1e-3 3e-3)
                srun python /lustre/fsw/alice/train.py --lr "${LRS[$SLURM_ARRAY_TASK_ID]}" \\
                     --save /lustre/fsw/alice/checkpoints/sweep
                """
            ),
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --array=0-3
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                LRS=(1e-4 3e-4 1e-3 3e-3)
                srun python /lustre/fsw/alice/train.py --lr "${LRS[$SLURM_ARRAY_TASK_ID]}" \\
                     --save "/lustre/fsw/alice/checkpoints/sweep_${SLURM_ARRAY_TASK_ID}"
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --array=0-9%1
                #SBATCH --nodes=1
                #SBATCH --gpus-per-node=8
                srun python /lustre/fsw/alice/train.py --save /lustre/fsw/alice/checkpoints/long_run --resume
                """
            ),
            title="a chain: one element at a time, each resuming the last",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        shared = script.array_outputs
        if not shared:
            return
        array = script.header.get("array")
        spec = f"`--array={array.value}`" if array is not None else "the array"
        seen = set()
        for directory in shared:
            key = (directory.path, directory.span)
            if key in seen:
                continue
            seen.add(key)
            if directory.kind == "experiments":
                message = f"every element of the job array shares `{directory.path}`"
                note = (
                    f"the elements of {spec} run Bridge training in the same directory at the same time: they write "
                    "over each other's checkpoints and resume each other's"
                )
                help = "give each element its own directory, e.g. `checkpoint.save=…/run_${SLURM_ARRAY_TASK_ID}`"
            else:
                message = f"every element of the job array gets the same `{directory.option}` `{directory.path}`"
                note = f"the elements of {spec} run at the same time and overwrite or resume each other's files"
                help = "put `${SLURM_ARRAY_TASK_ID}` in the path"
            yield self.report(
                script, directory.span, message, label="shared by every array element", help=help, notes=(note,)
            )


def _quote(text: str) -> str:
    """``shlex.quote``, importing shlex only when a fix quotes something."""
    from shlex import quote

    return quote(text)

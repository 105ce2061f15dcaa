"""``sbatchlint convert``: a single-node launch command → a complete multi-node sbatch script.

The command (``uv run python -m torch.distributed.run --nproc_per_node=8 examples/x.py --tp 2``,
``torchrun …``, ``python x.py …``, ``uv run x.py …``) is read with the linter's own model: the
launcher, its options, the entry point and its arguments, every word with the pieces it is made
of. The script it becomes follows the design this project lints for:

- srun-native (Megatron-Bridge entry points, scripts that read Slurm's rank variables, and a
  plain ``python x.py``; or ``--launcher srun``): ``--ntasks-per-node`` = GPUs per node and
  ``srun … uv run python <script> <args>`` on the step's command line, no rendezvous variable set
  (Bridge derives them from ``SLURM_*``);
- torchrun (legacy: Megatron-LM, and a torchrun command whose script reads only torchrun's
  variables or cannot be found to be read): one task per node and a ``TRAIN_CMD`` string run by
  ``bash -c`` with ``--nnodes``/``--node_rank`` escaped so each node's task expands its own,
  ``--master_addr`` from the first node, ``PYTHONPATH`` holding the Megatron-LM checkout;
- always: the header (``--gpus-per-node``, ``--exclusive``, ``--output=<log dir>/<job>_%j.log``),
  ``HF_HOME``/``NEMO_HOME`` on the shared filesystem, container mounts covering the repository,
  data, logs and caches at the same path, ``UV_CACHE_DIR`` and the two-phase ``uv sync`` start
  (only for a command that runs ``uv run``: an image without uv would fail at ``uv sync``),
  ``--kill-on-bad-exit=1``, ``rm -rf nemo_experiments`` before Bridge training, no secret value
  (a comment says tokens come from the environment), and a comment to create the log directory
  before ``sbatch``.

Values that cannot be known (account, container image, shared filesystem, working directory
unless the current directory lies under the shared filesystem, node count) stop the conversion
with a one-line message naming every option missing; with
``allow_placeholders`` it becomes ``<ACCOUNT>``-style placeholders instead (SBL009 reports them).
"""
from __future__ import annotations

import posixpath
import re
import shlex

from . import options as option_table
from . import redaction, secrets
from . import shell
from .lazyclass import dataclass, field
from .model.launch import (
    ACCELERATE,
    DEEPSPEED,
    PYTHON,
    SRUN_NATIVE,
    Launch,
    as_int,
    launches,
)
from .model import variables
from .model.workload import Workload, entry_workload
from .model.values import Word
from .source import Source
from .lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

PLACEHOLDERS = {
    "account": "<ACCOUNT>",
    "container_image": "<CONTAINER_IMAGE>",
    "shared_fs": "<SHARED_FS>",
    "workdir": "<WORKDIR>",
    "nodes": "<NNODES>",
}
WHAT = {
    "account": "the Slurm account to charge",
    "container_image": "the Enroot/Pyxis image the steps run in",
    "shared_fs": "the shared-filesystem root for caches and logs",
    "workdir": "where the repository lives on the shared filesystem",
    "nodes": "how many nodes",
}
DEFAULT_TIME = "01:00:00"
DEFAULT_PARTITION = "batch"
DEFAULT_GPUS = 8
MASTER_PORT = 29500
# torchrun options the generated launch sets itself (or srun replaces).
RENDEZVOUS = frozenset(
    {
        "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend",
        "rdzv_endpoint", "rdzv_id", "rdzv_conf", "standalone", "module", "use_env",
    }
)
SAFE_WORD = lazy(r"^[A-Za-z0-9_@%+=:,./-]+$")
SYSTEM_DIRS = ("/tmp", "/dev", "/proc", "/sys", "/root", "/usr", "/opt", "/etc", "/bin", "/lib", "/var", "/run")


def _per_task(name: str) -> bool:
    """The value differs between the tasks of a step, or only a launcher sets it: a task must
    expand it itself."""
    return variables.scope_of(name) in variables.TASK_EXPANDS_SCOPES


class ConvertError(Exception):
    """The conversion cannot go on; the message is one line and names what to change."""


@dataclass
class Request:
    command: str
    job_name: Optional[str] = None
    nodes: Optional[int] = None
    gpus_per_node: Optional[int] = None
    time: Optional[str] = None
    account: Optional[str] = None
    partition: Optional[str] = None
    container_image: Optional[str] = None
    container_mounts: Optional[str] = None
    shared_fs: Optional[str] = None
    workdir: Optional[str] = None
    log_dir: Optional[str] = None
    launcher: str = "auto"  # auto | srun | torchrun
    allow_placeholders: bool = False
    script_name: Optional[str] = None  # the file the script is written to, for the submit comment
    cwd: Optional[str] = None  # the default working directory, when under the shared filesystem


@dataclass
class Result:
    text: str
    launcher: str  # "srun" or "torchrun"
    notes: List[str] = field(default_factory=list)  # things worth a line on stderr


# -- reading the command ---------------------------------------------------------------------------
@dataclass
class Parsed:
    launch: Launch
    source: Source  # the command as parsed (prefixed with ``srun `` so the model sees a step)
    env: List[Tuple[str, str]]  # NAME, value as written
    runner: List[str]  # ``uv run [flags]`` as written; empty for a command without uv
    python_options: List[str]  # interpreter options as written (``-u``)
    interpreter: str  # the interpreter as written (``python3``), ``python`` for torchrun
    entry: str  # the script path or module name as written
    module: bool
    args: List[Word]
    nproc: Optional[int]
    nproc_text: Optional[str]
    other_options: List[str]  # torchrun options the rendezvous does not cover, as written
    one_line: str  # the command on one line, for the script's comment


def _raw(source: Source, word: Word) -> str:
    node = word.node
    if node is None:
        raise ConvertError(f"cannot place `{word.text}` of the command")
    return source.data[node.start_byte : node.end_byte].decode("utf-8")


def parse_command(text: str) -> Parsed:
    """Read a single-node launch command with the linter's model."""
    text = text.strip()
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    text = "\n".join(lines).strip()
    if not text:
        raise ConvertError("no command given: pass it as an argument, with --from-file FILE, or '-' for stdin")
    data = text.encode("utf-8")
    tree = shell.parse(data)
    if shell.error_regions(tree, data):
        raise ConvertError("the command is not valid shell syntax")
    statements = [n for n in tree.root_node.named_children if n.type != "comment"]
    if len(statements) != 1 or statements[0].type != "command":
        raise ConvertError("give one command (no pipes, lists or redirections): the launch as you run it on one node")
    node = statements[0]
    env: List[Tuple[str, str]] = []
    first_word = None
    for child in node.children:
        if child.type == "variable_assignment":
            name = child.child_by_field_name("name")
            value = child.child_by_field_name("value")
            env.append((
                data[name.start_byte : name.end_byte].decode("utf-8") if name is not None else "",
                data[value.start_byte : value.end_byte].decode("utf-8") if value is not None else "",
            ))
        elif first_word is None and child.is_named:
            first_word = child.start_byte
    if first_word is None:
        raise ConvertError("the command runs nothing")
    _refuse_secrets(data)
    body = data[first_word : node.end_byte]
    source = Source(b"srun " + body, "command")
    from .model.script import Script

    script = Script(source)
    found = [l for l in launches(script) if not l.in_string]
    if len(script.steps) != 1 or len(found) != 1:
        raise ConvertError(
            "not a Python launch: expected `uv run python -m torch.distributed.run …`, `torchrun …`, "
            "`python script.py …` or `uv run script.py …`"
        )
    launch = found[0]
    if launch.kind in (ACCELERATE, DEEPSPEED):
        raise ConvertError(f"`{launch.program}` launches are not converted: start the script with python or torchrun")
    entry = launch.entry
    if entry is None or entry.kind in ("code", "program") or not entry.known:
        raise ConvertError("the command must run a Python script or a module (`python x.py`, `python -m pkg.mod`)")
    if launch.index != 0:
        raise ConvertError("the command must start with the launcher (`uv run`, `python` or `torchrun`)")
    if launch.options_incomplete:
        raise ConvertError("torchrun's options come partly from a variable: write them out")
    runner, python_options, interpreter = _runner(source, launch)
    nproc_opt = launch.option("nproc_per_node")
    other = [
        " ".join(_raw(source, w) for w in option.words)
        for option in launch.options
        if option.name not in RENDEZVOUS
    ]
    one_line = " ".join(part.strip() for part in text.replace("\\\n", " ").splitlines())
    return Parsed(
        launch=launch,
        source=source,
        env=env,
        runner=runner,
        python_options=python_options,
        interpreter=interpreter,
        entry=_raw(source, entry.word),
        module=entry.kind == "module",
        args=list(launch.args),
        nproc=nproc_opt.number if nproc_opt is not None else None,
        nproc_text=nproc_opt.text if nproc_opt is not None else None,
        other_options=other,
        one_line=re.sub(r"\s+", " ", one_line),
    )


def _runner(source: Source, launch: Launch) -> Tuple[List[str], List[str], str]:
    """``uv run [flags]`` (empty when the command has no uv), the interpreter's options and the
    interpreter, as written (``python`` when the command starts with ``torchrun``)."""
    words = list(launch.launcher)
    if launch.kind != SRUN_NATIVE:
        # drop ``torchrun`` / ``-m torch.distributed.run``
        if words and posixpath.basename(words[-1].text) == "torchrun":
            words = words[:-1]
        elif len(words) >= 2 and words[-2].text in ("-m", "--module"):
            words = words[:-2]
    elif launch.entry is not None and launch.entry.kind == "module" and words and words[-1].text in ("-m", "--module"):
        words = words[:-1]
    runner: List[str] = []
    python_options: List[str] = []
    interpreter = "python"
    uses_uv = bool(words) and words[0].text == "uv"
    i = 0
    if uses_uv:
        if len(words) < 2 or words[1].text != "run":
            raise ConvertError("only `uv run` is understood as a runner")
        i = 2
        while i < len(words) and not PYTHON.match(posixpath.basename(words[i].text)):
            runner.append(_raw(source, words[i]))
            i += 1
    elif words and not PYTHON.match(posixpath.basename(words[0].text)):
        raise ConvertError(f"`{words[0].text}` is not a runner this command understands: use `uv run`")
    if i < len(words):
        if not uses_uv:
            interpreter = _raw(source, words[i])
        i += 1  # python itself (under uv: the script runs with uv's environment)
        python_options = [_raw(source, w) for w in words[i:]]
    return (["uv", "run"] + runner if uses_uv else []), python_options, interpreter


def _refuse_secrets(data: bytes) -> None:
    for secret in secrets.find(Source(data, "command")):
        if secret.live and not redaction.is_placeholder(secret.value or ""):
            what = f"{secret.kind} ({redaction.mask(secret.value)})" if secret.value else secret.kind
            env = secret.env or "the variable the tool reads"
            raise ConvertError(
                f"the command holds a {what}: take it out and export {env} before sbatch instead"
            )


# -- the script -------------------------------------------------------------------------------------
def convert(request: Request) -> Result:
    parsed = parse_command(request.command)
    notes: List[str] = []
    values = _resolve(request, parsed, notes)
    workload = entry_workload(parsed.launch.entry, None if _is_placeholder(values["workdir"]) else values["workdir"])
    launcher = request.launcher
    if launcher == "auto":
        launcher = _auto_launcher(request, parsed, values, workload, notes)
    if launcher not in ("srun", "torchrun"):
        raise ConvertError(f"--launcher must be auto, srun or torchrun, not {launcher}")
    if launcher == "srun" and parsed.other_options:
        raise ConvertError(
            f"torchrun's `{parsed.other_options[0]}` has no srun-native equivalent: drop it or use --launcher torchrun"
        )
    host = sorted({
        p.name for w in parsed.args for p in w.pieces
        if not p.known and p.name and not _per_task(p.name) and not p.name.startswith("SLURM_")
    })
    if host:
        names = ", ".join(f"${n}" for n in host)
        notes.append(f"the command reads {names}: export it before sbatch (sbatch passes your environment on) "
                     "or set it in the script")
    text = _render(request, parsed, values, launcher, workload, remove_experiments=False)
    if _trains_bridge(text):
        text = _render(request, parsed, values, launcher, workload, remove_experiments=True)
    return Result(text, launcher, notes)


def _auto_launcher(request: Request, parsed: Parsed, values: Dict[str, str], workload: Optional[Workload],
                   notes: List[str]) -> str:
    """srun-native for a Megatron-Bridge entry point or a script that reads Slurm's rank
    variables; torchrun for Megatron-LM and for a script that reads only torchrun's (``LOCAL_RANK``,
    ``WORLD_SIZE``). The script is read when it is found (from ``--workdir`` when it exists here,
    the current directory or its repository), as the SBL5xx rules read it."""
    if workload is Workload.MEGATRON_LM:
        return "torchrun"
    if workload is Workload.BRIDGE:
        return "srun"
    torchrun = parsed.launch.kind != SRUN_NATIVE
    path = _entry_file(request, parsed, values)
    if path is None:
        if torchrun:
            notes.append(
                f"{parsed.entry} was not found here, so whether it reads Slurm's variables is not known: kept torchrun "
                "(--launcher srun for one task per GPU)"
            )
        return "torchrun" if torchrun else "srun"
    reads = _variables_read(path)
    slurm = sorted(reads & variables.SLURM_WORLD)
    launcher_only = sorted(reads & variables.TORCHRUN_SET)
    if slurm:
        return "srun"
    if launcher_only:
        notes.append(
            f"{path} reads {', '.join(launcher_only)} (set by torchrun, not by srun): kept torchrun "
            "(--launcher srun once it also reads SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS)"
        )
        return "torchrun"
    return "torchrun" if torchrun else "srun"


def _entry_file(request: Request, parsed: Parsed, values: Dict[str, str]) -> Optional[str]:
    import os

    from .python.entry import entry_path, repository_root, resolve

    name = entry_path(parsed.launch.entry)
    base = request.cwd or os.getcwd()
    workdir = values.get("workdir")
    if name is None:
        return None
    try:
        return resolve(name, None if workdir is None or _is_placeholder(workdir) else workdir, [], base,
                       repository_root(base))
    except OSError:
        return None


def _variables_read(path: str) -> frozenset:
    from .python.environment import variables_read
    from .python.module import PythonModule

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return frozenset()
    return frozenset(variables_read(PythonModule(Source(data, path))))


def _is_placeholder(value: str) -> bool:
    return value.startswith("<") and value.endswith(">")


def _resolve(request: Request, parsed: Parsed, notes: List[str]) -> Dict[str, str]:
    values: Dict[str, str] = {}
    missing: List[str] = []

    def need(key: str, value: Optional[str]) -> str:
        if value:
            return value
        if not request.allow_placeholders:
            missing.append(key)
        return PLACEHOLDERS[key]

    values["account"] = need("account", request.account)
    values["container_image"] = need("container_image", request.container_image)
    shared = need("shared_fs", _absolute("--shared-fs", request.shared_fs))
    values["shared_fs"] = shared
    workdir = _absolute("--workdir", request.workdir)
    if workdir is None and request.cwd and not _is_placeholder(shared) and _under(request.cwd, shared):
        workdir = posixpath.normpath(request.cwd)
    values["workdir"] = need("workdir", workdir)
    values["nodes"] = need("nodes", str(request.nodes) if request.nodes else None)
    if missing:
        names = [f"--{key.replace('_', '-')}" for key in missing]
        if len(missing) == 1:
            what = f"{names[0]} is required ({WHAT[missing[0]]})"
        else:
            listed = ", ".join(names[:-1]) + " and " + names[-1]
            what = f"{listed} are required ({'; '.join(f'{n}: {WHAT[k]}' for n, k in zip(names, missing))})"
        raise ConvertError(f"{what}; or pass --allow-placeholders to print placeholders instead")
    log_dir = _absolute("--log-dir", request.log_dir)
    values["log_dir"] = log_dir or f"{shared}/logs"
    gpus = request.gpus_per_node
    if gpus is None:
        gpus = parsed.nproc if parsed.nproc else DEFAULT_GPUS
    elif parsed.nproc is not None and parsed.nproc != gpus:
        notes.append(f"the command's --nproc_per_node={parsed.nproc} becomes {gpus} (--gpus-per-node)")
    if gpus < 1:
        raise ConvertError("--gpus-per-node must be at least 1")
    values["gpus"] = str(gpus)
    time = request.time or DEFAULT_TIME
    problem = option_table.validate("time", time, "time")
    if problem:
        raise ConvertError(problem)
    values["time"] = time
    values["partition"] = request.partition or DEFAULT_PARTITION
    for key in ("account", "partition", "container_image", "shared_fs", "workdir", "log_dir"):
        if re.search(r"\s", values.get(key) or ""):
            raise ConvertError(f"--{key.replace('_', '-')} {values[key]!r}: no spaces, please")
    values["job_name"] = _job_name(request.job_name, parsed)
    return values


def _absolute(option: str, path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    if not path.startswith("/"):
        raise ConvertError(f"{option} must be an absolute path, not {path}")
    return posixpath.normpath(path)


def _under(path: str, root: str) -> bool:
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def _job_name(name: Optional[str], parsed: Parsed) -> str:
    if name:
        if not re.match(r"^[A-Za-z0-9_.+-]+$", name):
            raise ConvertError(f"--job-name {name!r}: use letters, digits and ._+- only")
        return name
    base = parsed.entry.split(".")[-1] if parsed.module else posixpath.basename(parsed.entry)
    if base.endswith(".py"):
        base = base[:-3]
    base = re.sub(r"[^A-Za-z0-9_.+-]+", "-", base).strip("-")
    return base or "job"


def _trains_bridge(text: str) -> bool:
    """Bridge training, as SBL309 sees it, without an explicit resume: gets ``rm -rf nemo_experiments``."""
    from .model.script import Script

    script = Script(Source(text.encode("utf-8"), "job.sbatch"))
    return any(run.bridge_training and not run.resumes for run in script.runs)


def _quote(value: str) -> str:
    """A value for an assignment or an argument of the batch shell."""
    return value if SAFE_WORD.match(value) else shlex.quote(value)


def _header_value(value: str) -> str:
    return value.replace("#", "\\#")


def _mounts(request: Request, parsed: Parsed, values: Dict[str, str], caches: Sequence[str]) -> str:
    """The user's mounts, plus SRC:SRC for each path the job uses that none of them covers."""
    shared = values["shared_fs"]
    mounts: List[str] = []
    if request.container_mounts:
        for item in request.container_mounts.split(","):
            item = item.strip()
            if not item:
                continue
            source = item.split(":")[0]
            if not source.startswith("/"):
                raise ConvertError(f"--container-mounts: {item!r} is not an absolute SRC[:DST[:FLAGS]]")
            mounts.append(item)

    def destinations() -> List[str]:
        out = []
        for item in mounts:
            parts = item.split(":")
            out.append(parts[1] if len(parts) > 1 and parts[1].startswith("/") else parts[0])
        return out

    needed: List[Tuple[str, bool]] = [(values["workdir"], True), (values["log_dir"], True)]
    needed += [(path, True) for path in caches]
    needed += [(path, False) for path in _argument_paths(parsed)]
    for path, is_directory in needed:
        if _is_placeholder(path) or path.startswith("<"):
            continue
        if any(_under(path, destination) for destination in destinations()):
            continue
        if not _is_placeholder(shared) and _under(path, shared):
            mounts.append(f"{shared}:{shared}")
            continue
        directory = path if is_directory else posixpath.dirname(path.rstrip("/")) or path
        if directory == "/" or any(_under(directory, d) for d in SYSTEM_DIRS):
            continue
        mounts.append(f"{directory}:{directory}")
    if not mounts:
        mounts.append(f"{shared}:{shared}")
    return ",".join(dict.fromkeys(mounts))


def _argument_paths(parsed: Parsed) -> List[str]:
    """Absolute paths among the entry point's arguments (``/data/x``, ``--data-path=/data/x``)."""
    out: List[str] = []
    for word in parsed.args:
        if not word.known:
            continue
        text = word.text
        candidate = text if text.startswith("/") else text.partition("=")[2] if "=" in text else ""
        if candidate.startswith("/") and not re.search(r"\s", candidate):
            out.append(posixpath.normpath(candidate))
    return out


def _direct_argument(parsed: Parsed, word: Word) -> str:
    """An argument on srun's command line: as written in the command (the batch shell expands it
    the same way the interactive shell did)."""
    for piece in word.pieces:
        if not piece.known and piece.name and _per_task(piece.name):
            raise ConvertError(
                f"the command expands ${piece.name}, which differs per task: srun's command line would give every task "
                "the batch shell's value; read it in the script or use --launcher torchrun"
            )
    return _raw(parsed.source, word)


def _string_argument(parsed: Parsed, word: Word) -> str:
    """An argument inside the double-quoted TRAIN_CMD: host values expand in the batch shell,
    per-task and Slurm variables are escaped for the task's shell, literals quoted for it."""
    out: List[str] = []
    literal: List[str] = []

    def flush() -> None:
        if literal:
            text = "".join(literal)
            out.append(_dq(text if SAFE_WORD.match(text) else shlex.quote(text)))
            literal.clear()

    for piece in word.pieces:
        if piece.known:
            literal.append(piece.text)
            continue
        flush()
        if piece.span is None:
            raise ConvertError(f"cannot place `{word.text}` of the command")
        raw = parsed.source.text(piece.span)
        name = piece.name or ""
        task = _per_task(name) or name.startswith("SLURM_")
        expansion = ("\\" + raw) if task and raw.startswith("$") else raw
        out.append(f'\\"{expansion}\\"' if piece.quote == '"' else expansion)
    flush()
    return "".join(out)


def _dq(text: str) -> str:
    """Text for the inside of a double-quoted string, read literally."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")


def _argument_lines(args: List[str], words: List[Word]) -> List[str]:
    """The arguments grouped one option (with its values) per line."""
    lines: List[List[str]] = []
    for text, word in zip(args, words):
        starts = word.text.startswith("-") or ("=" in word.text and not word.text.startswith("="))
        if starts or not lines:
            lines.append([text])
        else:
            lines[-1].append(text)
    return [" ".join(line) for line in lines]


def _render(request: Request, parsed: Parsed, values: Dict[str, str], launcher: str,
            workload: Optional[Workload], remove_experiments: bool) -> str:
    nodes, gpus, job = values["nodes"], values["gpus"], values["job_name"]
    shared, workdir, log_dir = values["shared_fs"], values["workdir"], values["log_dir"]
    torchrun = launcher == "torchrun"
    uv = bool(parsed.runner)
    caches = {
        "HF_HOME": "cache/huggingface",
        "UV_CACHE_DIR": "cache/uv",
        "NEMO_HOME": "cache/nemo",
    }
    if not uv:
        del caches["UV_CACHE_DIR"]  # no uv in the command: an image without uv has no use for it
    cache_paths = [f"{shared}/{sub}" for sub in caches.values()]
    mounts = _mounts(request, parsed, values, cache_paths)
    script_name = request.script_name or f"{job}.sbatch"
    per_node = "1" if torchrun else gpus
    out: List[str] = ["#!/bin/bash"]
    out.append("# Multi-node job written by `sbatchlint convert` from the single-node command:")
    out.append(f"#   {parsed.one_line}")
    if torchrun:
        out += [
            "# Legacy launch: ONE Slurm task per node, and torchrun starts the GPU processes of its node",
            f"# (--nproc_per_node={gpus}); {gpus} tasks per node would start {gpus} torchruns on every node.",
        ]
    else:
        out += [
            f"# srun-native: Slurm starts one task per GPU (--ntasks-per-node={gpus}) and each runs the script.",
            "# Megatron-Bridge derives RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT from",
            "# SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODELIST and SLURM_JOB_ID, so none is set here",
            "# (a script outside Bridge has to read them the same way).",
        ]
    out += [
        "#",
        "# Slurm opens the log before the script runs: create the log directory first. Tokens (HF_TOKEN,",
        "# GH_TOKEN, WANDB_API_KEY) come from your environment, never from this file; sbatch passes",
        "# them on to every task:",
        f"#   mkdir -p {log_dir} && sbatch {script_name}",
    ]
    header = [
        (option_table.JOB_NAME, job),
        (option_table.NODES, nodes),
        (option_table.NTASKS_PER_NODE, per_node),
        (option_table.GPUS_PER_NODE, gpus),
        (option_table.TIME, values["time"]),
        (option_table.ACCOUNT, values["account"]),
        (option_table.PARTITION, values["partition"]),
        (option_table.OUTPUT, f"{log_dir}/{job}_%j.log"),
    ]
    out += [f"#SBATCH --{name}={_header_value(value)}" for name, value in header]
    out.append("#SBATCH --exclusive")
    out += ["", "set -euo pipefail", ""]
    out += [
        f"SHARED_FS={_quote(shared)}",
        f"WORKDIR={_quote(workdir)}",
        f"IMAGE={_quote(values['container_image'])}",
        "# The repository, data, logs and caches appear at the same path inside the container.",
        f"MOUNTS={_quote(mounts)}",
        "",
        "# Caches on the shared filesystem: what one node downloads or builds, every node sees.",
    ]
    out += [f"export {name}=$SHARED_FS/{sub}" for name, sub in caches.items()]
    for name, value in parsed.env:
        out.append(f"export {name}={value}")
    out += ["", 'cd "$WORKDIR"']
    if remove_experiments:
        out += [
            "# Start from scratch: a checkpoint left in nemo_experiments would be resumed silently.",
            "rm -rf nemo_experiments",
        ]
    container = [
        '  --container-image="$IMAGE" --container-mounts="$MOUNTS" \\',
        '  --container-workdir="$WORKDIR" --no-container-mount-home \\',
    ]
    python = " ".join([parsed.interpreter if not uv else "python"] + parsed.python_options)
    run = " ".join(parsed.runner + [python])
    entry = ("-m " if parsed.module else "") + parsed.entry
    if torchrun:
        out += _train_cmd(parsed, values, run, entry, workload)
    if uv:
        out += ["", "# Phase 1: one task builds the environment into the shared uv cache.", "srun --nodes=1 --ntasks=1 \\"]
        out += container + ["  uv sync", ""]
    else:
        out += [""]
    phase = "Phase 2: one" if uv else "One"
    if torchrun:
        out += [f"# {phase} torchrun per node; if one dies, the step ends at once instead of hanging."]
        out += ["srun --kill-on-bad-exit=1 \\"] + container + ['  bash -c "$TRAIN_CMD"']
    else:
        cached = "; `uv run` finds everything cached" if uv else ""
        out += [f"# {phase} task per GPU{cached}. If one rank dies, the step ends",
                "# at once instead of the others waiting for it until the time limit."]
        out += ["srun --kill-on-bad-exit=1 \\"] + container
        args = [_direct_argument(parsed, w) for w in parsed.args]
        lines = _argument_lines(args, parsed.args)
        launch_line = f"  {run} {entry}"
        if lines:
            out.append(launch_line + " \\")
            out += [f"    {line} \\" for line in lines[:-1]] + [f"    {lines[-1]}"]
        else:
            out.append(launch_line)
    return "\n".join(out) + "\n"


def _train_cmd(parsed: Parsed, values: Dict[str, str], run: str, entry: str, workload: Optional[Workload]) -> List[str]:
    gpus = values["gpus"]
    out = [
        "",
        "# torchrun's rendezvous runs on the first node of the allocation. The batch shell runs on that",
        "# node, so expanding it here gives every task the same, correct value.",
        'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "",
        "# TRAIN_CMD is a double-quoted string: the batch shell expands $WORKDIR and $MASTER_ADDR once,",
        "# here. Values that differ per node are escaped (\\${SLURM_NODEID}) so each node's task expands",
        "# its own.",
    ]
    body: List[str] = []
    if workload is Workload.MEGATRON_LM and not parsed.module:
        root = _megatron_root(parsed.entry)
        body.append(f"PYTHONPATH={root}:\\${{PYTHONPATH:-}} \\")
    body.append(f"{run} -m torch.distributed.run \\")
    options = [
        f"--nproc_per_node={gpus}",
        "--nnodes=\\${SLURM_JOB_NUM_NODES}",
        "--node_rank=\\${SLURM_NODEID}",
        "--master_addr=$MASTER_ADDR",
        f"--master_port={MASTER_PORT}",
    ] + [_dq_options(o) for o in parsed.other_options]
    body += [f"  {option} \\" for option in options]
    args = [_string_argument(parsed, w) for w in parsed.args]
    lines = _argument_lines(args, parsed.args)
    if lines:
        body.append(f"  {entry} \\")
        body += [f"    {line} \\" for line in lines[:-1]] + [f"    {lines[-1]}"]
    else:
        body.append(f"  {entry}")
    body[0] = 'TRAIN_CMD="' + body[0]
    body[-1] = body[-1] + '"'
    return out + body


def _dq_options(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")


def _megatron_root(entry: str) -> str:
    """Where Megatron-LM's ``megatron`` package is, for PYTHONPATH: the ``Megatron-LM`` directory
    of the script's path (``3rdparty/Megatron-LM``), else the script's own directory."""
    parts = entry.split("/")
    root = None
    for index, part in enumerate(parts[:-1]):
        if re.match(r"^megatron[-_]?lm$", part, re.IGNORECASE):
            root = "/".join(parts[: index + 1])
    if root is None:
        root = posixpath.dirname(entry)
    if root.startswith("/"):
        return root
    return "$WORKDIR" + ("/" + root if root else "")


# -- the command line --------------------------------------------------------------------------------
def command_line(command: Optional[str], from_file: Optional[str], output: Optional[str], force: bool,
                 **options) -> int:
    """What ``sbatchlint convert`` does; returns the exit code (0, or 2 for a refusal)."""
    import os
    import sys

    import click

    def fail(message: str) -> int:
        click.echo(f"sbatchlint convert: error: {redaction.redact(message)}", err=True)
        return 2

    if command is not None and from_file is not None:
        return fail("give the command either as an argument or with --from-file, not both")
    try:
        if from_file is not None or command == "-":
            path = from_file if from_file is not None else "-"
            if path == "-":
                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
        else:
            text = command or ""
    except (OSError, UnicodeDecodeError) as err:
        return fail(f"cannot read {from_file}: {err.__class__.__name__}")
    if output is not None and os.path.exists(output) and not force:
        return fail(f"{output} exists: pass --force to overwrite it")
    request = Request(
        command=text,
        script_name=posixpath.basename(output) if output else None,
        cwd=os.getcwd(),
        **options,
    )
    try:
        result = convert(request)
    except ConvertError as err:
        return fail(str(err))
    for note in result.notes:
        click.echo(f"sbatchlint convert: note: {note}", err=True)
    for finding in findings(result.text, request.allow_placeholders):
        click.echo(f"sbatchlint convert: warning: the script has {finding.code}: {finding.message}", err=True)
    if output is None:
        click.echo(result.text, nl=False)
        return 0
    directory = os.path.dirname(os.path.abspath(output))
    temporary = os.path.join(directory, f".{os.path.basename(output)}.sbatchlint-tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(result.text)
        os.replace(temporary, output)
    except OSError as err:
        if os.path.exists(temporary):
            os.unlink(temporary)
        return fail(f"cannot write {output}: {err.strerror or err.__class__.__name__}")
    click.echo(f"sbatchlint convert: wrote {output} ({result.launcher} launch)", err=True)
    return 0


def findings(text: str, placeholders: bool = False):
    """What the linter says of a generated script (placeholders, when asked for, are expected)."""
    from .linter import lint

    source = Source(text.encode("utf-8"), "job.sbatch")
    found = lint(source)
    if not placeholders:
        return found
    marks = tuple(PLACEHOLDERS.values())
    return [d for d in found if d.code != "SBL009" and not any(m in source.text(d.span) for m in marks)]

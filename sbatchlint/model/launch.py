"""What every task command launches: the launcher, its options, the Python entry point, its arguments.

For each step and each of its task commands (the step's argv, or every command of a ``bash -c``
string), the launcher is recognised behind wrappers (``exec``, ``env X=1``, ``uv run [flags]``,
``conda run -n ENV``, ``poetry run``…):

- ``srun-native``: ``python [opts] script.py``, ``python -m module``, ``uv run script.py``: Slurm
  starts every process itself;
- ``torchrun``: ``torchrun`` or ``python -m torch.distributed.run``;
- ``torch.distributed.launch``: ``python -m torch.distributed.launch`` (the same elastic agent);
- ``accelerate``: ``accelerate launch`` (or ``python -m accelerate.commands.launch``);
- ``deepspeed``: ``deepspeed`` (or ``python -m deepspeed.launcher.runner``).

``apptainer``/``singularity exec [opts] IMAGE`` in front is read through (its ``--pwd`` sets the
working directory); ``apptainer run IMAGE`` runs the image's own runscript, so its launcher is
unknown. ``nsys profile``, ``ncu``, ``perf record``/``perf stat``, ``valgrind``, ``numactl``,
``taskset`` and the other wrappers of ``model/steps.py`` are read through with their own option
grammars (``nsys profile -o torchrun_prof python t.py`` runs python). ``mpirun``/``mpiexec`` in a
task is a launcher of its own that starts its processes itself (its ``-np``, its hosts), so the
program behind it is no launch of the step: no rule reads the step's tasks as its processes. In a single-quoted task string, an unquoted ``$LAUNCHER`` that the batch shell
exported before the step (and srun passes) is the exported value, split as the task's shell
splits it (``srun bash -c '$LAUNCHER --node_rank $SLURM_PROCID $CMD'``). Every argument stays a ``Word`` (with its source spans), the launcher's own options are read with
its option table (both ``_`` and ``-`` spellings, ``=value`` or a separate value, unique
abbreviations as argparse allows), and the parallelism sizes the entry point receives
(``--tp 2``, ``--tensor-model-parallel-size 2``, ``model.tensor_model_parallel_size=2``…) are
collected. Values go through the model's resolver: a value that is not known statically is
unknown, and every question below answers None for it rather than guess.

Alternatives: a step inside ``for CONFIG in "${CONFIGS[@]}"`` runs once per configuration. Each
launch keeps ``variants``: the same launch under every combination of alternative values the model
sees (loop iterations kept together), the primary (most recent) one last; ``others`` holds the
launches other alternatives write with another launcher (``python`` in one branch, ``torchrun``
in another), so a rule can name the branch a finding depends on. ``certain_number``
answers only when every variant agrees; ``configurations`` lists each loop configuration.

Entry point: ``launches(script)`` (``Script.launches``, computed once) and
``launches_of(script, step)``. How many tasks a step runs per node is the step's geometry:
``task_layout`` (re-exported here) comes from ``model/geometry.py``, whose docstring holds the
measured table of how srun settles a step's task count.
"""
from __future__ import annotations

import bisect
import posixpath
from itertools import compress, count as counter, product
from _operator import is_not  # (operator's own: its Python module is not imported)

from .. import options as option_table
from ..lazyclass import dataclass, field
from ..source import Span
from .geometry import TaskLayout, job_task_count_set, task_layout  # noqa: F401  (re-exported)
from .branches import alternative_groups
from .steps import SHELLS, Command, Step, parse_task_string, task_string_command
from .steps import EnvAssignment, inner_command, parsed_task_string, remap, step_span, task_tree
from .steps import _outer_span, _remap_word
from .swaps import kept_swapped_words, shifted_words
from .values import Piece, Value, Word, cached_property, split_value, consistent
from ..shell import ancestors
from ..lazyre import IGNORECASE, lazy
from ..stdlite import lru_cache  # (functools' own, without importing functools)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Sequence, Tuple
    from .script import Script

SRUN_NATIVE = "srun-native"
TORCHRUN = "torchrun"
TORCH_LAUNCH = "torch.distributed.launch"
ACCELERATE = "accelerate"
DEEPSPEED = "deepspeed"
# Launchers that run torch's elastic agent once per task and start nproc_per_node workers each.
ELASTIC = frozenset({TORCHRUN, TORCH_LAUNCH})

MAX_VARIANTS = 16
PYTHON = lazy(r"^python(\d+(\.\d+)*)?$")

# ``X run [opts] CMD``: options of the run subcommand that take a separate value.
RUNNERS: Dict[str, Tuple[str, ...]] = {
    "uv": (
        "--with", "--with-editable", "--with-requirements", "--python", "-p", "--project",
        "--directory", "--extra", "--group", "--only-group", "--no-group", "--env-file", "--index",
        "--default-index", "--index-url", "--extra-index-url", "--find-links", "-f", "--package",
        "--config-file", "--cache-dir", "--refresh-package", "--reinstall-package",
        "--upgrade-package", "-P", "--no-binary-package", "--no-build-package", "--resolution",
        "--prerelease", "--link-mode", "--index-strategy", "--keyring-provider", "--exclude-newer",
        "--color", "--python-preference", "--python-platform", "--no-extra", "--config-setting",
        "-C", "--fork-strategy", "--no-sources-package",
    ),
    "conda": ("-n", "--name", "-p", "--prefix", "--cwd"),
    "mamba": ("-n", "--name", "-p", "--prefix", "--cwd"),
    "micromamba": ("-n", "--name", "-p", "--prefix", "--cwd"),
    "poetry": ("-C", "--directory", "-P", "--project"),
    "pixi": ("-e", "--environment", "--manifest-path"),
    "pdm": ("-p", "--project"),
}
# ``apptainer exec [opts] IMAGE CMD``: options that take a separate value.
CONTAINER_RUNNERS: Dict[str, Tuple[str, ...]] = {
    name: (
        "-B", "--bind", "--mount", "--env", "--env-file", "--pwd", "-H", "--home", "-o", "--overlay",
        "-W", "--workdir", "--scratch", "-S", "--security", "--apply-cgroups", "--hostname",
        "--network", "--network-args", "--nv-ccli", "--app", "--drop-caps", "--add-caps",
    )
    for name in ("apptainer", "singularity")
}
# MPI's own launchers: inside a step they start their processes themselves.
MPI_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra"})
# Python interpreter options that take a separate value.
PYTHON_VALUE_OPTIONS = ("-W", "-X", "--check-hash-based-pycs")

# Launcher option tables: canonical name (underscores) → takes a value.
TORCHRUN_OPTIONS: Dict[str, bool] = {
    "nnodes": True,
    "nproc_per_node": True,
    "node_rank": True,
    "master_addr": True,
    "master_port": True,
    "rdzv_backend": True,
    "rdzv_endpoint": True,
    "rdzv_id": True,
    "rdzv_conf": True,
    "standalone": False,
    "max_restarts": True,
    "monitor_interval": True,
    "start_method": True,
    "role": True,
    "module": False,
    "no_python": False,
    "run_path": False,
    "log_dir": True,
    "redirects": True,
    "tee": True,
    "local_ranks_filter": True,
    "local_addr": True,
    "logs_specs": True,
    "numa_binding": True,
    "signals_to_handle": True,
    "event_log_handler": True,
    "virtual_local_rank": False,
    "use_env": False,  # torch.distributed.launch
    "local_rank": True,  # torch.distributed.launch (legacy)
}
TORCHRUN_SHORT = {"m": "module", "r": "redirects", "t": "tee"}

ACCELERATE_FLAGS = frozenset(
    {
        "cpu", "multi_gpu", "tpu", "ipex", "use_xpu", "mps", "use_deepspeed", "use_fsdp",
        "use_megatron_lm", "module", "no_python", "debug", "quiet", "same_network",
        "enable_cpu_affinity", "dynamo_use_fullgraph", "dynamo_use_dynamic", "downcast_bf16",
        "tpu_use_cluster", "tpu_use_sudo", "use_parallelism_config", "dynamo_use_regional_compilation",
        "deepspeed_moe_layer_cls_names_flag",
    }
)
ACCELERATE_SHORT = {"m": "module", "q": "quiet"}
DEEPSPEED_FLAGS = frozenset(
    {
        "no_python", "module", "no_local_rank", "no_ssh_check", "force_multi", "save_pid",
        "elastic_training", "bind_cores_to_rank", "no_ssh", "ssh",
    }
)

# Parallelism sizes: option names (normalised: lower case, '-' → '_', no dashes) → dimension.
PARALLELISM_NAMES: Dict[str, str] = {}
for _dimension, _names in {
    "tp": ("tp", "tp_size", "tensor_parallel_size", "tensor_model_parallel_size"),
    "pp": ("pp", "pp_size", "pipeline_parallel_size", "pipeline_model_parallel_size"),
    "cp": ("cp", "cp_size", "context_parallel_size"),
    "ep": ("ep", "ep_size", "expert_parallel_size", "expert_model_parallel_size"),
    "etp": ("etp", "etp_size", "expert_tensor_parallel_size"),
}.items():
    for _name in _names:
        PARALLELISM_NAMES[_name] = _dimension
DIMENSIONS = ("tp", "pp", "cp", "ep", "etp")
# Short names mean a size only as a dashed option (``--tp 2``), never as a bare ``tp=2``.
SHORT_PARALLELISM = frozenset({"tp", "pp", "cp", "ep", "etp", "tp_size", "pp_size", "cp_size", "ep_size", "etp_size"})

# Megatron-Bridge entry points: modules, and path patterns (matched case-insensitively against the
# script path joined to the working directory, and every tail of it).
BRIDGE_MODULES = ("megatron.bridge", "megatron.bridge.*")
BRIDGE_DIR = lazy(r"^megatron[-_]?bridge(?:[-_.].*)?$", IGNORECASE)
MEGATRON_LM_DIR = lazy(r"^megatron[-_]?lm$", IGNORECASE)
PRETRAIN_SCRIPT = lazy(r"^pretrain_\w+\.py$")
# Paths that only a Megatron-Bridge checkout has (relative to its root).
BRIDGE_PATHS = ("scripts/training/*.py", "examples/recipes/*.py", "tutorials/recipes/*.py")
# The same globs as one pattern (``fnmatch.translate``'s, joined; tested): ``fnmatch`` imports
# ``re``, which a cold run otherwise does without.
BRIDGE_PATH = lazy(r"(?s:(?:scripts/training|examples/recipes|tutorials/recipes)/.*\.py)\Z")
BRIDGE_MODULE = lazy(r"(?s:megatron\.bridge(?:\..*)?)\Z")  # BRIDGE_MODULES, likewise


def _matches_any(texts, patterns) -> bool:
    """Whether a glob of ``patterns`` matches one of ``texts`` (case-sensitive)."""
    import fnmatch  # (imports ``re``)

    return any(fnmatch.fnmatchcase(t, p) for t in texts for p in patterns)


# -- the model --------------------------------------------------------------------------------------
@dataclass
class LaunchOption:
    """One option of the launcher (``--nproc_per_node=8``, ``--nnodes 2``, ``--standalone``)."""

    name: str  # canonical: underscores, full name ("nproc_per_node")
    written: str  # as written, without a value ("--nproc-per-node")
    words: List[Word]  # the option word, and the value word when separate
    value: Optional[Value]  # None for a flag

    @property
    def span(self) -> Span:
        return cover(self.words)

    @property
    def text(self) -> Optional[str]:
        return self.value.text if self.value is not None else None

    @property
    def known(self) -> bool:
        return self.value is not None and self.value.known

    @property
    def number(self) -> Optional[int]:
        return as_int(self.value)

    def value_span(self) -> Optional[Span]:
        """The source bytes of the value when they are written literally at this use (for a fix)."""
        return literal_span(self.value)


@dataclass
class EntryPoint:
    """What the launcher runs: a script path, a ``-m`` module, a ``-c`` snippet or a program."""

    kind: str  # "script" | "module" | "code" | "program"
    words: List[Word]  # ["train.py"], or ["-m", "pkg.mod"]

    @property
    def word(self) -> Word:
        return self.words[-1]

    @property
    def name(self) -> str:
        return self.word.text

    @property
    def known(self) -> bool:
        return self.word.known

    @property
    def span(self) -> Span:
        return cover(self.words)


@dataclass
class ParallelSize:
    """One parallelism size given to the entry point: ``--tp 2``, ``model.tensor_model_parallel_size=$TP``."""

    dimension: str  # "tp" | "pp" | "cp" | "ep" | "etp"
    written: str  # the option or key as written ("--tensor-model-parallel-size")
    words: List[Word]
    value: Value

    @cached_property
    def number(self) -> Optional[int]:
        """The size as an integer, when known (``as_int``; kept: ``Launch.configurations`` reads
        each size's several times)."""
        return as_int(self.value)

    @property
    def span(self) -> Span:
        return cover(self.words)


@dataclass
class Configuration:
    """One combination of parallelism sizes a launch runs with (one loop iteration, say).

    ``sizes`` maps a dimension to its size when it is known for certain; a missing dimension is
    not given or not known. ``where`` holds the sizes as found (for spans and messages).
    """

    sizes: Dict[str, int]
    where: Dict[str, ParallelSize]
    loop_bound: bool = False  # the sizes come from iterations of a loop around the step

    def span(self) -> Span:
        """The bytes that hold this configuration: the loop's element when the sizes come from
        one, else the options at the launch."""
        spans: List[Span] = []
        for size in self.where.values():
            pieces = [p for p in size.value.pieces if p.span is not None]
            if self.loop_bound and pieces and all(p.loop for p in pieces):
                spans.extend(p.span for p in pieces)  # type: ignore[misc]
            else:
                spans.append(size.span)
        if not spans:
            return Span(0, 0)
        return Span(min(s.start for s in spans), max(s.end for s in spans))

    def describe(self) -> str:
        return ", ".join(f"{d.upper()}={self.sizes[d]}" for d in DIMENSIONS if d in self.sizes)


@dataclass
class Launch:
    """The launcher one task command of a step runs."""

    step: Step
    command: Command
    kind: str  # SRUN_NATIVE, TORCHRUN, TORCH_LAUNCH, ACCELERATE, DEEPSPEED
    launcher: List[Word]  # the words that start it: ["uv", "run", "python", "-m", "torch.distributed.run"]
    options: List[LaunchOption] = field(default_factory=list)  # the launcher's own options
    entry: Optional[EntryPoint] = None
    args: List[Word] = field(default_factory=list)  # the entry point's arguments
    # an unknown word stood among the launcher's options (``torchrun $ARGS …``), or the task
    # string around it did not parse cleanly: an option may be there without the model seeing it
    options_incomplete: bool = False
    unparsed: bool = False  # the task string holding it has a parse error: nothing about it is reliable
    index: int = 0  # argv index of the first launcher word
    variants: List["Launch"] = field(default_factory=list)  # every alternative, primary last
    # the launches other alternatives write with another launcher (``python`` in one branch,
    # ``torchrun`` in another): not variants of this one, kept so a rule can name that branch
    others: List["Launch"] = field(default_factory=list)
    workdir: Optional[str] = None  # the working directory the task starts in, when known

    # -- where it is ------------------------------------------------------------------------------
    @property
    def in_string(self) -> bool:
        """The task command is a string the task's shell parses (``bash -c "$CMD"``)."""
        return self.command.in_string

    @property
    def elastic(self) -> bool:
        """torchrun / torch.distributed.run / torch.distributed.launch."""
        return self.kind in ELASTIC

    @property
    def span(self) -> Span:
        """The launcher words (``torchrun``, ``python -m torch.distributed.run``), without the
        runners in front of them (``uv run``, ``apptainer exec … IMAGE``)."""
        first = 0
        for index, word in enumerate(self.launcher):
            name = posixpath.basename(word.text) if word.known else ""
            if PYTHON.match(name) or name in ("torchrun", "accelerate", "deepspeed"):
                first = index
                break
        return cover(self.launcher[first:])

    @property
    def program(self) -> str:
        return " ".join(w.text for w in self.launcher)

    # -- options ------------------------------------------------------------------------------------
    def option(self, name: str) -> Optional[LaunchOption]:
        """The last occurrence of an option, by canonical name (either spelling accepted)."""
        name = normalise(name)
        found = None
        for opt in self.options:
            if opt.name == name:
                found = opt
        return found

    def has(self, *names: str) -> bool:
        return any(self.option(n) is not None for n in names)

    def option_values(self, name: str) -> List[Optional[Value]]:
        """The option's value in every variant (None where a variant lacks it or it is a flag)."""
        out: List[Optional[Value]] = []
        for variant in self.variants or [self]:
            opt = variant.option(name)
            out.append(opt.value if opt is not None else None)
        return out

    def certain_number(self, name: str) -> Optional[int]:
        """The option's integer value when every variant gives the same known one."""
        numbers = set()
        for value in self.option_values(name):
            number = as_int(value)
            if number is None:
                return None
            numbers.add(number)
        return numbers.pop() if len(numbers) == 1 else None

    def insertion_after_launcher(self) -> Tuple[Optional[int], str]:
        """Where to insert a launcher option right after the launcher words, and the quoting there."""
        last = self.launcher[-1]
        pieces = [p for p in last.pieces if p.span is not None]
        if not pieces or not all(p.known for p in pieces):
            return None, ""
        piece = pieces[-1]
        assert piece.span is not None
        return piece.span.end, piece.quote

    def spelling(self, name: str) -> str:
        """``--name`` in the style the command already uses (``--node-rank`` vs ``--node_rank``)."""
        dashed = any("-" in o.written.lstrip("-") for o in self.options)
        underscored = any("_" in o.written for o in self.options)
        if dashed and not underscored:
            return "--" + name.replace("_", "-")
        return "--" + name

    # -- parallelism ---------------------------------------------------------------------------------
    @property
    def parallelism(self) -> Dict[str, ParallelSize]:
        """The sizes this launch (this variant) passes to its entry point; the last one wins."""
        return parallel_sizes(self.args)

    def configurations(self) -> List[Configuration]:
        """Each combination of parallelism sizes the launch runs with, sizes known for certain only.

        A size is certain when every variant gives the same known value, or when the variants
        differ only by iterations of a loop that encloses the step (each iteration runs). Sizes that
        differ by branches or defaults (``${TP:-2}``) are left out: the rule must not guess.
        """
        variants = self.variants or [self]
        per_variant = [v.parallelism for v in variants]
        enclosing = _enclosing_loops(self.step)
        certain: Dict[str, bool] = {}
        loop_bound = False
        for dimension in DIMENSIONS:
            found = [p.get(dimension) for p in per_variant]
            if all(f is None for f in found):
                continue
            if any(f is None or f.number is None for f in found):
                certain[dimension] = False
                continue
            numbers = {f.number for f in found if f is not None}
            if len(numbers) == 1:
                certain[dimension] = True
                continue
            bound = all(
                p.loop and all(loop in enclosing for loop, _ in p.loop)
                for f in found
                if f is not None
                for p in f.value.pieces
                if p.span is not None
            )
            certain[dimension] = bound
            loop_bound = loop_bound or bound
        out: List[Configuration] = []
        seen = set()
        for sizes in per_variant:
            chosen = {d: s for d, s in sizes.items() if certain.get(d)}
            numbers = {d: s.number for d, s in chosen.items() if s.number is not None}
            key = tuple(sorted(numbers.items()))
            if key in seen:
                continue
            seen.add(key)
            out.append(Configuration(numbers, chosen, loop_bound))  # type: ignore[arg-type]
        return out

    # -- what the entry point is -------------------------------------------------------------------
    def framework(self, settings: Optional[dict] = None) -> Optional[str]:
        """"megatron-bridge", "megatron-lm" or None, from the entry point (see ``classify_entry``)."""
        return classify_entry(self.entry, self.workdir, settings or {})


# -- helpers ----------------------------------------------------------------------------------------
def normalise(name: str) -> str:
    return name.lstrip("-").replace("-", "_").lower()


def cover(words: Sequence[Word]) -> Span:
    """The span from the first word to the last when they are in source order, else the first's
    (words assembled from several assignments point into each of them)."""
    spans = [w.span for w in words]
    for before, after in zip(spans, spans[1:]):
        if after.start < before.end:
            return spans[0]
    return Span(spans[0].start, spans[-1].end)


def as_int(value: Optional[Value]) -> Optional[int]:
    if value is None or not value.known:
        return None
    text = value.text.strip()
    return int(text) if text.isdigit() else None


def literal_span(value: Optional[Value]) -> Optional[Span]:
    """The source bytes of a value written literally in one place (no variable in between)."""
    if value is None:
        return None
    pieces = [p for p in value.pieces if p.text or p.span is not None]
    if not pieces or any(not p.exact or p.via for p in pieces):
        return None
    position = pieces[0].span.start  # type: ignore[union-attr]
    for piece in pieces:
        assert piece.span is not None
        if piece.span.start != position:
            return None
        position = piece.span.end
    return Span(pieces[0].span.start, position)  # type: ignore[union-attr]


def _tail(word: Word, prefix: str) -> Value:
    """The value of ``word`` after its first ``len(prefix)`` characters (``--opt=`` → value)."""
    start = len(prefix.encode("utf-8"))
    return word.value.slice(start, len(word.text.encode("utf-8")))


def _enclosing_loops(step: Step) -> set:
    """Start bytes of the ``for`` loops around the step (the keys of ``Piece.loop``)."""
    return {a.start_byte for a in ancestors(step.command.node) if a.type == "for_statement"}


def parallel_sizes(args: Sequence[Word]) -> Dict[str, ParallelSize]:
    """Parallelism sizes among arguments: ``--tp 2``, ``--tp=2``, ``model.tensor_model_parallel_size=2``."""
    found: Dict[str, ParallelSize] = {}
    i = 0
    count = len(args)
    while i < count:
        word = args[i]
        value = word.value
        text = value.text
        i += 1
        if not value.known and not is_option_word(word) and not (i > 1 and args[i - 2].text.startswith("-") and "=" not in args[i - 2].text):
            # ``$EXTRA_ARGS`` / ``"$@"``: may override anything given before it
            found.clear()
            continue
        # (every name in PARALLELISM_NAMES holds a "p": a word without one names no size; most
        # arguments of a long training command are skipped on that test alone)
        if text.startswith("-"):
            key, eq, rest = text.partition("=")
            if "p" not in key and "P" not in key:
                continue
            name = normalise(key)
            dimension = PARALLELISM_NAMES.get(name)
            if dimension is None:
                continue
            if eq:
                found[dimension] = ParallelSize(dimension, key, [word], _tail(word, key + "="))
            elif i < len(args) and not args[i].text.startswith("-"):
                found[dimension] = ParallelSize(dimension, key, [word, args[i]], args[i].value)
                i += 1
            continue
        if "=" not in text:
            continue
        key, eq, rest = text.partition("=")
        if not key or "$" in key or ("p" not in key and "P" not in key):
            continue
        last = key.lstrip("+~").split(".")[-1]
        name = normalise(last)
        dimension = PARALLELISM_NAMES.get(name)
        if dimension is None or name in SHORT_PARALLELISM:
            continue
        found[dimension] = ParallelSize(dimension, key, [word], _tail(word, key + "="))
    return found


# -- recognising the launcher -----------------------------------------------------------------------
def _text(argv: Sequence[Word], i: int) -> Optional[str]:
    """The word's text when known, or when it is an option (``--x=$Y``) whose name is known."""
    if i >= len(argv):
        return None
    word = argv[i]
    if word.known:
        return word.text
    return word.text if is_option_word(word) else None


def is_option_word(word: Word) -> bool:
    """A word that starts with a literal ``-name``: an option, whatever its value."""
    first = next((p for p in word.pieces if p.text or not p.known), None)
    if first is None or not first.known or not first.text.startswith("-"):
        return False
    name = word.text.split("=", 1)[0]
    return "${" not in name


def recognise(step: Step, command: Command, workdir: Optional[str] = None) -> Optional[Launch]:
    """The launcher of one task command, or None when it runs something else (or is unknown)."""
    argv = command.argv
    i = command.begin
    start = i
    launcher: List[Word] = []
    while True:
        text = _text(argv, i)
        if text is None:
            return None
        program = posixpath.basename(text)
        if program in RUNNERS and _text(argv, i + 1) == "run":
            takes_value = RUNNERS[program]
            launcher.extend(argv[i : i + 2])
            i += 2
            module_flag = False
            while i < len(argv):
                t = _text(argv, i)
                if t is None:
                    return None
                if t == "--":
                    launcher.append(argv[i])
                    i += 1
                    break
                if not t.startswith("-"):
                    break
                if program == "uv" and t in ("-m", "--module"):
                    module_flag = True
                    launcher.append(argv[i])
                    i += 1
                    break
                step_by = 2 if t in takes_value else 1
                launcher.extend(argv[i : i + step_by])
                i += step_by
            if module_flag:
                return _python_module(step, command, argv, i, launcher, start, workdir)
            text = _text(argv, i)
            if text is None:
                return None
            if text.endswith(".py") and not PYTHON.match(posixpath.basename(text)):
                # ``uv run script.py``: uv runs it with the project's Python
                return _finish(step, command, SRUN_NATIVE, launcher, [], EntryPoint("script", [argv[i]]), argv[i + 1 :], start, workdir)
            continue
        if program in MPI_LAUNCHERS:
            return None  # ``mpirun -np 16 python t.py``: MPI starts the processes, not the step
        if program in CONTAINER_RUNNERS and _text(argv, i + 1) == "run":
            return None  # ``apptainer run IMAGE …``: the image's own runscript, whatever it launches
        if program in CONTAINER_RUNNERS and _text(argv, i + 1) == "exec":
            takes_value = CONTAINER_RUNNERS[program]
            launcher.extend(argv[i : i + 2])
            i += 2
            while i < len(argv):
                t = _text(argv, i)
                if t is None or not t.startswith("-"):
                    break
                name, eq, value = t.partition("=")
                if name == "--pwd" and (eq or i + 1 < len(argv)):
                    pwd = value if eq else _text(argv, i + 1)
                    if pwd and "${" not in pwd:
                        workdir = _join(workdir, pwd)
                step_by = 2 if t in takes_value else 1
                launcher.extend(argv[i : i + step_by])
                i += step_by
            if _text(argv, i) is None:
                return None
            launcher.append(argv[i])  # the image
            i += 1
            continue
        if PYTHON.match(program):
            launcher.append(argv[i])
            return _python(step, command, argv, i + 1, launcher, start, workdir)
        if program == "torchrun":
            launcher.append(argv[i])
            return _elastic(step, command, TORCHRUN, argv, i + 1, launcher, start, workdir)
        if program == "accelerate" and _text(argv, i + 1) == "launch":
            launcher.extend(argv[i : i + 2])
            return _generic(step, command, ACCELERATE, argv, i + 2, launcher, start, workdir, ACCELERATE_FLAGS, ACCELERATE_SHORT)
        if program == "deepspeed":
            launcher.append(argv[i])
            return _generic(step, command, DEEPSPEED, argv, i + 1, launcher, start, workdir, DEEPSPEED_FLAGS, {})
        return None


def _python(step, command, argv, i, launcher, start, workdir) -> Optional[Launch]:
    """After ``python``: interpreter options, then ``-m mod``, ``-c code`` or a script."""
    while i < len(argv):
        text = _text(argv, i)
        if text is None:
            return None
        if text == "-m" or text.startswith("-m") and not text.startswith("--"):
            if text == "-m":
                launcher.append(argv[i])
                return _python_module(step, command, argv, i + 1, launcher, start, workdir)
            return None  # ``-mmodule``: rare; leave it
        if text == "-c":
            if i + 1 >= len(argv):
                return None
            return _finish(step, command, SRUN_NATIVE, launcher, [], EntryPoint("code", argv[i : i + 2]), argv[i + 2 :], start, workdir)
        if text in ("-V", "--version", "-h", "--help", "-"):
            return None
        if text.startswith("-"):
            launcher.append(argv[i])
            if text in PYTHON_VALUE_OPTIONS and i + 1 < len(argv):
                launcher.append(argv[i + 1])
                i += 2
            else:
                i += 1
            continue
        return _finish(step, command, SRUN_NATIVE, launcher, [], EntryPoint("script", [argv[i]]), argv[i + 1 :], start, workdir)
    return None


MODULE_LAUNCHERS = {
    "torch.distributed.run": TORCHRUN,
    "torch.distributed.launch": TORCH_LAUNCH,
    "accelerate.commands.launch": ACCELERATE,
    "deepspeed.launcher.runner": DEEPSPEED,
}


def _python_module(step, command, argv, i, launcher, start, workdir) -> Optional[Launch]:
    """``python -m MODULE …`` / ``uv run -m MODULE …``."""
    module = _text(argv, i)
    if module is None:
        return None
    kind = MODULE_LAUNCHERS.get(module)
    if kind in ELASTIC:
        launcher.append(argv[i])
        return _elastic(step, command, kind, argv, i + 1, launcher, start, workdir)
    if kind == ACCELERATE:
        launcher.append(argv[i])
        return _generic(step, command, ACCELERATE, argv, i + 1, launcher, start, workdir, ACCELERATE_FLAGS, ACCELERATE_SHORT)
    if kind == DEEPSPEED:
        launcher.append(argv[i])
        return _generic(step, command, DEEPSPEED, argv, i + 1, launcher, start, workdir, DEEPSPEED_FLAGS, {})
    flag = launcher.pop()  # the "-m" word belongs to the entry point
    return _finish(step, command, SRUN_NATIVE, launcher, [], EntryPoint("module", [flag, argv[i]]), argv[i + 1 :], start, workdir)


@lru_cache(maxsize=1024)
def _elastic_name(body: str) -> Optional[str]:
    """A torchrun long option by full name or unique prefix (argparse's abbreviations); kept per
    name: behind an unknown entry point every argument of the program is read as an option, and
    most of them (``--num-layers``) are no torchrun name, which a scan of the table tells."""
    name = normalise(body)
    if name in TORCHRUN_OPTIONS:
        return name
    matches = [n for n in TORCHRUN_OPTIONS if n.startswith(name)]
    return matches[0] if len(matches) == 1 else None


# An option word's reading: canonical name, the option as written (without a value), whether it
# takes a value, and where an attached value starts (``--nnodes=2``, ``-r3``; None: not attached).
if TYPE_CHECKING:  # a type for annotations only
    Reading = Tuple[str, str, bool, Optional[int]]


def _elastic_reading(text: str, following: Optional[Word]) -> Reading:
    """torchrun / torch.distributed.launch, from their option table."""
    if text.startswith("--"):
        body, eq, _ = text[2:].partition("=")
        name = _elastic_name(body)
        if name is None:
            # an option this table does not know: keep it, guess its arity from the next word
            name = normalise(body)
            takes = bool(eq) or (following is not None and not following.text.startswith("-") and not following.text.endswith(".py"))
        else:
            takes = TORCHRUN_OPTIONS[name]
        return name, "--" + body, takes, len(body.encode("utf-8")) + 3 if eq else None
    letter = text[1:2]
    name = TORCHRUN_SHORT.get(letter, letter)
    attached = (3 if text[2:3] == "=" else 2) if len(text) > 2 else None
    return name, "-" + letter, TORCHRUN_OPTIONS.get(name, False), attached


def _generic_reading(flags: frozenset, short: Dict[str, str]):
    """accelerate launch / deepspeed: flags from a small table, any other option takes the next
    word unless it looks like an option or the script."""

    def reading(text: str, following: Optional[Word]) -> Reading:
        if text.startswith("--"):
            body, eq, _ = text[2:].partition("=")
            if eq:
                return normalise(body), "--" + body, True, len(body.encode("utf-8")) + 3
            name, written = normalise(body), "--" + body
        else:
            name, written = short.get(text[1:2], text[1:2]), text[:2]
        takes = name not in flags and following is not None and not (
            following.known and (following.text.startswith("-") or following.text.endswith(".py"))
        )
        return name, written, takes, None

    return reading


def _elastic(step, command, kind, argv, i, launcher, start, workdir) -> Launch:
    return _launcher(step, command, kind, argv, i, launcher, start, workdir, _elastic_reading)


def _generic(step, command, kind, argv, i, launcher, start, workdir, flags, short) -> Launch:
    return _launcher(step, command, kind, argv, i, launcher, start, workdir, _generic_reading(flags, short))


def _launcher(step, command, kind, argv, i, launcher, start, workdir, read) -> Launch:
    """The launcher's options up to the entry point (each read by ``read``), the entry point, and
    the entry point's arguments."""
    options: List[LaunchOption] = []
    incomplete = False
    while i < len(argv):
        word = argv[i]
        if not word.known and not is_option_word(word):
            # ``torchrun $DISTRIBUTED_ARGS train.py``: anything may hide there
            incomplete = True
            i += 1
            continue
        text = word.text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        following = argv[i + 1] if i + 1 < len(argv) else None
        name, written, takes, attached = read(text, following)
        if takes and attached is not None:
            options.append(LaunchOption(name, written, [word], word.value.slice(attached, len(text.encode("utf-8")))))
            i += 1
        elif takes and following is not None:
            options.append(LaunchOption(name, written, [word, following], following.value))
            i += 2
        else:
            options.append(LaunchOption(name, written, [word], None))
            i += 1
    entry = None
    if i < len(argv):
        names = {o.name for o in options}
        entry_kind = "module" if "module" in names else "program" if "no_python" in names else "script"
        entry = EntryPoint(entry_kind, [argv[i]])
        i += 1
    return _finish(step, command, kind, launcher, options, entry, argv[i:], start, workdir, incomplete)


def _finish(step, command, kind, launcher, options, entry, args, start, workdir, incomplete=False) -> Launch:
    return Launch(
        step, command, kind, list(launcher), options, entry, list(args),
        options_incomplete=incomplete, index=start, workdir=workdir,
    )


# -- working directory -----------------------------------------------------------------------------
def _workdir(script: "Script", step: Step, command: Command) -> Optional[str]:
    """The directory a task starts in, when the script says: the step's ``--chdir`` or
    ``--container-workdir``, a ``cd`` earlier in the task string, else the batch shell's last ``cd``."""
    found: Optional[str] = None
    for opt in step.options:
        if opt.name in (option_table.CHDIR, option_table.CONTAINER_WORKDIR) and opt.value and "${" not in opt.value:
            found = opt.value
    for other in step.task_commands:
        if other is command:
            break
        if other.program == "cd" and len(other.argv) > 1 and other.argv[1].known:
            found = _join(found, other.argv[1].text)
    if found is not None:
        return found
    at = step.command.node.start_byte
    for other in script.commands:
        if other.node.start_byte >= at:
            break
        if other.program == "cd" and len(other.argv) > 1 and other.argv[1].known and not other.in_function:
            found = _join(found, other.argv[1].text)
    return found


def _join(base: Optional[str], path: str) -> str:
    if base is None or path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(base, path))


# -- Megatron-Bridge or Megatron-LM ------------------------------------------------------------------
def classify_entry(entry: Optional[EntryPoint], workdir: Optional[str], settings: dict) -> Optional[str]:
    """"megatron-bridge" for a Megatron-Bridge entry point, "megatron-lm" for Megatron-LM's own
    ``pretrain_*.py``, None otherwise or when unknown.

    Bridge: a ``megatron.bridge`` module; a script inside a directory named like a Megatron-Bridge
    checkout (not inside its ``3rdparty/Megatron-LM``); a path only a Bridge checkout has
    (``scripts/training/…``, ``examples/recipes/…``); or a pattern of the ``bridge_entry_points``
    setting (globs over the path, its tails, or the module name).
    """
    if entry is None or not entry.known or entry.kind in ("code", "program"):
        return None
    extra = [str(p) for p in settings.get("bridge_entry_points") or ()]
    name = entry.name
    if entry.kind == "module":
        bridge = BRIDGE_MODULE.match(name) is not None or (extra and _matches_any([name], extra))
        return "megatron-bridge" if bridge else None
    path = name if workdir is None else _join(workdir, name)
    parts = [p for p in path.split("/") if p and p != "."]
    owner = None
    for part in parts[:-1]:
        if MEGATRON_LM_DIR.match(part):
            owner = "megatron-lm"
        elif BRIDGE_DIR.match(part):
            owner = "megatron-bridge"
    basename = parts[-1] if parts else name
    if owner == "megatron-lm":
        return "megatron-lm"
    tails = ["/".join(parts[k:]) for k in range(len(parts))] + [name]
    lowered = [t.lower() for t in tails]
    if extra and _matches_any(tails, extra):
        return "megatron-bridge"
    if owner == "megatron-bridge":
        return "megatron-bridge"
    if any(BRIDGE_PATH.match(t) for t in lowered):
        return "megatron-bridge"
    if PRETRAIN_SCRIPT.match(basename):
        return "megatron-lm"
    return None


# -- alternatives ------------------------------------------------------------------------------------
def _argv_variants(argv: List[Word], glob: bool = True) -> List[List[Word]]:
    """The argv under every consistent combination of its words' alternatives (primary last)."""
    groups = alternative_groups(argv)  # [start, end) of argv, node, span, alternatives
    if not groups:
        return [argv]
    choices = [group[4] for group in groups]
    combos: List[Tuple[Value, ...]] = []
    for combo in product(*choices):
        if consistent(p for value in combo for p in value.pieces):
            combos.append(combo)
    combos = combos[-MAX_VARIANTS:]
    primary = tuple(c[-1] for c in choices)
    combos = [c for c in combos if c != primary] + ([primary] if consistent(p for v in primary for p in v.pieces) else [])
    variants: List[List[Word]] = []
    for combo in combos:
        out: List[Word] = []
        position = 0
        for (start, end, node, span, _, ifs), value in zip(groups, combo):
            out.extend(argv[position:start])
            out.extend(Word(part, node, span, None) for part in split_value(value, ifs, glob))
            position = end
        out.extend(argv[position:])
        variants.append(out)
    return variants or [argv]


def _string_variants(script: "Script", step: Step, index: int) -> List[Command]:
    """Task command ``index`` of a ``bash -c`` string under every alternative of that string."""
    if step.shell_index is None:
        return []
    argv = step.task_argv
    j = step.shell_index + 1
    while j < len(argv) and argv[j].known and argv[j].text.startswith("-"):
        flag = argv[j].text
        j += 1
        if "c" in flag[1:] and not flag.startswith("--"):
            break
    if j >= len(argv) or not argv[j].alternatives:
        return []
    out: List[Command] = []
    alternatives = argv[j].alternatives[-MAX_VARIANTS:]
    own = step.task_values
    count = len(step.task_commands)
    # the primary alternative is the string the step's task commands were parsed from
    primary = _same_pieces(alternatives[-1], step.task_string)
    memo: dict = {}  # (what _substituted reads of the step's own string, for each alternative)
    for alternative in alternatives:
        if alternative is alternatives[-1] and primary:
            step.task_values = own
            out.append(step.task_commands[index])
            continue
        command = _substituted(script, step, alternative, index, memo) if primary else None
        if command is None:
            command = task_string_command(script.values, alternative, index, count, step)
        if command is not None:
            out.append(command)
    return out


def _substituted(script: "Script", step: Step, alternative: Value, index: int, memo: Optional[dict] = None) -> Optional[Command]:
    """Task command ``index`` of an alternative string that parses as the step's own string and
    differs from it only in plain literal arguments of that command (``for TP in 1 2 4; do srun
    bash -c "… --tp $TP"``, see ``model/swaps.py``): the command the step's own string parsed to,
    its words mapped onto the alternative's pieces. That is what parsing the alternative gives
    (the same tree, the same words, each literal word read off the same bytes), without parsing
    it. None when the shortcut does not apply (the caller parses). The command's node is the one
    of the step's own string (the same kind, at the same bytes)."""
    string = step.task_string
    assert string is not None
    parse = parsed_task_string(script.values, string)  # (memoised: the step's own parse)
    if index >= len(parse.nodes):
        return None
    swapped = kept_swapped_words(script.values, parse.local[0].root_node, string, alternative)
    if swapped is None:
        return _shifted(script, parse, step, alternative, index)
    if not swapped:
        return None  # the same text (whose memoised parse answers as cheaply)
    inner = inner_command(parse.local, index)
    words = {word.span.start: word for word in inner.argv[1:]}
    for node in swapped:
        word = words.get(node.start_byte)
        if word is None or node.parent != inner.node or word.alternatives is not None or len(word.value.pieces) != 1:
            return None  # a word of another command, or one the command does not read literally
        piece = word.value.pieces[0]
        span = piece.span
        if span is None or span.start != node.start_byte or span.end != node.end_byte or word.span.end != span.end or not piece.exact:
            return None
    return _command_in(parse, alternative, index, step, memo)


def _command_in(parse, string: Value, index: int, step: Step, memo: Optional[dict] = None) -> Command:
    """``parse.command_in(string, index, step)`` of an alternative laid out as the step's own
    string (the same pieces but for a few of the same length, as ``swapped_words`` finds it),
    but a word whose bytes the alternative holds in the very pieces the step's own string holds
    there is the word the step's own command was mapped to: mapping it onto ``string`` reads
    those pieces alone (its value's, its span's, through ``slice_pieces`` and ``source_bounds``),
    so it gives that word again. An alternative of a loop mostly differs in a few words (``--tp
    $TP``); the others (the launcher and its options among them) are then the same objects in
    every alternative's command, which ``build_launches`` reads once (``_Again``). Its prefix
    assignments keep the step's own values and spans alike. ``memo``: kept
    by the caller for the alternatives of one command (the pieces each of its words reads)."""
    primary = parse.string
    p_starts, p_ends, _ = primary._layout
    if string._layout[1] != p_ends:
        return parse.command_in(string, index, step)  # (laid out otherwise: each word mapped)
    mapped = parse.mapped[index]
    if mapped is None:
        parse.command(index, step)  # (maps the step's own string's words, once)
        mapped = parse.mapped[index]
    own = mapped[1]
    inner = inner_command(parse.local, index)
    reach = memo.get(index) if memo is not None else None
    if reach is None:
        reach = _pieces_read(inner, p_starts, p_ends)
        if memo is not None:
            memo[index] = reach
    changed = list(compress(counter(), map(is_not, string.pieces, primary.pieces)))  # (sorted)
    cuts = parse.cuts
    argv: List[Word] = []
    for word, kept, read in zip(inner.argv, own, reach):
        if read is not None:
            at = bisect.bisect_left(changed, read[0])
            if at == len(changed) or changed[at] >= read[1]:
                argv.append(kept)
                continue
        argv.append(_remap_word(word, string, cuts))
    env: List[EnvAssignment] = []
    for e, (_, value, span) in zip(inner.env, mapped[2]):
        read = _reach(e.value, e.span, p_starts, p_ends)
        at = bisect.bisect_left(changed, read[0])
        if at < len(changed) and changed[at] < read[1]:
            value, span = remap(e.value, string), _outer_span(string, e.span)
        env.append(EnvAssignment(e.name, value, span or step_span(step)))
    return Command(inner.node, argv, env, True, step)


def _reach(value: Value, span: Span, starts: List[int], ends: List[int]) -> Tuple[int, int]:
    """The pieces [first, last) of a string that mapping a word or an assignment read there
    reads (``slice_pieces``' reach over its span and its value's pieces' spans)."""
    lo, hi = span.start, span.end
    for piece in value.pieces:
        at = piece.span
        if at is not None:
            if at.start < lo:
                lo = at.start
            if at.end > hi:
                hi = at.end
    first = bisect.bisect_left(ends, lo)
    return first, bisect.bisect_right(starts, hi, first)


def _pieces_read(inner: Command, starts: List[int], ends: List[int]) -> List[Optional[Tuple[int, int]]]:
    """For each word of a task string's command: the pieces [first, last) of the string that
    mapping it reads (``slice_pieces``' reach over its span and its pieces' spans), None for a
    word with alternatives (whose pieces may stand anywhere in the string)."""
    return [None if word.alternatives is not None else _reach(word.value, word.span, starts, ends) for word in inner.argv]


def _shifted(script: "Script", parse, step: Step, alternative: Value, index: int) -> Optional[Command]:
    """Task command ``index`` of an alternative string that rewrites plain argument words of the
    step's own string with text of another length (``${WORKSPACE:-/workspace}/ckpt`` when the
    environment sets WORKSPACE: ``${WORKSPACE}/ckpt``, see ``swaps.shifted_words``): the step's
    own command with each rewritten word read off the alternative's pieces, every other word as
    the step's string maps it. That is what parsing the alternative gives when no other word
    reads bytes the rewriting moves in a way that shows: each of their pieces is a literal of
    the string's text or an unknown it leaves to the task's shell, mapped onto the string's own
    pieces, which the alternative holds too. None when the shortcut does not apply. The node
    is the one of the step's own string (the same kind, starting at the same byte) when nothing
    before the command is rewritten, else the command's node in the alternative's own tree
    (parsed, but neither evaluated nor mapped), found where the rewritten words before it
    moved it."""
    string = step.task_string
    assert string is not None
    found = shifted_words(parse.local[0].root_node, parse.inner, string, alternative)
    if found is None:
        return None
    rewritten, stretches = found
    inner = inner_command(parse.local, index)
    place = inner.node
    if stretches[0][0] < place.start_byte:
        place = _moved_command(script, alternative, place, rewritten)
        if place is None:
            return None
    own = parse.command(index, step)
    at = {entry[0].start_byte: entry for entry in rewritten}
    argv: List[Word] = []
    used = 0
    for word, mapped in zip(inner.argv, own.argv):
        entry = at.get(word.span.start)
        if entry is None:
            if not _unmoved(word.value, word.span, word.alternatives, string, stretches):
                return None
            argv.append(mapped)
            continue
        node, start, end, quoted, command = entry
        if word.alternatives is not None or command != inner.node or word.span.end != node.end_byte:
            return None
        if quoted:  # the text between the quotes
            pieces = alternative.slice_pieces(start + 1, end - 1)
        else:
            pieces = alternative.slice_pieces(start, end)
        argv.append(Word(Value(tuple(pieces)), None, alternative.source_bounds(start, end) or Span(0, 0), None))
        used += 1
    if used != sum(1 for entry in rewritten if entry[4] == inner.node):
        return None
    for assignment in inner.env:
        if not _unmoved(assignment.value, assignment.span, None, string, stretches):
            return None
    return Command(place, argv, own.env, True, step)


def _moved_command(script: "Script", alternative: Value, command, rewritten: List[Tuple]):
    """The node of ``command`` (of the step's own string's tree) in the tree of an alternative
    that rewrites words before it (``rewritten``, from ``swaps.shifted_words``): where they
    moved its first byte. None when no command starts there."""
    shift = 0
    for word, start, end, _quoted, _command in rewritten:
        if word.end_byte <= command.start_byte:
            shift += (end - start) - (word.end_byte - word.start_byte)
    at = command.start_byte + shift
    node = task_tree(script.values, alternative.text.encode("utf-8")).root_node.descendant_for_byte_range(at, at)
    while node is not None and not (node.start_byte == at and node.type == "command"):
        if node.start_byte != at:
            return None
        node = node.parent
    return node


def _unmoved(value: Value, span: Optional[Span], alternatives, string: Value, stretches: List[Tuple[int, int]]) -> bool:
    """Whether a word (or an assignment) of a task string's command maps onto an alternative
    string as onto ``string`` when the alternative rewrites only ``stretches`` of it: it reads
    none of them, and each of its pieces is a literal read off the string's bytes (mapped to
    the string's own pieces) or an unknown the task's shell expands: mapped to the one unknown
    piece of the string it reads, or made from the string's pieces it covers when it has no
    site of its own in the string's bytes."""
    if alternatives is not None or span is None:
        return False
    for start, end in stretches:
        if span.start < end and start < span.end:
            return False
    for piece in value.pieces:
        where = piece.span
        if where is None or piece.split:
            return False
        for start, end in stretches:
            if where.start < end and start < where.end:
                return False
        if piece.known:
            if not piece.exact:
                return False
            continue
        if piece.via:  # (what it was substituted through, in the task string's own bytes)
            outer = string.slice_pieces(where.start, where.end)
            if len(outer) != 1 or outer[0].known:
                return False  # kept with its sites, which the rewriting may move
    return True


def _same_pieces(value: Value, other: Optional[Value]) -> bool:
    """The same piece objects (an unsplit word's value is its primary alternative's pieces)."""
    if other is None or len(value.pieces) != len(other.pieces):
        return False
    return all(a is b for a, b in zip(value.pieces, other.pieces))


# -- building -------------------------------------------------------------------------------------
def launches(script: "Script") -> List[Launch]:
    """Every recognised launch of every step, in source order (memoised)."""
    return script.launches


def launches_of(script: "Script", step: Step) -> List[Launch]:
    return script.launches_of(step)


def _inherited(script: "Script", step: Step, command: Command) -> Command:
    """``command`` with the words its task's shell takes from the environment filled in: an
    unquoted ``$LAUNCHER`` in a single-quoted task string (``srun bash -c '$LAUNCHER train.py'``)
    is the value the batch shell exported before the step, split as bash splits it. The command
    itself when no such word stands before the entry point could be found."""
    if not command.in_string or not any(_inherited_name(w) for w in command.argv[:4]):
        return command
    export = step.option(option_table.EXPORT)
    if export is not None and (not export.value_known or "ALL" not in (export.value or "").split(",")):
        return command  # srun passes only some variables: leave it unknown
    at = step.command.node.start_byte
    values = script.values
    argv: List[Word] = []
    changed = False
    for word in command.argv:
        name = _inherited_name(word)
        if name is None or not values.is_exported(name, at):
            argv.append(word)
            continue
        found = values.lookup(name, at, step.command.node)
        if not found or not found[-1].pieces:
            argv.append(word)
            continue
        argv.extend(Word(part, None, word.span, None) for part in split_value(_splittable(found[-1])))
        changed = True
    if not changed:
        return command
    return Command(command.node, argv, command.env, True, step)


def _inherited_name(word: Word) -> Optional[str]:
    """The NAME of a word that is exactly an unquoted ``$NAME`` the task's shell expands."""
    if len(word.pieces) != 1:
        return None
    piece = word.pieces[0]
    if piece.known or not piece.task or piece.quote != "" or not piece.name:
        return None
    return piece.name


def _splittable(value: Value) -> Value:
    """A value as the task's shell receives it from the environment: plain text it splits on IFS."""
    return Value(tuple(Piece(p.text, p.span, p.quote, p.known, p.name, p.escaped, p.via, True, p.task, p.loop) for p in value.pieces))


class _Again:
    """``recognise`` of a variant of a launch's command (same step, same working directory).

    ``recognise`` reads the words up to the entry point and the entry point itself, nothing
    after them (only their number, when it reads to the end of the argv): a variant whose argv
    holds the very same words there (and wraps the program alike) reads the same launcher,
    options and entry point, with its own arguments. Those come without reading them again: a
    loop's variants mostly differ in the entry point's arguments (``--tp $TP``)."""

    __slots__ = ("launch", "incomplete", "read")

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.incomplete = launch.options_incomplete  # (as read: build_launches may set it after)
        self.read = len(launch.command.argv) - len(launch.args)  # the words the reading took

    def __call__(self, step: Step, command: Command, workdir: Optional[str]) -> Optional[Launch]:
        launch = self.launch
        own = launch.command.argv
        argv = command.argv
        read = self.read
        if (
            (len(argv) == len(own) or read < len(argv) and read < len(own))
            and all(argv[k] is own[k] for k in range(read))
            and command.begin == launch.command.begin
        ):
            entry = launch.entry
            return Launch(
                step, command, launch.kind, list(launch.launcher),
                [LaunchOption(o.name, o.written, list(o.words), o.value) for o in launch.options],
                EntryPoint(entry.kind, list(entry.words)) if entry is not None else None, argv[read:],
                options_incomplete=self.incomplete, index=launch.index, workdir=launch.workdir,
            )
        return recognise(step, command, workdir)


def build_launches(script: "Script") -> List[Launch]:
    out: List[Launch] = []
    for step in script.steps:
        for index, command in enumerate(step.task_commands):
            workdir = _workdir(script, step, command)
            own = command
            command = _inherited(script, step, command)
            launch = recognise(step, command, workdir)
            if launch is None:
                continue
            again = _Again(launch)
            if command.in_string and _tree_has_error(command.node):
                # the task's string did not parse cleanly: its words may be cut wrongly
                launch.unparsed = True
                launch.options_incomplete = True
            variants: List[Launch] = []
            others: List[Launch] = []
            # The primary alternative comes last, and is most often the very command the launch
            # was read from (the step's own task command, or the argv itself when no word has
            # alternatives): reading it again gives the launch's own reading, which the launch
            # replaces below, so the launch stands for it as it is.
            if command.in_string:
                found = [
                    launch if other is own else again(step, _inherited(script, step, other), workdir)
                    for other in _string_variants(script, step, index)
                ]
            else:
                found = [
                    launch if argv is command.argv else again(step, Command(command.node, argv, command.env, command.in_string, step), workdir)
                    for argv in _argv_variants(command.argv, script.values.globbing)
                ]
            for variant in found:
                if variant is not None:
                    (variants if variant.kind == launch.kind else others).append(variant)
            # the last variant is the primary alternative: the launch itself
            variants = variants[:-1] + [launch]
            launch.variants = variants
            launch.others = others
            for variant in variants:
                variant.variants = variants
                variant.others = others
            out.append(launch)
    return out


# Programs that start processes on other nodes themselves (over ssh/pdsh or MPI's own daemons).
REMOTE_STARTERS = frozenset({"ssh", "pdsh", "clush", "pssh", "parallel-ssh", "mpirun", "mpiexec", "orterun", "prterun"})
_BATCH_LAUNCH_PROGRAMS = frozenset(RUNNERS) | frozenset(CONTAINER_RUNNERS) | {"torchrun", "accelerate", "deepspeed"}


def batch_launches(script: "Script") -> List[Launch]:
    """Launches the batch shell runs itself, outside any srun step (``torchrun …`` or
    ``uv run python -m torch.distributed.run …`` as a command of the script, or inside a
    ``bash -c STRING`` it runs): they start on the job's first node only. Their ``step`` is None."""
    steps = {id(s.command) for s in script.steps}
    out: List[Launch] = []
    for command in script.commands:
        if id(command) in steps:
            continue
        program = command.program
        if not (program in _BATCH_LAUNCH_PROGRAMS or PYTHON.match(program) or command.may_run(SHELLS) or program == ""):
            continue
        argv = command.argv
        begin = command.begin
        if begin < len(argv) and argv[begin].known and posixpath.basename(argv[begin].text) in SHELLS:
            string = _shell_string(argv, begin)
            if string is None:
                continue
            inner = parse_task_string(script.values, string)
            candidates = [(c, True) for c in inner]
        else:
            candidates = [(command, False)]
        for candidate, in_string in candidates:
            launch = recognise(None, candidate)  # type: ignore[arg-type]
            if launch is None:
                continue
            if in_string and _tree_has_error(candidate.node):
                launch.unparsed = True
                launch.options_incomplete = True
            launch.variants = [launch]
            out.append(launch)
    return out


def _shell_string(argv: List[Word], begin: int) -> Optional[Value]:
    """The STRING of ``bash [-flags] -c STRING``."""
    j = begin + 1
    while j < len(argv) and argv[j].known and argv[j].text[:1] == "-":
        flag = argv[j].text
        j += 1
        if not flag.startswith("--") and "c" in flag[1:]:
            return argv[j].value if j < len(argv) else None
    return None


def runs_remote_starter(script: "Script") -> bool:
    """The batch shell starts processes on other nodes itself (an ssh loop, pdsh, mpirun)."""
    return any(c.program in REMOTE_STARTERS for c in script.commands)


def _tree_has_error(node) -> bool:
    while node.parent is not None:
        node = node.parent
    return bool(node.has_error)

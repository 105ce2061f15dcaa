"""What a launch runs: a Megatron-Bridge recipe, a Megatron-LM pretrain script, a generic PyTorch
training run or a CPU tool. One classification that the rules, ``convert`` and the torchrun →
srun-native migration all ask.

``classify(launch, settings)`` answers a ``Workload`` for one launch of ``model/launch.py``:

- ``BRIDGE``: a Megatron-Bridge entry point (``classify_entry``: a ``megatron.bridge`` module, a
  script in a Megatron-Bridge checkout, a path only such a checkout has, a ``bridge_entry_points``
  pattern of the settings);
- ``MEGATRON_LM``: Megatron-LM's own ``pretrain_*.py``;
- ``PYTORCH``: any other training launch (``is_training``: not a ``python -c`` snippet, not
  ``python -m pip``…);
- ``CPU_TOOL``: anything else a step starts.

Whether a launch certainly wants GPUs (``uses_gpus``) is a separate question: a Bridge recipe run
with ``--cpu`` is still a Bridge recipe.

``runs(script)`` (``Script.runs``) lists the training and conversion runs of the job: every launch,
plus NeMo's own ``nemo llm …`` command lines, each with what the storage rules ask of it: is it a
Bridge training run (``bridge_training``), does it fine-tune (``fine_tuning``, and why), does it
resume from a checkpoint it is told about (``resumes``).
"""
from __future__ import annotations

import posixpath

from .launch import DEEPSPEED, SRUN_NATIVE, TORCH_LAUNCH, TORCHRUN, EntryPoint, Launch, classify_entry
from ..lazyclass import dataclass, field
from .steps import Command, Step
from .values import Word
from ..lazyre import IGNORECASE, lazy
from ..stdlite import Constants

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional
    from .script import Script


class Workload(Constants):  # an enum.Enum, without importing enum
    BRIDGE = "megatron-bridge"  # a Megatron-Bridge (or NeMo) recipe
    MEGATRON_LM = "megatron-lm"  # Megatron-LM's own pretrain_*.py
    PYTORCH = "pytorch"  # another PyTorch training run
    CPU_TOOL = "cpu-tool"  # anything else: a snippet, pip, a data tool


# -- classification of one launch -----------------------------------------------------------------
NOT_TRAINING_MODULES = frozenset({"pip", "venv", "ensurepip", "site", "json.tool", "http.server", "compileall"})
GPU_LAUNCHERS = frozenset({TORCHRUN, TORCH_LAUNCH, DEEPSPEED})
CPU_HINTS = lazy(r"(^|[=\s])(gloo|cpu)($|[\s,])|--no[-_]cuda|--cpu\b", IGNORECASE)
MEGATRON_MODULE = lazy(r"^megatron\.", IGNORECASE)


def entry_workload(entry: Optional[EntryPoint], workdir: Optional[str], settings: Optional[dict] = None) -> Optional[Workload]:
    """BRIDGE or MEGATRON_LM for an entry point of one of those frameworks (run from ``workdir``),
    else None."""
    framework = classify_entry(entry, workdir, settings or {})
    return Workload(framework) if framework is not None else None


def is_training(launch: Launch) -> bool:
    """A training launch: not a ``python -c`` snippet, a bare program or ``python -m pip``."""
    if launch.kind != SRUN_NATIVE:
        return True
    entry = launch.entry
    if entry is None or entry.kind in ("code", "program"):
        return False
    return not (entry.kind == "module" and entry.name.split(".")[0] in NOT_TRAINING_MODULES)


def classify(launch: Launch, settings: Optional[dict] = None) -> Workload:
    """What the launch runs (see the module's docstring)."""
    framework = launch.framework(settings)
    if framework is not None:
        return Workload(framework)
    return Workload.PYTORCH if is_training(launch) else Workload.CPU_TOOL


def training_launch(script: "Script", step: Step) -> Optional[Launch]:
    """The last training launch among a step's task commands, or None."""
    found = None
    for launch in script.launches_of(step):
        if is_training(launch):
            found = launch
    return found


def _launch_text(launch: Launch) -> str:
    words = list(launch.launcher) + [w for o in launch.options for w in o.words] + list(launch.args)
    if launch.entry is not None:
        words += launch.entry.words
    return " ".join(w.text for w in words)


# Entry points that prepare data on CPUs: tokenising, packing, preprocessing a dataset.
CPU_TOOL_NAME = lazy(r"preprocess|prepare_\w*data|pack\w*_data|tokeni[sz]e|data_prep")
# A partition named for CPU nodes.
CPU_PARTITION = lazy(r"(^|[-_,])cpu($|[-_,\d])", IGNORECASE)


def cpu_tool(script: "Script", launch: Launch) -> bool:
    """A launch that runs a CPU tool: a data-preparation entry point, GPUs hidden from it
    (``NVIDIA_VISIBLE_DEVICES=void``), or a job sent to a CPU partition."""
    entry = launch.entry
    if entry is not None and entry.known and CPU_TOOL_NAME.search(posixpath.basename(entry.name)):
        return True
    hidden = [e.value for e in launch.command.env if e.name == "NVIDIA_VISIBLE_DEVICES"]
    at = (launch.step.command if launch.step is not None else launch.command).node.start_byte
    hidden += script.values.lookup("NVIDIA_VISIBLE_DEVICES", at)
    if any(v.known and v.text in ("void", "none", "") for v in hidden):
        return True
    partition = script.header.winning("partition")
    return partition is not None and partition.value is not None and bool(CPU_PARTITION.search(partition.value))


def uses_gpus(launch: Launch, settings: Optional[dict] = None) -> bool:
    """A launch that certainly wants GPUs: an elastic/deepspeed launcher, a Megatron entry point,
    or one that asks for NCCL; never one that says it runs on CPU."""
    text = _launch_text(launch)
    lowered = text.lower()
    # every hint spells "gloo", "cpu" or "cuda" (in ASCII letters of any case): a launch without
    # them is not searched
    if ("cpu" in lowered or "gloo" in lowered or "cuda" in lowered) and CPU_HINTS.search(text):
        return False
    if launch.kind in GPU_LAUNCHERS:
        return True
    if classify(launch, settings) in (Workload.BRIDGE, Workload.MEGATRON_LM):
        return True
    if launch.entry is not None and launch.entry.kind == "module" and MEGATRON_MODULE.match(launch.entry.name):
        return True
    return "nccl" in lowered


# -- the job's training runs ------------------------------------------------------------------------
NONE_VALUES = frozenset(("none", "None", "null", "false", "False", "0", "''", '""'))
TRAINING_NAME = lazy(r"pretrain|finetune|train|sft|peft|lora")
TRAINING_MODULE = lazy(r"train|finetune|recipe")
FINE_TUNING_NAME = lazy(r"(^|[_\-])(finetune|finetuning|sft|peft|lora)([_\-.]|$)")
PEFT_KEY = lazy(r"^[\w.]*peft(_scheme)?$")
FINE_TUNING_RECIPE = lazy(r"(^|_)(sft|peft|lora|finetune|dora)(_|$)")
PACKED_OPTION = lazy(r"packed_sequence|pack_sequence|^--?packed")
RESUME = lazy(r"^(--?load(=|$)|checkpoint\.load=|[\w.\-]*resume[\w.\-]*(=|$)|--?[\w\-]*resume)", IGNORECASE)
# An explicit checkpoint directory: ``checkpoint.save=DIR`` (Bridge's override), ``--save DIR``.
SAVE = lazy(r"^(--?save(=|$)|checkpoint\.save=)", IGNORECASE)


@dataclass
class Run:
    """A training or conversion entry point started by one task command (read from the launch
    model, plus NeMo's own ``nemo llm …`` command line)."""

    step: Step
    command: Command
    program: str  # the launch kind (srun-native, torchrun…) or "nemo"
    script: Optional[Word] = None  # the entry-point script, when one
    module: Optional[str] = None  # the ``-m`` module, when one
    args: List[Word] = field(default_factory=list)
    framework: Optional[str] = None  # "megatron-bridge", "megatron-lm" or None

    @property
    def path(self) -> str:
        return self.script.text if self.script is not None else ""

    @property
    def words(self) -> List[Word]:
        return ([self.script] if self.script is not None else []) + list(self.args)

    @property
    def workload(self) -> Optional[Workload]:
        """BRIDGE for a Bridge or NeMo entry point, MEGATRON_LM for Megatron-LM's, else None."""
        if self.program == "nemo":
            return Workload.BRIDGE
        return Workload(self.framework) if self.framework is not None else None

    @property
    def bridge_training(self) -> bool:
        """A Megatron-Bridge (or NeMo) training entry point."""
        if self.program == "nemo":
            words = [w.text for w in self.args[:3]]
            return "llm" in words and any(w in ("pretrain", "finetune") for w in words)
        if self.framework != "megatron-bridge":
            return False
        if self.module:
            return bool(TRAINING_MODULE.search(self.module))
        base = posixpath.basename(self.path)
        return base == "run_recipe.py" or bool(TRAINING_NAME.search(base))

    @property
    def resumes(self) -> bool:
        """An argument tells the run to load or resume a checkpoint."""
        return any(RESUME.match(w.text) for w in self.args)

    @property
    def saves_explicitly(self) -> bool:
        """An argument names the checkpoint directory (``checkpoint.save=…``, ``--save …``): the
        run does not keep its checkpoints in ``nemo_experiments``."""
        return any(SAVE.match(w.text) for w in self.args)

    @property
    def prepared_data(self) -> Optional[str]:
        """Why the run reads data prepared under ``NEMO_HOME`` (packed sequences), or None: see
        ``packing_signal``; a packing recipe or entry point counts as well."""
        words = [w.text for w in self.args]
        signal = packing_signal(words)
        if signal is not None:
            return signal
        for index, text in enumerate(words):
            name, eq, value = text.partition("=")
            if name.lstrip("-").replace("-", "_") not in ("recipe", "config_name") or not name.startswith("-"):
                continue
            if not eq:
                value = words[index + 1] if index + 1 < len(words) else ""
            if PACKING_NAME.search(value):
                return f"the packing recipe `{value}`"
        base = posixpath.basename(self.path)
        if PACKING_NAME.search(base):
            return f"`{base}`"
        return None

    @property
    def fine_tuning(self) -> Optional[str]:
        """Why the run is a fine-tuning run (SFT, PEFT, packed sequences), or None."""
        words = [w.text for w in self.words]
        base = posixpath.basename(self.path)
        if FINE_TUNING_NAME.search(base):
            return f"`{base}`"
        if self.program == "nemo" and "finetune" in words:
            return "`nemo llm finetune`"
        for index, text in enumerate(words):
            nxt = words[index + 1] if index + 1 < len(words) else None
            name, eq, value = text.partition("=")
            flag = name.lstrip("-").replace("-", "_")
            if not eq:
                value = nxt or ""
            if name.startswith("-") and flag in ("peft", "peft_scheme"):
                if value and value not in NONE_VALUES and not value.startswith("-"):
                    return f"`{text}{'' if eq else ' ' + value}`"
                continue
            if not name.startswith("-") and eq and PEFT_KEY.match(name) and value not in NONE_VALUES:
                return f"`{text}`"
            if name.startswith("-") and flag == "mode" and value in ("finetune", "sft", "peft"):
                return f"`{name} {value}`" if not eq else f"`{text}`"
            if name.startswith("-") and flag in ("recipe", "config_name") and value and FINE_TUNING_RECIPE.search(value):
                return f"the recipe `{value}`"
            if PACKED_OPTION.search(name) and value not in NONE_VALUES and value != "-1":
                return "packed sequences"
        return None


# -- data that a run prepares under NEMO_HOME -------------------------------------------------------
# The signals that a fine-tuning run reads or writes data prepared under ``NEMO_HOME`` (packed
# sequences as ``.npy`` files), which every node must then see:
# - a packed-sequence option or override set to a value other than off (``--packed-sequence``,
#   ``packed_sequence_specs.packed_sequence_size=4096``, ``dataset.enable_offline_packing=true``,
#   ``pack_sequences=true``, ``seq_packing=true``, ``packed_train_data_path=…``);
# - a packed dataset file as a value (``…/packed_4096.npy``);
# - a packing recipe or entry point (``--recipe llama3_8b_sft_packed_config``, ``finetune_packed.py``);
# - a packing preparation step anywhere in the job (``prepare_packed_sequences.py``,
#   ``prepare_packed_data``).
# In-batch packing (``dataset.enable_in_batch_packing=true``) packs each batch in memory from the
# dataset as loaded and prepares nothing under ``NEMO_HOME``; an explicit off (``=false``, ``-1``)
# wins over the other overrides.
PACKING_KEY = lazy(r"packed|pack_sequences?|seq(uence)?_packing|offline_packing", IGNORECASE)
IN_BATCH_PACKING = lazy(r"in_batch", IGNORECASE)
PACKED_FILE = lazy(r"packed[^/]*\.npy$", IGNORECASE)
PACKING_NAME = lazy(r"(^|[_\-])packed([_\-.]|$)", IGNORECASE)
PREPARE_PACKED = lazy(r"prepare\w*pack", IGNORECASE)
# What can put text into a word that its bytes do not hold: an expansion or a substitution
# (``$…``, backquotes), an escape or a line continuation.
_BEYOND_ITS_BYTES = lazy(rb"[$`\\]")
OFF_VALUES = NONE_VALUES | {"-1"}


def packing_signal(words: List[str]) -> Optional[str]:
    """Why these arguments use packed sequences prepared ahead of training, or None."""
    found: Optional[str] = None
    for index, text in enumerate(words):
        name, eq, value = text.partition("=")
        if PACKED_FILE.search(value if eq else text):
            found = found or "a packed dataset file"
            continue
        if not PACKING_KEY.search(name) or IN_BATCH_PACKING.search(name):
            continue
        if not eq:
            if not name.startswith("-"):
                continue
            nxt = words[index + 1] if index + 1 < len(words) else ""
            value = "" if nxt.startswith("-") else nxt
        if value in OFF_VALUES:
            return None  # packing switched off explicitly
        found = found or (f"`{text}`" if eq or not value else f"`{text} {value}`")
    return found


def prepares_packed_data(script: "Script") -> Optional[str]:
    """A command of the job that prepares packed sequences (``prepare_packed_sequences.py``), or a
    packing override the script collects in a variable before passing it on; else None."""
    commands = list(script.commands)
    for step in script.steps:
        commands.extend(step.task_commands)
    from ..secrets import unevaluated_bytes  # (a batch command's bytes while its argv is unread)

    for command in commands:
        raw = unevaluated_bytes(command)
        if raw is not None and _BEYOND_ITS_BYTES.search(raw) is None:
            # Without an expansion, a substitution or an escape, each word's text is its own
            # bytes without their quotes, whole in the command's bytes without quotes: a name the
            # pattern finds in a word it finds there too, and the argv need not be evaluated.
            if not PREPARE_PACKED.search(raw.decode("utf-8", "replace").replace('"', "").replace("'", "")):
                continue
        for word in command.argv:
            if word.known and PREPARE_PACKED.search(posixpath.basename(word.text)):
                return f"the packing step `{posixpath.basename(word.text)}`"
    # overrides collected in a variable first (``OVERRIDES="… dataset.enable_offline_packing=true"``)
    for assignments in script.values.assignments.values():
        for assignment in assignments:
            node = assignment.value_node
            if assignment.kind not in ("assign", "append") or node is None:
                continue
            text = script.data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip("\"'")
            signal = packing_signal(text.replace("\\\n", " ").split())
            if signal is not None:
                return signal
    return None


def runs(script: "Script") -> List[Run]:
    """Every training or conversion run of the job, in the order the rules report them."""
    out: List[Run] = []
    settings = script.settings or {}
    for launch in script.launches:
        entry = launch.entry
        word = entry.word if entry is not None and entry.kind == "script" else None
        module = entry.name if entry is not None and entry.kind == "module" else None
        out.append(Run(launch.step, launch.command, launch.kind, word, module, list(launch.args), launch.framework(settings)))
    for step in script.steps:
        for command in step.task_commands:
            argv = command.argv
            i = command.begin
            if i < len(argv) and argv[i].known and posixpath.basename(argv[i].text) == "nemo":
                out.append(Run(step, command, "nemo", None, None, argv[i + 1 :], "nemo"))
    return out

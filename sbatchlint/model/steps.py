"""Commands and ``srun`` steps, however the script spells them.

Every shell ``command`` node becomes a ``Command`` with its argv evaluated by the batch shell
(variables followed, unquoted expansions split). A command whose program is ``srun`` (directly,
through ``$SRUN_CMD``, behind ``exec``/``time``/``env``…) is a ``Step``: its srun options are
read with srun's own option table, and the rest is the task command. A task command of the form
``bash -c STRING`` is parsed again, as the task's shell will see it, and each of its commands keeps
the origin of every character in the batch script, so rules can tell a ``$X`` the batch shell
expanded early from an escaped ``\\$X`` the task expands itself.
"""
from __future__ import annotations

import bisect


from .. import options as option_table
from .. import shell
from ..lazyclass import dataclass, field
from ..shell import ancestors, node_span
from ..source import Span
from .values import (
    _LEADING_BLANKS, _PLAIN_WORDS, _TRAILING_BLANKS, DEFAULT_IFS, Piece, Value, Values, Word, _value, _word, cached_property,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from tree_sitter import Node, Tree
    from typing import Dict, Iterable, List, Optional, Tuple

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Programs that run their arguments as a command: (name, options that take a value).
WRAPPERS: Dict[str, Tuple[str, ...]] = {
    "exec": ("-a",),
    "nohup": (),
    "time": ("-f", "-o"),
    "command": (),
    "builtin": (),
    "stdbuf": ("-i", "-o", "-e"),
    "env": ("-u", "-C", "-S"),
    "timeout": ("-s", "-k", "--signal", "--kill-after"),
    # numactl [opts] CMD: its policy options take a value (``-C 0-7``, ``--membind 0``)
    "numactl": (
        "-i", "--interleave", "-p", "--preferred", "-P", "--preferred-many", "-m", "--membind",
        "-N", "--cpunodebind", "--cpubind", "-C", "--physcpubind", "-w", "--weighted-interleave",
        "-L", "--length", "-o", "--offset", "-M", "--mode", "-S", "--shm", "-f", "--file", "-I", "--shmid",
    ),
    # taskset [-a] [-c] MASK CMD (``taskset -p`` acts on a running process: no command)
    "taskset": (),
    # nsys profile|launch [opts] CMD: nearly every option takes a value (``-o F``, ``-t cuda,nvtx``,
    # ``-f true``), so an option takes the next word unless that word is an option itself
    "nsys": (),
    # ncu [opts] CMD: every option takes a value (``-o F``, ``--set full``, ``-k regex:gemm``)
    # except the flags of NCU_FLAGS
    "ncu": (),
    # perf record|stat [opts] CMD: the options of PERF_OPTIONS take a value, the rest are flags
    "perf": (),
    # valgrind [opts] CMD: every option is one word (``--tool=memcheck``, ``-q``)
    "valgrind": (),
}
# Wrappers with a subcommand before their options (``nsys profile``); another subcommand runs no command.
SUBCOMMANDS: Dict[str, Tuple[str, ...]] = {"nsys": ("profile", "launch"), "perf": ("record", "stat")}
# Wrappers whose options all take a value, written attached or as the next word.
VALUED = frozenset({"nsys"})
# ncu's options that take no value; any other takes the next word unless written ``--x=v``.
NCU_FLAGS = frozenset(
    {
        "-f", "--force-overwrite", "--nvtx", "--csv", "--quiet", "-h", "--help", "-v", "--version",
        "--list-sets", "--list-sections", "--list-rules", "--list-chips", "--list-metrics", "--query-metrics",
        "--details-all", "--print-rule-details", "--open-in-ui", "--disable-extra-suffixes",
    }
)
# perf record / perf stat: the options that take a value as the next word (the rest are flags;
# perf's optional values, ``--switch-output[=x]``, are written attached).
PERF_OPTIONS: Dict[str, Tuple[str, ...]] = {
    "record": (
        "-e", "--event", "--filter", "-p", "--pid", "-t", "--tid", "-r", "--realtime", "-c", "--count",
        "-o", "--output", "-F", "--freq", "-m", "--mmap-pages", "--call-graph", "-C", "--cpu", "-G",
        "--cgroup", "-u", "--uid", "-j", "--branch-filter", "-D", "--delay", "-k", "--clockid",
        "--user-regs", "--affinity", "--mmap-flush", "--max-size", "--control", "--sample-cpu-list",
    ),
    "stat": (
        "-e", "--event", "--filter", "-p", "--pid", "-t", "--tid", "-r", "--repeat", "-C", "--cpu",
        "-G", "--cgroup", "-o", "--output", "--log-fd", "--pre", "--post", "-I", "--interval-print",
        "--interval-count", "--timeout", "-x", "--field-separator", "-D", "--delay", "-M", "--metrics",
        "--for-each-cgroup", "--control", "--td-level", "-u", "--uid",
    ),
}
LOOP_TYPES = frozenset({"for_statement", "c_style_for_statement", "while_statement"})


@dataclass
class EnvAssignment:
    """``NAME=value`` before a command, or an ``env NAME=value`` argument."""

    name: str
    value: Value
    span: Span


class Command:
    """One command the batch shell (or a task's shell) runs: its ``node``, its ``argv`` as the
    shell builds it, its prefix assignments (``env``), whether it was parsed from a string the
    task's shell runs (``in_string``), and for such a command the ``step`` whose task runs it.

    A batch command built from the tree (``arguments`` and ``values`` given instead of ``argv``)
    evaluates its argv when first asked: most rules only ask for the program, which a plain
    first word gives without evaluating the rest.
    """

    argv: List[Word]

    def __init__(
        self,
        node: Node,
        argv: Optional[List[Word]] = None,
        env: Optional[List[EnvAssignment]] = None,
        in_string: bool = False,
        step: Optional["Step"] = None,
        *,
        values: Optional[Values] = None,
        arguments: Optional[List[Node]] = None,
    ) -> None:
        self.node = node
        if argv is not None:
            self.argv = argv
        else:
            assert values is not None and arguments is not None
            self._values = values
            self._arguments = arguments
        self.env = env if env is not None else []
        self.in_string = in_string
        self.step = step

    @cached_property
    def argv(self) -> List[Word]:  # type: ignore[no-redef]
        """(Asked only of a command built from the tree: any other gets its argv in ``__init__``,
        which the instance's own attribute then holds.) A class with a ``__getattr__`` would
        have every attribute read go through it, unspecialised: commands are read by every rule."""
        return self._values.command_words(self._arguments)

    def __repr__(self) -> str:
        return f"Command(node={self.node!r}, argv={self.argv!r}, env={self.env!r}, in_string={self.in_string!r})"

    @property
    def span(self) -> Span:
        if self.argv:
            return Span(self.argv[0].span.start, max(w.span.end for w in self.argv))
        return Span(self.node.start_byte, self.node.end_byte)

    @cached_property
    def program(self) -> str:
        """The basename of argv[0] ("" when unknown). Asked by many rules of every command;
        computed once (a command's argv is never changed after it is built), or set when a batch
        command whose first word is a plain word is built (``_command``)."""
        if "argv" not in self.__dict__:
            text = self._values.plain_first_word(self._arguments)
            if text is not None:
                return _basename(text)
        if not self.argv or not self.argv[0].known:
            return ""
        return _basename(self.argv[0].text)

    def may_run(self, programs) -> bool:
        """Whether the real program (behind any wrapper) can be one of ``programs`` (basenames):
        answered from the first word when that is no wrapper, so the argv is not evaluated."""
        return self.program in programs or self.program in WRAPPERS

    @cached_property
    def begin(self) -> int:
        """``unwrap(argv)``: the index of the real program behind wrappers (computed once)."""
        if self.program not in WRAPPERS:
            return 0  # argv[0] is the program, or unknown: what unwrap gives, without the argv
        return unwrap(self.argv)

    @property
    def args(self) -> List[Word]:
        return self.argv[1:]

    @property
    def in_loop(self) -> bool:
        return any(a.type in LOOP_TYPES for a in ancestors(self.node))

    @property
    def in_function(self) -> bool:
        return any(a.type == "function_definition" for a in ancestors(self.node))

    def texts(self) -> List[str]:
        return [w.text for w in self.argv]


@dataclass
class StepOption:
    name: str  # canonical long name ("ntasks-per-node"), or the name as written when unknown
    spec: Optional["option_table.OptionSpec"]
    value: Optional[str]
    words: List[Word]  # the option word, and the value word when separate
    written: str  # as written: "--ntasks-per-node", "-N"
    value_known: bool = True

    @property
    def span(self) -> Span:
        return Span(self.words[0].span.start, self.words[-1].span.end)

    @property
    def value_word(self) -> Optional[Word]:
        return self.words[-1] if len(self.words) > 1 else None

    def source_span(self) -> Optional[Span]:
        """The source bytes of the whole option (flag and value), even inside a variable's value."""
        pieces = [p for w in self.words for p in w.pieces if p.span is not None]
        if not pieces or any(not p.known for p in pieces):
            return None
        first, last = pieces[0].span, pieces[-1].span
        assert first is not None and last is not None
        if last.end < first.start:
            return None
        return Span(first.start, last.end)


@dataclass
class Step:
    command: Command  # the batch-level command that runs srun
    srun_index: int  # argv index of the srun word (after wrappers)
    options: List[StepOption]
    task_argv: List[Word]
    task_commands: List[Command]
    task_string: Optional[Value] = None  # the ``bash -c`` string, as the batch shell built it
    shell_index: Optional[int] = None  # argv index (in task_argv) of the shell running the string
    options_incomplete: bool = False  # an unknown word stood among the options
    # The word that carries the task string, with every alternative the batch shell may build
    # (the ``bash -c`` argument, or a here-document / here-string fed to ``srun bash``).
    string_word: Optional[Word] = None
    # The task string's own assignments, as the task's shell sees them (``X=1; … $X``).
    task_values: Optional[Values] = None

    @property
    def node(self) -> Node:
        return self.command.node

    @property
    def span(self) -> Span:
        return self.command.span

    @property
    def srun_word(self) -> Word:
        return self.command.argv[self.srun_index]

    @property
    def background(self) -> bool:
        """The batch shell starts the step in the background (``srun … &``) and goes on."""
        node = self.command.node
        while node.parent is not None and node.parent.type in ("redirected_statement", "pipeline", "negated_command"):
            node = node.parent
        following = node.next_sibling
        return following is not None and following.type == "&"

    def option(self, name: str) -> Optional[StepOption]:
        found = None
        for opt in self.options:
            if opt.name == name:
                found = opt
        return found

    def has(self, *names: str) -> bool:
        return any(self.option(n) is not None for n in names)

    def value(self, name: str) -> Optional[str]:
        opt = self.option(name)
        return opt.value if opt is not None else None

    @property
    def is_string_command(self) -> bool:
        return self.task_string is not None

    def insertion_after_srun(self) -> Tuple[Optional[int], str]:
        """Where to insert a new option right after ``srun``, and the quoting context there."""
        word = self.srun_word
        pieces = [p for p in word.pieces if p.span is not None]
        if not pieces or not all(p.known for p in pieces):
            return None, ""
        last = pieces[-1]
        assert last.span is not None
        return last.span.end, last.quote


def build_commands(values: Values, root: Node, data: bytes, nodes: Optional[Iterable[Node]] = None) -> List[Command]:
    """A Command for every ``command`` node (``nodes``: those of the tree, in walk order, when
    the caller has them already)."""
    if nodes is None:
        nodes = [node for node in shell.walk(root) if node.type == "command"]
    if values.assignment_commands:
        nodes = values.commands_run(nodes)
    return [_command(values, node) for node in nodes]


def _command(values: Values, node: Node, in_string: bool = False) -> Command:
    env: List[EnvAssignment] = []
    argument_nodes = []
    for child in node.named_children:  # (an unnamed child is no argument)
        kind = child.type
        if kind == "command_name":
            argument_nodes.extend(child.named_children or [child])
        elif kind == "variable_assignment":
            name_node = child.child_by_field_name("name")
            value_node = child.child_by_field_name("value")
            value = values.evaluate(value_node)[-1] if value_node is not None else Value(())
            if name_node is not None:
                env.append(EnvAssignment(values.node_text(name_node), value, node_span(child, values.data)))
        elif kind not in _NOT_ARGUMENTS:
            argument_nodes.append(child)
    if in_string:
        return Command(node, values.command_words(argument_nodes), env, in_string)
    # ``Command(node, None, env, False, values=values, arguments=argument_nodes)``, made without
    # the class call (one per command of the script)
    command = _new(Command)
    command.node = node
    command._values = values
    command._arguments = argument_nodes
    command.env = env
    command.in_string = False
    command.step = None
    # Its ``program`` when the first word is a plain word (``Values.plain_first_word``, most
    # commands), set here, where the node is at hand: every command's program is asked (by
    # ``build_steps`` first), and the property's call, and its calls, cost more than this.
    if argument_nodes:
        first = argument_nodes[0]
        if first.type in _PLAIN_WORDS:
            data = values.data
            start, end = first.start_byte, first.end_byte
            if start < end and not (data[start] in _LEADING_BLANKS or data[end - 1] in _TRAILING_BLANKS):
                if not (values._cut_words and data[start - 1] == 36) and data.find(b"\\", start, end) < 0:
                    slash = data.rfind(b"/", start, end)
                    command.program = data[start if slash < 0 else slash + 1 : end].decode("utf-8", errors="replace")
    return command


_new = object.__new__


_NOT_ARGUMENTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect", "comment"})


def _basename(path: str) -> str:
    """``posixpath.basename`` for a str, without its generic-path overhead (called per command)."""
    return path[path.rfind("/") + 1 :]


def unwrap(argv: List[Word]) -> int:
    """The index of the real program behind wrappers such as ``exec``, ``time``, ``env X=1``."""
    return _unwrap(argv, [])


def task_wrapper_index(argv: List[Word]) -> Optional[int]:
    """The index of the first wrapper in front of the real program that belongs to each process
    (``numactl``, ``taskset``, ``nsys profile``): an ``srun`` put in front of the program goes
    before it, so every task runs it. None when there is none."""
    found: List[int] = []
    _unwrap(argv, found)
    for index in found:
        if _basename(argv[index].text) in PER_PROCESS_WRAPPERS:
            return index
    return None


# Wrappers that act on the process they start (its CPUs, memory, profile), not on the shell's job.
PER_PROCESS_WRAPPERS = frozenset({"numactl", "taskset", "nsys", "stdbuf", "ncu", "perf", "valgrind"})


def _unwrap(argv: List[Word], wrappers: List[int]) -> int:
    """``unwrap``, adding the index of each wrapper word to ``wrappers``."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.known:
            return i
        name = _basename(word.text)
        if name not in WRAPPERS:
            return i
        wrappers.append(i)
        takes_value = WRAPPERS[name]
        at = i
        i += 1
        subcommands = SUBCOMMANDS.get(name)
        if subcommands is not None:
            if i >= len(argv) or not argv[i].known or argv[i].text not in subcommands:
                return at  # ``nsys stats report.nsys-rep``: the wrapper runs no command
            if name == "perf":
                takes_value = PERF_OPTIONS[argv[i].text]
            i += 1
        positional = name == "taskset"  # the mask (or CPU list) before the command
        while i < len(argv) and argv[i].known:
            text = argv[i].text
            if text in takes_value:
                i += 2
                continue
            if name in VALUED and text.startswith("-") and "=" not in text:
                following = argv[i + 1] if i + 1 < len(argv) else None
                i += 2 if following is not None and following.known and not following.text.startswith("-") else 1
                continue
            if name == "ncu" and text.startswith("-") and "=" not in text and text not in NCU_FLAGS:
                i += 2  # ``-o F``, ``--set full``, ``-c 1``
                continue
            if text.startswith("-"):
                if positional and text in ("-p", "--pid"):
                    return at  # ``taskset -p MASK PID``: no command
                i += 1
                continue
            if name == "env" and "=" in text and not text.startswith("="):
                i += 1
                continue
            if name == "timeout" and text[:1].isdigit():
                i += 1
                continue
            if positional:
                positional = False
                i += 1
                continue
            break
    return i


def build_steps(values: Values, commands: List[Command]) -> List[Step]:
    steps = []
    for command in commands:
        program = command.program  # (``may_run(("srun",))``, without a call per command)
        if program != "srun" and program not in WRAPPERS:
            continue  # (argv left unevaluated)
        start = command.begin
        if start >= len(command.argv):
            continue
        word = command.argv[start]
        if not word.known or _basename(word.text) != "srun":
            continue
        steps.append(read_step(values, command, start))
    return steps


def read_step(values: Values, command: Command, start: int, with_task: bool = True) -> Step:
    """The step ``command`` runs (srun at argv index ``start``); ``with_task=False`` reads only
    its srun options (no task commands, no task string parsed)."""
    argv = command.argv
    options: List[StepOption] = []
    _, i, incomplete = _read_options(argv, start + 1, options, False)
    task_argv = argv[i:]
    step = Step(command, start, options, task_argv, [], options_incomplete=incomplete)
    if not with_task:
        return step
    step.task_commands = _task_commands(values, step)
    for task_command in step.task_commands:
        task_command.step = step
    return step


def _read_options(
    argv: List[Word], i: int, options: List[StepOption], incomplete: bool,
    marks: Optional[Dict[int, Tuple[int, bool]]] = None, unknowns: Optional[List[int]] = None,
    known: Optional[Dict[int, Tuple[int, bool]]] = None, resync_from: int = 0, shift: int = 0,
    plans: Optional[Dict[int, tuple]] = None,
) -> Tuple[bool, int, bool]:
    """Read srun options from ``argv[i]`` on, appending to ``options``: (whether it read to the
    end, the index where it stopped: the first task word, whether an unknown word stood among
    them). ``marks`` records where the reading stood (options read so far, incomplete) at each
    word it begins at, ``unknowns`` the index of each unknown word it met; with ``known`` (the
    marks of another reading) it stops as soon as it begins at an index from ``resync_from`` on
    whose index less ``shift`` is among them: see ``OptionReading``. ``plans``: what each word
    value read as (``_plan``), by id, kept by the caller across readings of the same words."""
    count = len(argv)
    while i < count:
        if known is not None and i >= resync_from and i - shift in known:
            return False, i, incomplete  # from here on, it reads as the reading ``known`` did
        if marks is not None:
            marks[i] = (len(options), incomplete)
        word = argv[i]
        if plans is None:
            plan = _plan(word)
        else:
            value = word.value
            entry = plans.get(id(value))
            if entry is None:
                entry = plans[id(value)] = (value, _plan(word))  # (the value kept: its id stays its own)
            plan = entry[1]
        kind = plan[0]
        if kind is _OPTIONS:  # options of this word alone
            for name, spec, value, written, value_known in plan[1]:
                options.append(StepOption(name, spec, value, [word], written, value_known))
            i += 1
            continue
        if kind is _VALUED:  # an option whose value is the next word, if there is one
            _, name, spec, written = plan
            if i + 1 < count:
                value_word = argv[i + 1]
                options.append(StepOption(name, spec, value_word.text, [word, value_word], written, value_word.known))
                i += 2
                continue
            options.append(StepOption(name, spec, None, [word], written))
            i += 1
            continue
        if kind is _UNKNOWN:
            # An unknown word among the options (``srun $SRUN_ARGS python …``): assume options.
            incomplete = True
            if unknowns is not None:
                unknowns.append(i)
            i += 1
            continue
        if kind is _END:  # ``--``
            i += 1
        break  # (or the first task word)
    return True, i, incomplete


# What a word reads as among srun's options (``_plan``): the options it gives by itself, an option
# taking the next word as its value, an unknown word, ``--``, or the first word of the task.
_OPTIONS, _VALUED, _UNKNOWN, _END, _TASK = "options", "valued", "unknown", "end", "task"
_UNKNOWN_PLAN = (_UNKNOWN,)
_END_PLAN = (_END,)
_TASK_PLAN = (_TASK,)


def _plan(word: Word) -> tuple:
    """How ``_read_options`` reads ``word`` where an option may begin: ``(_OPTIONS, ((name, spec,
    value, written, value_known), …))`` for the options it gives alone, ``(_VALUED, name, spec,
    written)`` for an option whose value is the next word (when there is one; else it gives that
    option without a value), ``_UNKNOWN_PLAN``, ``_END_PLAN`` (``--``) or ``_TASK_PLAN``. It
    depends on the word's value alone."""
    table = option_table.SRUN
    if not word.known:
        option = _option_with_unknown_value(word, table)
        if option is not None:
            # ``--nodes=$SLURM_NNODES``: the option is known, only its value is not.
            return (_OPTIONS, (option,))
        return _UNKNOWN_PLAN
    text = word.text
    if text == "--":
        return _END_PLAN
    if not text.startswith("-") or text == "-":
        return _TASK_PLAN
    if text.startswith("--"):
        body = text[2:]
        if "=" in body:
            name, value = body.split("=", 1)
            spec = option_table.lookup(table, name)
            return (_OPTIONS, ((spec.long if spec else name, spec, value, "--" + name, True),))
        spec = option_table.lookup(table, body)
        if spec is not None and spec.arg == "required":
            return (_VALUED, spec.long, spec, text)
        return (_OPTIONS, ((spec.long if spec else body, spec, None, text, True),))
    letter = text[1]
    spec = option_table.lookup_exact(table, letter)
    attached = text[2:]
    if spec is not None and spec.arg != "none" and attached:
        value = attached[1:] if attached.startswith("=") else attached
        return (_OPTIONS, ((spec.long, spec, value, "-" + letter, True),))
    if spec is not None and spec.arg == "required":
        return (_VALUED, spec.long, spec, text)
    if spec is None or spec.arg == "none":
        # bundled flags such as -lK
        bundled = []
        for extra in text[1:]:
            extra_spec = option_table.lookup_exact(table, extra)
            bundled.append((extra_spec.long if extra_spec else extra, extra_spec, None, "-" + extra, True))
        return (_OPTIONS, tuple(bundled))
    return (_OPTIONS, ((spec.long, spec, None, text, True),))


class OptionReading:
    """A step's srun options read once, with where the reading stood at each word, so that the
    step re-read with a run of its option words replaced (by another alternative value of an
    expansion) reads only from the last word before the run up to the first word after it at
    which the two readings line up again: what ``read_step(..., with_task=False)`` gives for the
    new argv, sharing the (read-only) options outside that stretch."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.marks: Dict[int, Tuple[int, bool]] = {}
        self.unknowns: List[int] = []  # where the reading met an unknown word among the options
        argv = step.command.argv
        self.options: List[StepOption] = []
        # What each word value reads as (``_plan``): the re-readings read the step's own words
        # and the same few alternatives' words again and again, at other places.
        self.plans: Dict[int, tuple] = {}
        _, self.end, self.incomplete = _read_options(
            argv, step.srun_index + 1, self.options, False, self.marks, self.unknowns, plans=self.plans
        )
        self.starts = sorted(self.marks)

    def reread(self, command: Command, start: int, stop: int, count: int) -> Step:
        """``read_step(values, command, self.step.srun_index, with_task=False)`` for a ``command``
        whose argv is the step's with ``argv[start:stop]`` replaced by ``count`` words, for a
        ``start`` after the srun word."""
        begin = self.step.srun_index
        argv = command.argv
        assert start > begin
        position = bisect.bisect_right(self.starts, start) - 1
        if position < 0:  # the step's reading began at no word: nothing to share
            options: List[StepOption] = []
            _, i, incomplete = _read_options(argv, begin + 1, options, False, plans=self.plans)
            return Step(command, begin, options, argv[i:], [], options_incomplete=incomplete)
        resume = self.starts[position]  # the readings agree up to this word
        read, incomplete = self.marks[resume]
        options = self.options[:read]
        shift = count - (stop - start)
        ended, i, incomplete = _read_options(
            argv, resume, options, incomplete, None, None, self.marks, start + count, shift, self.plans
        )
        if ended:
            return Step(command, begin, options, argv[i:], [], options_incomplete=incomplete)
        original = i - shift  # lined up with the step's own reading at this word
        options.extend(self.options[self.marks[original][0] :])
        incomplete = incomplete or any(index >= original for index in self.unknowns)
        return Step(command, begin, options, argv[self.end + shift :], [], options_incomplete=incomplete)


def _option_with_unknown_value(word: Word, table) -> Optional[tuple]:
    """``--name=<unknown>`` or ``-x<unknown>``: a known option taking a value, its attached value
    filled in at run time, as ``(name, spec, value, written, value_known)``."""
    prefix = ""
    for piece in word.pieces:
        if not piece.known:
            break
        prefix += piece.text
    if prefix[:1] == "-" and prefix[1:2] not in ("", "-"):
        # ``-o log_$SLURM_PROCID`` written as one word: a short option, the rest its value
        spec = option_table.lookup_exact(table, prefix[1])
        if spec is None or spec.arg != "required":
            return None
        return (spec.long, spec, word.text[2:], "-" + prefix[1], False)
    if not prefix.startswith("--") or "=" not in prefix:
        return None
    name = prefix[2:].split("=", 1)[0]
    spec = option_table.lookup(table, name)
    if spec is None or spec.arg == "none":
        return None
    value = word.text.split("=", 1)[1]
    return (spec.long, spec, value, "--" + name, False)


def _task_commands(values: Values, step: Step) -> List[Command]:
    argv = step.task_argv
    begin = unwrap(argv)
    if begin < len(argv) and argv[begin].known and _basename(argv[begin].text) in SHELLS:
        # bash [-l] [-e] -c STRING / bash -lc STRING
        j = begin + 1
        reads_stdin = False
        while j < len(argv) and argv[j].known and argv[j].text[:1] in ("-", "+"):
            flag = argv[j].text
            j += 1
            if flag in ("-o", "+o", "-O", "+O"):
                j += 1  # bash -o pipefail -c …
                continue
            if "c" in flag[1:] and flag.startswith("-") and not flag.startswith("--"):
                if j < len(argv):
                    step.string_word = argv[j]
                    step.task_string = argv[j].value
                    step.shell_index = begin
                    return parse_task_string(values, step.task_string, step)
                break
            if "s" in flag[1:] and not flag.startswith("--"):
                reads_stdin = True
        if (j >= len(argv) or reads_stdin) and not step.has(option_table.INPUT):
            word = _stdin_script(values, step)
            if word is not None:
                step.string_word = word
                step.task_string = word.value
                step.shell_index = begin
                return parse_task_string(values, word.value, step)
    command = Command(step.command.node, argv, [], False, step)
    return [command]


def _stdin_script(values: Values, step: Step) -> Optional[Word]:
    """The here-document (``srun bash <<EOF``) or here-string (``srun bash <<< "$CMD"``) that
    srun broadcasts to the stdin of every task's shell, as a word with its alternatives."""
    node = step.command.node
    redirects = list(node.children)
    if node.parent is not None and node.parent.type == "redirected_statement":
        redirects.extend(node.parent.children)
    for child in redirects:
        source: Optional[Node] = None
        if child.type == "heredoc_redirect":
            source = next((c for c in child.children if c.type == "heredoc_body"), None)
        elif child.type == "herestring_redirect" and child.named_children:
            source = child.named_children[-1]
        if source is None:
            continue
        alternatives = values.evaluate(source)
        if child.type == "herestring_redirect":  # bash appends a newline to a here-string
            alternatives = [Value(a.pieces + (Piece("\n", None),)) for a in alternatives]
        if not alternatives:
            return None
        span = Span(source.start_byte, source.end_byte)
        return Word(alternatives[-1], source, span, alternatives if len(alternatives) > 1 else None)
    return None


def parse_task_string(values: Values, string: Value, step: Optional[Step] = None) -> List[Command]:
    """Parse a string the task's shell runs; every character keeps its batch-script origin."""
    parse = parsed_task_string(values, string)
    if step is not None:
        step.task_values = parse.inner
    return [parse.command(index, step) for index in range(len(parse.nodes))]


def task_string_command(values: Values, string: Value, index: int, count: int, step: Step) -> Optional[Command]:
    """Command ``index`` of ``parse_task_string(values, string, step)`` when the string holds
    ``count`` commands (else None), without mapping the words of its other commands."""
    parse = parsed_task_string(values, string)
    step.task_values = parse.inner
    if len(parse.nodes) != count:
        return None
    return parse.command(index, step)


class _TaskParse:
    """A task string's own Values and its commands, each mapped to batch-script bytes when first
    asked (node, argv and env): the step, its launch variants, its container's alternative
    readings and the secrets scan all ask for the same strings, the launch variants for one
    command of each. The words are shared by every caller's commands, which only read them."""

    __slots__ = ("cuts", "string", "local", "inner", "nodes", "mapped")

    def __init__(self, values: Values, string: Value) -> None:
        # (kept in ``values``' memo: holds nothing that refers back to ``values``, no cycle)
        self.cuts = values.task_memo.cuts
        self.string = string
        self.local = local = _task_text(values, string.text.encode("utf-8"))
        self.inner: Values = local[1]
        self.nodes: List[Node] = _command_nodes(local)
        self.mapped: List[Optional[tuple]] = [None] * len(self.nodes)

    def command(self, index: int, step: Optional[Step]) -> Command:
        mapped = self.mapped[index]
        if mapped is None:
            command = inner_command(self.local, index)
            string = self.string
            cuts = self.cuts
            argv = [_remap_word(word, string, cuts) for word in command.argv]
            env = [(e.name, remap(e.value, string), _outer_span(string, e.span)) for e in command.env]
            mapped = self.mapped[index] = (command.node, argv, env)
        node, argv, env = mapped
        # (an assignment whose bytes the batch script does not hold is placed at the step)
        own = [EnvAssignment(name, value, span or step_span(step)) for name, value, span in env] if env else []
        return Command(node, list(argv), own, True, step)

    def command_in(self, string: Value, index: int, step: Optional[Step]) -> Command:
        """Command ``index`` with its words mapped onto ``string`` instead: another string whose
        text parses to the same words at the same bytes (see ``launch._substituted``)."""
        command = inner_command(self.local, index)
        cuts = self.cuts
        argv = [_remap_word(word, string, cuts) for word in command.argv]
        env = [
            EnvAssignment(e.name, remap(e.value, string), _outer_span(string, e.span) or step_span(step)) for e in command.env
        ]
        return Command(command.node, argv, env, True, step)


def parsed_task_string(values: Values, string: Value) -> _TaskParse:
    """The parse of a task string (computed once per string value)."""
    by_string = values.task_memo.strings
    entry = by_string.get(id(string))
    if entry is not None and entry[0] is string:
        return entry[1]
    parse = _TaskParse(values, string)
    by_string[id(string)] = (string, parse)  # the string is kept alive, so its id stays its own
    return parse


_COLLECTED = frozenset(Values.COLLECTED)  # "command" among them


def _task_text(values: Values, text: bytes) -> list:
    """[tree, Values, the commands built so far (by index), the tree's nodes of Values.COLLECTED
    types, the command nodes or None] of a task string's text, kept on the batch script's Values
    (one walk of the tree serves both)."""
    memo = values.task_memo
    by_text = memo.texts
    local = by_text.get(text)
    if local is None:
        tree = memo.trees.get(text)
        if tree is None:  # (most texts: parsed here first, their nodes found by the same walk)
            tree, nodes = shell.parse_collecting(text, Values.COLLECTED)
            memo.trees[text] = tree
        else:
            nodes = [node for node in shell.walk(tree.root_node) if node.type in _COLLECTED]
        local = by_text[text] = [tree, Values(text, tree.root_node, nodes), {}, nodes, None]
    return local


def _command_nodes(local: list) -> List[Node]:
    """The command nodes of a task string's text that run a command (computed once per text)."""
    nodes = local[4]
    if nodes is None:
        inner = local[1]
        nodes = [node for node in local[3] if node.type == "command"]
        if inner.assignment_commands:
            nodes = inner.commands_run(nodes)
        local[4] = nodes
    return nodes


def inner_command(local: list, index: int) -> Command:
    """Command ``index`` of a task string's text, as its own shell reads it (built once per text)."""
    built = local[2]
    command = built.get(index)
    if command is None:
        command = built[index] = _command(local[1], local[4][index], in_string=True)
    return command


def task_tree(values: Values, text: bytes) -> Tree:
    """The tree of a string the task's shell runs (parsed once per text and batch script; read only)."""
    trees = values.task_memo.trees
    found = trees.get(text)
    if found is None:
        found = trees[text] = shell.parse(text)
    return found


def task_string_values(values: Values, text: bytes) -> Values:
    """The assignments of a string the task's shell runs, as that shell sees them (computed once
    per text and batch script; shared, read only)."""
    return _task_text(values, text)[1]


def step_span(step: Optional[Step]) -> Span:
    return step.span if step is not None else Span(0, 0)


def _outer_span(string: Value, span: Optional[Span]) -> Optional[Span]:
    if span is None:
        return None
    return string.source_bounds(span.start, span.end)


def _remap_word(word: Word, string: Value, cuts: Dict[tuple, tuple]) -> Word:
    pieces = word.value.pieces
    if len(pieces) == 1 and word.alternatives is None:
        piece = pieces[0]
        span = piece.span
        whole = word.span
        if span is not None and span.start == whole.start and span.end == whole.end and piece.exact:
            return _remap_literal(span, string, cuts)
    value = remap(word.value, string)
    span = _outer_span(string, word.span) or Span(0, 0)
    alternatives = [remap(a, string) for a in word.alternatives] if word.alternatives else None
    return _word(value, None, span, alternatives, DEFAULT_IFS)


def _remap_literal(span: Span, string: Value, cuts: Dict[tuple, tuple]) -> Word:
    """``_remap_word`` of a word that is one literal piece of the task string's text (most
    words): the string's pieces it covers, and their source bounds. The alternative strings of
    one step share most of their pieces, and a word covering the same stretch of the same
    pieces maps the same way in each: ``cuts`` keeps what each such stretch gives (and, in its
    key's pieces, holds them alive, so their ids stay theirs)."""
    starts, ends, _raws = string._layout
    start, end = span.start, span.end
    first = bisect.bisect_left(ends, start)
    last = bisect.bisect_right(starts, end, first)  # ``slice_pieces`` reads pieces [first, last)
    covered = string.pieces[first:last]
    base = starts[first] if covered else 0
    key = (tuple(map(id, covered)), start - base, end - base)
    found = cuts.get(key)
    if found is None and last - first == 1:
        piece = covered[0]
        p_start = starts[first]
        if p_start <= start < end <= ends[first] and piece.exact:
            # inside one exact piece (most words: a stretch of a literal part of the string):
            # what ``slice_pieces`` gives, that piece or its cut, with its span as the bounds
            if p_start != start or end != ends[first]:
                offset = piece.span.start - p_start
                text = _raws[first][start - p_start : end - p_start].decode("utf-8", errors="replace")
                piece = piece._with(text, Span(offset + start, offset + end), piece.escaped)
            found = cuts[key] = (covered, (piece,), piece.span)
    if found is None:
        outer = tuple(string.slice_pieces(start, end))
        low: Optional[int] = None
        high = 0
        for p in outer:
            if p.span is not None:
                if low is None or p.span.start < low:
                    low = p.span.start
                if p.span.end > high:
                    high = p.span.end
        found = cuts[key] = (covered, outer, Span(0, 0) if low is None else Span(low, high))
    return _word(_value(found[1]), None, found[2], None, DEFAULT_IFS)


def remap(value: Value, string: Value) -> Value:
    out: List[Piece] = []
    for piece in value.pieces:
        if piece.span is None:
            out.append(piece)
            continue
        outer = string.slice_pieces(piece.span.start, piece.span.end)
        if piece.known:
            if piece.exact:
                out.extend(outer)
            else:
                spans = [p.span for p in outer if p.span is not None]
                span = Span(min(s.start for s in spans), max(s.end for s in spans)) if spans else None
                out.append(Piece(piece.text, span, piece.quote, True, piece.name, True, piece.via, piece.split))
            continue
        batch_unknown = [p for p in outer if not p.known]
        if len(outer) == 1 and batch_unknown:
            out.append(batch_unknown[0])
            continue
        spans = [p.span for p in outer if p.span is not None]
        span = Span(min(s.start for s in spans), max(s.end for s in spans)) if spans else None
        out.append(Piece("", span, piece.quote, False, piece.name, False, piece.via, piece.split, task=True))
    return _value(tuple(out))

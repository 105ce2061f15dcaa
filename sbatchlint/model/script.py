"""The parsed batch script that rules query: built once per file."""
from __future__ import annotations

from .. import options, shell
from ..source import Source, Span
from .header import Header, parse_header
from .steps import Command, Step, build_commands, build_steps
from .values import Values, cached_property  # (functools.cached_property without importing functools)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple
    from ..secrets import Secret, TaskString
    from .boundary import EarlyExpansion, LateExpansion
    from .containers import Containers
    from .geometry import Geometry
    from .heredocs import HereDoc
    from .kind import TemplateEvidence
    from .launch import Launch
    from .selfpath import SelfDirectoryUse
    from .arrays import SharedDirectory
    from .workload import Run


_MODULES: Dict[Tuple[str, int], Any] = {}


def _module(name: str, level: int = 1) -> Any:
    """The module ``name`` relative to this one (``from . import name``; ``level`` 2: of the
    package), imported when first asked and kept. The analyses import their module when first
    used (a run over one script asks for few of them); an import statement run at every call
    cost more than a small analysis (the package resolved and the module looked up again)."""
    module = _MODULES.get((name, level))
    if module is None:
        module = _MODULES[name, level] = __import__(name, globals(), None, ("_",), level)
    return module


class analysis:
    """A shared analysis of the script, named by its attribute: computed on first use, then kept
    in the instance like any attribute (a non-data descriptor: later reads never come here).

    ``analysis.observe``, when set, is called as ``observe(name, build, script)`` instead of
    ``build(script)``: the speed benchmark uses it to time each analysis."""

    observe: Optional[Callable[[str, Callable[[Any], Any], Any], Any]] = None

    def __init__(self, build: Callable[[Any], Any]) -> None:
        self.build = build
        self.name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        if instance is None:
            return self
        observe = analysis.observe
        value = self.build(instance) if observe is None else observe(self.name, self.build, instance)
        instance.__dict__[self.name] = value
        return value


def analyses(owner: type) -> List[str]:
    """The names of the shared analyses a model class declares (worked out once per class:
    ``Script.release`` asks for every file)."""
    found = _ANALYSES.get(owner)
    if found is None:
        found = _ANALYSES[owner] = [name for klass in owner.__mro__ for name, value in vars(klass).items()
                                    if isinstance(value, analysis)]
    return found


_ANALYSES: Dict[type, List[str]] = {}


class Script:
    def __init__(self, source: Source, settings: Optional[Dict[str, Any]] = None) -> None:
        self.source = source
        self.data = source.data
        # the index is built with the tree: its walk also tells whether assignments may be glued
        self.tree, self.__dict__["node_index"] = shell.parse_indexed(source.data)
        self.root = self.tree.root_node
        self.settings: Dict[str, Any] = dict(settings or {})

    @property
    def path(self) -> str:
        return self.source.path

    @cached_property
    def node_index(self) -> shell.NodeIndex:
        return shell.NodeIndex(self.root)

    def nodes_of_type(self, *kinds: str) -> Sequence[Node]:
        """Every node of these types in the tree, in source order (one shared walk; do not modify)."""
        return self.node_index.of_type(*kinds)

    @cached_property
    def errors(self) -> List[Span]:
        """Regions the parser could not read."""
        return shell.error_regions(self.tree, self.data, self.node_index)

    def failure_line(self, region: Span) -> Optional[int]:
        """The line where the parser first failed inside one of ``errors``, when that is not
        the region's first line (``shell.first_failure``)."""
        at = shell.first_failure(self.tree, region)
        if at is None:
            return None
        line = self.source.line_of(at)
        return line if line != self.source.line_of(region.start) else None

    @cached_property
    def header(self) -> Header:
        table = options.with_site_options(options.SBATCH, self.settings.get("extra_options"))
        return parse_header(self.source, _module("heredocs").bodies(self), table)

    @cached_property
    def values(self) -> Values:
        SourceContext = _module("sourced").SourceContext
        # the header, when read already and with sbatch's own table, is the one the context reads
        header = self.__dict__.get("header")
        if header is not None and header.table is not options.SBATCH:
            header = None
        context = SourceContext.for_script(self.path, self.data, header)
        return Values(self.data, self.root, self.nodes_of_type(*Values.COLLECTED), context)

    @cached_property
    def commands(self) -> List[Command]:
        """Every command the batch shell runs, in source order, argv evaluated."""
        return build_commands(self.values, self.root, self.data, self.nodes_of_type("command"))

    @cached_property
    def steps(self) -> List[Step]:
        """Every ``srun`` step, in source order."""
        return build_steps(self.values, self.commands)

    # -- shared analyses: each a module of the model, asked by several rules ----------------------
    @analysis
    def launches(self) -> List["Launch"]:
        """Every recognised launch of every step, in source order (``model/launch.py``)."""
        return _module("launch").build_launches(self)

    def launches_of(self, step: Step) -> List["Launch"]:
        return [launch for launch in self.launches if launch.step is step]

    @analysis
    def runs(self) -> List["Run"]:
        """The job's training and conversion runs, classified (``model/workload.py``)."""
        return _module("workload").runs(self)

    @analysis
    def bash_verdict(self) -> Tuple[Optional[bool], Optional[str]]:
        """What ``bash -n`` says of the script (``model/bash.py``; asked only for a script with
        regions the parser could not read)."""
        return _module("bash").bash_syntax_error(self.data)

    @analysis
    def template_evidence(self) -> Optional["TemplateEvidence"]:
        """Why the file is a template for another tool, or None (``model/kind.py``)."""
        return _module("kind").build_template_evidence(self)

    @analysis
    def is_batch_script(self) -> bool:
        """Whether the file is a batch job rather than another shell file (``model/kind.py``)."""
        return _module("kind").build_is_batch_script(self)

    @analysis
    def heredocs(self) -> List["HereDoc"]:
        """Every here-document body, with whether the script submits it (``model/heredocs.py``)."""
        return _module("heredocs").build_heredocs(self)

    @analysis
    def containers(self) -> "Containers":
        """Containers, mounts, paths and caches of every step (``model/containers.py``)."""
        return _module("containers").Containers(self)

    @analysis
    def task_string_assignments(self) -> Dict[int, Any]:
        """Memo of ``containers.task_string_assignments``, by step."""
        return {}

    @analysis
    def task_sources(self) -> Dict[int, Any]:
        """Memo of ``containers.task_sources``, by step."""
        return {}

    @analysis
    def job_geometry(self) -> "Geometry":
        """The job as the header requests it (``model/geometry.py``)."""
        return _module("geometry").build_job_geometry(self)

    @analysis
    def step_alternatives(self) -> Dict[int, Any]:
        """Memo of ``branches.step_alternatives``, by step (the steps are kept alive with it)."""
        return {}

    @analysis
    def step_geometries(self) -> Dict[int, "Geometry"]:
        """Memo of ``geometry.geometry``, by step."""
        return {}

    @analysis
    def early_expansions(self) -> List["EarlyExpansion"]:
        """Batch-shell expansions in task commands (``model/boundary.py``)."""
        return _module("boundary").build_early(self)

    @analysis
    def late_expansions(self) -> List["LateExpansion"]:
        """Expansions a step's task shell makes itself (``model/boundary.py``)."""
        return _module("boundary").build_late(self)

    @analysis
    def secrets(self) -> List["Secret"]:
        """Every secret in the script, live or not, in source order (``secrets.py``)."""
        return _module("secrets", 2).build_scan(self)

    @analysis
    def secret_task_strings(self) -> List["TaskString"]:
        """The task strings the secrets scan reads (``secrets.py``)."""
        return _module("secrets", 2).build_task_strings(self)

    @analysis
    def secret_expansions(self) -> bool:
        """Whether an expansion of a secret variable is written in the script (``secrets.py``)."""
        return _module("secrets", 2).build_secret_expansions(self)

    @analysis
    def secret_variables(self) -> Set[str]:
        """Variables that hold a credential (``secrets.py``)."""
        return _module("secrets", 2).build_secret_variables(self)

    @analysis
    def array_outputs(self) -> List["SharedDirectory"]:
        """Directories every element of a job array writes to (``model/arrays.py``)."""
        return _module("arrays").build_array_outputs(self)

    @analysis
    def self_directory_uses(self) -> List["SelfDirectoryUse"]:
        """The script's directory read from ``$0``/``${BASH_SOURCE[0]}`` and used to find files
        (``model/selfpath.py``): in a batch job that is slurmd's spool directory."""
        return _module("selfpath").build_self_directory(self)

    @analysis
    def made_directories(self) -> List[Any]:
        """(resolved path, made with -p, command) for every ``mkdir`` the job runs."""
        return _module("logs").made_directories(self)

    def release(self) -> None:
        """Cut the model's reference cycles (a task command and its step, a launch among its
        variants) and drop its analyses, so that it is freed at once rather than left to the
        cyclic garbage collector. Only for a model nobody asks anything any more."""
        state = self.__dict__
        for launch in state.get("launches") or ():
            for variant in launch.variants or ():
                variant.variants = []
        for step in state.get("steps") or ():
            for command in step.task_commands:
                command.step = None
        for name in analyses(type(self)):
            state.pop(name, None)

    def text(self, span: Span) -> str:
        return self.source.text(span)

    def names_any(self, names: "Set[str] | frozenset") -> bool:
        """Some ``$NAME`` (or ``${NAME…}``) of the script names one of these variables, in the
        batch shell or in a string a task's shell runs; a word the grammar cut at a bare ``$``
        included."""
        for node in self.nodes_of_type("variable_name"):
            if self.values.node_text(node) in names:
                return True
        return any(hidden.name in names for hidden in shell.hidden_expansions(self.node_index, self.data))

    def expands(self, name: str) -> bool:
        """``$NAME`` or ``${NAME…}`` appears in the script's text (a word the grammar cut at a
        bare ``$``, ``$DIR/rank_$NAME.log``, included)."""
        for node in self.nodes_of_type("simple_expansion", "expansion"):
            for child in node.named_children:
                if child.type == "variable_name" and self.values.node_text(child) == name:
                    return True
        return any(hidden.name == name for hidden in shell.hidden_expansions(self.node_index, self.data))

    def blank_in_quoted_literal(self, node) -> bool:
        """Whether ``node`` is a double-quoted string with a space or a tab in its literal text
        (outside its expansions): then every value it evaluates to holds that blank, since each
        holds every literal run of the string (``Values._double_quoted``) and inside double
        quotes a backslash never takes a space or a tab away. Cheaper than evaluating it."""
        if node.type != "string":
            return False
        data = self.data
        interior = shell.quoted_interior(node, data)
        position = interior.start
        for child in node.named_children:
            if child.type == "string_content":
                continue
            start = child.start_byte
            if start > position and (data.find(b" ", position, start) >= 0 or data.find(b"\t", position, start) >= 0):
                return True
            position = max(position, child.end_byte)
        end = interior.end
        return end > position and (data.find(b" ", position, end) >= 0 or data.find(b"\t", position, end) >= 0)

    def is_comment(self, offset: int) -> bool:
        node = self.root.descendant_for_byte_range(offset, offset + 1)
        return node is not None and node.type == "comment"

    def in_error(self, span: Span) -> bool:
        return any(region.overlaps(span) or region.start == span.start for region in self.errors)

"""The script's own directory read from ``$0`` or ``${BASH_SOURCE[0]}`` by the batch shell.

sbatch stores a copy of the script and slurmd runs that copy (``…/slurmd/job00155/slurm_script``):
in a batch job, ``$0`` and ``${BASH_SOURCE[0]}`` name the spooled copy, not the submitted file
(DOMAIN.md §9, measured on the local Slurm). Their directory is slurmd's spool directory, so
``source "$(dirname "$0")/env.sh"`` or ``$SCRIPT_DIR/train.py`` looks for files there.

A *use* is such a directory (``$(dirname "$0")``, ``${0%/*}``, ``$(cd "$(dirname
"${BASH_SOURCE[0]}")" && pwd)``), followed through the variables it is assigned to, reaching a
command that finds files with it: ``source``/``.``, ``cd``, a test, a step, a program's argument.
Printing it (``echo``, ``printf``) is no use. The script itself (``cp "$0" "$LOG_DIR"``) is the
right file in the spool too: only its directory is wrong.

Guarded forms are left alone: ``${SLURM_SUBMIT_DIR:-$(dirname "$0")}``, a reading inside an ``if``
(or ``&&``/``||`` list) that tests ``SLURM_JOB_ID`` or ``SLURM_SUBMIT_DIR``, and a variable that
some assignment also sets from ``$SLURM_SUBMIT_DIR``.

Entry point: ``build_self_directory(script)``, that is ``Script.self_directory_uses``.
"""
from __future__ import annotations


from ..lazyclass import dataclass
from ..lazyre import lazy
from ..shell import ancestors, node_span
from ..source import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Set, Tuple
    from tree_sitter import Node

    from .script import Script

# Programs that only print or name a path: no file is looked for.
PRINTING = frozenset({"echo", "printf", "logger", ":", "basename", "true", "export", "local", "declare", "readonly"})
# Variables whose test says the script knows it may run as a Slurm job.
_SLURM_GUARD = lazy(r"SLURM_JOB_?ID|SLURM_SUBMIT_DIR")
_STATEMENTS = frozenset({"command", "test_command", "variable_assignment", "for_statement", "case_statement", "redirected_statement"})
MAX_CHAIN = 8


@dataclass(frozen=True)
class SelfDirectoryUse:
    """The script's directory read from ``$0``/``${BASH_SOURCE[0]}`` and used to find files."""

    reading: Span  # the ``$(dirname "$0")`` (or ``${0%/*}``) the directory is read with
    origin: str  # ``$0`` or ``${BASH_SOURCE[0]}``, as written
    use: Span  # the command that finds files with it
    program: str  # that command's program (``source``, ``cd``, ``srun``…), or ``test``
    through: Tuple[str, ...]  # the variables it passed through, in order (``SCRIPT_DIR``…)
    fixable: bool  # the reading is one substitution that a default can wrap


def _text(script: "Script", node: "Node") -> str:
    return script.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _origin(script: "Script", node: "Node") -> Optional[str]:
    """``$0``, ``${0…}``, ``$BASH_SOURCE``, ``${BASH_SOURCE[0]…}`` (as written), else None."""
    start = node.start_byte
    if not script.data.startswith((b"$0", b"$BASH_SOURCE", b"${0", b"${BASH_SOURCE"), start):
        return None  # (every answer below starts so: a node that does not is not decoded)
    if node.type == "simple_expansion":
        text = _text(script, node)
        return text if text in ("$0", "$BASH_SOURCE") else None
    if node.type == "expansion":
        text = _text(script, node)
        for head in ("${0", "${BASH_SOURCE"):
            if text.startswith(head):
                rest = text[len(head) :]
                if head == "${0" and rest[:1].isdigit():
                    return None  # ${01}…: not $0
                if head == "${BASH_SOURCE" and rest and not (rest.startswith("[0]") or rest[0] in "}%#:"):
                    return None  # ${BASH_SOURCE[1]}: the caller's file
                return text
    return None


def _directory_reading(script: "Script", node: "Node") -> Optional["Node"]:
    """The node that turns ``$0`` into its directory: ``${0%/*}`` itself, or the outermost
    command substitution around a ``dirname`` of it; None when only the name or the file is used."""
    if node.type == "expansion" and "%" in _text(script, node):
        return node
    reading = None
    seen_dirname = False
    for parent in ancestors(node):
        if parent.type == "command":
            name = parent.child_by_field_name("name")
            if name is not None and _text(script, name) in ("dirname",):
                seen_dirname = True
            elif name is not None and _text(script, name) == "basename" and not seen_dirname:
                return None
        if parent.type == "command_substitution":
            reading = parent if seen_dirname else reading
            continue
        if parent.type in ("variable_assignment", "program") or (parent.type in _STATEMENTS and not _inside_substitution(parent)):
            break
    return reading if seen_dirname else None


def _inside_substitution(node: "Node") -> bool:
    return any(a.type in ("command_substitution", "process_substitution") for a in ancestors(node))


def _use_site(node: "Node") -> Optional["Node"]:
    """The statement a value lands in: the assignment or command around it, outside every command
    substitution it sits in."""
    chain = [node] + list(ancestors(node))
    outermost = -1
    for index, parent in enumerate(chain):
        if parent.type in ("command_substitution", "process_substitution"):
            outermost = index
    for parent in chain[outermost + 1 :]:
        if parent.type in _STATEMENTS:
            return parent
    return None


def _guarded(script: "Script", node: "Node") -> bool:
    """Inside ``${SLURM_SUBMIT_DIR:-…}`` or an ``if``/``&&``/``||`` that tests a Slurm job variable."""
    for parent in ancestors(node):
        if parent.type == "expansion" and _text(script, parent).startswith("${SLURM_SUBMIT_DIR"):
            return True
        if parent.type in ("if_statement", "elif_clause", "list", "ternary_expression", "case_statement"):
            condition = parent.child_by_field_name("condition")
            text = _text(script, condition) if condition is not None else _text(script, parent)
            if _SLURM_GUARD.search(text):
                return True
    return False


def _program(script: "Script", statement: "Node") -> str:
    if statement.type == "test_command":
        return "test"
    if statement.type == "redirected_statement":
        body = statement.child_by_field_name("body")
        return _program(script, body) if body is not None else ""
    if statement.type != "command":
        return statement.type
    name = statement.child_by_field_name("name")
    return _text(script, name) if name is not None else ""


def build_self_directory(script: "Script") -> List[SelfDirectoryUse]:
    data = script.data
    if b"$0" not in data and b"${0" not in data and b"BASH_SOURCE" not in data:
        return []
    out: List[SelfDirectoryUse] = []
    expansions = script.nodes_of_type("simple_expansion", "expansion")
    # the script's directory read from $0 (or BASH_SOURCE) where nothing guards it
    readings = []
    for node in expansions:
        origin = _origin(script, node)
        if origin is None or any(a.type == "heredoc_body" for a in ancestors(node)):
            continue
        reading = _directory_reading(script, node)
        if reading is None or _guarded(script, node):
            continue
        readings.append((origin, reading))
    if not readings:
        return out  # (the variables below are read only to follow a reading)
    # variables that hold the script's directory: name -> (reading, origin, chain, fixable)
    uses_of: Dict[str, List["Node"]] = {}
    for node in expansions:
        name_node = next((c for c in node.named_children if c.type == "variable_name"), None)
        if name_node is None:
            sub = next((c for c in node.named_children if c.type == "subscript"), None)
            name_node = sub.child_by_field_name("name") if sub is not None else None
        if name_node is not None:
            uses_of.setdefault(_text(script, name_node), []).append(node)
    guarded_names = {
        name
        for name, assignments in script.values.assignments.items()
        for a in assignments
        if a.value_node is not None and b"SLURM_SUBMIT_DIR" in data[a.value_node.start_byte : a.value_node.end_byte]
    }
    reported: Set[Tuple[int, int]] = set()
    for origin, reading in readings:
        fixable = True  # ${SLURM_SUBMIT_DIR:-…} wraps a substitution and an expansion alike
        # follow the directory through the variables it is assigned to, to the commands using it
        frontier: List[Tuple["Node", Tuple[str, ...]]] = [(reading, ())]
        visited: Set[str] = set()
        steps = 0
        while frontier and steps < 64:
            steps += 1
            current, through = frontier.pop(0)
            site = _use_site(current)
            if site is None:
                continue
            if site.type == "variable_assignment":
                name_node = site.child_by_field_name("name")
                if name_node is None:
                    continue
                name = _text(script, name_node)
                if name in visited or name in guarded_names or len(through) >= MAX_CHAIN:
                    continue
                visited.add(name)
                for later in uses_of.get(name, []):
                    if later.start_byte > site.end_byte and not _guarded(script, later):
                        frontier.append((later, through + (name,)))
                continue
            program = _program(script, site)
            if program in PRINTING or not program:
                continue
            key = (reading.start_byte, reading.end_byte)
            if key in reported:
                break
            reported.add(key)
            out.append(
                SelfDirectoryUse(
                    node_span(reading, data), origin, node_span(site, data), program, through, fixable
                )
            )
            break
    return out

"""Here-documents: text a script hands to a command, not lines the batch shell reads.

A body is data. sbatch's header scan does not know that (it reads lines), but the batch
script's own header ends at the command that opens the here-document, so a body's ``#SBATCH``
lines are never the script's directives. A body is a batch script of its own when the script
submits it: ``sbatch <<EOF``, or a body written to a file (``cat > job.sbatch <<EOF``,
``cat <<EOF > job.sbatch``, ``tee job.sbatch <<EOF``) that the script then passes to ``sbatch``.
In an unquoted here-document (``<<EOF``) the outer shell expands ``$X`` and ``$(…)`` before
sbatch reads the body; a quoted one (``<<'EOF'``) is passed on as written.
"""
from __future__ import annotations

import posixpath

from .. import shell
from ..lazyclass import dataclass
from . import variables
from ..source import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

_WRITERS = ("cat", "tee")


@dataclass
class HereDoc:
    body: Span  # the body's bytes, up to the line before the delimiter
    quoted: bool  # ``<<'EOF'`` / ``<<"EOF"`` / ``<<\\EOF``: no expansion by the outer shell
    strip_tabs: bool  # ``<<-``: leading tabs are removed from every line
    program: str  # the command that reads it: "sbatch", "cat", …
    target: Optional[str] = None  # the file a writer saves it to, as written (quotes dropped)
    submitted: bool = False  # the script submits the body as a batch job


def _normal(text: str) -> str:
    """A path word as written, compared loosely: quotes dropped, ``${X}`` as ``$X``."""
    out = text.replace('"', "").replace("'", "")
    while "${" in out:
        start = out.index("${")
        end = out.find("}", start)
        if end < 0:
            break
        inner = out[start + 2 : end]
        if not inner.replace("_", "").isalnum():
            break
        out = out[:start] + "$" + inner + out[end + 1 :]
    return out


def _program(command, data: bytes) -> str:
    name = command.child_by_field_name("name")
    return posixpath.basename(shell.text(name, data)) if name is not None else ""


def _target(statement, redirect, data: bytes) -> Optional[str]:
    """The file a ``> FILE`` next to the here-document writes."""
    for holder in (redirect, statement):
        for child in holder.children:
            if child.type != "file_redirect":
                continue
            if not any(c.type in (">", ">>", ">|") for c in child.children):
                continue
            destination = child.child_by_field_name("destination") or child.children[-1]
            return _normal(shell.text(destination, data))
    return None


def heredocs(script) -> List[HereDoc]:
    """Every here-document body, in source order, with whether the script submits it."""
    return script.heredocs


def build_heredocs(script) -> List[HereDoc]:
    data = script.data
    if b"<<" not in data:
        return []
    found: List[HereDoc] = []
    for redirect in script.nodes_of_type("heredoc_redirect"):
        body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
        start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
        if body is None or start is None:
            continue
        marker = shell.text(start, data)
        operator = next((c for c in redirect.children if c.type in ("<<", "<<-")), None)
        statement = redirect.parent
        command = None
        if statement is not None:
            command = next((c for c in statement.children if c.type == "command"), None)
        program = _program(command, data) if command is not None else ""
        doc = HereDoc(
            Span(body.start_byte, body.end_byte),
            quoted=any(q in marker for q in ("'", '"', "\\")),
            strip_tabs=operator is not None and operator.type == "<<-",
            program=program,
        )
        if program == "sbatch":
            doc.submitted = True
        elif program in _WRITERS and statement is not None:
            doc.target = _target(statement, redirect, data)
            if doc.target is None and program == "tee" and command is not None:
                words = [c for c in command.children if c.type != "command_name"]
                if words:
                    doc.target = _normal(shell.text(words[-1], data))
        found.append(doc)
    targets = {doc.target for doc in found if doc.target}
    if targets and b"sbatch" in data:  # (a command whose program is sbatch has it in its name)
        submitted = set()
        for command in script.nodes_of_type("command"):
            if _program(command, data) != "sbatch":
                continue
            for child in command.children:
                if child.type == "command_name":
                    continue
                text = _normal(shell.text(child, data))
                if text in targets:
                    submitted.add(text)
        for doc in found:
            if doc.target in submitted:
                doc.submitted = True
    return found


def bodies(script) -> List[Span]:
    """The byte spans of every here-document body."""
    return [doc.body for doc in heredocs(script)]


def submission_expansions(script) -> List[Tuple[Span, str, str]]:
    """(span, name, scope) of each per-task, per-node or per-step variable that the submitting
    shell expands in an unquoted here-document it submits (``sbatch <<EOF`` … ``$SLURM_PROCID``):
    it is filled in once, with the submitting shell's value, before the job exists."""
    out: List[Tuple[Span, str, str]] = []
    data = script.data
    wanted = (variables.TASK, variables.NODE, variables.STEP, variables.LAUNCHER)
    for doc in script.heredocs:
        if not doc.submitted or doc.quoted or b"$" not in data[doc.body.start : doc.body.end]:
            continue
        for node in script.nodes_of_type("simple_expansion", "expansion"):
            if not (doc.body.start <= node.start_byte < doc.body.end):
                continue
            name_node = next((c for c in node.children if c.type == "variable_name"), None)
            if name_node is None:
                continue
            name = shell.text(name_node, data)
            scope = variables.scope_of(name)
            if scope in wanted:
                out.append((Span(node.start_byte, node.end_byte), name, scope))
    return out

"""What kind of file this is: a batch job, a template that another tool fills in, or another
shell file.

A template is recognised only on evidence bash cannot produce: a ``{{ … }}`` or ``{% … %}``
(Jinja) outside quotes, comments and here-documents, a ``{name}`` field (Python's
``str.format``, ``string.Template``'s braces) in an ``#SBATCH`` line, or a template file name.
A ``$VAR`` in a directive is no evidence: it is a real mistake in a job (sbatch does not expand
it).
"""
from __future__ import annotations


from .. import shell
from ..lazyclass import dataclass
from ..source import Span
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional

TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".tmpl", ".tpl", ".template")
_JINJA = lazy(rb"\{\{|\{%")
_FIELD = lazy(r"(?<![$\\])\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}")
_QUOTED = frozenset({"string", "raw_string", "ansi_c_string", "heredoc_body", "comment", "translated_string"})


@dataclass(frozen=True)
class TemplateEvidence:
    span: Span  # what shows it (an empty span at 0 for the file name)
    what: str  # "a Jinja tag", "a {name} field in an #SBATCH line", "its file name"


def template_evidence(script) -> Optional[TemplateEvidence]:
    """Why this file is a template for another tool, or None when it is not one."""
    return script.template_evidence


def build_template_evidence(script) -> Optional[TemplateEvidence]:
    path = script.source.path.lower()
    if path.endswith(TEMPLATE_SUFFIXES):
        return TemplateEvidence(Span(0, 0), "its file name")
    header = script.header
    for directive_line, directives in header.lines.items():
        text = header.line_text(directive_line)
        match = _FIELD.search(text) if "{" in text else None  # (the pattern starts with a lookbehind)
        if match is not None:
            start = script.source.line_span(directive_line).start
            before = len(text[: match.start()].encode(script.source.encoding, errors="replace"))
            length = len(match.group(0).encode(script.source.encoding, errors="replace"))
            return TemplateEvidence(Span(start + before, start + before + length), "a `{name}` field in an `#SBATCH` line")
    data = script.data
    if b"{{" not in data and b"{%" not in data:
        return None
    root = script.root
    for match in _JINJA.finditer(data):
        at = match.start()
        if at > 0 and data[at - 1 : at] == b"$":
            continue  # ${{…}}: not bash, but not Jinja either
        node = root.descendant_for_byte_range(at, at + 2)
        if node is None:
            continue
        if node.type in _QUOTED or any(a.type in _QUOTED for a in shell.ancestors(node)):
            continue
        if any(a.type == "expansion" for a in shell.ancestors(node)) or node.type == "expansion":
            continue
        end = data.find(b"}}" if match.group(0) == b"{{" else b"%}", at)
        end = end + 2 if end >= 0 else at + 2
        line_end = data.find(b"\n", at)
        if line_end >= 0 and end > line_end:
            end = line_end
        return TemplateEvidence(Span(at, end), "a Jinja tag")
    return None


# File names only a batch job has.
BATCH_SUFFIXES = (".sbatch", ".slurm")


def build_is_batch_script(script) -> bool:
    """Whether the file is a batch job: it has ``#SBATCH`` lines of its own (in its header, or
    below it where sbatch ignores them; not in here-documents, which are data), it runs job steps
    (``srun``), or its name says so (``.sbatch``, ``.slurm``). A sourced helper that only exports
    variables is none of these: only the rules that hold for any shell file apply to it."""
    if script.header.directives or script.header.malformed:
        return True
    if script.source.path.lower().endswith(BATCH_SUFFIXES):
        return True
    return bool(script.steps)

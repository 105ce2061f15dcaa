"""``--add-noqa``: a ``# sbatchlint: disable=CODE`` comment for each finding, where the shell
still runs the same script.

A line's findings get one comment at the end of the line; a comment line (an ``#SBATCH`` line,
whose trailing ``#`` text sbatch reads), or a line whose end is inside a string, a here-document
or continued by ``\\``, gets the comment on a line of its own before it. A line that can take
neither (a here-document's body, the inside of a string), and a finding about a suppression
comment itself (SBL900, SBL901), is covered by a ``disable-file`` comment after the ``#!`` line. A comment that already names codes for the line gets the new codes added.
Where the text may go is the model's answer (``model/placement.py``; for a Python file,
``python/placement.py``: never inside a string or after a ``\\`` continuation).
"""
from __future__ import annotations


from .diagnostics import Diagnostic, Edit
from . import suppressions

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Sequence

PREFIX = "# sbatchlint: disable="
OWN = ("SBL900", "SBL901")  # findings about suppression comments themselves


def _codes(codes: Sequence[str]) -> str:
    return ",".join(sorted(set(codes)))


def suppression_edits(script, diagnostics: Sequence[Diagnostic]) -> List[Edit]:
    """The edits that add suppression comments for ``diagnostics`` to ``script``'s source (a batch
    script's model, or a Python module's)."""
    if getattr(script, "language", None) == "python":
        from .python import placement
    else:
        from .model import placement

    source = script.source
    by_line: Dict[int, List[str]] = {}
    file_wide: List[str] = []
    for d in diagnostics:
        if d.code in OWN:
            file_wide.append(d.code)  # a comment about a comment: only a file-wide one silences it for good
        else:
            by_line.setdefault(source.line_of(d.span.start), []).append(d.code)
    existing = suppressions.find(source, script)
    trailing = {s.line: s for s in existing if not s.file_wide and not s.standalone}
    standalone = {s.target_line: s for s in existing if not s.file_wide and s.standalone}
    edits: List[Edit] = []
    newline = source.preferred_newline()
    for line, codes in sorted(by_line.items()):
        codes = sorted(set(codes))
        present = trailing.get(line) or standalone.get(line)
        if present is not None:  # extend the comment that already speaks for this line
            missing = [c for c in codes if not present.matches(c)]
            if missing:
                edits.append(Edit.insert(present.codes[-1].span.end, "," + _codes(missing)))
            continue
        end = placement.end_of_line(script, line)
        before = placement.line_before(script, line)
        if before is not None and (end is None or placement.comment_line_first(script, line)):
            offset, indent = before
            edits.append(Edit.insert(offset, f"{indent}{PREFIX}{_codes(codes)}{newline}"))
        elif end is not None and not placement.comment_line_first(script, line):
            edits.append(Edit.insert(end, f"  {PREFIX}{_codes(codes)}"))
        else:
            file_wide.extend(codes)
    if file_wide:
        offset = placement.file_comment_line(script)
        text = f"# sbatchlint: disable-file={_codes(file_wide)}{newline}"
        if offset == len(script.data) and script.data and not script.data.endswith(b"\n"):
            text = newline + text
        edits.append(Edit.insert(offset, text))
    return sorted(edits, key=lambda e: e.span.start)

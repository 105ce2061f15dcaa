"""Findings with a code frame: the offending span underlined in its context (like ruff/rustc)."""
from __future__ import annotations

from . import summarize
from ..diagnostics import Severity
from ..redaction import mask

CONTEXT = 1
COLORS = {"error": "31", "warning": "33", "info": "36", "bold": "1", "dim": "2", "cyan": "36", "green": "32"}


def paint(text: str, style: str, color: bool) -> str:
    if not color or not text:
        return text
    return f"\x1b[{COLORS[style]}m{text}\x1b[0m"


def render(results, out, color: bool = False, show_summary: bool = True, **_: object) -> None:
    for result in results:
        if result.source is None:
            continue
        for d in result.diagnostics:
            out.write(frame(result, d, color))
            out.write("\n")
    if show_summary:
        out.write(more_information(results, color))
        out.write(summary_line(results, color) + "\n")


def _display_line(source, number: int, secret_spans) -> tuple:
    """A line's text with secrets masked, and a map from byte offset to display column."""
    span = source.line_span(number)
    data = source.data
    raw = data[span.start : span.end]
    if (raw.isascii() and source.encoding in ("utf-8", "latin-1")
            and not any(s.start < span.end and s.end > span.start for s in secret_spans)):
        # the common line: one column per byte but for tabs (what the loop below gives it)
        text = raw.decode("ascii")
        if "\t" not in text:
            return text, dict(zip(range(span.start, span.end + 1), range(len(text) + 1)))
        plain: dict = {}
        column = 0
        for offset, char in enumerate(text, span.start):
            plain[offset] = column
            column += 4 if char == "\t" else 1
        plain[span.end] = column
        return text.replace("\t", "    "), plain
    pieces = []
    columns = {}
    column = 0
    i = span.start
    while i < span.end:
        hit = next((s for s in secret_spans if s.start <= i < s.end), None)
        if hit is not None:
            masked = mask(source.text(hit))
            for j in range(i, min(hit.end, span.end)):
                columns[j] = column
            pieces.append(masked)
            column += len(masked)
            i = min(hit.end, span.end)
            continue
        # one character (UTF-8 aware)
        j = i + 1
        while j < span.end and (data[j] & 0xC0) == 0x80 and source.encoding == "utf-8":
            j += 1
        char = source.decode(data[i:j])
        if char == "\t":
            char = "    "
        for k in range(i, j):
            columns[k] = column
        pieces.append(char)
        column += len(char)
        i = j
    columns[span.end] = column
    return "".join(pieces), columns


def frame(result, d, color: bool) -> str:
    source = result.source
    secret_spans = result.secret_spans if result.secrets else []
    line, column = source.position(d.span.start)
    end_line = source.line_of(max(d.span.start, d.span.end - 1)) if d.span.end > d.span.start else line
    severity = d.severity.value
    mark = " [*]" if d.fix is not None and d.fix.applicability.value == "safe" else ""
    head = (
        f"{paint(result.path, 'bold', color)}:{line}:{column}: "
        f"{_linked(d.code, paint(d.code, severity, color), color)}{mark} {result.redact(d.message)}"
    )
    first = max(1, line - CONTEXT)
    last = min(source.line_count, end_line + CONTEXT)
    if end_line - line > 6:
        shown = list(range(first, line + 3)) + [None] + list(range(end_line - 2, last + 1))
    else:
        shown = list(range(first, last + 1))
    width = len(str(last))
    gutter = " " * width
    lines = [head, f"{gutter} {paint('|', 'dim', color)}"]
    for number in shown:
        if number is None:
            lines.append(f"{paint('...', 'dim', color)}")
            continue
        text, columns = _display_line(source, number, secret_spans)
        lines.append(f"{paint(str(number).rjust(width), 'dim', color)} {paint('|', 'dim', color)} {text}".rstrip())
        if line <= number <= end_line:
            span = source.line_span(number)
            start = max(d.span.start, span.start)
            end = min(d.span.end, span.end)
            col_start = columns.get(start, 0)
            col_end = columns.get(end, len(text))
            carets = "^" * max(1, col_end - col_start)
            label = f" {result.redact(d.label)}" if d.label and number == end_line else ""
            lines.append(f"{gutter} {paint('|', 'dim', color)} {' ' * col_start}{paint(carets + label, severity, color)}")
    lines.append(f"{gutter} {paint('|', 'dim', color)}")
    if d.help:
        lines.append(f"{gutter} = {paint('help', 'bold', color)}: {result.redact(d.help)}")
    for note in d.notes:
        lines.append(f"{gutter} = {paint('note', 'bold', color)}: {result.redact(note)}")
    if d.fix is not None:
        how = "--fix" if d.fix.applicability.value == "safe" else "--unsafe-fixes"
        lines.append(f"{gutter} = {paint('fix', 'bold', color)} ({how}): {result.redact(d.fix.description)}")
    return "\n".join(lines) + "\n"


def _linked(code: str, text: str, color: bool) -> str:
    """On a terminal (colour on), the code links to its rule's page."""
    if not color:
        return text
    from .links import hyperlink, terminal_url

    return hyperlink(text, terminal_url(code))


def more_information(results, color: bool = False) -> str:
    """Once per code found, where its page is (as ShellCheck ends its output): the findings above
    stay one link-free block each, and a plain terminal or a log file still gets the link."""
    names = {}
    for result in results:
        for d in result.diagnostics:
            names.setdefault(d.code, d.name)
    if not names:
        return ""
    from .links import reference

    width = max(len(f"{code} {name}") for code, name in names.items())
    lines = [paint("For more information:", "bold", color)]
    for code in sorted(names):
        label = f"{code} {names[code]}".ljust(width)
        lines.append(f"  {label}  {reference(code)}".rstrip())
    return "\n".join(lines) + "\n\n"


def summary_line(results, color: bool = False) -> str:
    summary = summarize(results)
    checked = summary.files - summary.unread
    parts = []
    if summary.fixed:
        parts.append(f"Fixed {summary.fixed} problem{'s' * (summary.fixed != 1)}.")
    if summary.findings == 0:
        if summary.errors:
            parts.append(f"No problems found in {checked} file{'s' * (checked != 1)}; {_errors(summary, False)}.")
        else:
            parts.append(paint(f"All checks passed ({checked} file{'s' * (checked != 1)}).", "green", color))
        return " ".join(parts)
    counts = ", ".join(
        f"{n} {label}{'s' * (n != 1)}"
        for n, label in (
            (summary.counts[Severity.ERROR], "error"),
            (summary.counts[Severity.WARNING], "warning"),
            (summary.counts[Severity.INFO], "info"),
        )
        if n
    )
    files = sum(1 for r in results if r.diagnostics)
    parts.append(f"Found {summary.findings} problem{'s' * (summary.findings != 1)} ({counts}) in {files} file{'s' * (files != 1)}.")
    if summary.safe_fixable:
        parts.append(f"[*] {summary.safe_fixable} fixable with --fix.")
    if summary.unsafe_fixable:
        more = "more " if summary.safe_fixable else ""
        parts.append(f"{summary.unsafe_fixable} {more}fixable with --unsafe-fixes.")
    if summary.errors:
        parts.append(_errors(summary, True) + ".")
    return " ".join(parts)


def _errors(summary, sentence: bool) -> str:
    """What went wrong with files, by kind: "1 could not be read, 1 file could not be fixed"."""
    out = []
    if summary.unread:
        out.append(f"{summary.unread}{' file' + 's' * (summary.unread != 1) if sentence else ''} could not be read")
    if summary.unwritten:
        out.append(f"{summary.unwritten} file{'s' * (summary.unwritten != 1)} could not be fixed")
    if summary.internal:
        out.append(f"{summary.internal} file{'s' * (summary.internal != 1)} hit an internal error")
    text = ", ".join(out)
    return text[:1].upper() + text[1:] if sentence else text

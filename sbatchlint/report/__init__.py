"""Output formats. Each takes the run's ``FileResult`` list and writes text; none ever prints a
secret's value: messages, code frames, fix contents and diffs go through ``redaction.redact``, with the secret
values and spans the runner found (reporters build no model)."""
from __future__ import annotations


from ..diagnostics import Diagnostic, Severity
from ..lazyclass import dataclass, field
from ..source import Source, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional


@dataclass
class FileResult:
    path: str
    source: Optional[Source] = None
    diagnostics: List[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None  # a one-line reason the file could not be linted (or fixed, or fully checked)
    error_kind: str = "read"  # "read": not linted; "write": linted, fixes not written; "internal": a rule failed
    fixed: int = 0  # fixes applied
    suppressed: int = 0  # findings given a suppression comment (--add-noqa)
    fixed_codes: Dict[str, int] = field(default_factory=dict)  # fixes applied, by rule code
    fixed_data: Optional[bytes] = None  # the fixed bytes (for stdin, printed instead of written)
    diff: Optional[str] = None  # with --diff: the unified diff of the fixes
    secrets: List[str] = field(default_factory=list)  # secret values to redact from output
    secret_spans: List[Span] = field(default_factory=list)  # where they are in ``source`` (masked in code frames)
    launched: List[str] = field(default_factory=list)  # Python files the script's steps launch (to lint too)
    skipped: bool = False  # met in a directory search and no batch script: not reported or counted

    def redact(self, text: str) -> str:
        from ..redaction import redact

        return redact(text, self.secrets) if self.secrets else text


@dataclass
class Summary:
    files: int
    errors: int  # files with an error of any kind (each run exits 2)
    counts: Dict[Severity, int]
    safe_fixable: int
    unsafe_fixable: int
    fixed: int
    unread: int = 0  # files that could not be read
    unwritten: int = 0  # files whose fixes were not written
    internal: int = 0  # files on which a rule failed

    @property
    def findings(self) -> int:
        return sum(self.counts.values())


def summarize(results: List[FileResult]) -> Summary:
    counts = {severity: 0 for severity in Severity}
    safe = unsafe = fixed = 0
    for result in results:
        fixed += result.fixed
        for d in result.diagnostics:
            counts[d.severity] += 1
            if d.fix is not None and d.fix.edits:
                if d.fix.applicability.value == "safe":
                    safe += 1
                else:
                    unsafe += 1
    kinds = [r.error_kind for r in results if r.error]
    return Summary(len(results), len(kinds), counts, safe, unsafe, fixed,
                   kinds.count("read"), kinds.count("write"), kinds.count("internal"))



def with_notes(result: FileResult, d: Diagnostic) -> str:
    """A finding's message, its note lines and its help line, for formats with one text per
    finding (SARIF, GitHub annotations, JUnit): what the text format prints as ``= note:`` and
    ``= help:`` lines is not lost there."""
    text = result.redact(d.message)
    details = explanation(result, d)
    return f"{text}\n{details}" if details else text


def explanation(result: FileResult, d: Diagnostic) -> str:
    """The note and help lines of a finding, one per line, or ``""``."""
    lines = ["note: " + result.redact(note) for note in d.notes]
    if d.help:
        lines.append("help: " + result.redact(d.help))
    return "\n".join(lines)


def formatter(name: str) -> Callable:
    import sys

    module = __name__ + "." + {"json": "json_format"}.get(name, name)
    __import__(module)  # (not ``importlib.import_module``: that package imports ``warnings``)
    return sys.modules[module].render


def __getattr__(name: str):
    # ``FORMATS`` (the formats this package renders) is re-exported from ``formats`` when asked:
    # a run that renders text does not import that module
    if name == "FORMATS":
        from ..formats import FORMATS

        return FORMATS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""A rule: its code, name, severity, documentation, examples and check, in one class.

The docstring-like fields (``what``, ``why``, ``fix_safety``) and the examples produce the rule's
documentation page; the examples are also its tests. Whether a rule can fix, and how safely, is
read from its examples, never declared twice.
"""
from __future__ import annotations


from ..diagnostics import Diagnostic, Fix, Severity
from ..lazyclass import dataclass
from ..source import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Bad:
    """An example the rule reports; ``fixed`` is the text after ``--fix`` (None: no fix)."""

    source: str
    fixed: Optional[str] = None
    unsafe: bool = False  # the fix needs --unsafe-fixes
    count: Optional[int] = None  # how many findings of this rule, when it matters
    contains: Optional[str] = None  # a fragment the finding's first line, help or notes must contain
    title: str = ""
    also: Tuple[str, ...] = ()  # other codes to enable with the rule (e.g. what a suppression names)
    settings: Tuple[Tuple[str, object], ...] = ()  # configuration the example assumes


@dataclass(frozen=True)
class Good:
    source: str
    title: str = ""
    also: Tuple[str, ...] = ()
    settings: Tuple[Tuple[str, object], ...] = ()  # configuration the example assumes


def clean(text: str) -> str:
    from textwrap import dedent  # only the examples use it, and a run never builds them

    return dedent(text).lstrip("\n")


class Examples:
    """A rule's examples, built when first asked: the documentation and the tests ask for them,
    a run never does (``examples = Examples(lambda: (Bad(…), Good(…)))``)."""

    __slots__ = ("build", "built")

    def __init__(self, build: Callable[[], Sequence]) -> None:
        self.build = build
        self.built: Optional[Tuple] = None

    def __get__(self, instance, owner=None) -> Tuple:
        if self.built is None:
            self.built = tuple(self.build())
        return self.built


class Rule:
    code: str = ""
    name: str = ""
    severity: Severity = Severity.ERROR
    summary: str = ""  # one line, shown by ``sbatchlint rules``
    what: str = ""  # What it does
    why: str = ""  # Why is this bad?
    fix_safety: str = ""  # Fix safety: why the fix is safe or unsafe, or why there is none
    examples: Sequence = ()
    language: str = "shell"  # "shell" or "python"

    def check(self, script) -> Iterable[Diagnostic]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- helpers for subclasses --------------------------------------------------------------
    def report(
        self,
        script,
        span: Span,
        message: str,
        fix: Optional[Fix] = None,
        label: Optional[str] = None,
        help: Optional[str] = None,
        severity: Optional[Severity] = None,
        notes: Sequence[str] = (),
        origin=None,
    ) -> Diagnostic:
        """A finding: ``message`` is its first line (at most 100 characters, ``tests/test_messages.py``);
        ``help`` says what to do, ``notes`` carry the rest of the explanation, a line each.

        ``origin`` (``model/sourced.Origin``): the cause is a line of a file the script sources;
        the finding is reported there, at that file's path, and carries no fix (``--fix`` edits
        only the files it was given), with a note naming the ``source`` line that reads the file."""
        path = script.path
        if origin is not None:
            import os

            line = script.source.line_of(origin.sourced_by.start)
            name = os.path.basename(script.path) if script.path not in ("", "-") else "the job script"
            path, span, fix = origin.path, origin.span, None
            notes = tuple(notes) + (f"`{name}` sources this file at line {line}",)
        # (positionally, in the order of Diagnostic's fields: binding keywords costs more)
        return Diagnostic(self.code, self.name, severity or self.severity, span, message, fix, path, label, help, tuple(notes))

    # -- derived facts -----------------------------------------------------------------------
    @classmethod
    def bad_examples(cls) -> List[Bad]:
        return [e for e in cls.examples if isinstance(e, Bad)]

    @classmethod
    def good_examples(cls) -> List[Good]:
        return [e for e in cls.examples if isinstance(e, Good)]

    @classmethod
    def fix_availability(cls) -> str:
        """"safe", "unsafe" or "none", from the examples."""
        fixed = [e for e in cls.bad_examples() if e.fixed is not None]
        if not fixed:
            return "none"
        if any(not e.unsafe for e in fixed):
            return "safe"
        return "unsafe"

    @classmethod
    def family(cls) -> str:
        return cls.code[:4]


def iter_rules(rules) -> Iterator[Rule]:
    for rule in rules:
        yield rule

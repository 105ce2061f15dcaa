"""SBL900–SBL901: suppression comments that do nothing or name no rule.

These findings come from the suppressions themselves, after every other rule ran, so the linter
calls ``findings`` instead of ``check``.
"""
from __future__ import annotations


from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..registry import register
from ..source import Span
from ..shellcheck import is_code as is_shellcheck_code
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Iterator, List


def _removal(source, suppression, codes) -> Edit:
    """Delete the unused codes, or the whole comment (its line, when alone) if none is left."""
    data = source.data
    if len(codes) == len(suppression.codes):
        if suppression.standalone:
            return Edit.delete(source.line_span(suppression.line, with_newline=True))
        start = suppression.span.start
        while start > 0 and data[start - 1 : start] in (b" ", b"\t"):
            start -= 1
        return Edit.delete(Span(start, suppression.span.end))
    raise ValueError("partial removal is done per code")


def _code_removal(source, suppression, code) -> Edit:
    data = source.data
    index = suppression.codes.index(code)
    if index + 1 < len(suppression.codes):
        return Edit.delete(Span(code.span.start, suppression.codes[index + 1].span.start))
    previous = suppression.codes[index - 1]
    return Edit.delete(Span(previous.span.end, code.span.end))


@register
class UnusedSuppression(Rule):
    code = "SBL900"
    name = "unused-suppression"
    severity = Severity.WARNING
    summary = "A `# sbatchlint: disable=…` comment silences nothing."
    what = """
        Reports a suppression comment, or one code in it, that did not silence any finding of an
        enabled rule: the problem it was written for is gone, or it sits on the wrong line.
    """
    why = """
        A stale suppression hides the next real finding on that line without anyone noticing,
        and a misplaced one gives false confidence that a known problem is being tolerated.
    """
    fix_safety = """
        Safe: only the unused codes (or the whole comment, when none is used) are removed; the
        findings they would silence do not exist.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                # sbatchlint: disable=SBL003 -- the time limit is set by the wrapper
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun hostname
                """
            ),
            also=("SBL003",),
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -e
                # sbatchlint: disable=SBL003 -- kept for the record, ignored on purpose
                #SBATCH --time=00:10:00
                srun hostname
                """
            ),
            also=("SBL003",),
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        return iter(())

    def findings(self, model, suppressions, enabled: Callable[[str], bool], known: List[str]) -> Iterator[Diagnostic]:
        source = model.source
        for suppression in suppressions:
            unused = [
                c for c in suppression.codes
                if c.code.upper() not in suppression.used
                and any(k.startswith(c.code.upper()) for k in known)
                and any(enabled(k) for k in known if k.startswith(c.code.upper()))
            ]
            if not unused:
                continue
            names = ", ".join(c.code for c in unused)
            if len(unused) == len(suppression.codes):
                edit = _removal(source, suppression, unused)
                yield self.report(model, suppression.span, f"unused suppression: no {names} finding here",
                                  Fix.safe("remove the suppression comment", edit))
                continue
            for code in unused:
                yield self.report(model, code.span, f"unused suppression: no {code.code} finding here",
                                  Fix.safe(f"remove {code.code} from the comment", _code_removal(source, suppression, code)))


@register
class UnknownSuppressionCode(Rule):
    code = "SBL901"
    name = "unknown-suppression-code"
    severity = Severity.WARNING
    summary = "A suppression comment names a code no rule has."
    what = """
        Reports codes in `# sbatchlint: disable=…` comments that match no rule (a typo such as
        `SBL21` for `SBL201`, or a code of another tool).
    """
    why = """
        The comment was meant to silence something and silences nothing: the finding it was
        written for still shows up, or the typo hides that nothing needed silencing.
    """
    fix_safety = "There is no automatic fix: only the author knows which code was meant."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun hostname  # sbatchlint: disable=SBL999
                """
            ),
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -e
                #SBATCH --time=00:10:00  # sbatchlint: disable=SBL003
                srun hostname
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        return iter(())

    def findings(self, model, suppressions, enabled, known) -> Iterator[Diagnostic]:
        for suppression in suppressions:
            for code in suppression.codes:
                if is_shellcheck_code(code.code):
                    continue
                if not any(k.startswith(code.code.upper()) for k in known):
                    yield self.report(model, code.span, f"`{code.code}` is not a sbatchlint rule code",
                                      help="see `sbatchlint rules` for the codes")

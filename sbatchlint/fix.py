"""Applying fixes: non-overlapping edits, re-linted to a fixed point, never breaking the parse."""
from __future__ import annotations

from collections import Counter

from .diagnostics import Applicability, Diagnostic, Edit, Fix
from .lazyclass import dataclass, field
from .source import Source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Sequence, Tuple

MAX_PASSES = 12
MAX_GROWTH = 4  # a fixed file this many times its size (plus 64 KiB) is a runaway, not a fix


def apply_edits(source: Source, edits: Sequence[Edit]) -> bytes:
    """Apply non-overlapping edits to the source bytes (``Source.edited``)."""
    return source.edited(edits)


def choose(fixes: Sequence[Fix]) -> List[Fix]:
    """A set of fixes whose edits do not touch each other; the rest wait for the next pass.

    Insertions of different text at one point do not conflict: they go in in the order of their
    fixes (by where each fix starts, then ends; for SBL003, the order of the moved lines). Were they
    taken one per pass, a script with more such fixes than passes (fourteen directives after
    the first command, all moved to the end of the header) would never settle."""
    chosen: List[Fix] = []
    taken: List[Edit] = []
    for fix in sorted(fixes, key=lambda f: (f.span.start, f.span.end)):
        if any(_conflict(a, b) for a in fix.edits for b in taken):
            continue
        chosen.append(fix)
        taken.extend(fix.edits)
    return chosen


def _conflict(first: Edit, second: Edit) -> bool:
    a = (first.span.start, first.span.end)
    b = (second.span.start, second.span.end)
    if a[0] == a[1] and b[0] == b[1] and a[0] == b[0]:
        return first.text == second.text  # the same text twice is one fix found twice
    if a[0] == a[1] or b[0] == b[1]:  # an insertion conflicts with anything at or around its point
        return b[0] <= a[0] <= b[1] or a[0] <= b[0] <= a[1]
    return a[0] < b[1] and b[0] < a[1]


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    if fix is None or not fix.edits:
        return False
    return fix.applicability is Applicability.SAFE or unsafe


@dataclass
class FixResult:
    data: bytes
    applied: int
    passes: int
    converged: bool
    rejected: int  # fixes not applied because they broke parsing
    codes: Dict[str, int] = field(default_factory=dict)  # fixes applied, by rule code


def fix_to_fixed_point(
    source: Source,
    lint: Callable[[Source], List[Diagnostic]],
    errors: Callable[[bytes], int],
    unsafe: bool = False,
) -> FixResult:
    """Lint, apply the chosen fixes, and repeat until nothing applicable is left (or the cap)."""
    current = source
    applied = 0
    rejected = 0
    codes: Counter = Counter()
    baseline = errors(source.data)
    refused: set = set()
    for passes in range(1, MAX_PASSES + 1):
        diagnostics = lint(current)
        fixes = [d.fix for d in diagnostics if applicable(d, unsafe) and _key(d) not in refused]
        if not fixes:
            return FixResult(current.data, applied, passes - 1, True, rejected, dict(codes))
        chosen = choose(fixes)
        data = apply_edits(current, [e for f in chosen for e in f.edits])
        if errors(data) > baseline:
            # Keep only the fixes that do not break the parse on their own.
            kept = []
            for fix in chosen:
                if errors(apply_edits(current, fix.edits)) > baseline:
                    rejected += 1
                    for d in diagnostics:
                        if d.fix is fix:
                            refused.add(_key(d))
                else:
                    kept.append(fix)
            if not kept:
                continue
            chosen = kept
            data = apply_edits(current, [e for f in chosen for e in f.edits])
        if data == current.data:
            return FixResult(current.data, applied, passes, True, rejected, dict(codes))
        applied += len(chosen)
        by_fix = {id(d.fix): d.code for d in diagnostics if d.fix is not None}
        codes.update(by_fix[id(fix)] for fix in chosen)
        current = Source(data, source.path)
        if len(data) > MAX_GROWTH * len(source.data) + 65536:
            break  # fixes that feed themselves: stop before the file balloons
    # Fixes that never settle are a rule's bug (a fix whose text the rule reports again): their
    # half-way result is not what anybody meant, so nothing is applied.
    return FixResult(source.data, 0, MAX_PASSES, False, rejected)


def _key(diagnostic: Diagnostic):
    return (diagnostic.code, diagnostic.message)

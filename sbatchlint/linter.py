"""Lint and fix one source: build the model once, run the selected rules, apply fixes."""
from __future__ import annotations

import gc

from . import registry, suppressions
from .codes import CODES
from .diagnostics import Severity
from .diagnostics import Diagnostic, Edit, Fix
from .lazyclass import dataclass, field, replace
from .source import Source, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Sequence
    from .fix import FixResult


@dataclass
class Selection:
    """Which rules run: codes or prefixes (``SBL2``, ``SBL201``, ``ALL``)."""

    select: Sequence[str] = ("ALL",)
    ignore: Sequence[str] = ()

    def enabled(self, code: str) -> bool:
        def matches(patterns: Iterable[str]) -> int:
            best = -1
            for pattern in patterns:
                pattern = pattern.strip().upper()
                if pattern == "ALL":
                    best = max(best, 0)
                elif code.startswith(pattern):
                    best = max(best, len(pattern))
            return best

        selected = matches(self.select)
        ignored = matches(self.ignore)
        return selected >= 0 and selected > ignored


@dataclass
class Options:
    selection: Selection = field(default_factory=Selection)
    settings: Dict[str, Any] = field(default_factory=dict)
    severity: Dict[str, Severity] = field(default_factory=dict)


def is_python(source: Source) -> bool:
    return source.path.endswith(".py")


def build(source: Source, options: Optional[Options] = None):
    """The model a file's rules query: a shell Script, or a Python module."""
    options = options or Options()
    if is_python(source):
        from .python.module import PythonModule  # heavy import only for Python files

        return PythonModule(source, options.settings)
    return _model("script").Script(source, options.settings)


_MODELS: "Dict[str, Any]" = {}


def _model(name: str):
    """The module ``model.<name>``, imported when first asked (the command line loads this module
    without the model: ``--version``, a run of cached results), then kept: an import statement
    run for every file costs more than the lookup."""
    module = _MODELS.get(name)
    if module is None:
        module = _MODELS[name] = __import__("model." + name, globals(), None, ("_",), 1)
    return module


SUPPRESSION_RULES = ("SBL900", "SBL901")
TEMPLATE_RULE = "SBL015"
# The rules that hold for any shell file, batch job or not: syntax and secrets.
ANY_SHELL_FILE = ("SBL001", "SBL016", "SBL4")
# What a script that submits here-documents does to the jobs it writes (expands their variables).
SUBMISSION_RULES = ("SBL201",)


@dataclass
class RuleFailure:
    """A rule that raised instead of answering: a bug, reported with the rule and the file."""

    code: str
    name: str
    error: BaseException

    def describe(self) -> str:
        return f"internal error in {self.code} ({self.name}): {type(self.error).__name__}: {self.error}"


def lint(source: Source, options: Optional[Options] = None, model=None,
         failures: Optional[List[RuleFailure]] = None) -> List[Diagnostic]:
    """The findings of the selected rules; ``model`` is ``build(source, options)`` when the caller
    already has it (it then asks the model more, e.g. which Python files a script launches).

    With a ``failures`` list, a rule that raises is recorded there and every other rule still
    runs (the command line reports it); without one, the exception propagates."""
    owned = model is None  # built here: nobody asks this model anything once the rules are done
    # A model is a great many small objects that all live until the file is done: the cyclic
    # garbage collector would walk them over and over while they are built and find nothing to
    # free. Hold it off for the file; the next automatic collection frees the model's cycles.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if model is None:
            model = build(source, options)
        return _lint(source, options, model, failures)
    finally:
        if owned and model is not None:
            let_go(model)
            model = None  # freed here, before the collector is back: it would walk all of it
        if was_enabled:
            gc.enable()


def let_go(model) -> None:
    """Free the model ``lint`` built at once rather than leave it to the cyclic collector: its
    own reference cycles are cut (task commands lose their step, launches their variants) and its
    analyses dropped. Only for a model nobody else holds."""
    release = getattr(model, "release", None)
    if release is not None:
        release()


def _lint(source: Source, options: Optional[Options], model, failures: Optional[List[RuleFailure]]) -> List[Diagnostic]:
    options = options or Options()
    language = "python" if is_python(source) else "shell"
    enabled = options.selection.enabled
    rules = registry.for_language(language, profile=options.settings.get("cluster") is not None)
    diagnostics: List[Diagnostic] = []
    failed = set()

    def run(rule, check, *args) -> List[Diagnostic]:
        if failures is None:
            return list(check(*args))
        try:
            return list(check(*args))
        except RecursionError:
            raise  # the whole file is too deeply nested, not one rule's bug
        except Exception as err:  # one rule's bug costs only that rule's findings
            failures.append(RuleFailure(rule.code, rule.name, err))
            failed.add(rule.code)
            return []

    selected = body_rules = _selected(rules, language, options.selection)
    if language == "shell":
        if model.template_evidence is not None:  # (``model/kind.py``)
            # a template for another tool: one finding says so, no rule checks it as a job
            selected = [rule for rule in selected if rule.code == TEMPLATE_RULE]
            body_rules = []
        elif not model.is_batch_script:
            # another shell file (a sourced helper): only what holds for any shell script, and
            # for a script that submits jobs it writes, what it does to them at submission
            keep = ANY_SHELL_FILE
            if any(doc.submitted for doc in model.heredocs):
                keep = ANY_SHELL_FILE + SUBMISSION_RULES
            selected = [rule for rule in selected if rule.code.startswith(keep)]
    # (``run`` inlined: this loop runs every rule of every file)
    if failures is None:
        for rule in selected:
            diagnostics.extend(rule.check(model))
    else:
        for rule in selected:
            try:
                found = list(rule.check(model))  # (whole, or nothing of a rule that raises)
            except RecursionError:
                raise  # the whole file is too deeply nested, not one rule's bug
            except Exception as err:  # one rule's bug costs only that rule's findings
                failures.append(RuleFailure(rule.code, rule.name, err))
                failed.add(rule.code)
                continue
            diagnostics.extend(found)
    if language == "shell":
        diagnostics.extend(_submitted_bodies(model, body_rules, options, run))
    if failed:  # a failed rule's suppressions are not "unused"
        chosen = enabled
        enabled = lambda code: chosen(code) and code not in failed  # noqa: E731
    if language == "shell" and options.settings.get("shellcheck"):
        from . import shellcheck

        diagnostics.extend(d for d in shellcheck.run(source) if enabled(d.code))
    diagnostics, foreign = _own_and_sourced(source, model, diagnostics)
    found = suppressions.find(source, model)
    if found:
        diagnostics = suppressions.apply(source, diagnostics, found)
        for code in SUPPRESSION_RULES:
            if enabled(code):
                rule = registry.rule(code)
                diagnostics.extend(run(rule, rule.findings, model, found, enabled, CODES))
        diagnostics = suppressions.apply_to_own(source, diagnostics, found)
    diagnostics.extend(foreign)
    for d in diagnostics:
        override = options.severity.get(d.code)
        if override is not None:
            d.severity = override
    diagnostics.sort(key=Diagnostic.sort_key)
    return diagnostics


def _own_and_sourced(source: Source, model, diagnostics: List[Diagnostic]):
    """The findings at the script's own lines, and those reported in a file it sources (at that
    file's lines, ``Rule.report``'s ``origin``), the latter already filtered by that file's own
    suppression comments (``# sbatchlint: disable=…`` on the line, or ``disable-file``)."""
    foreign = [d for d in diagnostics if d.path != source.path]
    if not foreign:
        return diagnostics, []
    from .model.sourced import files_read

    read = files_read(model.values.sourced)
    own = [d for d in diagnostics if d.path == source.path or d.path not in read]
    kept = []
    for path in sorted({d.path for d in foreign if d.path in read}):
        other = Source(read[path], path)
        mine = [d for d in foreign if d.path == path]
        comments = suppressions.find(other)
        kept.extend(suppressions.apply(other, mine, comments) if comments else mine)
    return own, kept


# What a submitted here-document body is checked for when the outer shell expands it first
# (``<<EOF``): how sbatch reads its header. Its shell text is not what bash will run (``\$X``,
# ``$(…)`` are the outer shell's), so the other rules would read it wrongly.
_EXPANDED_BODY_CODES = frozenset(f"SBL{n:03d}" for n in range(2, 13))


def _submitted_bodies(script, selected: list, options: Options, run=None) -> List[Diagnostic]:
    """The findings of each here-document body the script submits to sbatch, linted as a batch
    script of its own and reported at its real place in the file (``run`` guards each rule)."""
    if b"<<" not in script.data:
        return []
    heredocs = _model("heredocs").heredocs
    Script = _model("script").Script

    found: List[Diagnostic] = []
    for doc in heredocs(script):
        if not doc.submitted or doc.strip_tabs:
            continue
        base = doc.body.start
        body = Script(Source(script.data[base : doc.body.end], script.source.path), options.settings)
        rules = [r for r in selected if doc.quoted or r.code in _EXPANDED_BODY_CODES]
        for rule in rules:
            for d in (run(rule, rule.check, body) if run is not None else rule.check(body)):
                if not doc.quoted and d.code == "SBL006" and "$" in body.text(d.span):
                    continue  # the outer shell fills the value in before sbatch reads it
                fix = None
                if doc.quoted and d.fix is not None:
                    edits = tuple(Edit(Span(e.span.start + base, e.span.end + base), e.text) for e in d.fix.edits)
                    fix = Fix(edits, d.fix.applicability, d.fix.description)
                span = Span(d.span.start + base, d.span.end + base)
                found.append(replace(d, span=span, fix=fix, path=script.source.path))
    return found


_SELECTED: Dict[tuple, list] = {}


def _selected(rules: list, language: str, selection: Selection) -> list:
    """The rules that run on a file of this language, worked out once per selection (every file
    of a run usually shares one) instead of matching every code against the patterns per file."""
    key = (language, tuple(selection.select), tuple(selection.ignore), len(rules))
    found = _SELECTED.get(key)
    if found is None:
        found = [r for r in rules if r.language in (language, "any") and selection.enabled(r.code)]
        if len(_SELECTED) < 256:
            _SELECTED[key] = found
    return found


def parse_errors(source: Source) -> int:
    if is_python(source):
        from .python.module import parse_error_count

        return parse_error_count(source.data)
    from . import shell

    return len(shell.error_regions(shell.parse(source.data), source.data))


def fix(source: Source, options: Optional[Options] = None, unsafe: bool = False,
        failures: Optional[List[RuleFailure]] = None) -> FixResult:
    from .fix import fix_to_fixed_point  # only a run that fixes needs the fix engine

    options = options or Options()
    return fix_to_fixed_point(
        source,
        lambda s: lint(s, options, failures=failures),
        lambda data: parse_errors(Source(data, source.path)),
        unsafe=unsafe,
    )

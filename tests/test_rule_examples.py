"""Every rule's examples are tests: bad → the code (and the fixed text), good → nothing.

The fixed text must lint clean for that rule, and fixing it again must change nothing.
"""
from __future__ import annotations

import pytest

from sbatchlint import registry
from lintutil import fix_text, lint_text

BAD = [
    pytest.param(rule, index, example, id=f"{rule.code}-bad{index}")
    for rule in registry.all_rules()
    for index, example in enumerate(rule.bad_examples())
]
GOOD = [
    pytest.param(rule, index, example, id=f"{rule.code}-good{index}")
    for rule in registry.all_rules()
    for index, example in enumerate(rule.good_examples())
]


def _path(rule) -> str:
    return "script.py" if rule.language == "python" else "job.sh"


def _settings(example) -> dict:
    return dict(example.settings)


def test_every_rule_has_bad_and_good_examples():
    for rule in registry.all_rules():
        assert rule.bad_examples(), f"{rule.code} has no bad example"
        assert rule.good_examples(), f"{rule.code} has no good example"
        assert rule.summary and rule.what and rule.why, f"{rule.code} lacks documentation"


@pytest.mark.parametrize("rule,index,example", BAD)
def test_bad_example_is_reported(rule, index, example):
    found = [d for d in lint_text(example.source, [rule.code, *example.also], _path(rule), _settings(example))
             if d.code == rule.code]
    assert found, f"{rule.code} does not fire on its bad example #{index}"
    if example.count is not None:
        assert len(found) == example.count
    if example.contains is not None:
        said = ["\n".join([d.message, d.help or "", *d.notes]) for d in found]  # what the user reads
        assert any(example.contains in text for text in said), said
    for d in found:
        assert d.name == rule.name and d.severity == rule.severity


@pytest.mark.parametrize("rule,index,example", BAD)
def test_bad_example_fix(rule, index, example):
    path = _path(rule)
    settings = _settings(example)
    safe = fix_text(example.source, [rule.code, *example.also], unsafe=False, path=path, settings=settings)
    if example.fixed is None:
        assert safe == example.source, f"{rule.code} changed an example that declares no fix"
        assert fix_text(example.source, [rule.code, *example.also], unsafe=True, path=path, settings=settings) == example.source
        return
    if example.unsafe:
        assert safe == example.source, f"{rule.code}: an unsafe fix was applied without --unsafe-fixes"
        fixed = fix_text(example.source, [rule.code, *example.also], unsafe=True, path=path, settings=settings)
    else:
        fixed = safe
    assert fixed == example.fixed
    # the fixed text is clean for the rule, and fixing is idempotent
    assert not [d for d in lint_text(fixed, [rule.code, *example.also], path, settings) if d.code == rule.code]
    assert fix_text(fixed, [rule.code, *example.also], unsafe=True, path=path, settings=settings) == fixed


@pytest.mark.parametrize("rule,index,example", GOOD)
def test_good_example_is_clean(rule, index, example):
    found = [d for d in lint_text(example.source, [rule.code, *example.also], _path(rule), _settings(example))
             if d.code == rule.code]
    assert not found, [d.message for d in found]


@pytest.mark.parametrize("rule,index,example", [p for p in BAD if p.values[2].fixed is not None])
def test_fix_does_not_break_parsing_or_add_errors(rule, index, example):
    """After the fix, the script parses and no new error-severity finding of any rule appears."""
    path = _path(rule)
    settings = _settings(example)
    before = {(d.code) for d in lint_text(example.source, None, path, settings) if d.severity.value == "error"}
    after = [d for d in lint_text(example.fixed, None, path, settings) if d.severity.value == "error"]
    new = [d for d in after if d.code not in before and d.code != "SBL001"]
    assert not new, [f"{d.code}: {d.message}" for d in new]
    assert not [d for d in after if d.code == "SBL001"] or "SBL001" in before

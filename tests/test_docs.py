"""The rule pages in rules/ are generated from the rules and must not go stale."""
import os

from sbatchlint import docs, registry


def test_rule_pages_are_current(root):
    directory = os.path.join(root, "rules")
    wanted = docs.pages()
    present = sorted(n for n in os.listdir(directory) if n.endswith(".md"))
    assert present == sorted(wanted), "rules/ is stale: run `python -m sbatchlint.docs`"
    for name, text in wanted.items():
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            assert handle.read() == text, f"rules/{name} is stale: run `python -m sbatchlint.docs`"


def test_every_page_has_the_fixed_sections():
    for rule in registry.all_rules():
        page = docs.rule_page(rule)
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert heading in page, f"{rule.code} page lacks {heading}"
        assert page.startswith(f"# {rule.code} {rule.name}\n")

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


def test_the_readme_first_sample_is_real_output(root):
    import shlex
    import subprocess
    import sys

    with open(os.path.join(root, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    block = readme.split("```\n", 2)[1]  # the first fenced block: a command and what it prints
    command, expected = block.split("\n", 1)
    assert command.startswith("$ sbatchlint ")
    argv = shlex.split(command[2:])
    for arg in argv[1:]:
        if not arg.startswith("-"):
            assert os.path.isfile(os.path.join(root, arg)), f"the README names {arg}, which is not in the repository"
    done = subprocess.run([sys.executable, "-m", "sbatchlint", *argv[1:]], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": root})
    assert done.stdout == expected
    # the sample's file is left out of a search of the examples (the project's exclude), not of a run that names it
    searched = subprocess.run([sys.executable, "-m", "sbatchlint", "--show-files", "examples"], cwd=root,
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": root})
    assert argv[1] not in searched.stdout.splitlines() and searched.stdout

"""The layering of the package, read from its code (the import graph and the syntax tree).

Bytes become a model once (``source.py``, ``shell.py``, ``model/``); rules only ask the model and
word findings; reporters only format findings. This test is the enforceable part of
ARCHITECTURE.md:

- a rule module imports no parser (``shell``, ``tree_sitter``, ``libcst``), no ``re`` or
  ``shlex``, and takes no slice of the source's bytes or text;
- ``report/`` imports no model (it formats what the runner found; redaction builds no model);
- ``convert.py`` imports no rule module;
- every variable whose value differs between tasks (``variables.PER_TASK``) is spelled as a
  string in one module, ``model/variables.py``, and every option name of the option table in
  ``options.py`` (docstrings and rule examples aside: they are documentation).

``ALLOWED`` lists what the code still does against these rules, each entry with its reason; an
entry that no longer matches anything fails the test, so the list only shrinks.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sbatchlint"

PARSERS = {"tree_sitter", "tree_sitter_bash", "libcst", "sbatchlint.shell"}
TEXT_TOOLS = {"re", "shlex", "sbatchlint.lazyre"}  # lazyre: patterns compiled on first use
MODEL = ("sbatchlint.model", "sbatchlint.secrets", "sbatchlint.shell", "sbatchlint.python", "sbatchlint.linter")

# (check, module, detail) → why it is still there.
PLACEMENT = (
    "edit placement: where a new line or a removed statement goes (indentation, continuation lines) "
    "is read from the bytes until the shell edit-placement module owns it"
)
ALLOWED: Dict[tuple, str] = {
    ("spelled", "sbatchlint.config", "gpus-per-node"): (
        "a configuration key spelled like the option (the site's GPUs per node), not the option"
    ),
    ("text-import", "sbatchlint.rules.containers", "sbatchlint.lazyre"): (
        "image names (NeMo images), Hugging Face hints, Megatron-LM entry points and /tmp paths are "
        "matched by patterns until the container and workload models name them"
    ),
    ("text-import", "sbatchlint.rules.containers", "shlex"): "quoting inserted words for the shell: fix text, not reading",
    ("source-slice", "sbatchlint.rules.containers", "data"): PLACEMENT,
    ("source-slice", "sbatchlint.rules.containers", "script.data"): (
        "the raw text of an assignment's value, to rewrite it in a fix, until assignments carry it"
    ),
    ("source-slice", "sbatchlint.rules.expansion", "data"): (
        "how an expansion site is written ($NAME or ${NAME}) until the boundary model records it"
    ),
    ("source-slice", "sbatchlint.rules.expansion", "script.data"): (
        "how an expansion site is written ($NAME or ${NAME}) until the boundary model records it"
    ),
    ("text-import", "sbatchlint.rules.directives", "sbatchlint.lazyre"): (
        "splitting a message the option table wrote (sbatch's own words in parentheses) into a first "
        "line and a note, and whether a list written in a step is plain text a fix can append to"
    ),
    ("text-import", "sbatchlint.rules.launch", "sbatchlint.lazyre"): (
        "a cheap first test of a launch's arguments (can any of them name a parallel size?) before the "
        "launch model reads its configurations: a superset of what the model finds"
    ),
    ("text-import", "sbatchlint.rules.secrets", "sbatchlint.lazyre"): (
        "expanded names in a value and redirection targets: the secrets analysis does not answer them yet"
    ),
    ("parser-import", "sbatchlint.rules.secrets", "sbatchlint.shell"): (
        "uses of a secret variable in comments and here-documents: the secrets analysis does not list them yet"
    ),
    ("source-slice", "sbatchlint.rules.secrets", "data"): (
        "the text around an --export item, to remove `NAME=$NAME`'s value in a fix"
    ),
    ("source-slice", "sbatchlint.rules.secrets", "script.data"): "a short quote of a statement for a message",
    ("source-slice", "sbatchlint.rules.suppression", "data"): PLACEMENT,
    ("parser-import", "sbatchlint.rules.topology", "tree_sitter"): PLACEMENT,
    ("parser-import", "sbatchlint.rules.topology", "tree_sitter.Node"): PLACEMENT,
    ("parser-import", "sbatchlint.rules.topology", "sbatchlint.shell"): PLACEMENT,
    ("parser-import", "sbatchlint.rules.topology", "sbatchlint.shell.ancestors"): PLACEMENT,
    ("parser-import", "sbatchlint.rules.topology", "sbatchlint.shell.node_span"): PLACEMENT,
    ("source-slice", "sbatchlint.rules.topology", "data"): PLACEMENT,
}


@dataclass(frozen=True)
class Violation:
    check: str  # "parser-import", "text-import", "source-slice", "report-model", "convert-rule", "spelled"
    module: str  # dotted module name
    detail: str  # what was found (an import, a slice, a string)
    line: int = 0

    @property
    def key(self) -> tuple:
        return (self.check, self.module, self.detail)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(tree: ast.AST, module: str, is_package: bool = False) -> Iterator[tuple]:
    """(dotted name imported, line) for every import, relative ones resolved; ``from a import b``
    yields ``a.b`` as well as ``a`` (b may be a module)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def docstrings(tree: ast.AST) -> Set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def source_slices(tree: ast.AST) -> Iterator[tuple]:
    """Slices of source bytes or text: ``x.data[a:b]``, ``data[a:b]``, ``x.text(...)[a:b]``,
    ``x.decode(...)[a:b]``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
            continue
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "data":
            yield ast.unparse(value), node.lineno
        elif isinstance(value, ast.Name) and value.id == "data":
            yield "data", node.lineno
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("text", "decode"):
            yield ast.unparse(value.func), node.lineno


def check_module(module: str, text: str, is_package: bool = False) -> List[Violation]:
    """The layering violations of one module's code."""
    tree = ast.parse(text)
    out: List[Violation] = []
    imported = list(imports(tree, module, is_package))
    if module.startswith("sbatchlint.rules.") and module != "sbatchlint.rules.base":
        for name, line in imported:
            if _within(name, PARSERS):
                out.append(Violation("parser-import", module, name, line))
            elif name in TEXT_TOOLS:
                out.append(Violation("text-import", module, name, line))
        for what, line in source_slices(tree):
            out.append(Violation("source-slice", module, what, line))
    if module == "sbatchlint.report" or module.startswith("sbatchlint.report."):
        for name, line in imported:
            if _within(name, MODEL):
                out.append(Violation("report-model", module, name, line))
    if module == "sbatchlint.convert":
        for name, line in imported:
            if _within(name, ("sbatchlint.rules",)):
                out.append(Violation("convert-rule", module, name, line))
    return _unique(out)


def _unique(found: List[Violation]) -> List[Violation]:
    seen: Dict[tuple, Violation] = {}
    for violation in found:
        seen.setdefault(violation.key, violation)
    return list(seen.values())


def spelled_names() -> Dict[str, str]:
    """Each name that must be spelled in one module only → that module."""
    from sbatchlint import options
    from sbatchlint.model import variables

    owners = {name: "sbatchlint.model.variables" for name in variables.PER_TASK}
    for table in (options.SBATCH, options.SRUN):
        for name in table:
            if "-" in name:  # "nodes" or "time" are also ordinary words
                owners.setdefault(name, "sbatchlint.options")
    return owners


EXAMPLES = ("Bad", "Good", "clean")  # a rule's documented examples


def spelled_elsewhere(module: str, text: str, owners: Dict[str, str]) -> List[Violation]:
    tree = ast.parse(text)
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in EXAMPLES:
            skip.update(id(inner) for inner in ast.walk(node) if isinstance(inner, ast.Constant))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            owner = owners.get(node.value)
            if owner is not None and owner != module:
                out.append(Violation("spelled", module, node.value, node.lineno))
    return _unique(out)


def modules() -> Iterator[tuple]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield module_name(path), path.read_text(encoding="utf-8"), path.name == "__init__.py"


@lru_cache(maxsize=1)
def all_violations() -> Tuple[Violation, ...]:
    owners = spelled_names()
    found: List[Violation] = []
    for module, text, is_package in modules():
        found.extend(check_module(module, text, is_package))
        found.extend(spelled_elsewhere(module, text, owners))
    return tuple(found)


# -- the layering itself ---------------------------------------------------------------------------
def test_the_package_keeps_its_layers():
    found = all_violations()
    unexplained = [v for v in found if v.key not in ALLOWED]
    assert not unexplained, "layering broken:\n" + "\n".join(
        f"  {v.module}:{v.line}: {v.check}: {v.detail}" for v in unexplained
    )


def test_every_allowance_is_still_needed_and_explained():
    keys = {v.key for v in all_violations()}
    stale = [key for key in ALLOWED if key not in keys]
    assert not stale, f"these allowances match nothing any more, remove them: {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())


# -- the checks catch what they are meant to catch ---------------------------------------------------
RULE = "sbatchlint.rules.example"


@pytest.mark.parametrize(
    "code, check",
    [
        ("from .. import shell\n", "parser-import"),
        ("from ..shell import ancestors\n", "parser-import"),
        ("from tree_sitter import Node\n", "parser-import"),
        ("import re\n", "text-import"),
        ("import shlex as s\n", "text-import"),
        ("def f(script, a, b):\n    return script.data[a:b]\n", "source-slice"),
        ("def f(script, span):\n    return script.source.text(span)[1:]\n", "source-slice"),
    ],
)
def test_a_rule_that_reads_text_itself_fails(code, check):
    found = check_module(RULE, code)
    assert found and {v.check for v in found} == {check}


def test_a_rule_that_asks_the_model_passes():
    code = "from ..model.workload import classify\nfrom .base import Rule\n\ndef f(word):\n    return word.text[1:]\n"
    assert check_module(RULE, code) == []


def test_a_reporter_that_builds_a_model_fails():
    assert {v.check for v in check_module("sbatchlint.report.text", "from ..model.script import Script\n")} == {"report-model"}
    assert check_module("sbatchlint.report.text", "from ..redaction import mask\n") == []


def test_convert_importing_a_rule_fails():
    found = check_module("sbatchlint.convert", "from .rules.containers import launches\n")
    assert {v.check for v in found} == {"convert-rule"}


def test_a_variable_or_option_spelled_twice_fails():
    owners = {"SLURM_PROCID": "sbatchlint.model.variables", "ntasks-per-node": "sbatchlint.options"}
    code = '"""SLURM_PROCID in a docstring is documentation."""\nX = ("SLURM_PROCID", "ntasks-per-node")\n'
    found = spelled_elsewhere("sbatchlint.rules.example", code, owners)
    assert sorted(v.detail for v in found) == ["SLURM_PROCID", "ntasks-per-node"]
    assert spelled_elsewhere("sbatchlint.model.variables", 'X = "SLURM_PROCID"\n', owners) == []

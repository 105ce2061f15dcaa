"""No library API on its way out: a deprecation warning raised from sbatchlint's own code fails the
suite (pyproject's ``filterwarnings``), and none of the names Click 8.5 deprecates is used, so the
command line keeps working on Click 9."""
from __future__ import annotations

import ast
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Deprecated in Click 8.5 (removed in 9.0/9.1): the module attributes and methods.
CLICK_DEPRECATED = {
    "get_text_stream", "get_binary_stream", "__version__", "BaseCommand", "MultiCommand", "OptionParser",
    "LazyFile", "KeepOpenFile", "make_default_short_help", "PacifyFlushWrapper", "safecall",
    "isolated_filesystem", "protected_args",
}


def test_a_deprecation_warning_from_sbatchlint_code_is_an_error():
    with pytest.raises(DeprecationWarning):
        warnings.warn_explicit("an old API", DeprecationWarning, "cli.py", 1, module="sbatchlint.cli")
    with pytest.raises(DeprecationWarning):
        warnings.warn_explicit("an old API", DeprecationWarning, "header.py", 1, module="sbatchlint.model.header")
    with warnings.catch_warnings(record=True) as caught:  # another package's code only warns
        warnings.simplefilter("default")
        warnings.warn_explicit("an old API", DeprecationWarning, "x.py", 1, module="otherpackage")
    assert len(caught) == 1


def _click_names(tree: ast.AST):
    """Names used from click: ``click.X``, ``from click import X`` and methods named X."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in CLICK_DEPRECATED and node.attr != "__version__":
                yield node.lineno, node.attr
            elif isinstance(node.value, ast.Name) and node.value.id == "click" and node.attr in CLICK_DEPRECATED:
                yield node.lineno, node.attr
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("click"):
            for alias in node.names:
                if alias.name in CLICK_DEPRECATED:
                    yield node.lineno, alias.name


def test_no_api_click_deprecates_is_used():
    used = []
    for folder in ("sbatchlint", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == Path(__file__).name:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            used.extend(f"{path.relative_to(ROOT)}:{line}: {name}" for line, name in _click_names(tree))
    assert used == []


def test_the_checker_finds_a_deprecated_call():
    tree = ast.parse("import click\nout = click.get_text_stream('stdout')\nfrom click import get_binary_stream\n")
    assert sorted(_click_names(tree)) == [(2, "get_text_stream"), (3, "get_binary_stream")]


def test_bytes_through_stdin_and_stdout_of_the_real_command(tmp_path):
    # what click's stream helpers did: raw bytes in, fixed raw bytes out (CRLF and Latin-1 kept)
    data = b"#SBATCH --nodes=1\r\n# r\xe9sum\xe9\r\nsrun hostname\r\n"
    done = subprocess.run([sys.executable, "-m", "sbatchlint", "--fix", "--select", "SBL002", "-"], input=data,
                          capture_output=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.stdout == b"#!/bin/bash\r\n" + data
    assert done.returncode == 0, done.stderr

"""What a cold start pays for: importing the command line and every rule does no regex work.

Patterns are compiled when a check first uses them (``sbatchlint.lazyre``), so a run over one
small script compiles only the few its checks need.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = r"""
import os, re, sys
package = os.path.dirname(os.path.abspath(sys.argv[1]))
compiled = []
real = re._compile

def recording(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "re":
        frame = frame.f_back  # re.compile, re.match, ...: who called them
    name = frame.f_code.co_filename if frame is not None else ""
    if name.startswith(package) and not name.endswith("lazyre.py"):
        compiled.append((os.path.relpath(name, package), frame.f_lineno, str(pattern)[:40]))
    return real(pattern, flags)

re._compile = recording
import sbatchlint.cli, sbatchlint.runner, sbatchlint.linter, sbatchlint.model.script
import sbatchlint.secrets, sbatchlint.redaction, sbatchlint.convert, sbatchlint.migrate
from sbatchlint import registry
registry.all_rules()
for line in compiled:
    print(*line)
"""


def test_importing_the_command_line_and_every_rule_compiles_no_pattern():
    import sbatchlint

    done = subprocess.run([sys.executable, "-c", PROBE, sbatchlint.__file__], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "patterns compiled at import time:\n" + done.stdout


def test_a_lazy_pattern_behaves_as_the_compiled_one():
    import re

    from sbatchlint.lazyre import lazy

    pattern = lazy(r"(?P<name>[A-Z_]+)=(?P<value>\S*)", re.I)
    assert pattern.pattern == r"(?P<name>[A-Z_]+)=(?P<value>\S*)" and pattern.flags & re.I
    assert pattern.match("hf_token=x").group("name") == "hf_token"
    assert pattern.sub("<\\g<name>>", "a=1 b=2") == "<a> <b>"
    assert [m.group("value") for m in pattern.finditer("a=1 b=2")] == ["1", "2"]
    assert pattern.fullmatch("a=1 b") is None
    with pytest.raises(AttributeError):
        pattern.no_such_method

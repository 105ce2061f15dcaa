"""Mutated job scripts and the properties every run must keep on them, shared by the property
tests (``tests/test_properties.py``, hypothesis) and the longer local run (``bench/fuzz.py``).

A mutation is a list of operations applied in order to a generated script (``scriptgen``):
lines deleted, duplicated or swapped, the file cut short (anywhere, or right after a quote, a
``$``, a bracket, ``=`` or ``\\``: a command cut in the middle), a line cut in the middle, a character
changed, a shell fragment inserted (an unclosed quote, ``$(``, ``fi``, ``<<EOF``…). Every number
in an operation is taken modulo what it indexes, so any list of operations applies to any file.

``problems(data)`` lints and fixes the bytes and returns what went wrong, each a line naming the
property broken:

- no exception from any rule, the model or the fix engine;
- every finding's span and every edit inside the file; a fix's edits in order, not overlapping,
  and ``Source.edited`` changing no byte outside them;
- the fixes settle and are idempotent: fixing the fixed bytes changes nothing;
- a file ``bash -n`` accepts is still accepted after the fixes.
"""
from __future__ import annotations

import random
import shutil
import subprocess
from typing import List, Sequence, Tuple

SNIPPETS = (
    '"', "'", "$", "\\", "${", "$(", "`", "{", "}", "(", ")", "((", "fi", "done", "esac", "then", "do",
    "<<EOF", "EOF", "<<'EOF'", "#SBATCH --nodes=", "#SBATCH", "srun \\", "\\\n", "$((", "[[", "]]",
    "${A:-", "CMD=\"$CMD", "--container-mounts=", "torchrun --nnodes=", "&&", "|", ";;", "#", "\r",
)

Op = Tuple[str, int, int]
KINDS = ("delete", "truncate", "duplicate", "swap", "insert", "cut-line", "flip", "cut-at-token")
# where "cut-at-token" may end the file: right after one of these bytes
TOKEN_ENDS = frozenset(b"\"'`$(){}=\\")


def apply(data: bytes, ops: Sequence[Op]) -> bytes:
    """``data`` with ``ops`` applied in order."""
    for kind, a, b in ops:
        lines = data.splitlines(keepends=True) or [b""]
        n = len(lines)
        if kind == "delete":
            start = a % n
            del lines[start : start + 1 + b % 3]
        elif kind == "truncate":
            data = data[: a % (len(data) + 1)]
            continue
        elif kind == "duplicate":
            lines.insert(a % n, lines[b % n])
        elif kind == "swap":
            i, j = a % n, b % n
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            index = a % n
            snippet = SNIPPETS[b % len(SNIPPETS)].encode()
            line = lines[index]
            cut = (a // n) % (len(line) + 1)
            lines[index] = line[:cut] + snippet + line[cut:]
        elif kind == "cut-line":
            index = a % n
            line = lines[index]
            keep = b % (len(line) + 1)
            lines[index] = line[:keep] + (b"\n" if line.endswith(b"\n") else b"")
        elif kind == "cut-at-token":
            marks = [i + 1 for i, byte in enumerate(data) if byte in TOKEN_ENDS]
            if marks:
                data = data[: marks[a % len(marks)]]
            continue
        elif kind == "flip":
            if data:
                position = a % len(data)
                data = data[:position] + bytes([b % 128]) + data[position + 1 :]
            continue
        else:
            raise ValueError(kind)
        data = b"".join(lines)
    return data


def random_ops(rng: random.Random, count: int) -> List[Op]:
    return [(rng.choice(KINDS), rng.randrange(1 << 20), rng.randrange(1 << 10)) for _ in range(count)]


def bash_accepts(data: bytes) -> bool:
    bash = shutil.which("bash")
    if bash is None:  # pragma: no cover - every test machine has bash
        return True
    done = subprocess.run([bash, "-n"], input=data, capture_output=True, timeout=20, check=False)
    return done.returncode == 0


def problems(data: bytes, unsafe: bool = True, check_bash: bool = True) -> List[str]:
    """What ``data`` breaks of the properties above (empty: nothing)."""
    from sbatchlint.linter import Options, fix, lint
    from sbatchlint.source import InputError, Source

    found: List[str] = []
    try:
        source = Source.checked(data, "job.sbatch")
    except InputError:
        return found  # not text: refused with a one-line error, as the command does
    size = len(source.data)
    try:
        diagnostics = lint(source, Options())
    except Exception as err:  # noqa: BLE001 - the property is "no exception"
        return [f"lint raised {type(err).__name__}: {err}"]
    for d in diagnostics:
        if not 0 <= d.span.start <= d.span.end <= size:
            found.append(f"{d.code}: span {d.span.start}..{d.span.end} outside a file of {size} bytes")
        if d.fix is None:
            continue
        edits = d.fix.edits
        for edit in edits:
            if not 0 <= edit.span.start <= edit.span.end <= size:
                found.append(f"{d.code}: edit {edit.span.start}..{edit.span.end} outside a file of {size} bytes")
        if found:
            continue
        for before, after in zip(edits, edits[1:]):
            if after.span.start < before.span.end:
                found.append(f"{d.code}: edits {before.span.start}..{before.span.end} and "
                             f"{after.span.start}..{after.span.end} overlap")
        if found:
            continue
        expected = bytearray()
        position = 0
        for edit in edits:
            expected += source.data[position : edit.span.start] + source.encode(edit.text)
            position = edit.span.end
        expected += source.data[position:]
        if source.edited(edits) != bytes(expected):
            found.append(f"{d.code}: its fix changes bytes outside its edits")
    if found:
        return found
    try:
        first = fix(source, Options(), unsafe=unsafe)
    except Exception as err:  # noqa: BLE001
        return [f"fix raised {type(err).__name__}: {err}"]
    if not first.converged:
        return found  # reported to the user as an internal error, and nothing applied
    if first.data != source.data:
        try:
            second = fix(Source(first.data, "job.sbatch"), Options(), unsafe=unsafe)
        except Exception as err:  # noqa: BLE001
            return [f"fixing the fixed file raised {type(err).__name__}: {err}"]
        if second.data != first.data:
            found.append("the fixes are not idempotent: fixing the fixed file changes it again")
        if check_bash and bash_accepts(source.data) and not bash_accepts(first.data):
            found.append("bash -n accepted the file and rejects it after the fixes")
    return found

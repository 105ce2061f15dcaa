"""Recall of the header rules: seed each header bug into copies of real job scripts and count
how many the linter finds.

    python bench/seed_header.py --corpus ~/corpus [-j 2] [--target 0.95]

For every script of the corpus that is a batch job (a ``#!`` line, ``#SBATCH`` lines in its
header, not a template), one copy per bug is written to a temporary directory, each with one
bug seeded, and linted with the header rules (SBL0xx):

* ``line-before-header``: a command (``set -euo pipefail``) right after the ``#!`` line, before
  the first directive: every directive below it is ignored (SBL003);
* ``typo``: two inner letters of the first long option swapped (``--ndoes=2``): an unknown
  option (SBL005, or SBL014 when the result is close to no option);
* ``hash-in-value``: a ``#`` inside the first plain directive value (``--job-name=ab#c``): the
  value is cut (SBL012);
* ``missing-shebang``: the ``#!`` line removed (SBL002);
* ``mkdir-log-dir``: ``--output`` set to a directory the job creates with ``mkdir -p`` after the
  header (SBL010).

A seed counts as found when the expected code is reported on the seeded line (for
``line-before-header``, on any of the directives the seed pushes out of the header). The
script prints a table per bug and the total, and exits 1 when the recall is under ``--target``.
The corpus scripts are only read; the copies live in a temporary directory that is removed.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BUGS = ("line-before-header", "typo", "hash-in-value", "missing-shebang", "mkdir-log-dir")
EXPECTED = {
    "line-before-header": ("SBL003",),
    "typo": ("SBL005", "SBL014"),
    "hash-in-value": ("SBL012",),
    "missing-shebang": ("SBL002",),
    "mkdir-log-dir": ("SBL010",),
}


def _script(text: str, path: str):
    from sbatchlint.model.script import Script
    from sbatchlint.source import Source

    return Script(Source(text.encode("utf-8"), path))


def eligible(text: str, path: str) -> bool:
    if not text.startswith("#!"):
        return False
    script = _script(text, path)
    if script.template_evidence is not None:
        return False
    return any(d.placement == "header" for d in script.header.directives)


def _lines(text: str) -> List[str]:
    return text.split("\n")


def seed(bug: str, text: str, path: str) -> Optional[Tuple[str, List[int]]]:
    """The seeded text and the lines where the bug must be reported; None when the script has
    nothing to seed this bug into."""
    from sbatchlint import options

    lines = _lines(text)
    script = _script(text, path)
    header = [d for d in script.header.directives if d.placement == "header"]
    if bug == "line-before-header":
        seeded = [lines[0], "set -euo pipefail"] + lines[1:]
        return "\n".join(seeded), sorted({d.line + 1 for d in header})
    if bug == "missing-shebang":
        return "\n".join(lines[1:]), [1]
    if bug == "typo":
        for d in header:
            if d.dashes != "--" or d.spec is None or len(d.option) < 4 or not d.option.isascii():
                continue
            name = d.option
            for i in range(1, len(name) - 2):
                a, b = name[i], name[i + 1]
                if a == b or not (a.isalpha() and b.isalpha()):
                    continue
                typo = name[:i] + b + a + name[i + 2 :]
                if options.lookup(options.SBATCH, typo) is not None:
                    continue  # still an option (or an abbreviation of one): not a bug
                line = lines[d.line - 1]
                at = line.find("--" + name)
                if at < 0:
                    continue
                lines[d.line - 1] = line[:at] + "--" + typo + line[at + 2 + len(name) :]
                return "\n".join(lines), [d.line]
        return None
    if bug == "hash-in-value":
        for d in header:
            value = d.value or ""
            if d.spec is None or len(value) < 2 or not value.isascii() or d.value_span is None:
                continue
            written = text.encode("utf-8")[d.value_span.start : d.value_span.end].decode("utf-8", "replace")
            if written != value or any(c in value for c in "#\"'\\ "):
                continue
            line = lines[d.line - 1]
            at = line.find(value)
            if at < 0:
                continue
            cut = at + len(value) // 2
            lines[d.line - 1] = line[:cut] + "#" + line[cut:]
            return "\n".join(lines), [d.line]
        return None
    if bug == "mkdir-log-dir":
        last = max(d.line for d in header)
        seeded = (
            lines[:last]
            + ["#SBATCH --output=seeded_logs/%x_%j.out"]
            + lines[last : last]
            + ["mkdir -p seeded_logs"]
            + lines[last:]
        )
        return "\n".join(seeded), [last + 1]
    raise ValueError(bug)


def check(item: Tuple[str, str]) -> List[Tuple[str, str, Optional[bool]]]:
    """(script, bug, found) for each bug; found None when the bug could not be seeded."""
    from sbatchlint.linter import Options, Selection, lint
    from sbatchlint.source import Source

    name, path = item
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    if not eligible(text, name):
        return []
    out = []
    options = Options(Selection(select=["SBL0"]))
    with tempfile.TemporaryDirectory(prefix="sbl-seed-") as tmp:
        for bug in BUGS:
            seeded = seed(bug, text, name)
            if seeded is None:
                out.append((name, bug, None))
                continue
            body, where = seeded
            copy = os.path.join(tmp, f"{bug}-{os.path.basename(name)}")
            with open(copy, "w", encoding="utf-8") as handle:
                handle.write(body)
            data = body.encode("utf-8")
            found = False
            for d in lint(Source(data, copy), options):
                line = data.count(b"\n", 0, d.span.start) + 1
                if d.code in EXPECTED[bug] and line in where:
                    found = True
                    break
            out.append((name, bug, found))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="a directory of job scripts")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--missed", action="store_true", help="list the seeds that were not found")
    args = parser.parse_args(argv)
    items = []
    for folder, dirs, files in os.walk(os.path.expanduser(args.corpus)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            items.append((os.path.relpath(path, args.corpus), path))
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = [r for chunk in pool.map(check, items, chunksize=4) for r in chunk]
    else:
        results = [r for item in items for r in check(item)]
    table: Dict[str, List[int]] = collections.defaultdict(lambda: [0, 0, 0])  # seeded, found, skipped
    missed = []
    for name, bug, found in results:
        if found is None:
            table[bug][2] += 1
            continue
        table[bug][0] += 1
        if found:
            table[bug][1] += 1
        else:
            missed.append((bug, name))
    print(f"{'bug':22} {'seeded':>7} {'found':>7} {'recall':>7} {'skipped':>8}")
    seeded_total = found_total = 0
    for bug in BUGS:
        seeded, found, skipped = table[bug]
        seeded_total += seeded
        found_total += found
        recall = found / seeded if seeded else 1.0
        print(f"{bug:22} {seeded:7d} {found:7d} {recall:7.1%} {skipped:8d}")
    total = found_total / seeded_total if seeded_total else 1.0
    print(f"{'total':22} {seeded_total:7d} {found_total:7d} {total:7.1%}")
    if args.missed:
        for bug, name in missed:
            print(f"missed {bug}: {name}")
    return 0 if total >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())

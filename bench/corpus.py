"""Snapshot every finding and every fix on a set of scripts, and show what a change did to them.

    python bench/corpus.py --corpus ~/corpus                      # findings per code
    python bench/corpus.py --corpus ~/corpus --save before.json   # keep a snapshot
    python bench/corpus.py --corpus ~/corpus --diff before.json   # what changed since it
    python bench/corpus.py --project --save before.json           # the project's own inputs

``--corpus DIR`` (repeatable) takes every regular file below DIR: the real-script corpus
(``../shared/corpus/README.md`` says how to rebuild it) or any tree of job scripts.
``--project`` adds the project's own inputs: the examples, the test fixtures, every rule's
examples (linted with all rules, and with the rule's own selection as its tests do) and the
generated bench corpus. A snapshot holds, per file, each finding (code, severity, position,
message, help, fix and its edits) and the text after ``--fix`` and after ``--unsafe-fixes``.

``--diff`` prints, per file and code, the findings that appeared or went away and the fixes that
changed, then a table per code, and exits 1 when anything differs: the check that a refactoring
left behaviour byte-identical, and the review list after a rule change.
"""
from __future__ import annotations

import argparse
import collections
import difflib
import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# An item: (label, display path, bytes, selected codes or None for all[, settings as (name, value) pairs])
Item = Tuple


def corpus_items(directory: str) -> Iterator[Item]:
    directory = os.path.abspath(os.path.expanduser(directory))
    for folder, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            rel = os.path.relpath(path, directory)
            with open(path, "rb") as handle:
                yield (f"corpus:{rel}", rel, handle.read(), None)


def project_items() -> Iterator[Item]:
    for top in ("examples", os.path.join("tests", "fixtures")):
        base = os.path.join(ROOT, top)
        for folder, dirs, files in os.walk(base):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)
                with open(path, "rb") as handle:
                    yield (f"file:{rel}", rel, handle.read(), None)
    from sbatchlint import registry

    for rule in registry.all_rules():
        path = "script.py" if rule.language == "python" else "job.sh"
        for kind, examples in (("bad", rule.bad_examples()), ("good", rule.good_examples())):
            for index, example in enumerate(examples):
                data = example.source.encode("utf-8")
                label = f"example:{rule.code}:{kind}{index}"
                settings = tuple(getattr(example, "settings", ()))  # what the example's tests assume
                yield (label + ":all", path, data, None, settings)
                yield (label + ":own", path, data, (rule.code, *example.also), settings)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import run as bench_run  # the bench's generated corpus

    for index, text in enumerate(bench_run.corpus(400)):
        yield (f"bench:{index:03d}", f"bench{index:03d}.sh", text.encode("utf-8"), None)


def _finding(d) -> dict:
    fix = d.fix
    return {
        "code": d.code,
        "severity": d.severity.value,
        "span": [d.span.start, d.span.end],
        "message": d.message,
        "label": d.label,
        "help": d.help,
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "description": fix.description,
            "edits": [[e.span.start, e.span.end, e.text] for e in fix.edits],
        },
    }


def snapshot_item(item: Item) -> Tuple[str, dict]:
    from sbatchlint.linter import Options, Selection, fix, lint
    from sbatchlint.source import InputError, Source

    label, path, data, select = item[:4]
    settings = dict(item[4]) if len(item) > 4 else {}
    options = Options(Selection(select=list(select) if select else ["ALL"]), settings)
    try:
        source = Source.checked(data, path)
    except InputError as err:
        return label, {"error": str(err)}
    entry: dict = {"sha": hashlib.sha256(data).hexdigest()[:16]}
    try:
        entry["findings"] = [_finding(d) for d in lint(source, options)]
        for key, unsafe in (("fixed", False), ("unsafe_fixed", True)):
            result = fix(Source(data, path), options, unsafe=unsafe)
            entry[key] = None if result.data == data else result.data.decode("utf-8", "replace")
    except Exception as err:  # a crash is part of the behaviour to compare
        entry["crash"] = f"{type(err).__name__}: {err}"
    return label, entry


def snapshot(items: Sequence[Item], jobs: int) -> Dict[str, dict]:
    if jobs <= 1:
        return dict(map(snapshot_item, items))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(snapshot_item, items, chunksize=8))


def _line(finding: dict) -> str:
    return f"{finding['code']} [{finding['severity'][0].upper()}] @{finding['span'][0]}: {finding['message']}"


def _key(finding: dict) -> str:
    return json.dumps(finding, sort_keys=True)


def compare(old: Dict[str, dict], new: Dict[str, dict]) -> int:
    """Print what differs, per file and code, and a table per code; the number of differences."""
    differences = 0
    table: Dict[str, List[int]] = collections.defaultdict(lambda: [0, 0, 0])  # removed, added, changed
    for label in sorted(set(old) | set(new)):
        before, after = old.get(label), new.get(label)
        if before is None or after is None:
            print(f"{label}: {'only in the new run' if before is None else 'only in the snapshot'}")
            differences += 1
            continue
        lines: List[str] = []
        for key in ("error", "crash"):
            if before.get(key) != after.get(key):
                lines.append(f"  {key}: {before.get(key)!r} -> {after.get(key)!r}")
        if before.get("sha") != after.get("sha"):
            lines.append("  the file's bytes differ from the snapshot's")
        old_f = collections.Counter(_key(f) for f in before.get("findings", []))
        new_f = collections.Counter(_key(f) for f in after.get("findings", []))
        removed = old_f - new_f
        added = new_f - old_f
        by_code: Dict[str, List[str]] = collections.defaultdict(list)
        for key, count in sorted(removed.items()):
            f = json.loads(key)
            by_code[f["code"]].append(f"  - {_line(f)}" + (f" (x{count})" if count > 1 else ""))
            table[f["code"]][0] += count
        for key, count in sorted(added.items()):
            f = json.loads(key)
            by_code[f["code"]].append(f"  + {_line(f)}" + (f" (x{count})" if count > 1 else ""))
            table[f["code"]][1] += count
        for code in sorted(by_code):
            lines.extend(by_code[code])
        for key, flag in (("fixed", "--fix"), ("unsafe_fixed", "--unsafe-fixes")):
            if before.get(key) != after.get(key):
                table[flag][2] += 1
                lines.append(f"  {flag} result changed:")
                a = (before.get(key) or "(unchanged input)\n").splitlines(keepends=True)
                b = (after.get(key) or "(unchanged input)\n").splitlines(keepends=True)
                lines.extend("    " + l.rstrip("\n") for l in difflib.unified_diff(a, b, "snapshot", "now", n=1))
        if lines:
            differences += 1
            print(label)
            print("\n".join(lines))
    if table:
        print()
        print(f"{'code':<16}{'gone':>8}{'new':>8}{'changed':>9}")
        for code in sorted(table):
            gone, new_count, changed = table[code]
            print(f"{code:<16}{gone:>8}{new_count:>8}{changed:>9}")
    print(f"\n{differences} item(s) differ out of {len(set(old) | set(new))}")
    return differences


def summary(snap: Dict[str, dict]) -> None:
    counts: Dict[Tuple[str, str], int] = collections.Counter()
    files: Dict[Tuple[str, str], set] = collections.defaultdict(set)
    crashes = 0
    for label, entry in snap.items():
        crashes += "crash" in entry
        for f in entry.get("findings", []):
            key = (f["code"], f["severity"])
            counts[key] += 1
            files[key].add(label)
    print(f"{'code':<10}{'severity':<10}{'findings':>9}{'files':>7}")
    for key in sorted(counts):
        print(f"{key[0]:<10}{key[1]:<10}{counts[key]:>9}{len(files[key]):>7}")
    fixed = sum(1 for e in snap.values() if e.get("fixed"))
    unsafe = sum(1 for e in snap.values() if e.get("unsafe_fixed"))
    print(f"\n{len(snap)} files, {sum(counts.values())} findings, {fixed} changed by --fix, "
          f"{unsafe} by --unsafe-fixes, {crashes} crashed")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", default=[], metavar="DIR", help="a tree of job scripts")
    parser.add_argument("--project", action="store_true", help="the examples, fixtures, rule examples and bench corpus")
    parser.add_argument("--save", metavar="FILE", help="write the snapshot to FILE")
    parser.add_argument("--diff", metavar="FILE", help="compare with the snapshot in FILE; exit 1 when anything differs")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if not args.corpus and not args.project:
        parser.error("give --corpus DIR and/or --project")
    for directory in args.corpus:
        if not os.path.isdir(os.path.expanduser(directory)):
            parser.error(f"no such directory: {directory}")
    items: List[Item] = []
    for directory in args.corpus:
        items.extend(corpus_items(directory))
    if args.project:
        items.extend(project_items())
    snap = snapshot(items, args.jobs)
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump({"format": 1, "items": snap}, handle, indent=0, sort_keys=True)
        print(f"saved {len(snap)} items to {args.save}", file=sys.stderr)
    if args.diff:
        with open(args.diff, encoding="utf-8") as handle:
            old = json.load(handle)["items"]
        return 1 if compare(old, snap) else 0
    if not args.save:
        summary(snap)
    return 0


if __name__ == "__main__":
    sys.exit(main())

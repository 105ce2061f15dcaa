"""The property tests' checks (``tests/mutation.py``) for as long as asked, for local use.

    python bench/fuzz.py [--minutes 5] [--seed 0] [--corpus DIR] [--out DIR] [--safe-only]

Each case is a script of the shared generator (``tests/scriptgen.py``: random seed and size 1-3),
or a file below ``--corpus DIR`` when given, with 0-5 random mutations (lines deleted, duplicated,
swapped, cut; the file truncated; a character changed; a shell fragment inserted). Every case is
linted and fixed (``--unsafe-fixes`` unless ``--safe-only``) and checked for: no exception, spans
and edits inside the file, edits changing nothing outside them, idempotent fixes, ``bash -n``
still passing. A case that breaks one is written to ``--out`` (default: a temporary directory,
never the project) with the properties it broke; the run goes on and exits 1 at the end.

The same ``--seed`` gives the same cases in the same order; ``--minutes`` only decides how many.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import mutation  # noqa: E402
import scriptgen  # noqa: E402


def corpus_files(directory: str) -> list:
    out = []
    for folder, dirs, files in os.walk(os.path.abspath(os.path.expanduser(directory))):
        dirs.sort()
        out += [os.path.join(folder, name) for name in sorted(files)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", metavar="DIR", help="Mutate the files below DIR instead of generated scripts.")
    parser.add_argument("--out", metavar="DIR", help="Where failing cases are written (default: a new temporary directory).")
    parser.add_argument("--safe-only", action="store_true", help="Apply safe fixes only.")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    files = corpus_files(args.corpus) if args.corpus else []
    if args.corpus and not files:
        print(f"fuzz: no files below {args.corpus}", file=sys.stderr)
        return 2
    out = args.out or tempfile.mkdtemp(prefix="sbatchlint-fuzz-")
    deadline = time.monotonic() + args.minutes * 60
    cases = failures = 0
    while time.monotonic() < deadline:
        if files:
            origin = rng.choice(files)
            with open(origin, "rb") as handle:
                data = handle.read()
        else:
            seed, size = rng.randrange(100000), rng.choice((1, 1, 2, 3))
            origin = f"scriptgen.generate({seed}, size={size})"
            data = scriptgen.generate(seed, size=size).text.encode("utf-8")
        ops = mutation.random_ops(rng, rng.randrange(0, 6))
        mutated = mutation.apply(data, ops)
        found = mutation.problems(mutated, unsafe=not args.safe_only)
        cases += 1
        if found:
            failures += 1
            os.makedirs(out, exist_ok=True)
            name = os.path.join(out, f"case-{cases:06d}.sbatch")
            with open(name, "wb") as handle:
                handle.write(mutated)
            with open(name + ".txt", "w", encoding="utf-8") as handle:
                handle.write(f"from: {origin}\nmutations: {ops}\n" + "\n".join(found) + "\n")
            print(f"case {cases}: {found[0]}  ({name})", flush=True)
        if cases % 100 == 0:
            print(f"{cases} cases, {failures} failing", flush=True)
    print(f"fuzz: {cases} cases in {args.minutes:g} min (seed {args.seed}), {failures} failing"
          + (f"; written to {out}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

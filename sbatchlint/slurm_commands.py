"""Running one of Slurm's client commands (sacct, scontrol, sinfo, sbatch --help) for the
commands that ask the cluster (``profile``, ``diagnose --job``); the linter itself never does."""
from __future__ import annotations

import subprocess

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Sequence, Tuple

TIMEOUT = 60  # seconds a client command may take before its question counts as unanswered


def run(argv: Sequence[str]) -> Tuple[int, str, str]:
    """``(exit status, stdout, stderr)``; status 124 when the command gave no answer in time.
    Raises OSError when the program is missing."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "", f"no answer after {TIMEOUT} s"
    return done.returncode, done.stdout, done.stderr

"""Which Slurm release the script is checked against.

The ``slurm-version`` setting names it (``"22.05"``), or ``"auto"`` asks the ``sbatch`` on this
machine (``sbatch --version``; where there is none, the default applies). Without the setting
the default is :data:`~sbatchlint.options.DEFAULT_SLURM_VERSION`.
"""
from __future__ import annotations


from .. import options

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional, Tuple

_DETECTED: dict = {}


def installed_version() -> Optional[Tuple[int, int]]:
    """The release of the ``sbatch`` on this machine, or None (asked once per process)."""
    if "version" not in _DETECTED:
        import shutil
        import subprocess

        found = None
        sbatch = shutil.which("sbatch")
        if sbatch is not None:
            try:
                done = subprocess.run([sbatch, "--version"], capture_output=True, timeout=10, check=False)
                found = options.parse_slurm_version(done.stdout.decode("utf-8", "replace"))
            except (OSError, subprocess.SubprocessError):
                found = None
        _DETECTED["version"] = found
    return _DETECTED["version"]


def target_version(settings) -> Tuple[int, int]:
    """The release the rules assume for these settings."""
    wanted = (settings or {}).get("slurm_version")
    if wanted is None:
        return options.DEFAULT_SLURM_VERSION
    if str(wanted).strip().lower() == "auto":
        return installed_version() or options.DEFAULT_SLURM_VERSION
    return options.parse_slurm_version(wanted) or options.DEFAULT_SLURM_VERSION

"""What bash itself says of a script (``bash -n``), for the regions the parser could not read."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional, Tuple



def bash_syntax_error(data: bytes) -> Tuple[Optional[bool], Optional[str]]:
    """What ``bash -n`` says of the script: (True, None) when it accepts it, (False, its first
    complaint) when it does not, (None, None) when bash is not installed or cannot be run."""
    import shutil  # only for a script the parser could not read: not on every run's import path
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        return None, None
    try:
        # bash reads a script it cannot seek one byte per read(2): from a pipe, a 50 KB script
        # costs it ten times the CPU it needs from a file. An unnamed file in memory (or an
        # unlinked temporary file) is seekable, so bash reads it in blocks.
        with _unnamed_file(data) as script:
            done = subprocess.run([bash, "-n", "/dev/stdin"], stdin=script, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if done.returncode == 0:
        return True, None
    message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return False, message[0].replace("/dev/stdin: ", "") if message else "syntax error"



def _unnamed_file(data: bytes):
    """A file object holding ``data``, positioned at its start, with no name on disk."""
    import os

    try:
        script = os.fdopen(os.memfd_create("sbatchlint-script", os.MFD_CLOEXEC), "w+b")
    except (AttributeError, OSError):  # not Linux, or memfd_create refused
        import tempfile

        script = tempfile.TemporaryFile()
    try:
        script.write(data)
        script.flush()
        script.seek(0)
    except BaseException:
        script.close()
        raise
    return script


def verdict(script) -> Tuple[Optional[bool], Optional[str]]:
    """``bash_syntax_error`` of the script, asked once (only for a script with unread regions)."""
    return script.bash_verdict

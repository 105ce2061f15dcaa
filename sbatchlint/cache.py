"""The results cache: a file whose result is known is not linted again.

As ruff does, a result is stored under a key made of everything it depends on:

- the file's bytes and the path it was linted under;
- the resolved options (selection, severities, every setting, a cluster profile, and the Slurm
  release ``slurm-version = "auto"`` found on this machine);
- sbatchlint's version and the size and time of every module of the installed package (a
  changed checkout is a new version);
- every other file the run looked at for it: each existence test (``probe``) is stored with
  its answer and asked again on a hit, so a launched ``train.py`` that appears or disappears
  makes the entry stale; a file read for it (a sourced ``env.sh``) is stored with its hash.

An entry is one file below ``<cache dir>/<version>/`` in the interpreter's ``marshal`` format
(the Python release is part of the key), written to a temporary name and renamed, so a reader
never sees half of it; one it cannot read is a miss. Neither ``json`` nor ``hashlib`` is imported:
on a cold run over one script they cost more than the lookup (``marshal`` and the interpreter's
own SHA-256 module are built in). What is not cached: a run that fixes or prints a
diff, standard input, a file with an error, a file in which a secret was found (the cache holds
no secret), and ShellCheck's findings (they depend on another program).

The directory is ``--cache-dir``, else ``SBATCHLINT_CACHE_DIR``, else the configuration's
``cache-dir``, else ``.sbatchlint_cache`` next to the configuration file that applies (the
current directory when there is none). ``--no-cache`` (or ``SBATCHLINT_NO_CACHE=1``) bypasses it.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

FORMAT = 3  # the entry layout; a change makes every older entry a miss
DIRECTORY_NAME = ".sbatchlint_cache"

# -- what the run looked at besides the file --------------------------------------------------

_recording: Optional[List[Tuple[str, str, Any]]] = None


def _answer(kind: str, path: str) -> Any:
    if kind == "exists":
        return os.path.exists(path)
    if kind == "isfile":
        return os.path.isfile(path)
    if kind == "isdir":
        return os.path.isdir(path)
    if kind == "realpath":
        return os.path.realpath(path)
    if kind == "read":
        return _file_hash(path)
    raise ValueError(kind)


def probe(kind: str, path: str) -> Any:
    """``os.path.exists`` / ``isfile`` / ``isdir`` / ``realpath`` of ``path``, or the hash of its
    bytes (``read``), by ``kind``; remembered for the cache entry of the file being linted."""
    answer = _answer(kind, path)
    if _recording is not None:
        _recording.append((kind, path, answer))
    return answer


_SHA256: list = []


def sha256(data: bytes = b""):
    """``hashlib.sha256(data)``, from the interpreter's built-in module when it has one:
    importing ``hashlib`` loads the OpenSSL bindings, about 3 ms of a cold run."""
    if not _SHA256:
        try:
            from _sha256 import sha256 as made  # CPython up to 3.11
        except ImportError:
            try:
                from _sha2 import sha256 as made  # CPython 3.12 and later
            except ImportError:  # pragma: no cover - another interpreter
                from hashlib import sha256 as made
        _SHA256.append(made)
    return _SHA256[0](data)


def _file_hash(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return sha256(handle.read()).hexdigest()
    except OSError:
        return None


# -- keys ----------------------------------------------------------------------------------------

_PACKAGE: Dict[str, str] = {}


def package_fingerprint() -> str:
    """sbatchlint's version and the size and modification time of each of its modules."""
    if "key" not in _PACKAGE:
        from . import __version__

        root = os.path.dirname(os.path.abspath(__file__))
        rows: List[str] = [__version__]
        _module_rows(root, "", rows)
        _PACKAGE["key"] = sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()
    return _PACKAGE["key"]


def _module_rows(folder: str, prefix: str, rows: List[str]) -> None:
    """``path:size:mtime`` of each ``.py``/``.json`` file below ``folder`` (``__pycache__`` left
    out), in a fixed order, paths relative to the package."""
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.is_dir():
            if entry.name != "__pycache__" and not entry.is_symlink():
                _module_rows(entry.path, prefix + entry.name + "/", rows)
        elif entry.name.endswith((".py", ".json")):
            info = entry.stat()
            rows.append(f"{prefix}{entry.name}:{info.st_size}:{info.st_mtime_ns}")


def _canonical(value: Any) -> Any:
    """``value`` as plain data in a fixed order (dicts sorted, objects by their repr), so that its
    ``repr`` is the same text for the same settings."""
    if isinstance(value, dict):
        return [[str(k), _canonical(v)] for k, v in sorted(value.items(), key=lambda item: str(item[0]))]
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def options_fingerprint(options) -> Any:
    settings = dict(options.settings)
    if str(settings.get("slurm_version", "")).strip().lower() == "auto":
        from .model.slurm import installed_version

        settings["slurm_version"] = ["auto", installed_version()]
    return _canonical({
        "select": list(options.selection.select),
        "ignore": list(options.selection.ignore),
        "severity": {code: level.value for code, level in options.severity.items()},
        "settings": settings,
    })


def key(data: bytes, path: str, display: str, options) -> str:
    import sys

    digest = sha256()
    digest.update(repr([FORMAT, sys.implementation.cache_tag, package_fingerprint(), os.path.abspath(path),
                        display, options_fingerprint(options)]).encode("utf-8", "surrogateescape"))
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


# -- entries -----------------------------------------------------------------------------------


def cacheable(job) -> bool:
    return bool(job.cache and job.path != "-" and not job.apply and not job.diff and not job.error
                and not job.add_noqa
                and job.options is not None and not job.options.settings.get("shellcheck"))


def _entry_path(directory: str, entry_key: str) -> str:
    from . import __version__

    return os.path.join(directory, __version__, entry_key[:2], entry_key + ".entry")


def load(directory: str, entry_key: str, display: str):
    """The cached ``FileResult`` fields (diagnostics, launched, skipped) for ``entry_key``, or
    None: no entry, an unreadable one, or one whose probes now answer otherwise."""
    import marshal

    try:
        with open(_entry_path(directory, entry_key), "rb") as handle:
            entry = marshal.load(handle)
        for kind, path, answer in entry["probes"]:
            if _answer(kind, path) != answer:
                return None
        return ([_diagnostic(item, display) for item in entry["diagnostics"]], list(entry["launched"]),
                bool(entry["skipped"]))
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def store(directory: str, entry_key: str, result, probes) -> None:
    """Write the entry for ``result`` (atomically); a cache that cannot be written is skipped."""
    import marshal

    from .files import create_temporary

    if result.error or result.secrets or result.fixed_data is not None or result.diff:
        return
    entry = {
        "diagnostics": [_diagnostic_data(d) for d in result.diagnostics],
        "launched": list(result.launched),
        "skipped": result.skipped,
        "probes": [list(p) for p in probes],
    }
    target = _entry_path(directory, entry_key)
    try:
        _prepare(directory)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, temporary = create_temporary(os.path.dirname(target), ".entry-", ".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                marshal.dump(entry, handle)
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError:
        return


def _prepare(directory: str) -> None:
    """The directory with a ``.gitignore`` of ``*`` and a ``CACHEDIR.TAG`` (backup tools skip it)."""
    marker = os.path.join(directory, ".gitignore")
    if os.path.exists(marker):
        return
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "CACHEDIR.TAG"), "w", encoding="utf-8") as handle:
        handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# sbatchlint's results cache\n")
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write("# written by sbatchlint\n*\n")


def _diagnostic_data(d) -> Dict[str, Any]:
    fix = None
    if d.fix is not None:
        fix = {
            "edits": [[e.span.start, e.span.end, e.text] for e in d.fix.edits],
            "applicability": d.fix.applicability.value,
            "description": d.fix.description,
        }
    return {
        "code": d.code, "name": d.name, "severity": d.severity.value, "span": [d.span.start, d.span.end],
        "message": d.message, "fix": fix, "label": d.label, "help": d.help, "notes": list(d.notes),
        "path": d.path,  # another file's for a finding in a file the script sources
    }


def _path(item: Dict[str, Any], display: str) -> str:
    return item.get("path", display)  # another file's for a finding in a file the script sources


def _diagnostic(item: Dict[str, Any], display: str):
    from .diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
    from .source import Span

    fix = None
    if item["fix"] is not None:
        data = item["fix"]
        fix = Fix(tuple(Edit(Span(s, e), text) for s, e, text in data["edits"]),
                  Applicability(data["applicability"]), data["description"])
    return Diagnostic(
        code=item["code"], name=item["name"], severity=Severity(item["severity"]), span=Span(*item["span"]),
        message=item["message"], fix=fix, path=_path(item, display), label=item["label"], help=item["help"],
        notes=tuple(item["notes"]),
    )


class Recording:
    """``with Recording() as probes:`` collects the probes made while one file is linted."""

    def __enter__(self) -> List[Tuple[str, str, Any]]:
        global _recording
        self.previous = _recording
        _recording = []
        return _recording

    def __exit__(self, *exc: object) -> None:
        global _recording
        _recording = self.previous

"""``sbatchlint profile``: write the cluster's profile where the linter finds it.

Written to ``.sbatchlint-cluster.toml`` in the current directory by default. ``-o FILE`` names
another file: a ``pyproject.toml`` gets (or has replaced) its ``[tool.sbatchlint.cluster]``
tables, a ``.sbatchlint.toml`` its ``[cluster]`` tables, and the rest of the file is kept as it
was; any other name is written as a profile file of its own. ``--print`` writes nothing and
prints the profile.
"""
from __future__ import annotations

import os
import re
import sys

from .profile import FILE_NAME, HEADER, Profile, ProfileError, from_table, to_toml

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Optional, TextIO


class CommandError(Exception):
    """A one-line reason the command could not do its work."""


def prefix_for(path: str, existing: Optional[str]) -> str:
    name = os.path.basename(path)
    if name == "pyproject.toml":
        return "tool.sbatchlint.cluster"
    if name == ".sbatchlint.toml":
        return "tool.sbatchlint.cluster" if existing and "[tool.sbatchlint" in existing else "cluster"
    return ""


def merged(existing: str, table: str, prefix: str) -> str:
    """``existing`` without its ``prefix`` tables, then ``table``."""
    header = re.compile(r"^\s*\[\[?\s*" + re.escape(prefix) + r"\s*(\.|\]\]?\s*(#.*)?$)")
    other = re.compile(r"^\s*\[")
    kept = []
    skipping = False
    for line in existing.splitlines(keepends=True):
        if header.match(line):
            skipping = True
            continue
        if skipping and other.match(line):
            skipping = False
        if not skipping:
            kept.append(line)
    text = "".join(kept).rstrip("\n")
    return (text + "\n\n" if text else "") + table


def render(profile: Profile, path: Optional[str], existing: Optional[str]) -> str:
    prefix = prefix_for(path, existing) if path else ""
    table = to_toml(profile, prefix)
    if prefix:
        return merged(existing or "", table, prefix)
    return HEADER + table


def check(text: str, prefix: str, path: str) -> None:
    """The written text reads back as the same kind of configuration (never write a broken file)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CommandError(f"{path}: the file would not be valid TOML after the update ({err}); nothing written") from None
    table = document
    for part in prefix.split(".") if prefix else ():
        table = table.get(part, {})
    try:
        from_table(table, path)
    except ProfileError as err:  # pragma: no cover - to_toml writes what from_table reads
        raise CommandError(f"internal error: the profile does not read back: {err}") from None


def run(output: Optional[str], print_only: bool, out: TextIO, err: TextIO, collect=None) -> int:
    from . import collect as collect_module

    gather = collect or collect_module.collect
    try:
        profile = gather()
    except collect_module.NoSlurm as error:
        raise CommandError(f"{error}: run `sbatchlint profile` on a login node of the cluster") from None
    if print_only:
        out.write(render(profile, output, _read(output) if output else None))
        _summary(profile, None, err)
        return 0
    path = output or FILE_NAME
    existing = _read(path)
    text = render(profile, path, existing)
    check(text, prefix_for(path, existing), path)
    from ..files import write_atomic

    try:
        if existing is not None:
            write_atomic(path, text.encode("utf-8"))  # keeps the file's permissions
        else:
            with open(path, "x", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
    except OSError as error:
        raise CommandError(f"{path}: cannot write: {error.strerror or error}") from None
    _summary(profile, path, err)
    return 0


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"{path}: cannot read: {getattr(error, 'strerror', None) or error}") from None


def _summary(profile: Profile, path: Optional[str], err: TextIO) -> None:
    parts = []
    if profile.cluster:
        parts.append(f"cluster {profile.cluster}")
    if profile.slurm_version:
        parts.append(f"Slurm {profile.slurm_version}")
    if profile.partitions is not None:
        names = ", ".join(f.name + ("*" if f.default else "") for f in profile.partitions)
        parts.append(f"{len(profile.partitions)} partition{'s' * (len(profile.partitions) != 1)} ({names})")
    if profile.plugin_options is not None:
        parts.append(f"{len(profile.plugin_options)} plugin option{'s' * (len(profile.plugin_options) != 1)}"
                     + (", pyxis" if profile.pyxis else ", no pyxis"))
    if profile.associations is not None:
        parts.append(f"{len(profile.associations)} association{'s' * (len(profile.associations) != 1)}")
    where = f"wrote {path}: " if path else ""
    err.write(f"sbatchlint: {where}{'; '.join(parts) or 'nothing could be read'}\n")
    for line in profile.not_read:
        err.write(f"sbatchlint: could not read {line}\n")

"""A cluster profile: the facts about one cluster that rules check a job against.

``sbatchlint profile`` writes it (see :mod:`sbatchlint.cluster.collect`); the configuration
layer reads it from a ``.sbatchlint-cluster.toml`` file or a ``cluster`` table of the
configuration (``[tool.sbatchlint.cluster]`` in ``pyproject.toml``) and hands it to the rules as
``settings["cluster"]``. A fact the profile could not read is None: the rules that need it stay
silent rather than guess.

    taken = "2026-03-02T09:14:00Z"
    cluster = "mycluster"
    slurm-version = "23.11.4"
    pyxis = true
    plugin-options = ["container-image=", "container-mounts=", "container-mount-home"]
    not-read = ["associations: accounting is off (sacctmgr: …)"]

    [partitions.batch]
    default = true
    max-time = "2-00:00:00"
    default-time = "01:00:00"
    nodes = 64
    node-cpus = 112
    node-memory = 2000000       # MB
    node-gpus = 8
    gres = ["gpu:h100:8"]

    [[associations]]
    account = "proj42"
    partition = ""               # "": every partition

This module stays light (no subprocess, no TOML parser): the linter imports it on every run that
has a profile.
"""
from __future__ import annotations

import re

from ..lazyclass import dataclass
from ..lazyre import lazy
from . import parse
from ..config import PROFILE_NAME

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple

FILE_NAME = PROFILE_NAME  # where `sbatchlint profile` writes a profile of its own
_VERSION_TEXT = lazy(r"^\d+\.\d+(\.\d+)?")


class ProfileError(ValueError):
    """A profile table that cannot be used; the message names the key."""


@dataclass(frozen=True)
class PartitionFacts:
    name: str
    default: bool = False
    max_time: Optional[str] = None  # as Slurm prints it ("UNLIMITED", "2-00:00:00"); None: unknown
    default_time: Optional[str] = None
    nodes: Optional[int] = None
    cpus_per_node: Optional[int] = None  # the most any of its nodes has
    memory_per_node: Optional[int] = None  # MB, the most any of its nodes has
    gpus_per_node: Optional[int] = None  # the most any of its nodes has
    gres: Tuple[str, ...] = ()

    @property
    def max_minutes(self) -> Optional[int]:
        """MaxTime in minutes; None when unlimited or unknown."""
        return parse.minutes(self.max_time)


@dataclass(frozen=True)
class Profile:
    taken: Optional[str] = None
    cluster: Optional[str] = None
    slurm_version: Optional[str] = None
    partitions: Optional[Tuple[PartitionFacts, ...]] = None  # None: not read
    plugin_options: Optional[Tuple[str, ...]] = None  # None: not read
    pyxis: Optional[bool] = None
    associations: Optional[Tuple[Tuple[str, str], ...]] = None  # (account, partition ""=all)
    not_read: Tuple[str, ...] = ()
    path: Optional[str] = None  # the file it was read from

    # -- questions rules ask ---------------------------------------------------------------------
    def partition(self, name: str) -> Optional[PartitionFacts]:
        for facts in self.partitions or ():
            if facts.name == name:
                return facts
        return None

    @property
    def default_partition(self) -> Optional[PartitionFacts]:
        for facts in self.partitions or ():
            if facts.default:
                return facts
        return None

    @property
    def plugin_option_names(self) -> Tuple[str, ...]:
        """The plugin options without the ``=`` that marks one taking a value."""
        return tuple(option.rstrip("=") for option in self.plugin_options or ())

    @property
    def partition_names(self) -> List[str]:
        return [facts.name for facts in self.partitions or ()]

    def provenance(self) -> str:
        """How a finding names the profile: "the cluster profile of mycluster taken 2026-03-02"."""
        who = f" of {self.cluster}" if self.cluster else ""
        when = f" taken {_short_time(self.taken)}" if self.taken else ""
        return f"the cluster profile{who}{when}"


def in_settings(settings) -> Optional[Profile]:
    """The cluster profile the settings carry (``settings["cluster"]``), or None."""
    profile = (settings or {}).get("cluster")
    return profile if isinstance(profile, Profile) else None


def feed(settings: dict) -> dict:
    """The settings with what their cluster profile says filled in where the configuration and
    the command line say nothing: ``slurm_version`` (the cluster's release) and ``extra_options``
    (the cluster's plugin options, added to those declared)."""
    profile = in_settings(settings)
    if profile is None:
        return settings
    out = dict(settings)
    if out.get("slurm_version") is None and profile.slurm_version:
        out["slurm_version"] = profile.slurm_version
    if profile.plugin_options:
        declared = list(out.get("extra_options") or ())
        names = {str(item).strip().lstrip("-").rstrip("=") for item in declared}
        out["extra_options"] = declared + [o for o in profile.plugin_options if o.rstrip("=") not in names]
    return out


def _short_time(text: str) -> str:
    match = re.match(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})", text)
    return f"{match.group(1)} {match.group(2)} UTC" if match and text.endswith("Z") else text


# -- reading a table -------------------------------------------------------------------------------
_TOP_KEYS = ("taken", "cluster", "slurm-version", "pyxis", "plugin-options", "not-read", "partitions", "associations")
_PARTITION_KEYS = ("default", "max-time", "default-time", "nodes", "node-cpus", "node-memory",
                   "node-gpus", "gres")


def from_table(table: Any, where: str, path: Optional[str] = None) -> Profile:
    """A :class:`Profile` from a parsed TOML table; ``where`` prefixes error messages."""
    if not isinstance(table, dict):
        raise ProfileError(f"{where.rstrip(': ')}: expected a table")
    for key in table:
        if key not in _TOP_KEYS:
            raise ProfileError(f"{_at(where)}{key}: unknown key (known keys: {', '.join(sorted(_TOP_KEYS))})")
    taken = table.get("taken")
    if taken is not None and not isinstance(taken, str):
        taken = _time_text(taken)
    partitions = None
    if "partitions" in table:
        raw = table["partitions"]
        if not isinstance(raw, dict):
            raise ProfileError(f"{_at(where)}partitions: expected a table of partition tables")
        partitions = tuple(_partition(name, value, f"{_at(where)}partitions.{name}") for name, value in raw.items())
    associations = None
    if "associations" in table:
        raw = table["associations"]
        if not isinstance(raw, list) or not all(isinstance(a, dict) for a in raw):
            raise ProfileError(f"{_at(where)}associations: expected an array of {{account, partition}} tables")
        pairs = []
        for index, entry in enumerate(raw):
            account = _str(entry.get("account"), f"{_at(where)}associations[{index}].account")
            if account is None:
                raise ProfileError(f"{_at(where)}associations[{index}]: needs an account")
            unknown = set(entry) - {"account", "partition"}
            if unknown:
                raise ProfileError(f"{_at(where)}associations[{index}].{sorted(unknown)[0]}: unknown key")
            pairs.append((account, _str(entry.get("partition"), f"{_at(where)}associations[{index}].partition") or ""))
        associations = tuple(pairs)
    plugin = table.get("plugin-options")
    return Profile(
        taken=taken,
        cluster=_str(table.get("cluster"), f"{_at(where)}cluster"),
        slurm_version=_version(table.get("slurm-version"), f"{_at(where)}slurm-version"),
        partitions=partitions,
        plugin_options=tuple(o.lstrip("-") for o in _strings(plugin, f"{_at(where)}plugin-options")) if plugin is not None else None,
        pyxis=_bool(table.get("pyxis"), f"{_at(where)}pyxis"),
        associations=associations,
        not_read=tuple(_strings(table.get("not-read", []), f"{_at(where)}not-read")),
        path=path,
    )


def _partition(name: str, value: Any, where: str) -> PartitionFacts:
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table")
    for key in value:
        if key not in _PARTITION_KEYS:
            raise ProfileError(f"{_at(where)}{key}: unknown key (known keys: {', '.join(_PARTITION_KEYS)})")
    for key in ("max-time", "default-time"):
        text = value.get(key)
        if text is not None:
            if not isinstance(text, str):
                raise ProfileError(f"{_at(where)}{key}: expected a Slurm time string such as \"2-00:00:00\"")
            if parse.minutes(text) is None and text.strip().upper() not in ("UNLIMITED", "INFINITE", "NONE"):
                raise ProfileError(f"{_at(where)}{key}: not a Slurm time: {text!r}")
    return PartitionFacts(
        name=name,
        default=bool(_bool(value.get("default"), f"{_at(where)}default")),
        max_time=value.get("max-time"),
        default_time=value.get("default-time"),
        nodes=_count(value.get("nodes"), f"{_at(where)}nodes"),
        cpus_per_node=_count(value.get("node-cpus"), f"{_at(where)}node-cpus"),
        memory_per_node=_count(value.get("node-memory"), f"{_at(where)}node-memory"),
        gpus_per_node=_count(value.get("node-gpus"), f"{_at(where)}node-gpus"),
        gres=tuple(_strings(value.get("gres", []), f"{_at(where)}gres")),
    )


def _at(where: str) -> str:
    """``where`` followed by a key: "cluster." in a table, "" after "file: " (a file of its own)."""
    return where if where.endswith(": ") else where + "."


def _time_text(value: Any) -> str:
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text.replace("+00:00", "Z")


def _str(value: Any, where: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise ProfileError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _version(value: Any, where: str) -> Optional[str]:
    text = _str(value, where)
    if text is not None and not _VERSION_TEXT.match(text):
        raise ProfileError(f"{where}: expected a Slurm version such as \"23.11.4\", got {text!r}")
    return text


def _bool(value: Any, where: str) -> Optional[bool]:
    if value is not None and not isinstance(value, bool):
        raise ProfileError(f"{where}: expected true or false")
    return value


def _count(value: Any, where: str) -> Optional[int]:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ProfileError(f"{where}: expected a whole number, got {value!r}")
    return value


def _strings(value: Any, where: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: expected a list of strings")
    return list(value)


# -- writing ---------------------------------------------------------------------------------------
HEADER = (
    "# The cluster as `sbatchlint profile` read it: sbatchlint checks jobs against these facts.\n"
    "# Run `sbatchlint profile` again on a login node when the cluster changes.\n"
)


def to_toml(profile: Profile, prefix: str = "") -> str:
    """The profile as TOML; ``prefix`` is the table it lives in ("" for a file of its own,
    "cluster" in ``.sbatchlint.toml``, "tool.sbatchlint.cluster" in ``pyproject.toml``)."""
    lines: List[str] = []
    if prefix:
        lines.append(f"[{prefix}]")
    top: List[Tuple[str, Any]] = [
        ("taken", profile.taken),
        ("cluster", profile.cluster),
        ("slurm-version", profile.slurm_version),
        ("pyxis", profile.pyxis),
        ("plugin-options", list(profile.plugin_options) if profile.plugin_options is not None else None),
        ("not-read", list(profile.not_read)),
    ]
    for key, value in top:
        if value is not None:
            lines.append(f"{key} = {_value(value)}")
    for facts in profile.partitions or ():
        lines.append("")
        lines.append(f"[{_join(prefix, 'partitions', _key(facts.name))}]")
        rows: List[Tuple[str, Any]] = [
            ("default", facts.default),
            ("max-time", facts.max_time),
            ("default-time", facts.default_time),
            ("nodes", facts.nodes),
            ("node-cpus", facts.cpus_per_node),
            ("node-memory", facts.memory_per_node),
            ("node-gpus", facts.gpus_per_node),
            ("gres", list(facts.gres)),
        ]
        for key, value in rows:
            if value is not None:
                lines.append(f"{key} = {_value(value)}" + ("  # MB" if key == "node-memory" else ""))
    for account, partition in profile.associations or ():
        lines.append("")
        lines.append(f"[[{_join(prefix, 'associations')}]]")
        lines.append(f"account = {_value(account)}")
        lines.append(f"partition = {_value(partition)}")
    return "\n".join(lines) + "\n"


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def _key(name: str) -> str:
    return name if re.match(r"^[A-Za-z0-9_-]+$", name) else _value(name)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        if len(value) > 3:  # one item a line: a diff of two profiles shows what changed
            return "[\n" + "".join(f"    {_value(v)},\n" for v in value) + "]"
        return "[" + ", ".join(_value(v) for v in value) + "]"
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group(0)):04x}", escaped)
    return f'"{escaped}"'

"""Readers for what Slurm's client commands print, as pure functions of the text.

Every function takes the command's standard output as a string and returns plain data; none
runs a program. The shapes follow Slurm's documented output, which has kept the same keys
since long before 22.05:

* ``sbatch --version``: ``slurm 23.11.4`` (Debian prints ``slurm-wlm 22.05.8``);
* ``scontrol show partition`` / ``scontrol show node``: ``Key=Value`` pairs, one record per
  line with ``--oneliner`` or several indented lines per record separated by a blank line
  without it; a value may hold blanks (``OS=Linux 6.1.0 #1 SMP``, ``Reason=down [root@…]``);
* ``sinfo -h -N -o '%P|%N|%c|%m|%G|%l|%L'`` (the fallback when scontrol cannot be used): one
  line per node and partition, the default partition marked with ``*``;
* the "Options provided by plugins:" part of ``sbatch --help``/``srun --help``;
* ``sacctmgr -nP show assoc where user=… format=Cluster,Account,User,Partition``: one
  association a line, fields separated by ``|`` (the default format starts with the same four
  fields, so its output reads the same).
"""
from __future__ import annotations

import re

from ..lazyclass import dataclass, field
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

_VERSION = lazy(r"(\d+)\.(\d+)(?:\.(\d+))?")


def slurm_version(text: str) -> Optional[str]:
    """``slurm 23.11.4`` → ``"23.11.4"``; None when the text names no version."""
    for line in text.splitlines():
        words = line.strip().split()
        if words and words[0].lower().startswith("slurm"):
            for word in words[1:]:
                match = _VERSION.match(word)
                if match:
                    return match.group(0)
    return None


# -- scontrol ------------------------------------------------------------------------------------
def records(text: str, first_key: str) -> List[Dict[str, str]]:
    """The ``Key=Value`` records of ``scontrol show …`` output, each starting at ``first_key``.

    Works on ``--oneliner`` output and on the default multi-line output. A word without ``=``
    belongs to the value before it (values may hold blanks)."""
    out: List[Dict[str, str]] = []
    current: Optional[Dict[str, str]] = None
    last: Optional[str] = None
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep and key and re.match(r"^[A-Za-z][A-Za-z0-9_/.:]*$", key):
            if key == first_key:
                current = {}
                out.append(current)
            if current is None:
                continue
            if key in current and key != last:
                # a repeated key inside a record (never seen in practice): keep the first
                last = None
                continue
            current[key] = value
            last = key
        elif current is not None and last is not None:
            current[last] += " " + word
    return out


_UNLIMITED = {"UNLIMITED", "INFINITE", "NONE", "N/A", ""}


def minutes(text: Optional[str]) -> Optional[int]:
    """A Slurm time (``MaxTime``, ``--time``) in minutes, rounded up; None for unlimited/none
    or a value that is not a time. Forms: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``,
    ``D-H:M:S``."""
    if text is None:
        return None
    value = text.strip()
    if value.upper() in _UNLIMITED:
        return None
    days = 0
    if "-" in value:
        day, _, value = value.partition("-")
        if not day.isdigit():
            return None
        days = int(day)
        parts = value.split(":")
        if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
            return None
        hours, mins, secs = (list(map(int, parts)) + [0, 0])[:3]
    else:
        parts = value.split(":")
        if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
            return None
        numbers = list(map(int, parts))
        if len(numbers) == 1:
            hours, mins, secs = 0, numbers[0], 0
        elif len(numbers) == 2:
            hours, mins, secs = 0, numbers[0], numbers[1]
        else:
            hours, mins, secs = numbers
    return days * 1440 + hours * 60 + mins + (1 if secs else 0)


def is_unlimited(text: Optional[str]) -> bool:
    return text is not None and text.strip().upper() in ("UNLIMITED", "INFINITE")


def memory_mb(text: Optional[str]) -> Optional[int]:
    """A memory size in MB: ``2000000`` (MB), ``512G``, ``1T``, ``4000000M``; None otherwise."""
    if text is None:
        return None
    match = re.match(r"^\s*(\d+)\s*([KMGT]?)B?\s*$", text.strip(), re.IGNORECASE)
    if not match:
        return None
    number = int(match.group(1))
    unit = match.group(2).upper() or "M"
    factor = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[unit]
    return int(-(-number * factor // 1))


def gres_items(text: Optional[str]) -> List[str]:
    """``gpu:a100:4(S:0-1),mps:400`` → ``["gpu:a100:4", "mps:400"]``; nothing for ``(null)``."""
    if not text or text.strip() in ("(null)", "N/A", "none"):
        return []
    items = []
    for item in re.split(r",(?![^(]*\))", text.strip()):
        item = re.sub(r"\(.*\)$", "", item.strip())
        if item:
            items.append(item)
    return items


def gres_gpu_count(items: List[str]) -> int:
    """GPUs a node has, from its GRES items (``gpu:8``, ``gpu:a100:4``, ``gpu:h100:4,gpu:a100:4``)."""
    total = 0
    for item in items:
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        last = parts[-1]
        if last.isdigit():
            total += int(last)
        elif len(parts) <= 2:
            total += 1
    return total


_HOSTLIST = lazy(r"([^,\[]+)(?:\[([^\]]+)\])?([^,\[]*)")


def expand_hostlist(text: Optional[str]) -> List[str]:
    """``n[1-3,7],gpu01`` → ``["n1", "n2", "n3", "n7", "gpu01"]`` (one bracket per name)."""
    if not text or text in ("(null)", ""):
        return []
    names: List[str] = []
    for part in re.split(r",(?![^\[]*\])", text):
        match = _HOSTLIST.fullmatch(part.strip())
        if not match:
            continue
        prefix, ranges, suffix = match.groups()
        if ranges is None:
            names.append(prefix + suffix)
            continue
        for piece in ranges.split(","):
            low, dash, high = piece.partition("-")
            if dash and low.isdigit() and high.isdigit():
                width = len(low)
                for number in range(int(low), int(high) + 1):
                    names.append(f"{prefix}{number:0{width}d}{suffix}")
            else:
                names.append(prefix + piece + suffix)
    return names


@dataclass
class Node:
    name: str
    cpus: Optional[int] = None
    memory: Optional[int] = None  # MB
    gres: List[str] = field(default_factory=list)
    partitions: Optional[List[str]] = None  # None: the node record does not say

    @property
    def gpus(self) -> int:
        return gres_gpu_count(self.gres)


@dataclass
class Partition:
    name: str
    default: bool = False
    max_time: Optional[str] = None  # as Slurm prints it: "UNLIMITED", "2-00:00:00"
    default_time: Optional[str] = None
    node_names: List[str] = field(default_factory=list)
    nodes: List[Node] = field(default_factory=list)
    state: Optional[str] = None


def _int(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def nodes_from_scontrol(text: str) -> List[Node]:
    nodes = []
    for record in records(text, "NodeName"):
        cpus = _int(record.get("CPUEfctv")) or _int(record.get("CPUTot"))
        partitions = record.get("Partitions")
        nodes.append(Node(
            name=record["NodeName"],
            cpus=cpus,
            memory=_int(record.get("RealMemory")),
            gres=gres_items(record.get("Gres")),
            partitions=[p for p in partitions.split(",") if p] if partitions is not None else None,
        ))
    return nodes


def partitions_from_scontrol(text: str) -> List[Partition]:
    out = []
    for record in records(text, "PartitionName"):
        out.append(Partition(
            name=record["PartitionName"],
            default=record.get("Default", "NO").upper() == "YES",
            max_time=record.get("MaxTime"),
            default_time=record.get("DefaultTime"),
            node_names=expand_hostlist(record.get("Nodes")),
            state=record.get("State"),
        ))
    return out


def attach_nodes(partitions: List[Partition], nodes: List[Node]) -> None:
    """Give each partition its node records: by the node's ``Partitions=`` field where the node
    has one, else by the partition's expanded ``Nodes=`` list."""
    by_name = {node.name: node for node in nodes}
    for partition in partitions:
        members = [n for n in nodes if n.partitions is not None and partition.name in n.partitions]
        if not members:
            members = [by_name[name] for name in partition.node_names if name in by_name]
        partition.nodes = members


# -- sinfo ---------------------------------------------------------------------------------------
SINFO_FORMAT = "%P|%N|%c|%m|%G|%l|%L"


def from_sinfo(text: str) -> List[Partition]:
    """Partitions and nodes from ``sinfo -h -N -o '%P|%N|%c|%m|%G|%l|%L'``."""
    partitions: Dict[str, Partition] = {}
    nodes: Dict[str, Node] = {}
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) < 7:
            continue
        name, node_name, cpus, memory, gres, limit, default_time = (f.strip() for f in fields[:7])
        default = name.endswith("*")
        name = name.rstrip("*")
        partition = partitions.get(name)
        if partition is None:
            partition = partitions[name] = Partition(
                name, default, _sinfo_time(limit), _sinfo_time(default_time)
            )
        node = nodes.get(node_name)
        if node is None:
            node = nodes[node_name] = Node(node_name, _int(cpus.rstrip("+")), memory_mb(memory.rstrip("+")),
                                            gres_items(gres))
        if node_name not in partition.node_names:
            partition.node_names.append(node_name)
            partition.nodes.append(node)
    return list(partitions.values())


def _sinfo_time(text: str) -> Optional[str]:
    if text.lower() in ("infinite", "unlimited"):
        return "UNLIMITED"
    if text.lower() in ("n/a", ""):
        return "NONE"
    return text


# -- plugin options ------------------------------------------------------------------------------
_PLUGIN_HEADING = "options provided by plugins"
# an option's own line is indented a little; its description's lines are indented far more
_OPTION = lazy(r"^[ \t]{1,12}--([A-Za-z0-9][A-Za-z0-9_-]*)(=)?")


def plugin_options(help_text: str) -> List[str]:
    """Long options listed under "Options provided by plugins:" in ``--help``, written as the
    ``extra-options`` setting writes them: ``"container-image="`` for one that takes a value,
    ``"container-mount-home"`` for a flag."""
    names: List[str] = []
    inside = False
    for line in help_text.splitlines():
        if not inside:
            inside = line.strip().lower().rstrip(":") == _PLUGIN_HEADING
            continue
        if line.strip() and not line[:1].isspace():
            break  # the next section's heading
        match = _OPTION.match(line)
        if match and match.group(1) not in [n.rstrip("=") for n in names]:
            names.append(match.group(1) + (match.group(2) or ""))
    return names


# -- associations --------------------------------------------------------------------------------
def associations(text: str, cluster: Optional[str] = None) -> List[Tuple[str, str]]:
    """(account, partition) pairs from ``sacctmgr -nP show assoc …``; partition "" means every
    partition. Rows of other clusters are left out when ``cluster`` is given."""
    out: List[Tuple[str, str]] = []
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) < 4:
            continue
        row_cluster, account, user, partition = (f.strip() for f in fields[:4])
        if not account or not user:
            continue  # an account's own association, not one of the user's
        if cluster and row_cluster and row_cluster != cluster:
            continue
        pair = (account, partition)
        if pair not in out:
            out.append(pair)
    return out


def config_value(text: str, key: str) -> Optional[str]:
    """One ``Key = Value`` line of ``scontrol show config``."""
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            return value.strip()
    return None


"""``sbatchlint profile``: ask the cluster's own client commands and build a :class:`Profile`.

Only this command runs Slurm's programs; the linter never does. What a command could not
answer is recorded in ``not-read`` (one line, the user's name replaced by ``$USER``) and the
fact stays unknown, so the rules that need it stay silent.
"""
from __future__ import annotations

import getpass
import os
from datetime import datetime, timezone

from . import parse
from .profile import PartitionFacts, Profile
from ..slurm_commands import run

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Tuple

# argv -> (exit status, stdout, stderr); raises OSError when the program is missing
if TYPE_CHECKING:  # a type for annotations only
    Runner = Callable[[Sequence[str]], Tuple[int, str, str]]



class NoSlurm(Exception):
    """None of Slurm's client commands could be run here."""


class _Collector:
    def __init__(self, runner: Runner, user: Optional[str]) -> None:
        self.runner = runner
        self.user = user
        self.not_read: List[str] = []
        self.ran_any = False

    def ask(self, what: str, argv: Sequence[str]) -> Optional[str]:
        """The command's output, or None (and a line in not-read) when it failed."""
        try:
            status, out, err = self.runner(argv)
        except OSError as error:
            reason = f"{argv[0]} not found" if isinstance(error, FileNotFoundError) else f"{argv[0]}: {error.strerror or error}"
            self.not_read.append(f"{what}: {reason}")
            return None
        self.ran_any = True
        if status != 0:
            reason = self._first_line(err or out) or f"exit status {status}"
            self.not_read.append(f"{what}: {argv[0]} failed: {reason}")
            return None
        return out

    def _first_line(self, text: str) -> str:
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        line = lines[0] if lines else ""
        if self.user:
            line = line.replace(self.user, "$USER")
        from ..redaction import redact  # an error message could quote a credential: never keep one

        return redact(line[:200])


def collect(runner: Runner = run, user: Optional[str] = None, now: Optional[datetime] = None) -> Profile:
    """Read the cluster; raises :class:`NoSlurm` when no Slurm command could be run at all."""
    if user is None:
        try:
            user = os.environ.get("USER") or getpass.getuser()
        except (KeyError, OSError):
            user = None
    c = _Collector(runner, user)

    version = None
    out = c.ask("slurm-version", ["sbatch", "--version"])
    if out is not None:
        version = parse.slurm_version(out)
        if version is None:
            c.not_read.append("slurm-version: `sbatch --version` printed no version")

    partitions = _partitions(c)

    plugin_options: Optional[List[str]] = None
    for command in ("sbatch", "srun"):
        out = c.ask("plugin-options", [command, "--help"])
        if out is not None:
            plugin_options = plugin_options or []
            for name in parse.plugin_options(out):
                if name.rstrip("=") not in [known.rstrip("=") for known in plugin_options]:
                    plugin_options.append(name)

    cluster = None
    out = c.ask("cluster", ["scontrol", "show", "config"])
    if out is not None:
        cluster = parse.config_value(out, "ClusterName")

    associations = None
    if user:
        out = c.ask("associations", ["sacctmgr", "-nP", "show", "assoc", "where", f"user={user}",
                                     "format=Cluster,Account,User,Partition"])
        if out is not None:
            associations = tuple(parse.associations(out, cluster))
    else:
        c.not_read.append("associations: the user name is unknown")

    if not c.ran_any:
        raise NoSlurm("no Slurm client command could be run (sbatch, scontrol, sinfo, sacctmgr)")
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return Profile(
        taken=moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        cluster=cluster,
        slurm_version=version,
        partitions=partitions,
        plugin_options=tuple(plugin_options) if plugin_options is not None else None,
        pyxis=("container-image=" in plugin_options) if plugin_options is not None else None,
        associations=associations,
        not_read=tuple(c.not_read),
    )


def _partitions(c: _Collector) -> Optional[Tuple[PartitionFacts, ...]]:
    found: Optional[List[parse.Partition]] = None
    out = c.ask("partitions", ["scontrol", "--oneliner", "show", "partition"])
    if out is not None:
        found = parse.partitions_from_scontrol(out)
        nodes = c.ask("nodes", ["scontrol", "--oneliner", "show", "node"])
        if nodes is not None:
            parse.attach_nodes(found, parse.nodes_from_scontrol(nodes))
        else:
            found = None
    if found is None:
        out = c.ask("partitions", ["sinfo", "-h", "-N", "-o", parse.SINFO_FORMAT])
        if out is None:
            return None
        found = parse.from_sinfo(out)
        c.not_read.append("partitions: read with sinfo (scontrol gave no answer)")
    return tuple(facts(p) for p in found)


def facts(partition: parse.Partition) -> PartitionFacts:
    nodes = partition.nodes
    cpus = [n.cpus for n in nodes if n.cpus is not None]
    memory = [n.memory for n in nodes if n.memory is not None]
    gres: List[str] = []
    for node in nodes:
        for item in node.gres:
            if item not in gres:
                gres.append(item)
    return PartitionFacts(
        name=partition.name,
        default=partition.default,
        max_time=partition.max_time,
        default_time=partition.default_time,
        nodes=len(nodes) if nodes else (len(partition.node_names) or None),
        cpus_per_node=max(cpus) if cpus else None,
        memory_per_node=max(memory) if memory else None,
        gpus_per_node=max(n.gpus for n in nodes) if nodes else None,
        gres=tuple(gres),
    )

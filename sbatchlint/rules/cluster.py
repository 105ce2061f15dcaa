"""The job against the cluster it will run on, from the cluster profile (``sbatchlint profile``).

Every rule here is silent without a profile, and silent on a question the profile could not
answer (a fact it did not read). Each finding names the fact it used and when the profile was
taken: a profile is a snapshot, and a cluster changes.
"""
from __future__ import annotations


from .. import options as opt
from ..cluster.parse import memory_mb, minutes
from ..cluster.profile import PartitionFacts, Profile, from_table, in_settings
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model.geometry import gpu_total, job_geometry, parse_count
from ..model.header import Directive
from ..registry import register
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Tuple

# The profile the examples are checked with: a cluster with a GPU partition, a CPU partition and
# pyxis, as `sbatchlint profile` would write it.
_EXAMPLE = {
    "taken": "2026-03-02T09:14:00Z",
    "cluster": "example",
    "slurm-version": "23.11.4",
    "pyxis": True,
    "plugin-options": ["container-image=", "container-mounts=", "container-workdir="],
    "partitions": {
        "gpu": {"default": True, "max-time": "2-00:00:00", "nodes": 16, "node-cpus": 112,
                "node-memory": 2000000, "node-gpus": 8, "gres": ["gpu:h100:8"]},
        "cpu": {"max-time": "7-00:00:00", "nodes": 32, "node-cpus": 128, "node-memory": 512000,
                "node-gpus": 0},
    },
    "associations": [{"account": "llm-pretrain", "partition": ""}, {"account": "teaching", "partition": "cpu"}],
}
EXAMPLE_PROFILE = (("cluster", from_table(_EXAMPLE, "example")),)
# The same cluster without pyxis or any other plugin.
EXAMPLE_NO_PYXIS = (("cluster", from_table({**_EXAMPLE, "pyxis": False, "plugin-options": []}, "example")),)


def profile_of(script) -> Optional[Profile]:
    return in_settings(script.settings)


def _literal(directive: Optional[Directive]) -> Optional[str]:
    """A directive's value when sbatch reads it as written (no `$`: sbatch expands nothing, but a
    value with `$` is already another rule's finding)."""
    if directive is None or directive.value is None or "$" in directive.value:
        return None
    return directive.value.strip()


def job_partitions(script, profile: Profile) -> Tuple[Optional[Directive], List[PartitionFacts]]:
    """The partitions the job may run in, as the profile knows them: those of ``--partition``
    (all of them known, else none), or the default partition when the header names none."""
    directive = script.header.winning(opt.PARTITION)
    if directive is None:
        default = profile.default_partition
        return None, [default] if default is not None else []
    value = _literal(directive)
    if not value:
        return directive, []
    found = [profile.partition(name.strip()) for name in value.split(",")]
    if any(f is None for f in found):
        return directive, []
    return directive, [f for f in found if f is not None]


def _which(directive: Optional[Directive], partitions: List[PartitionFacts]) -> str:
    names = ", ".join(f"`{p.name}`" for p in partitions)
    if directive is None:
        return f"the default partition {names}"
    return f"partition{'s' * (len(partitions) > 1)} {names}"


@register
class UnknownPartition(Rule):
    code = "SBL017"
    name = "unknown-partition"
    severity = Severity.ERROR
    summary = "`--partition` names a partition the cluster profile does not list."
    what = """
        With a cluster profile (written by `sbatchlint profile`), compares each partition of
        `#SBATCH --partition` with the cluster's partitions and names the closest one. Silent
        without a profile, or when the value is built from a variable.
    """
    why = """
        sbatch refuses the job ("Invalid partition name specified"): it never reaches the queue. A
        partition name copied from another cluster's script is the usual cause.
    """
    fix_safety = """
        Unsafe: when exactly one partition is close to the name, the fix writes it. The job then
        runs in that partition, with its limits and its nodes: check that it is the one you meant.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpus
                #SBATCH --nodes=2
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                srun hostname
                """
            ),
            unsafe=True,
            contains="did you mean `gpu`",
            settings=EXAMPLE_PROFILE,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=batch
                srun hostname
                """
            ),
            contains="partitions: `gpu`, `cpu`",
            settings=EXAMPLE_PROFILE,
            title="no close name: no fix",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpus
                srun hostname
                """
            ),
            title="without a profile nothing is known about the cluster",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.partitions is None:
            return
        directive = script.header.winning(opt.PARTITION)
        value = _literal(directive)
        if not value or directive.value_span is None:
            return
        names = profile.partition_names
        for name in value.split(","):
            name = name.strip()
            if not name or profile.partition(name) is not None:
                continue
            listed = ", ".join(f"`{n}`" for n in names) or "none"
            message = f"partition `{name}` does not exist on this cluster"
            import difflib  # only for a partition the cluster does not have

            close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
            if len(close) > 1 and difflib.SequenceMatcher(None, name, close[0]).ratio() == \
                    difflib.SequenceMatcher(None, name, close[1]).ratio():
                close = []
            fix = None
            if close:
                message += f"; did you mean `{close[0]}`?"
                if value == name:
                    fix = Fix.unsafe(f"use partition `{close[0]}`", Edit(directive.value_span, close[0]))
            yield self.report(
                script, directive.value_span, message, fix, label="unknown partition",
                notes=("sbatch refuses the job (Invalid partition name specified)",
                       f"partitions: {listed}, in {profile.provenance()}"),
            )


@register
class TimeOverPartitionLimit(Rule):
    code = "SBL018"
    name = "time-over-partition-limit"
    severity = Severity.ERROR
    summary = "`--time` is longer than the partition's MaxTime in the cluster profile."
    what = """
        With a cluster profile, compares `#SBATCH --time` with the MaxTime of the job's partition
        (the one `--partition` names, else the cluster's default partition). With several
        partitions it reports only a time over every one's limit.
    """
    why = """
        Depending on the cluster's `EnforcePartLimits`, sbatch refuses the job ("Requested time
        limit is invalid (missing or exceeds some limit)"), or accepts it and leaves it pending
        for ever with the reason `PartitionTimeLimit`: the job waits in the queue and never runs.
    """
    fix_safety = "There is no automatic fix: shorten the job or choose a partition with a longer limit."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --time=3-00:00:00
                srun hostname
                """
            ),
            contains="MaxTime 2-00:00:00",
            settings=EXAMPLE_PROFILE,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --time=72:00:00
                srun hostname
                """
            ),
            contains="default partition `gpu`",
            settings=EXAMPLE_PROFILE,
            title="the default partition's limit applies when no partition is named",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --time=2-00:00:00
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=cpu
                #SBATCH --time=3-00:00:00
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.partitions is None:
            return
        time = script.header.winning(opt.TIME)
        asked = minutes(_literal(time))
        if asked is None or time is None:
            return
        partner, partitions = job_partitions(script, profile)
        limits = [p.max_minutes for p in partitions if p.max_time is not None]
        if not partitions or len(limits) != len(partitions) or any(limit is None for limit in limits):
            return  # unknown, or unlimited somewhere
        if all(asked > limit for limit in limits if limit is not None):
            shown = ", ".join(f"MaxTime {p.max_time}" for p in partitions)
            yield self.report(
                script,
                time.value_span or time.span,
                f"`--time={time.value}` is longer than {_which(partner, partitions)} allows ({shown})",
                label="over the partition's MaxTime",
                notes=("sbatch refuses the job, or it pends for ever (PartitionTimeLimit)",
                       _source(profile.provenance())),
            )


def _cpus_per_node(script, geometry) -> Tuple[Optional[int], str]:
    """CPUs one node of the job needs, and how that was counted."""
    cpus_per_task = parse_count(_literal(script.header.winning(opt.CPUS_PER_TASK))) or 1
    tasks = geometry.tasks_per_node.value if geometry.tasks_per_node.origin is not None else None
    need, how = None, ""
    if tasks:
        need = tasks * cpus_per_task
        how = f"{tasks} task{'s' * (tasks != 1)} × {cpus_per_task} CPU{'s' * (cpus_per_task != 1)}"
    elif cpus_per_task > 1:
        need, how = cpus_per_task, f"`--cpus-per-task={cpus_per_task}`"
    per_gpu = parse_count(_literal(script.header.winning(opt.CPUS_PER_GPU)))
    gpus = _gpus_per_node(geometry)
    if per_gpu and gpus and (need is None or per_gpu * gpus > need):
        need, how = per_gpu * gpus, f"{gpus} GPUs × `--cpus-per-gpu={per_gpu}`"
    mincpus = parse_count(_literal(script.header.winning(opt.MINCPUS)))
    if mincpus and (need is None or mincpus > need):
        need, how = mincpus, f"`--mincpus={mincpus}`"
    return need, how


def _gpus_per_node(geometry) -> Optional[int]:
    """GPUs each node must hold, when the header fixes it: `--gpus-per-node`, `--gres`, or a
    `--gpus` total / `--gpus-per-task` × tasks over a node layout the header sets (without one,
    Slurm spreads `--gpus=9` over two nodes of 8)."""
    quantity = geometry.gpus_per_node
    origin = quantity.origin
    if quantity.value is None or origin is None:
        return None
    if origin.option in (opt.GPUS_PER_NODE, opt.GRES):
        return quantity.value
    if origin.option == opt.GPUS:
        nodes = geometry.nodes.origin
        return quantity.value if nodes is not None and nodes.in_header and geometry.nodes.value else None
    tasks = geometry.tasks_per_node.origin
    return quantity.value if tasks is not None and tasks.in_header else None


def _memory_per_node(script, geometry, cpus: Optional[int]) -> Tuple[Optional[int], Optional[Directive], str]:
    mem = script.header.winning(opt.MEM)
    value = memory_mb(_literal(mem))
    if value:
        return value, mem, f"`--mem={mem.value}`"
    per_cpu = script.header.winning(opt.MEM_PER_CPU)
    value = memory_mb(_literal(per_cpu))
    if value and cpus:
        return value * cpus, per_cpu, f"{cpus} CPUs × `--mem-per-cpu={per_cpu.value}`"
    # not --mem-per-gpu: Slurm 22.05 accepts a job whose GPUs' memory is more than a node has
    return None, None, ""


def _size(mb: int) -> str:
    if mb >= 1024 * 1024 and mb % (1024 * 1024) == 0:
        return f"{mb // (1024 * 1024)}T"
    if mb >= 1024 and mb % 1024 == 0:
        return f"{mb // 1024}G"
    return f"{mb}M"


@register
class RequestBeyondPartitionNodes(Rule):
    code = "SBL019"
    name = "request-beyond-partition-nodes"
    severity = Severity.ERROR
    summary = "More nodes, or more GPUs, CPUs or memory per node, than the partition's nodes have."
    what = """
        With a cluster profile, compares what the header asks of each node with the largest node
        of the job's partition: GPUs per node (`--gpus-per-node`, `--gres=gpu:N`, `--gpus` over
        the nodes, `--gpus-per-task` × tasks), CPUs per node (tasks per node × `--cpus-per-task`,
        `--cpus-per-gpu` × GPUs, `--mincpus`), memory per node (`--mem`, `--mem-per-cpu` × CPUs),
        the node count against the partition's nodes, and the job's CPUs (`--ntasks` ×
        `--cpus-per-task`) against all the partition's CPUs.
    """
    why = """
        No node can ever satisfy the request: sbatch refuses the job ("Requested node
        configuration is not available", "Node count specification invalid", "More processors
        requested than permitted"), or, on some
        configurations, the job pends for ever. A script written for a cluster with bigger nodes
        is the usual cause.
    """
    fix_safety = "There is no automatic fix: the request has to be rethought for these nodes."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                #SBATCH --gpus-per-node=16
                srun hostname
                """
            ),
            contains="at most 8 GPUs",
            settings=EXAMPLE_PROFILE,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --cpus-per-task=16
                #SBATCH --gpus-per-node=8
                srun hostname
                """
            ),
            contains="8 tasks × 16 CPUs",
            settings=EXAMPLE_PROFILE,
            title="CPUs per node: tasks × CPUs per task",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=cpu
                #SBATCH --mem=1T
                srun hostname
                """
            ),
            contains="at most 500G",
            settings=EXAMPLE_PROFILE,
            title="memory per node",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=32
                #SBATCH --gpus-per-node=8
                srun hostname
                """
            ),
            contains="has 16 nodes",
            settings=EXAMPLE_PROFILE,
            title="more nodes than the partition has",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                #SBATCH --cpus-per-task=14
                #SBATCH --gpus-per-node=8
                #SBATCH --mem=0
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.partitions is None:
            return
        partner, partitions = job_partitions(script, profile)
        if not partitions:
            return
        geometry = job_geometry(script)
        where = _which(partner, partitions)
        provenance = profile.provenance()

        def over(attribute: str, asked: int) -> Optional[int]:
            """The most a node of the partitions has, when every one has less than ``asked``."""
            have = [getattr(p, attribute) for p in partitions]
            if any(h is None for h in have) or not all(asked > h for h in have):
                return None
            return max(have)

        low = geometry.nodes.low if geometry.nodes.origin is not None and geometry.nodes.origin.in_header else None
        if low:
            most = over("nodes", low)
            if most is not None:
                origin = geometry.nodes.origin
                yield self.report(
                    script, origin.value_span or origin.span or script.header.winning(opt.NODES).span,
                    f"the job asks for {low} nodes but {where} has {most} nodes",
                    label="more nodes than the partition has",
                    notes=("sbatch refuses the job (Node count specification invalid)", _source(provenance)),
                )
        gpus = _gpus_per_node(geometry)
        if gpus:
            most = over("gpus_per_node", gpus)
            if most is not None and most > 0:  # no GPUs at all: gpu-request-without-gpus says it
                origin = geometry.gpus_per_node.origin
                yield self.report(
                    script, origin.value_span or origin.span,
                    f"`{origin.written}` asks for {gpus} GPUs per node but the nodes of {where} have at most "
                    f"{most} GPUs",
                    label="more GPUs than a node has",
                    notes=("sbatch refuses the job (Requested node configuration is not available)",
                           _source(provenance)),
                )
        total_gpus = script.header.winning(opt.GPUS)
        if total_gpus is not None and not gpus:
            asked = gpu_total(_literal(total_gpus))
            have = [p.nodes * p.gpus_per_node if p.nodes is not None and p.gpus_per_node is not None else None
                    for p in partitions]
            if asked and all(h is not None and 0 < h < asked for h in have):
                yield self.report(
                    script, total_gpus.value_span or total_gpus.span,
                    f"`--gpus={total_gpus.value}` asks for {asked} GPUs but {where} has {max(have)} in all",
                    label="more GPUs than the partition has",
                    notes=("sbatch refuses the job (Requested node configuration is not available)",
                           _source(provenance)),
                )
        cpus, how = _cpus_per_node(script, geometry)
        cpus_reported = False
        if cpus:
            most = over("cpus_per_node", cpus)
            if most is not None:
                directive = (script.header.winning(opt.CPUS_PER_TASK) or script.header.winning(opt.CPUS_PER_GPU)
                             or script.header.winning(opt.MINCPUS) or script.header.winning(opt.NTASKS_PER_NODE))
                if directive is not None:
                    cpus_reported = True
                    yield self.report(
                        script, directive.span,
                        f"each node needs {cpus} CPUs ({how}) but the nodes of {where} have at most {most}",
                        label="more CPUs than a node has",
                        notes=("sbatch refuses the job (Requested node configuration is not available, or More "
                               "processors requested than permitted)", _source(provenance)),
                    )
        total = geometry.ntasks.value if geometry.ntasks.origin is not None and geometry.ntasks.origin.in_header else None
        if total and not cpus_reported:
            per_task = parse_count(_literal(script.header.winning(opt.CPUS_PER_TASK))) or 1
            have = [p.nodes * p.cpus_per_node if p.nodes is not None and p.cpus_per_node is not None else None
                    for p in partitions]
            if all(h is not None and total * per_task > h for h in have):
                directive = script.header.winning(opt.NTASKS)
                yield self.report(
                    script, directive.value_span or directive.span,
                    f"the job's {total * per_task} CPUs (`--ntasks={directive.value}`"
                    + (f" × `--cpus-per-task={per_task}`" if per_task > 1 else "")
                    + f") are more than all {max(have)} CPUs of {where}",
                    label="more CPUs than the partition has",
                    notes=("sbatch refuses the job (More processors requested than permitted)", _source(provenance)),
                )
        memory, directive, how = _memory_per_node(script, geometry, cpus)
        if memory and directive is not None:
            most = over("memory_per_node", memory)
            if most is not None:
                yield self.report(
                    script, directive.value_span or directive.span,
                    f"each node needs {_size(memory)} of memory ({how}) but the nodes of {where} have at most "
                    f"{_size(most)}",
                    label="more memory than a node has",
                    notes=("sbatch refuses the job (Requested node configuration is not available)",
                           _source(provenance)),
                )


@register
class GpuRequestWithoutGpus(Rule):
    code = "SBL020"
    name = "gpu-request-without-gpus"
    severity = Severity.ERROR
    summary = "GPUs (or another GRES) requested in a partition whose nodes have none."
    what = """
        With a cluster profile, reports a GPU request (`--gpus-per-node`, `--gres=gpu…`, `--gpus`,
        `--gpus-per-task`) in a partition whose nodes have no GPU, and a `--gres` name (`nvme`,
        `mps`) that none of the partition's nodes offers.
    """
    why = """
        sbatch refuses the job ("Invalid generic resource (gres) specification", "Requested node
        configuration is not available"). It happens when a GPU job keeps the default partition
        of a cluster whose default is a CPU partition, or is sent to the wrong one.
    """
    fix_safety = "There is no automatic fix: choose a partition with GPUs, or drop the request."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=cpu
                #SBATCH --nodes=2
                #SBATCH --gres=gpu:8
                srun hostname
                """
            ),
            contains="no GPUs",
            settings=EXAMPLE_PROFILE,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --partition=gpu
                #SBATCH --nodes=2
                #SBATCH --gres=gpu:8
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.partitions is None:
            return
        partner, partitions = job_partitions(script, profile)
        if not partitions:
            return
        where = _which(partner, partitions)
        geometry = job_geometry(script)
        if geometry.gpu_requested and all(p.gpus_per_node == 0 for p in partitions):
            origin = geometry.gpu_requests[0]
            yield self.report(
                script, origin.span or origin.directive.span,
                f"`{origin.written}` asks for GPUs but the nodes of {where} have no GPUs",
                label="no GPUs in this partition",
                notes=("sbatch refuses the job", _source(profile.provenance())),
            )
        gres = script.header.winning(opt.GRES)
        value = _literal(gres)
        if not value or value == "none":
            return
        offered = {item.split(":")[0] for p in partitions for item in p.gres}
        for item in value.split(","):
            name = item.strip().split(":")[0]
            if name.startswith("gres/"):
                name = name[5:]
            if not name or name == "gpu" or name in offered:
                continue
            shown = ", ".join(sorted(offered)) or "none"
            yield self.report(
                script, gres.value_span or gres.span,
                f"`--gres={value}` asks for `{name}`, which no node of {where} offers",
                label="GRES not offered",
                notes=("sbatch refuses the job (Invalid generic resource (gres) specification)",
                       f"GRES: {shown}, in {profile.provenance()}"),
            )


@register
class AccountNotAssociated(Rule):
    code = "SBL021"
    name = "account-not-associated"
    severity = Severity.ERROR
    summary = "`--account` is not one of your associations for the job's partition."
    what = """
        With a cluster profile that holds your associations (read with `sacctmgr` where accounting
        is on), reports an `#SBATCH --account` you have no association with, or whose association
        does not cover the job's partition. The associations are those of the user who ran
        `sbatchlint profile`.
    """
    why = """
        sbatch refuses the job ("Invalid account or account/partition combination specified").
        Accounts are the first thing to change when a script moves to another project.
    """
    fix_safety = "There is no automatic fix: only you know which project pays for the job."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=llm-pretrian
                #SBATCH --partition=gpu
                srun hostname
                """
            ),
            contains="did you mean `llm-pretrain`",
            settings=EXAMPLE_PROFILE,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=teaching
                #SBATCH --partition=gpu
                srun hostname
                """
            ),
            contains="only for partition `cpu`",
            settings=EXAMPLE_PROFILE,
            title="an account associated with another partition only",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=teaching
                #SBATCH --partition=cpu
                srun hostname
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.associations is None:
            return
        directive = script.header.winning(opt.ACCOUNT)
        account = _literal(directive)
        if not account or directive is None:
            return
        pairs = profile.associations
        mine = [partition for acct, partition in pairs if acct == account]
        span = directive.value_span or directive.span
        if not mine:
            accounts = sorted({acct for acct, _ in pairs})
            message = f"you have no association with account `{account}`"
            import difflib  # only for an account without association

            close = difflib.get_close_matches(account, accounts, n=1, cutoff=0.6)
            if close:
                message += f"; did you mean `{close[0]}`?"
            yield self.report(
                script, span, message, label="no association",
                notes=("sbatch refuses the job (Invalid account or account/partition combination specified)",
                       f"accounts: {', '.join(f'`{a}`' for a in accounts) or 'none'}, in {profile.provenance()}"),
            )
            return
        if "" in mine or profile.partitions is None:
            return
        partner, partitions = job_partitions(script, profile)
        if partitions and all(p.name not in mine for p in partitions):
            allowed = ", ".join(f"`{p}`" for p in mine)
            yield self.report(
                script, span,
                f"account `{account}` is associated only for partition{'s' * (len(mine) > 1)} {allowed}, not "
                f"{_which(partner, partitions)}",
                label="not for this partition",
                notes=("sbatch refuses the job (Invalid account or account/partition combination specified)",
                       _source(profile.provenance())),
            )


@register
class PluginOptionNotProvided(Rule):
    code = "SBL022"
    name = "plugin-option-not-provided"
    severity = Severity.ERROR
    summary = "An option no Slurm command and no plugin of the cluster provides (pyxis's `--container-*` without pyxis)."
    what = """
        With a cluster profile that lists the options the cluster's SPANK plugins add (the
        "Options provided by plugins" part of `sbatch --help`), reports a pyxis option in
        `#SBATCH` or on an `srun` step when the cluster has no pyxis, an option declared in
        `extra-options` that no plugin of this cluster provides, and an `#SBATCH` long option that
        is neither Slurm's nor any of the cluster's plugins' (without a profile that is SBL014's
        warning; a near miss of a known option stays SBL005).
    """
    why = """
        Without the plugin, sbatch and srun do not know the option and refuse it ("unrecognized
        option '--container-image=…'"): the job is refused, or the step fails at once. It happens
        to scripts written for a pyxis cluster, or for another site's plugins, that run here.
    """
    fix_safety = "There is no automatic fix: the job needs another way to do what the option did."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 python train.py
                """
            ),
            contains="no plugin of this cluster provides",
            settings=EXAMPLE_NO_PYXIS,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --environment=pytorch-25.01
                srun python train.py
                """
            ),
            contains="neither a Slurm option nor one of this cluster's plugins",
            settings=EXAMPLE_PROFILE,
            title="another site's plugin option",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 python train.py
                """
            ),
            settings=EXAMPLE_PROFILE,
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = profile_of(script)
        if profile is None or profile.plugin_options is None:
            return
        provided = set(profile.plugin_option_names)
        where = f"plugin options: {_listed(profile)}, in {profile.provenance()}"
        for directive in script.header.directives:
            if directive.placement != "header":
                continue
            spec = directive.spec
            if spec is not None:
                if (spec.pyxis or spec.site) and spec.long not in provided:
                    kind = "a pyxis option" if spec.pyxis else "declared in `extra-options`"
                    yield self.report(
                        script, directive.option_span,
                        f"`--{spec.long}` is {kind}, and no plugin of this cluster provides it",
                        label="not on this cluster",
                        notes=("sbatch refuses the job (unrecognized option)", where),
                    )
                continue
            if directive.dashes != "--":
                continue
            kind, _ = opt.unknown_kind(script.header.table, opt.SRUN, directive.option)
            if kind == "unknown":
                written = "--" + directive.option
                yield self.report(
                    script, directive.option_span,
                    f"`{written}` is neither a Slurm option nor one of this cluster's plugins' options",
                    label="not on this cluster",
                    notes=(f"sbatch refuses the job (unrecognized option '{written}')", where),
                )
        for step in script.steps:
            for option in step.options:
                spec = option.spec
                if spec is not None and spec.pyxis and spec.long not in provided:
                    yield self.report(
                        script, option.source_span() or step.span,
                        f"`--{spec.long}` is a pyxis option, and no plugin of this cluster provides it",
                        label="not on this cluster",
                        notes=("srun refuses the step (unrecognized option)", where),
                    )


def _source(provenance: str) -> str:
    """The note that says where a cluster fact comes from."""
    return f"as recorded in {provenance}"


def _listed(profile: Profile) -> str:
    options = profile.plugin_option_names
    if not options:
        return "none"
    shown = ", ".join(f"`--{o}`" for o in options[:4])
    return shown + (f" and {len(options) - 4} more" if len(options) > 4 else "")

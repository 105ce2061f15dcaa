"""``sbatchlint plan``: what Slurm, srun, the launcher and pyxis will run, read from the model.

Nothing here re-reads the script: the job and every step come from the model's analyses
(``model/header.py`` for the directives, ``model/geometry.py`` for nodes, tasks, CPUs and GPUs,
``model/launch.py`` for the launchers, ``model/boundary.py`` for the batch/task boundary,
``model/containers.py`` for pyxis). This module only arranges their answers into a plan and
says why a value is unknown.

The JSON document (``--output-format json``), schema ``sbatchlint-plan/1``::

    {"schema": "sbatchlint-plan/1", "path": str,
     "job": {"directives": [{"line": int|"--sbatch-args"|"SBATCH_*", "option": str, "value": str|null,
                             "status": "effective"|"overridden"|"late"|"unknown-option"}],
             "nodes": F, "ntasks": F, "tasks_per_node": F, "gpus_per_node": F, "cpus_per_task": F,
             "time": F, "job_name": F, "output": F, "error": F, "exclusive": bool,
             "sourced": [{"line": int, "operand": str, "path": str|null, "read": bool,
                          "unknown": null|"run-time"|"spool-directory"|"home"|"working-directory"|
                                     "no-directory"|"missing"|"too-large"|"not-text"|"cycle"|"too-deep",
                          "approximate": ["submission-directory"|"path-search", ...], "nested": [...]}]},
     "steps": [{"index": int, "line": int, "end_line": int, "context": [str, ...],
                "nodes": F, "ntasks": F, "tasks_per_node": F, "cpus_per_task": F,
                "gpus_per_task_visible": F, "kill_on_bad_exit": bool,
                "launcher": {"kind": str, "entry": str|null, "processes_per_task": F,
                             "rendezvous": "srun"|"static"|"c10d"|"standalone"|"none",
                             "nnodes": F, "node_rank": str|null} ,
                "processes": F, "world_size": F, "rank_source": str,
                "environment": [{"name": str, "expanded_by": "batch"|"task", "value": F}],
                "container": null | {"image": F, "mounts": [str], "workdir": F,
                                     "HF_HOME": F, "UV_CACHE_DIR": F, "NEMO_HOME": F},
                "findings": [{"code": str, "line": int, "message": str}]}],
     "findings": [...job-level findings...],
     "unknown": {"count": int, "fields": int}}

A finding reported in a file the script sources is a job-level finding with that file's
``path`` and its own ``line``.

``sourced`` lists the ``source``/``.`` commands of the batch shell: the file each reads, or why the
model could not read it (``model/sourced.py``). ``approximate`` says why the file read may not be
the one bash reads: ``submission-directory``, the script's own directory stood for the directory
the job is submitted from (its working directory unless ``--chdir``); ``path-search``, a bare
name, which bash looks for in ``PATH`` first. The variables a read file sets are the script's from that line on; what an
unread file may set is unknown (reason ``sourced-file``), never unset.

``F`` is a field: its value (a number, a string, or null when not set at all), or
``{"unknown": REASON}`` with one of the reason codes in ``REASONS`` (``branches-differ`` adds
``"alternatives"``: the values the alternatives give). A plan never guesses.
"""
from __future__ import annotations

import json
import re

from . import options as opt
from .model.geometry import Quantity, geometry, job_geometry
from .source import Source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

SCHEMA = "sbatchlint-plan/1"

REASONS = {
    "run-time": "set at run time (a command's output, the environment, an argument)",
    "branches-differ": "differs between the alternatives that reach the step (loop iterations, if/else)",
    "by-free-cpus": "Slurm places the tasks by free CPUs: the split between nodes is decided at start",
    "hidden-options": "words the script builds at run time stand among the options",
    "image-workdir": "the image's own WORKDIR (pyxis starts there when the image sets one)",
    "not-exported": "a plain shell variable: the tasks do not see it",
    "sourced-file": "a file sourced before the step may set it, and the model cannot read that file",
}



def per_task(name: str) -> bool:
    """Slurm or the launcher gives each task (or node, or worker) its own value."""
    from .model import variables

    return variables.scope_of(name) in variables.TASK_EXPANDS_SCOPES


PER_TASK_VALUE = "(per task)"
EXPANSION = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")

# SBATCH_* input variables sbatch reads (they override the script, the command line overrides them).
SBATCH_ENV = {
    "SBATCH_ACCOUNT": opt.ACCOUNT, "SBATCH_PARTITION": opt.PARTITION, "SBATCH_TIMELIMIT": opt.TIME,
    "SBATCH_GRES": opt.GRES, "SBATCH_GPUS": opt.GPUS, "SBATCH_GPUS_PER_NODE": opt.GPUS_PER_NODE,
    "SBATCH_GPUS_PER_TASK": opt.GPUS_PER_TASK, "SBATCH_EXCLUSIVE": opt.EXCLUSIVE, "SBATCH_JOB_NAME": opt.JOB_NAME,
    "SBATCH_MEM_PER_NODE": opt.MEM, "SBATCH_CPUS_PER_GPU": opt.CPUS_PER_GPU,
}


def unknown(reason: str) -> Dict[str, str]:
    return {"unknown": reason}


def is_unknown(field: Any) -> bool:
    return isinstance(field, dict) and "unknown" in field


# -- submission-time options ---------------------------------------------------------------------
def submission_lines(sbatch_args: Sequence[str], env: Dict[str, str]) -> List[Tuple[str, str]]:
    """``(origin, option text)`` for every option given at submission, in the order sbatch applies
    them: ``SBATCH_*`` variables first, the command line last (it wins)."""
    out: List[Tuple[str, str]] = []
    for name in sorted(env):
        option = SBATCH_ENV.get(name)
        if option is None:
            continue
        value = env[name]
        out.append((name, f"--{option}" if option == opt.EXCLUSIVE and not value else f"--{option}={value}"))
    for word in sbatch_args:
        out.append(("--sbatch-args", word))
    return out


def _with_submission(data: bytes, lines: List[Tuple[str, str]]) -> Tuple[bytes, int, List[str]]:
    """The script with the submission options as ``#SBATCH`` lines at the end of its header (where
    they win over the script's own), the line they start at, and the origin of each inserted line."""
    if not lines:
        return data, 0, []
    from .model.header import parse_header

    header = parse_header(Source(data))
    after = header.last_header_line or (1 if data.startswith(b"#!") else 0)
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    parts = data.split(b"\n")
    # join short options with their value the way sbatch's getopt does (-N 4 -> one directive)
    merged: List[Tuple[str, str]] = []
    for origin, word in lines:
        if merged and merged[-1][0] == origin and re.fullmatch(r"-[A-Za-z]", merged[-1][1]) and not word.startswith("-"):
            merged[-1] = (origin, merged[-1][1] + " " + word)
        elif merged and merged[-1][0] == origin and re.fullmatch(r"--[a-z-]+", merged[-1][1]) and not word.startswith("-"):
            merged[-1] = (origin, merged[-1][1] + "=" + word)
        else:
            merged.append((origin, word))
    inserted = [b"#SBATCH " + text.encode() + (b"\r" if newline == b"\r\n" else b"") for _origin, text in merged]
    parts[after:after] = inserted
    return b"\n".join(parts), after, [origin for origin, _text in merged]


# -- building the plan -----------------------------------------------------------------------------
class Planner:
    def __init__(self, source: Source, settings: Optional[dict] = None, sbatch_args: Sequence[str] = (),
                 env: Optional[Dict[str, str]] = None, findings: bool = True, options=None) -> None:
        lines = submission_lines(list(sbatch_args), dict(env or {}))
        data, self.inserted_after, self.inserted = _with_submission(source.data, lines)
        self.original = source
        self.source = Source(data, source.path)
        from .model.script import Script

        self.script = Script(self.source, settings)
        self.want_findings = findings
        self.options = options

    # line numbers of the original script
    def line(self, offset: int) -> Any:
        line = self.source.line_of(offset)
        return self.origin_line(line)

    def origin_line(self, line: int) -> Any:
        count = len(self.inserted)
        if count and self.inserted_after < line <= self.inserted_after + count:
            return self.inserted[line - self.inserted_after - 1]
        return line - count if count and line > self.inserted_after else line

    def build(self) -> dict:
        script = self.script
        job = job_geometry(script)
        findings = self._findings() if self.want_findings else []
        steps = [self._step(index, step) for index, step in enumerate(script.steps)]
        attached = set()
        for plan_step, step in zip(steps, script.steps):
            span = step.command.span
            for index, d in enumerate(findings):
                if d.path == self.source.path and span.start <= d.span.start < span.end:
                    plan_step["findings"].append(self._finding(d))
                    attached.add(index)
        document = {
            "schema": SCHEMA,
            "path": self.original.path,
            "job": self._job(job),
            "steps": steps,
            "findings": [self._finding(d) for i, d in enumerate(findings) if i not in attached],
        }
        count, fields = count_unknowns(document)
        document["unknown"] = {"count": count, "fields": fields}
        return document

    def _findings(self) -> list:
        from .linter import lint

        return lint(self.source, self.options, self.script)

    def _finding(self, d) -> dict:
        if d.path != self.source.path:  # reported in a file the script sources, at its own line
            from .model.sourced import files_read
            from .source import Source

            data = files_read(self.script.values.sourced).get(d.path, b"")
            return {"code": d.code, "path": d.path, "line": Source(data, d.path).line_of(d.span.start),
                    "message": d.message}
        return {"code": d.code, "line": self.line(d.span.start), "message": d.message}

    # -- the job ------------------------------------------------------------------------------------
    def _job(self, job) -> dict:
        header = self.script.header
        directives = []
        for directive in header.directives:
            if directive.placement == "late":
                status = "late"
            elif directive.spec is None:
                status = "unknown-option"
            elif header.winning(directive.spec.long) is not directive:
                status = "overridden"
            else:
                status = "effective"
            directives.append({"line": self.origin_line(directive.line), "option": directive.written,
                               "value": directive.value, "status": status})
        name = self._directive_value(opt.JOB_NAME)
        return {
            "directives": directives,
            "nodes": quantity(job.nodes, job),
            "ntasks": quantity(job.ntasks, job),
            "tasks_per_node": quantity(job.tasks_per_node, job, total=job.ntasks, nodes=job.nodes),
            "gpus_per_node": quantity(job.gpus_per_node, job, absent=0),
            "cpus_per_task": quantity(job.job_cpus_per_task, job, absent=1),
            "time": self._directive_value(opt.TIME),
            "job_name": name,
            "output": self._path(opt.OUTPUT, name),
            "error": self._path(opt.ERROR, name),
            "exclusive": header.winning(opt.EXCLUSIVE) is not None,
            "sourced": self._sourced(self.script.values.sourced, top=True),
        }

    def _sourced(self, files, top: bool) -> List[dict]:
        out = []
        for entry in files:
            out.append({"line": self.line(entry.span.start) if top else None, "operand": entry.operand,
                        "path": entry.path, "read": entry.resolved, "unknown": entry.reason,
                        "approximate": list(entry.approximate), "nested": self._sourced(entry.nested, top=False)})
        return out

    def sourced_sources(self) -> List[Source]:
        """Every sourced file the model read, as a Source (the command line masks their secrets)."""
        out: List[Source] = []
        pending = list(self.script.values.sourced)
        while pending:
            entry = pending.pop(0)
            if entry.resolved:
                out.append(Source(entry.data, entry.path))
                pending.extend(entry.nested)
        return out

    def _directive_value(self, name: str) -> Any:
        directive = self.script.header.winning(name)
        return None if directive is None else directive.value

    def _path(self, name: str, job_name: Any) -> Any:
        value = self._directive_value(name)
        if value is None:
            return "slurm-{job id}.out" if name == opt.OUTPUT else None
        replacements = {"%j": "{job id}", "%A": "{array job id}", "%a": "{array index}", "%N": "{first node}",
                        "%u": "{user}", "%%": "%"}
        replacements["%x"] = job_name if isinstance(job_name, str) else "{job name}"
        return re.sub(r"%[%jAaNux]", lambda m: replacements[m.group(0)], value)

    # -- a step -------------------------------------------------------------------------------------
    def _step(self, index: int, step) -> dict:
        script = self.script
        g = geometry(script, step)
        span = step.command.span
        out: Dict[str, Any] = {
            "index": index,
            "line": self.line(span.start),
            "end_line": self.line(max(span.start, span.end - 1)),
            "context": context(script, step),
            "nodes": quantity(g.nodes, g),
            "ntasks": quantity(g.ntasks, g),
            "tasks_per_node": quantity(g.tasks_per_node, g, total=g.ntasks, nodes=g.nodes),
            "cpus_per_task": quantity(g.cpus_per_task, g, absent=1),
            "gpus_per_task_visible": self._visible_gpus(step, g),
            "kill_on_bad_exit": step.has(opt.KILL_ON_BAD_EXIT) or script.values.is_exported("SLURM_KILL_BAD_EXIT"),
        }
        out.update(self._launch(step, g))
        out["environment"] = self._environment(step)
        out["container"] = self._container(step)
        out["findings"] = []
        return out

    def _visible_gpus(self, step, g) -> Any:
        if g.options_incomplete:
            return unknown("hidden-options")
        if g.gpus_per_task.origin is not None:
            return quantity(g.gpus_per_task, g)
        if not g.gpu_requested:
            return 0
        return quantity(g.gpus_per_node, g)

    def _launch(self, step, g) -> dict:
        from .model.launch import ELASTIC, launches_of

        found = launches_of(self.script, step)
        launch = next((l for l in found if l.kind in ELASTIC), found[-1] if found else None)
        ntasks = quantity(g.ntasks, g)
        if launch is None or launch.kind not in ELASTIC:
            entry = launch.entry.name if launch is not None and launch.entry is not None else None
            return {
                "launcher": {"kind": launch.kind if launch is not None else "program", "entry": entry,
                             "processes_per_task": 1, "rendezvous": "srun", "nnodes": None, "node_rank": None},
                "processes": ntasks,
                "world_size": ntasks,
                "rank_source": "SLURM_PROCID (one rank per srun task)",
            }
        known = job_values(job_geometry(self.script), g)
        nproc = number(launch, "nproc_per_node", default=1, job_values=known)
        if launch.has("standalone"):
            rendezvous = "standalone"
        elif (launch.option("rdzv_backend") is not None and launch.option("rdzv_backend").text in ("c10d", "etcd", "etcd-v2")):
            rendezvous = "c10d"
        else:
            rendezvous = "static"
        nnodes = 1 if rendezvous == "standalone" else number(launch, "nnodes", default=1, job_values=known)
        rank = launch.option("node_rank")
        node_rank = None
        if rendezvous == "static":
            node_rank = rank.text if rank is not None and rank.value is not None and rank.value.known else (
                "unknown" if rank is not None else "0 (not given)")
            if rank is not None and not rank.value.known:
                names = [p.name for p in rank.value.pieces if not p.known and p.name]
                node_rank = ("$" + names[0] + " (" + ("the task's shell" if any(p.task for p in rank.value.pieces) else "the batch shell") + ")") if names else "unknown"
        processes = product(ntasks, nproc)
        if rendezvous == "standalone":
            world = nproc
            source = "torchrun --standalone: each task forms its own world of --nproc_per_node processes"
        else:
            world = product(nnodes, nproc)
            source = ("torchrun c10d rendezvous: ranks assigned by the rendezvous, --nnodes × --nproc_per_node"
                      if rendezvous == "c10d" else "torchrun static rendezvous: node rank × --nproc_per_node + local rank")
        return {
            "launcher": {"kind": launch.kind, "entry": launch.entry.name if launch.entry is not None else None,
                         "processes_per_task": nproc, "rendezvous": rendezvous, "nnodes": nnodes, "node_rank": node_rank},
            "processes": processes,
            "world_size": world,
            "rank_source": source,
        }

    def _environment(self, step) -> List[dict]:
        from .model.boundary import early_expansions, late_expansions
        from .model.containers import containers

        analysis = containers(self.script)
        seen: Dict[Tuple[str, str], dict] = {}
        batch_names = [entry.name for entry in early_expansions(self.script) if any(s is step for s in entry.steps)]
        batch_names += self._substituted(step)
        for name in batch_names:
            if (name, "batch") not in seen:
                seen[(name, "batch")] = {"name": name, "expanded_by": "batch", "value": _masked(name, self._batch_value(name, step))}
        for entry in late_expansions(self.script):
            if entry.step is step and (entry.name, "task") not in seen:
                known = job_values(job_geometry(self.script), geometry(self.script, step))
                if entry.name in known:
                    value: Any = known[entry.name]
                elif per_task(entry.name):
                    value = PER_TASK_VALUE  # known: each task its own, which is the point
                elif entry.name.startswith("SLURM_"):
                    value = unknown("run-time")
                else:
                    setting = analysis.task_env(step, entry.name)
                    if setting.where == "unknown":
                        value = unknown("sourced-file")
                    elif not setting.is_set:
                        value = unknown("not-exported") if setting.where == "batch-unexported" else None
                    else:
                        value = field_of(setting.value)
                seen[(entry.name, "task")] = {"name": entry.name, "expanded_by": "task", "value": _masked(entry.name, value)}
        return list(seen.values())

    def _substituted(self, step) -> List[str]:
        """Variables the batch shell substituted into the step's task command (``$CMD``, and the
        ``$LR`` inside it), from the sites each character of the task's words came through."""
        data = self.script.data
        names: List[str] = []
        words = ([step.string_word] if step.string_word is not None else []) + list(step.task_argv)
        for word in words:
            for value in (word.alternatives or [word.value]):
                for piece in value.pieces:
                    for site in piece.via:
                        match = EXPANSION.match(data[site.start:site.end].decode("utf-8", "replace"))
                        if match and match.group(1) not in names:
                            names.append(match.group(1))
        return names

    def _batch_value(self, name: str, step) -> Any:
        known = job_values(job_geometry(self.script), job_geometry(self.script))
        if name in known and name in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_NTASKS", "SLURM_NPROCS"):
            return known[name]  # the batch shell sees the job's values
        if name.startswith("SLURM_") or per_task(name):
            return unknown("run-time")
        values = self.script.values
        at = step.command.node.start_byte
        found = values.lookup(name, at)
        if values.sourced:
            before = values.assignments_before(name, at)
            if values.unresolved_source(at, after=before[-1].span.start if before else -1) is not None:
                return unknown("sourced-file")  # an unread sourced file may set it (again)
        if not found:
            return None
        texts = set()
        for value in found:
            if not value.known:
                return unknown("run-time")
            texts.add(value.text)
        if len(texts) == 1:
            return texts.pop()
        return {"unknown": "branches-differ", "alternatives": [v.text for v in found]}

    def _container(self, step) -> Optional[dict]:
        from .model.containers import containers, option_value

        analysis = containers(self.script)
        container = analysis.for_step(step)
        if not container.containerized:
            return None
        image: Any = unknown("hidden-options")
        if container.image is not None:
            image = field_of(option_value(container.image))
        elif container.name is not None:
            image = "(named container " + str(field_of(option_value(container.name))) + ")"
        last = container.mount_options[-1] if container.mount_options else None
        mounts = [m.text if m.value.known else "(unknown: set at run time)" for m in container.mounts if m.option is last]
        workdir: Any = unknown("image-workdir")
        if container.workdir is not None:
            workdir = field_of(option_value(container.workdir))
        caches = {}
        for name in ("HF_HOME", "UV_CACHE_DIR", "NEMO_HOME"):
            setting = analysis.task_env(step, name)
            caches[name] = field_of(setting.value) if setting.is_set else (
                unknown("sourced-file") if setting.where == "unknown" else None)
        return {"image": image, "mounts": mounts, "workdir": workdir, **caches,
                "uncertain": container.uncertain}


# -- small helpers -------------------------------------------------------------------------------
def _masked(name: str, value: Any) -> Any:
    """A secret's value is never shown: only its first characters (the name stays)."""
    if isinstance(value, str) and value:
        from .redaction import is_secret_name, mask

        if is_secret_name(name):
            return mask(value)
    return value


def quantity(q: Quantity, g, absent: Any = None, total: Optional[Quantity] = None, nodes: Optional[Quantity] = None) -> Any:
    """A Quantity as a plan field."""
    if q.value is not None:
        return q.value
    if q.low is not None and q.high is not None:
        return f"{q.low}-{q.high}"
    if getattr(g, "options_incomplete", False):
        return unknown("hidden-options")
    if total is not None and nodes is not None and total.value is not None and nodes.value is not None:
        if total.value % nodes.value != 0 or nodes.value > 1:
            return unknown("by-free-cpus")
    if q.origin is None:
        return absent
    return unknown("run-time")


def number(launch, name: str, default: int, job_values: Optional[Dict[str, Any]] = None) -> Any:
    option = launch.option(name)
    if option is None:
        return default
    count = launch.certain_number(name)
    if count is not None:
        return count
    values = launch.option_values(name)
    if all(v is not None and v.known for v in values):
        return unknown("branches-differ")
    resolved = set()
    for value in values:
        names = [p.name for p in value.pieces if not p.known] if value is not None else []
        rest = "".join(p.text for p in value.pieces if p.known) if value is not None else "x"
        if len(names) != 1 or rest.strip("{}") or not job_values or not isinstance(job_values.get(names[0]), int):
            return unknown("run-time")
        resolved.add(job_values[names[0]])
    return resolved.pop() if len(resolved) == 1 else unknown("branches-differ")


def job_values(job, step_geometry) -> Dict[str, Any]:
    """The job-wide variables srun sets in every task, by value when the plan knows it."""
    out: Dict[str, Any] = {}
    for name, q in (("SLURM_JOB_NUM_NODES", job.nodes), ("SLURM_NNODES", step_geometry.nodes),
                    ("SLURM_NTASKS", step_geometry.ntasks), ("SLURM_NPROCS", step_geometry.ntasks),
                    ("SLURM_NTASKS_PER_NODE", step_geometry.tasks_per_node),
                    ("SLURM_GPUS_ON_NODE", step_geometry.gpus_per_node), ("SLURM_GPUS_PER_NODE", job.gpus_per_node)):
        if q.value is not None:
            out[name] = q.value
    return out


def product(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return a if is_unknown(a) else b if is_unknown(b) else None


def field_of(value) -> Any:
    if value is None:
        return None
    return value.text if value.known else unknown("run-time")


def context(script, step) -> List[str]:
    """Where the step sits: the loops and branch alternatives around it, outermost first."""
    out: List[str] = []
    node = step.command.node
    child = node
    parent = node.parent
    data = script.data

    def text(n) -> str:
        return data[n.start_byte:n.end_byte].decode("utf-8", "replace").split("\n")[0].strip()

    while parent is not None:
        line = script.source.line_of(parent.start_byte)
        kind = parent.type
        if kind in ("for_statement", "c_style_for_statement", "while_statement"):
            head = text(parent)
            out.append(f"loop (line {line}): {head[: head.find('; do') if '; do' in head else len(head)]}")
        elif kind == "if_statement":
            # the condition that leads to ``child`` (``then`` part) unless child is elif/else
            if child.type not in ("elif_clause", "else_clause"):
                condition = next((c for c in parent.children if c.type not in ("if", "then", "fi", ";", "\n")), None)
                out.append(f"if (line {line}): {text(condition) if condition is not None else ''}")
        elif kind == "elif_clause":
            out.append(f"elif (line {line}): {text(parent)[4:].split('; then')[0].strip()}")
        elif kind == "else_clause":
            out.append(f"else (line {line})")
        elif kind == "case_item":
            out.append(f"case (line {line}): {text(parent).split(')')[0].strip()})")
        elif kind == "function_definition":
            out.append(f"function (line {line}): {text(parent).split('(')[0].replace('function', '').strip()}")
        child = parent
        parent = parent.parent
    return list(reversed(out))


def count_unknowns(document: Any) -> Tuple[int, int]:
    """(unknown fields, all fields) of the plan's job and steps (findings left out)."""
    unknown_count = 0
    total = 0

    def walk(value: Any, key: str = "") -> None:
        nonlocal unknown_count, total
        if key in ("findings", "directives", "sourced", "context", "rank_source", "index", "line", "end_line", "schema", "path"):
            return
        if is_unknown(value):
            unknown_count += 1
            total += 1
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        else:
            total += 1

    walk({"job": document.get("job"), "steps": document.get("steps")})
    return unknown_count, total


# -- text ------------------------------------------------------------------------------------------
def show(field: Any) -> str:
    if is_unknown(field):
        if field.get("alternatives"):
            return "one of " + " | ".join(dict.fromkeys(field["alternatives"])) + f" ({field['unknown']})"
        return f"unknown ({field['unknown']})"
    if field is None:
        return "-"
    if field is True:
        return "yes"
    if field is False:
        return "no"
    return str(field)


def render_text(plan: dict) -> str:
    from .model.sourced import REASONS as SOURCE_REASONS

    job = plan["job"]
    lines = [f"{plan['path']}: job {show(job['job_name'])}"]
    lines.append(
        f"  nodes {show(job['nodes'])} · tasks {show(job['ntasks'])} ({show(job['tasks_per_node'])} per node) · "
        f"GPUs per node {show(job['gpus_per_node'])} · CPUs per task {show(job['cpus_per_task'])} · time {show(job['time'])}"
        + (" · exclusive" if job["exclusive"] else "")
    )
    lines.append(f"  output {show(job['output'])}" + (f" · error {show(job['error'])}" if job["error"] else ""))
    def sourced_lines(files, indent):
        for entry in files:
            where = f"line {entry['line']}: " if entry["line"] is not None else ""
            if entry["read"]:
                notes = {"submission-directory": "the script's directory standing for the submission directory",
                         "path-search": "bash looks for a bare name in PATH first"}
                note = f" ({'; '.join(notes[a] for a in entry['approximate'])})" if entry["approximate"] else ""
                lines.append(f"{indent}{where}source {entry['operand']} reads {entry['path']}{note}")
            else:
                path = f"{entry['path']}: " if entry["path"] else ""
                lines.append(f"{indent}{where}source {entry['operand']} is not read ({path}{SOURCE_REASONS[entry['unknown']]})"
                             " (what it may set is unknown)")
            sourced_lines(entry["nested"], indent + "  ")

    sourced_lines(job["sourced"], "  ")
    for directive in job["directives"]:
        if directive["status"] != "effective":
            lines.append(f"  line {directive['line']}: {directive['option']}"
                         + (f"={directive['value']}" if directive["value"] is not None else "")
                         + f" is {directive['status']}" + (" (sbatch ignores it)" if directive["status"] == "late" else ""))
    for finding in plan["findings"]:
        lines.append(f"  ! {finding['code']} line {finding['line']}: {finding['message']}")
    for step in plan["steps"]:
        launcher = step["launcher"]
        lines.append("")
        where = " › ".join(step["context"])
        lines.append(f"step {step['index'] + 1} (line {step['line']})" + (f" in {where}" if where else ""))
        lines.append(f"  geometry   {show(step['nodes'])} nodes × {show(step['tasks_per_node'])} tasks per node "
                     f"= {show(step['ntasks'])} tasks · CPUs per task {show(step['cpus_per_task'])} · "
                     f"GPUs visible per task {show(step['gpus_per_task_visible'])} · "
                     f"kill-on-bad-exit {show(step['kill_on_bad_exit'])}")
        entry = f" {launcher['entry']}" if launcher["entry"] else ""
        lines.append(f"  launcher   {launcher['kind']}{entry} · {show(launcher['processes_per_task'])} processes per task "
                     f"· rendezvous {launcher['rendezvous']}"
                     + (f" · nnodes {show(launcher['nnodes'])}" if launcher["nnodes"] is not None else "")
                     + (f" · node rank {launcher['node_rank']}" if launcher["node_rank"] else ""))
        lines.append(f"  world      {show(step['processes'])} processes · world size {show(step['world_size'])} · "
                     f"ranks: {step['rank_source']}")
        for variable in step["environment"]:
            lines.append(f"  env        ${variable['name']} expanded by the {variable['expanded_by']} shell"
                         + (f" = {show(variable['value'])}" if variable["value"] is not None else " (unset)"))
        container = step["container"]
        if container is not None:
            lines.append(f"  container  image {show(container['image'])} · workdir {show(container['workdir'])}")
            if container["mounts"]:
                lines.append(f"             mounts {', '.join(container['mounts'])}")
            caches = [f"{name}={show(container[name])}" for name in ("HF_HOME", "UV_CACHE_DIR", "NEMO_HOME") if container[name] is not None]
            if caches:
                lines.append(f"             {' · '.join(caches)}")
        for finding in step["findings"]:
            lines.append(f"  ! {finding['code']} line {finding['line']}: {finding['message']}")
    count, fields = plan["unknown"]["count"], plan["unknown"]["fields"]
    lines.append("")
    lines.append(f"{count} of {fields} fields unknown")
    return "\n".join(lines) + "\n"


def render_json(plan: dict) -> str:
    return json.dumps(plan, indent=2, ensure_ascii=False) + "\n"

"""Printing a diagnosis: text for people, JSON (schema in ``schema.json``) for tools.

Every line that comes from a log goes through :func:`mask` first: a secret's value (an
environment dump, a token in a URL) is printed as its first three characters and an ellipsis,
as in lint output.
"""
from __future__ import annotations

import json

from .analysis import Finding, Unit, Verdict
from .events import format_ranges
from ..lazyre import lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List

SCHEMA_VERSION = 1

_ASSIGNMENT = lazy(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>\s*[=:]\s*|\s+)(?P<q>['\"]?)(?P<value>[^\s'\",;&]+)")


def mask(text: str) -> str:
    """``text`` with secret values masked: secret-named assignments and credential shapes."""
    from ..redaction import is_credential, redact, secret_name_kind
    from ..redaction import mask as mask_value

    def hide(match) -> str:
        name, value = match.group("name"), match.group("value")
        kind = secret_name_kind(name)
        if kind is None or not is_credential(value, kind):
            return match.group(0)
        return f"{name}{match.group('sep')}{match.group('q')}{mask_value(value)}"

    if any(word in text.upper() for word in ("TOKEN", "KEY", "SECRET", "PASSW")):
        text = _ASSIGNMENT.sub(hide, text)
    return redact(text)


def rule_names(codes) -> Dict[str, str]:
    from .. import registry

    names = {}
    for code in codes:
        try:
            names[code] = registry.get(code).name
        except KeyError:  # pragma: no cover - the catalog names existing rules (tested)
            names[code] = ""
    return names


def _who(u: Unit) -> dict:
    return {"task": u.task, "rank": u.rank, "node": u.host}


def _tasks_text(units: List[Unit]) -> str:
    tasks = [u.task for u in units if u.task is not None]
    ranks = [u.rank for u in units if u.task is None and u.rank is not None]
    parts = []
    if tasks:
        parts.append(f"task{'s' * (len(tasks) != 1)} {format_ranges(tasks)}")
    if ranks:
        parts.append(f"rank{'s' * (len(ranks) != 1)} {format_ranges(ranks)}")
    other = len(units) - len(tasks) - len(ranks)
    if other:
        parts.append(f"{other} other{'s' * (other != 1)}")
    return ", ".join(parts)


def _path(paths: List[str], index: int) -> str:
    return paths[index] if 0 <= index < len(paths) else "-"


# -- JSON ------------------------------------------------------------------------------------------
def to_json(result, paths: List[str]) -> dict:
    verdict: Verdict = result.verdict
    codes = sorted({code for f in verdict.findings for code in f.kind.rules})
    names = rule_names(codes)
    first = verdict.first
    return {
        "version": SCHEMA_VERSION,
        "cause_found": verdict.found,
        "verdict": mask(verdict.text),
        "first_failure": None if first is None else dict(
            _who(first), exit_code=first.exit_code, time=first.stamp.text() if first.stamp else None,
            ordered_by=verdict.ordered_by,
            tie_with=[_who(u) for u in verdict.tie]),
        "diagnoses": [_finding_json(f, names, paths) for f in verdict.findings],
        "victims": {"count": len(verdict.victims), "tasks": [_who(u) for u in verdict.victims[:1000]],
                    "evidence": [{"log": _path(paths, line.log), "line": line.number, "text": mask(line.text), "count": count}
                                 for line, count in verdict.victim_lines]},
        "exit_codes": [{"code": code, "meaning": meaning, "count": len(units), "tasks": _tasks_text(units)}
                       for code, units, meaning in verdict.exit_codes],
        "logs": [{"path": info.path, "lines": info.lines, "bytes": info.bytes, "exists": info.exists}
                 for info in result.logs],
        "job": None if verdict.job is None else _job_json(verdict.job),
        "lint": result.lint,
        "notes": [mask(n) for n in verdict.notes],
    }


def _job_json(job) -> dict:
    step = lambda s: {"id": s.step_id, "state": s.state, "exit_code": s.exit_code, "nodes": s.nodes}  # noqa: E731
    return {
        "state": job.state, "exit_code": job.exit_code, "reason": job.reason, "source": job.source,
        "id": job.job_id, "name": job.name, "partition": job.partition, "nodes": job.nodes,
        "std_out": job.std_out, "std_err": job.std_err,
        "components": [step(c) for c in job.components],
        "steps": [step(s) for s in job.steps],
    }


_SOURCES = {"sacct": "sacct (Slurm's accounting)", "scontrol": "scontrol show job (the controller still knows it)",
            "log": "the log alone"}


def _job_text(job, paths: List[str]) -> List[str]:
    """What Slurm recorded: the job, its het components and steps with state and exit code."""
    name = f" ({job.name})" if job.name else ""
    where = f", partition {job.partition}" if job.partition else ""
    state = " ".join(x for x in (job.state, job.exit_code) if x) or "state unknown"
    nodes = f" on {job.nodes}" if job.nodes else ""
    out = [f"job {job.job_id}{name}{where}: {state}{nodes}; source: {_SOURCES.get(job.source, job.source)}"]
    rows = [("component", c) for c in job.components] + [("step", s) for s in job.steps]
    if rows:
        width = max(len(r.step_id) for _, r in rows)
        swidth = max(len(r.state or "") for _, r in rows)
        kwidth = max(len(kind) for kind, _ in rows)
        for kind, r in rows:
            out.append(f"  {kind:<{kwidth}} {r.step_id:<{width}}  {(r.state or '?'):<{swidth}}  {r.exit_code or '?':>5}  "
                       f"{r.nodes or ''}".rstrip())
    if job.reason and job.reason != "None":
        out.append(f"  reason: {job.reason}")
    for path in paths:
        out.append(f"  log: {path}")
    return out


def _finding_json(f: Finding, names: Dict[str, str], paths: List[str]) -> dict:
    kind = f.kind
    return {
        "id": f.id,
        "title": kind.title,
        "cause": mask(f.cause),
        "primary": f.primary,
        "expected": kind.expected,
        "fix": kind.fix,
        "rules": [{"code": code, "name": names.get(code, "")} for code in kind.rules],
        "evidence": [{"log": _path(paths, line.log), "line": line.number, "text": mask(line.text), "count": count}
                     for line, count in f.evidence],
        "notes": [mask(n) for n in f.extra],
    }


def json_text(result, paths: List[str]) -> str:
    return json.dumps(to_json(result, paths), indent=2, ensure_ascii=False) + "\n"


# -- text ------------------------------------------------------------------------------------------
def text(result, paths: List[str], color: bool = False) -> str:
    verdict: Verdict = result.verdict
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    out: List[str] = []
    head = verdict.text if verdict.found else f"no known cause: {verdict.text[0].lower()}{verdict.text[1:]}"
    out.append(bold(mask(head)))
    if verdict.job is not None and verdict.job.source != "log" or (verdict.job is not None and verdict.job.job_id):
        out.append("")
        out.extend(mask(line) for line in _job_text(verdict.job, [info.path for info in result.logs]))
    codes = sorted({code for f in verdict.findings for code in f.kind.rules})
    names = rule_names(codes)
    for f in verdict.findings:
        kind = f.kind
        out.append("")
        label = "expected" if kind.expected else ("cause" if f.primary and kind.cause else "note")
        out.append(f"{label}: {f.id}: {kind.title}")
        if not f.primary:
            out.append(f"  {mask(f.cause)}")
        if f.evidence:
            out.append("  evidence:")
            width = max(len(f"{_path(paths, line.log)}:{line.number}") for line, _ in f.evidence)
            for line, count in f.evidence:
                where = f"{_path(paths, line.log)}:{line.number}"
                repeat = f"  (×{count})" if count > 1 else ""
                shown = line.text if len(line.text) <= 300 else line.text[:297] + "…"
                out.append(f"    {where:<{width}}  {mask(shown)}{repeat}")
        for note in f.extra:
            out.append(f"  {mask(note)}")
        out.append(f"  fix: {kind.fix}")
        for code in kind.rules:
            out.append(f"  rule: {code} {names.get(code, '')} (sbatchlint explain {code})")
    if verdict.victims:
        out.append("")
        after = "stopped after it" if verdict.first is not None else "stopped"
        out.append(f"{after}: {_tasks_text(verdict.victims)}")
        for line, count in verdict.victim_lines:
            shown = line.text if len(line.text) <= 200 else line.text[:197] + "…"
            repeat = f"  (×{count}, the same from other tasks)" if count > 1 else ""
            out.append(f"    {_path(paths, line.log)}:{line.number}  {mask(shown)}{repeat}")
    if verdict.exit_codes:
        out.append("")
        out.append("exit codes:")
        for code, units, meaning in verdict.exit_codes:
            out.append(f"  {code:>4}  {_tasks_text(units)}: {meaning}")
    if result.lint:
        out.append("")
        out.append("the job script's findings that explain it:")
        for d in result.lint:
            out.append(f"  {d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']}")
    for note in verdict.notes:
        out.append("")
        out.append(f"note: {mask(note)}")
    return "\n".join(out) + "\n"

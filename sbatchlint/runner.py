"""Linting files: which options apply to each (configuration, command line), and the work done
for one file, which can run in a worker process (``-j``)."""
from __future__ import annotations

import gc
import os

from . import cache, config as config_module
from .lazyclass import dataclass, field
from .linter import Options, RuleFailure, Selection, build, fix as run_fix, is_python, let_go, lint
from .report import FileResult
from .source import InputError, Source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple


@dataclass
class CommandLine:
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    extend_select: Sequence[str] = ()
    config_path: Optional[str] = None
    isolated: bool = False
    force_exclude: Optional[bool] = None  # None: as the configuration says
    respect_gitignore: Optional[bool] = None
    settings: Dict[str, object] = field(default_factory=dict)
    cache: bool = True  # False: --no-cache
    cache_dir: Optional[str] = None  # --cache-dir


class Resolver:
    """The configuration and options for each file, closest configuration first, cached."""

    def __init__(self, cli: CommandLine, known_codes: Sequence[str]) -> None:
        self.cli = cli
        self.known = list(known_codes)
        self._configs: Dict[Optional[str], config_module.Config] = {}
        self._profiles: Dict[str, object] = {}
        self._closest: Dict[Tuple[str, str], Optional[str]] = {}  # (kind, directory) -> file found
        self.forced = None
        if cli.config_path:
            self.forced = config_module.load(cli.config_path, self.known)

    def config_for(self, path: str) -> config_module.Config:
        if self.cli.isolated:
            return config_module.Config()
        if self.forced is not None:
            return self.forced
        location = self._find("config", path)
        if location not in self._configs:
            self._configs[location] = config_module.load(location, self.known) if location else config_module.Config()
        return self._configs[location]

    def _find(self, kind: str, path: str) -> Optional[str]:
        """The closest configuration (or cluster profile) file for ``path``, looked up once per
        directory: a tree's files share theirs."""
        path = path if path != "-" else os.getcwd()
        directory = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        key = (kind, directory)
        if key not in self._closest:
            find = config_module.find if kind == "config" else config_module.find_profile
            self._closest[key] = find(directory)
        return self._closest[key]

    def options_for(self, path: str) -> Options:
        cfg = self.config_for(path)
        select = list(self.cli.select) or list(cfg.select or ["ALL"])
        select += list(cfg.extend_select) + list(self.cli.extend_select)
        ignore = list(cfg.ignore) + list(cfg.ignores_for(path)) + list(self.cli.ignore)
        settings = dict(cfg.settings)
        if "cluster" not in settings and not self.cli.isolated:
            profile = self.profile_for(path)
            if profile is not None:
                settings["cluster"] = profile
        settings.update(self.cli.settings)
        if "cluster" in settings:
            from .cluster.profile import feed

            settings = feed(settings)
        return Options(Selection(select=select, ignore=ignore), settings, dict(cfg.severity))

    def cache_for(self, path: str) -> Optional[str]:
        """The results cache directory for ``path`` (``cache.py``), or None when it is off."""
        if not self.cli.cache or os.environ.get("SBATCHLINT_NO_CACHE", "") not in ("", "0"):
            return None
        if self.cli.cache_dir:
            return os.path.abspath(self.cli.cache_dir)
        if os.environ.get("SBATCHLINT_CACHE_DIR"):
            return os.path.abspath(os.environ["SBATCHLINT_CACHE_DIR"])
        cfg = self.config_for(path)
        return os.path.join(cfg.root, os.path.expanduser(cfg.cache_dir or cache.DIRECTORY_NAME))

    def profile_for(self, path: str):
        """The cluster profile in the closest ``.sbatchlint-cluster.toml``, or None."""
        location = self._find("profile", path)
        if location is None:
            return None
        if location not in self._profiles:
            self._profiles[location] = config_module.load_profile(location)
        return self._profiles[location]

    def excluded(self, path: str, is_dir: bool = False) -> bool:
        """Whether the configuration's ``exclude`` matches ``path``; a directory is judged by the
        configuration that applies where it sits, not one inside it."""
        where = os.path.dirname(os.path.abspath(path)) if is_dir else path
        return self.config_for(where).excludes(path)

    def force_exclude(self, path: str) -> bool:
        """Whether ``exclude`` applies to ``path`` although it was named on the command line."""
        if self.cli.force_exclude is not None:
            return self.cli.force_exclude
        return bool(self.config_for(path).force_exclude)

    def respect_gitignore(self, directory: str) -> bool:
        """Whether a search of ``directory`` leaves out what git ignores (the default)."""
        if self.cli.respect_gitignore is not None:
            return self.cli.respect_gitignore
        setting = self.config_for(directory).respect_gitignore
        return True if setting is None else setting


@dataclass
class Job:
    path: str  # on disk, or "-"
    display: str
    options: Options
    apply: bool = False
    unsafe: bool = False
    diff: bool = False
    stdin_data: Optional[bytes] = None
    found_by: str = "argument"  # how the file was found (``files.Candidate.found_by``)
    error: Optional[str] = None  # a reason known before reading it (``files.Candidate.error``)
    add_noqa: bool = False  # write a suppression comment for every finding (``noqa.py``)
    cache: Optional[str] = None  # the results cache directory (``cache.py``); None: no cache


def run_job(job: Job) -> FileResult:
    """Lint (and maybe fix) one file. Never raises for a bad file: the reason is in ``error``.

    What the output must hide comes from the model the rules use (``secrets.found_in``); until
    that model exists, and if it cannot be built, reading the file as text finds what to hide.
    A rule that fails costs only its own findings: it is reported with the file (``error``).
    With ``job.cache``, a result stored for the same inputs is used instead (``cache.py``)."""
    if job.error:
        return FileResult(job.display, error=job.error)
    if _STOP is not None and _STOP.is_set():  # interrupted: the run is ending, start nothing new
        return FileResult(job.display, error=f"{job.display}: not linted: interrupted", error_kind="internal")
    try:
        if job.path == "-":
            source = Source.checked(job.stdin_data or b"", job.display)
        else:
            source = Source.read(job.path)
            source.path = job.display
    except InputError as err:
        return FileResult(job.display, error=str(err))
    if not cache.cacheable(job):
        return _lint_source(job, source)
    assert job.cache is not None
    entry_key = cache.key(source.data, job.path, job.display, job.options)
    result = _stored(job, source, entry_key)
    if result is not None:
        return result
    with cache.Recording() as probes:
        result = _lint_source(job, source)
    cache.store(job.cache, entry_key, result, probes)
    return result


def _stored(job: Job, source: Source, entry_key: str) -> Optional[FileResult]:
    found = cache.load(job.cache, entry_key, job.display)
    if found is None:
        return None
    result = FileResult(job.display, source)
    result.diagnostics, result.launched, result.skipped = found
    return result


def stored_result(job: Job) -> Optional[FileResult]:
    """``run_job(job)`` when the cache holds its result, else None (nothing is linted)."""
    if job.error or not cache.cacheable(job) or (_STOP is not None and _STOP.is_set()):
        return None
    assert job.cache is not None
    if not os.path.isdir(job.cache):
        return None
    try:
        source = Source.read(job.path)
    except InputError:
        return None
    source.path = job.display
    return _stored(job, source, cache.key(source.data, job.path, job.display, job.options))


_LINTING: "Optional[tuple]" = None


def _linting() -> tuple:
    """``files.NotWritten``, ``files.write_fixed``, ``redaction.text_scan``, ``redaction.values``,
    ``secrets.found_in`` and ``python.entry.launched_python_files``: what linting a file uses
    besides the model, imported when the first file is linted (a run whose results all come from
    the cache needs none of it), then kept: import statements run for every file cost more than
    the scan of a small one."""
    global _LINTING
    if _LINTING is None:
        from .files import NotWritten, write_fixed
        from .python.entry import launched_python_files
        from .redaction import text_scan, values
        from .secrets import found_in

        _LINTING = (NotWritten, write_fixed, text_scan, values, found_in, launched_python_files)
    return _LINTING


def _lint_source(job: Job, source: Source) -> FileResult:
    NotWritten, write_fixed, text_scan, _values, found_in, launched_python_files = _linting()
    result = FileResult(job.display, source)
    failures: List[RuleFailure] = []
    problems: List[Tuple[str, str]] = []  # (kind, message), reported in this order
    # The model is a great many small objects that live until the file is done: as ``lint``
    # does for the rules, the cyclic collector is held off while it is built and read (the
    # secrets scan and the launched files read most of it), and the model is let go at the end.
    was_enabled = gc.isenabled()
    gc.disable()
    model = None
    try:
        original = source
        _hide(result, source, text_scan(source))
        model = build(source, job.options)
        _hide(result, source, found_in(model))
        if job.found_by in SEARCHED and not is_python(source) and not _is_job(model):
            result.skipped = True  # a sourced helper met in a directory search: no job to check
            return result
        if job.apply or job.diff:
            outcome = run_fix(source, job.options, unsafe=job.unsafe, failures=failures)  # lets the model go
            if not outcome.converged:
                problems.append(("internal", f"{job.display}: internal error: the fixes did not settle after "
                                 f"{outcome.passes} passes, so none was applied"))
            if outcome.converged and outcome.data != source.data:
                if job.diff:
                    result.diff = unified_diff(source, outcome.data, result)
                else:
                    written = True
                    if job.path != "-":
                        try:
                            write_fixed(job.path, outcome.data, source.data)
                        except NotWritten as err:
                            problems.append(("write", str(err)))
                            written = False
                        except OSError as err:
                            problems.append(("write", f"{job.display}: cannot write: {err.strerror or err}"))
                            written = False
                    if written:
                        result.fixed_data = outcome.data
                        result.fixed = outcome.applied
                        result.fixed_codes = outcome.codes
                        source = Source(outcome.data, job.display)
                        result.source = source
                        _hide(result, source, text_scan(source))
            model = build(source, job.options)  # the fixer let the first model go
            if source is not original:
                _hide(result, source, found_in(model))
        result.diagnostics = lint(source, job.options, model, failures)
        if job.add_noqa and result.diagnostics and job.path != "-" and not failures:
            model, source = _add_noqa(job, result, model, source, problems)
        if not is_python(source) and job.path != "-":
            result.launched = launched_python_files(model, job.path)
    except RecursionError:
        problems.append(("internal", f"{job.display}: too deeply nested to analyse"))
    except Exception as err:  # a bug outside the rules: report it for this file and go on
        problems.append(("internal", f"{job.display}: internal error: {type(err).__name__}: {err}"))
    finally:
        if model is not None:
            let_go(model)
            model = None  # freed here, before the collector is back: it would walk all of it
        if was_enabled:
            gc.enable()
    reported = set()
    for failure in failures:  # the fix passes run the rules again: one line per distinct failure
        message = failure.describe()
        if message not in reported:
            reported.add(message)
            problems.append(("internal", f"{job.display}: {message}"))
    if problems:
        prefix = job.display + ": "
        result.error_kind = problems[0][0]
        result.error = result.redact("; ".join(
            message[len(prefix):] if index and message.startswith(prefix) else message
            for index, (_kind, message) in enumerate(problems)))
    return result


def _add_noqa(job: Job, result: FileResult, model, source: Source, problems: List[Tuple[str, str]]):
    """Write ``# sbatchlint: disable=`` comments for the findings of ``result`` into the file,
    then lint what was written: the findings that remain are the result's."""
    from .files import NotWritten, write_fixed
    from .linter import parse_errors
    from .noqa import suppression_edits
    from .redaction import text_scan
    from .secrets import found_in

    # a finding in a file the script sources is silenced in that file, not here
    edits = suppression_edits(model, [d for d in result.diagnostics if d.path == result.path])
    if not edits:
        return model, source
    data = source.edited(edits)
    if parse_errors(Source(data, job.display)) > parse_errors(source):
        problems.append(("internal", f"{job.display}: internal error: the suppression comments would break "
                         "the script's syntax, so none was written"))
        return model, source
    try:
        write_fixed(job.path, data, source.data)
    except NotWritten as err:
        problems.append(("write", str(err)))
        return model, source
    except OSError as err:
        problems.append(("write", f"{job.display}: cannot write: {err.strerror or err}"))
        return model, source
    before = len(result.diagnostics)
    source = Source(data, job.display)
    result.source = source
    _hide(result, source, text_scan(source))
    model = build(source, job.options)
    _hide(result, source, found_in(model))
    result.diagnostics = lint(source, job.options, model)
    result.suppressed = before - len(result.diagnostics)
    return model, source


# How a file met in a directory search was found (``files.Candidate.found_by``); a file named on
# the command line is always linted.
SEARCHED = ("suffix", "directive")


def _is_job(model) -> bool:
    """Whether a directory search lints this shell file: a batch script, a script that submits
    the jobs it writes, or a template (which gets its one finding)."""
    return bool(model.is_batch_script or model.template_evidence is not None
                or any(doc.submitted for doc in model.heredocs))


def _hide(result: FileResult, source: Source, found) -> None:
    """Make ``found`` (the secrets of ``source``) what the outputs about ``result`` hide."""
    result.secrets = _linting()[3](source, found)
    result.secret_spans = [secret.span for secret in found]


def unified_diff(source: Source, new: bytes, result: FileResult) -> str:
    import difflib  # only --diff needs it

    before = source.text().splitlines(keepends=True)
    after = Source(new, source.path).text().splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, source.path, source.path)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return result.redact(text)


class SourcedFindings:
    """Findings that a script's rules report in a file it sources (``Rule.report``'s ``origin``):
    each such file is reported as a file of its own, at its own lines, and each finding once in a
    run however many scripts source the file."""

    def __init__(self) -> None:
        self.seen: set = set()

    def split(self, result: FileResult) -> List[FileResult]:
        """Take ``result``'s findings in other files out of it, as results for those files."""
        foreign = [d for d in result.diagnostics if d.path != result.path]
        if not foreign:
            return []
        from .lazyclass import replace

        from .redaction import text_scan

        result.diagnostics = [d for d in result.diagnostics if d.path == result.path]
        by_path: Dict[str, list] = {}
        for d in foreign:
            by_path.setdefault(d.path, []).append(d)
        out = []
        for path, found in by_path.items():
            try:
                source = Source.read(path)
            except InputError:
                continue  # gone since it was read: its findings cannot be placed
            display = _shown(path)
            source.path = display
            fresh = []
            for d in found:
                key = (os.path.realpath(path), d.code, d.span.start, d.span.end)
                if key in self.seen or d.span.end > len(source.data):
                    continue
                self.seen.add(key)
                fresh.append(replace(d, path=display))
            if fresh:
                other = FileResult(display, source, fresh)
                _hide(other, source, text_scan(source))
                other.secrets = sorted(set(other.secrets) | set(result.secrets))
                out.append(other)
        return out


def _shown(path: str) -> str:
    """A sourced file's path as output shows it: relative to the working directory when under it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def once_each(jobs: List[Job]) -> List[Job]:
    """``jobs`` without a second path to a file already among them (symbolic or hard links to
    the same file): fixing it twice would write it twice."""
    seen = set()
    kept = []
    for job in jobs:
        if job.path != "-" and not job.error:
            try:
                info = os.stat(job.path)
            except OSError:
                info = None
            if info is not None:
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    continue
                seen.add(key)
        kept.append(job)
    return kept


PARALLEL_FROM = 16  # files: below this, starting worker processes costs more than it saves

_STOP = None  # in a worker process: the run's "interrupted" event


def cpu_count() -> int:
    """The CPUs this process may run on (a batch allocation or a container may give fewer)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def workers_for(jobs: int, requested: int) -> int:
    """``-j``: 0 (the default) is one process per CPU from ``PARALLEL_FROM`` files up, else one."""
    if requested:
        return requested
    return cpu_count() if jobs >= PARALLEL_FROM else 1


def _worker_start(stop) -> None:
    global _STOP
    import signal

    _STOP = stop
    # Ctrl-C reaches the whole process group; the main process decides what happens. It sets
    # ``stop``: each worker finishes the file in hand (its write is never cut short) and starts
    # no other.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def run_all(jobs: List[Job], workers: int = 0):
    """Results in the order of ``jobs`` (whatever the processes), computed by ``workers``
    processes (see ``workers_for``; 1: in this one)."""
    requested = workers
    workers = min(workers_for(len(jobs), workers), len(jobs))
    if workers <= 1:
        for job in jobs:
            yield run_job(job)
        return
    # results the cache holds are read here: a run over an unchanged tree starts no process
    stored = [stored_result(job) for job in jobs]
    if any(result is not None for result in stored):
        rest = run_all([job for job, result in zip(jobs, stored) if result is None], requested)
        for result in stored:
            yield result if result is not None else next(rest)
        return
    import multiprocessing
    import signal
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context()
    stop = context.Event()
    chunk = max(1, min(8, len(jobs) // (workers * 4)))
    pool = None
    mask = getattr(signal, "pthread_sigmask", lambda how, signals: set())  # POSIX only
    # workers start with Ctrl-C held, until they have chosen to ignore it
    held = mask(getattr(signal, "SIG_BLOCK", 0), {signal.SIGINT})
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start,
                                   initargs=(stop,))
        results = pool.map(run_job, jobs, chunksize=chunk)
        mask(getattr(signal, "SIG_SETMASK", 2), held)  # a Ctrl-C held meanwhile arrives here
        for result in results:
            yield result
    except BaseException:  # Ctrl-C, or the caller stopped reading: no new file is started
        stop.set()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        mask(getattr(signal, "SIG_SETMASK", 2), held)
    pool.shutdown(wait=True)


# -- --show-settings ---------------------------------------------------------------------------------
# What a setting is when nobody sets it (the rules' own fallbacks), for the keys that have one.
_DEFAULTS = {
    "force-exclude": False,
    "respect-gitignore": True,
    "shellcheck": False,
    "slurm-version": "24.05",
    "gpu-request": "required",
    "python-max-bytes": 1024 * 1024,
}


def settings_report(resolver: Resolver, path: str) -> List[Tuple[str, object, str]]:
    """``(key, value, where it came from)`` for every setting that applies to ``path``: the
    command line, the configuration file (named), the cluster profile (named), or the default.
    A value of None is a setting nobody set and that has no default."""
    cli = resolver.cli
    cfg = resolver.config_for(path)
    where = "--isolated: no configuration" if cli.isolated else (
        f"--config {cfg.path}" if resolver.forced is not None else (cfg.path or "no configuration file found"))
    rows: List[Tuple[str, object, str]] = [("configuration", cfg.path, where)]

    def config_or_default(key: str, value, present: bool, default=None):
        rows.append((key, value, cfg.path) if present else (key, default, "default"))

    if cli.select:
        rows.append(("select", list(cli.select), "--select"))
    else:
        config_or_default("select", cfg.select, cfg.select is not None, ["ALL"])
    extend = list(cfg.extend_select) + list(cli.extend_select)
    rows.append(("extend-select", extend, _sources((cfg.path, cfg.extend_select), ("--extend-select", cli.extend_select))))
    per_file = list(cfg.ignores_for(path))
    ignore = list(cfg.ignore) + per_file + list(cli.ignore)
    rows.append(("ignore", ignore, _sources((cfg.path, cfg.ignore), (f"{cfg.path} per-file-ignores", per_file),
                                            ("--ignore", cli.ignore))))
    rows.append(("severity", {code: level.value for code, level in cfg.severity.items()},
                 cfg.path if cfg.severity else "default"))
    config_or_default("exclude", list(cfg.exclude), bool(cfg.exclude), [])
    for key, attribute in (("force-exclude", "force_exclude"), ("respect-gitignore", "respect_gitignore")):
        flag = getattr(cli, attribute)
        if flag is not None:
            rows.append((key, flag, f"--{'' if flag else 'no-'}{key}"))
        else:
            value = getattr(cfg, attribute)
            config_or_default(key, value, value is not None, _DEFAULTS[key])
    profile = None
    profile_from = None
    if "cluster" in cfg.settings:
        profile, profile_from = cfg.settings["cluster"], f"{cfg.path} [cluster]"
    elif not cli.isolated:
        location = config_module.find_profile(path if path != "-" else os.getcwd())
        if location is not None:
            profile, profile_from = resolver.profile_for(path), location
    fed = {}
    if profile is not None:
        from .cluster.profile import feed

        fed = feed({"cluster": profile, **{k: v for k, v in cfg.settings.items() if k != "cluster"}, **cli.settings})
    flags = {"shellcheck": "--shellcheck", "slurm_version": "--slurm-version"}
    for key, (name, _kind) in config_module._SETTINGS.items():
        if name in cli.settings:
            rows.append((key, cli.settings[name], flags.get(name, "command line")))
        elif name in cfg.settings:
            value = cfg.settings[name]
            if fed.get(name) not in (None, value):
                rows.append((key, fed[name], f"{cfg.path}, with {profile_from}"))
            else:
                rows.append((key, value, cfg.path))
        elif fed.get(name) is not None:
            rows.append((key, fed[name], profile_from))
        else:
            rows.append((key, _DEFAULTS.get(key), "default"))
    rows.append(("cluster", (getattr(profile, "cluster", None) or "unnamed") if profile is not None else None, profile_from or "no cluster profile"))
    return rows


def _sources(*pairs) -> str:
    named = [name for name, values in pairs if values]
    return ", ".join(named) if named else "default"

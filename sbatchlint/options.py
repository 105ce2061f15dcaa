"""Option tables of ``sbatch`` and ``srun`` (Slurm 22.05 to 25.x) plus pyxis, and value validators.

The tables say, for every long option the two commands accept, its one-letter
short form (if any), whether it takes an argument (``"required"``,
``"optional"`` or ``"none"``) and, for the options whose values this project
checks statically, which validator applies (see :func:`validate`).

Where the facts come from (reference only, nothing is read at run time):

* Slurm's own option table (``src/common/slurm_opt.c``: every
  ``slurm_cli_opt_t`` entry gives the long name, ``has_arg`` and the short
  letter; ``set_func`` means "all commands", ``set_func_sbatch`` /
  ``set_func_srun`` restrict an option to one command);
* the sbatch/srun man pages and release notes for the options that appeared
  or changed between 22.05 and 25.11 (``--oom-kill-step`` 25.05,
  ``--wait-for-children`` 25.05, ``--spread-segments`` /
  ``--consolidate-segments`` 25.11, ``--requeue[=expedite]`` 25.11,
  ``--resv-ports`` on sbatch in 25.11, ``--power`` only up to 22.05);
* pyxis's ``spank_opts`` table (``args.c``).

The tables are a union over those releases: an option that only one release
knows is still listed, so the linter never calls a valid option unknown.

Optional arguments follow getopt's rule: the value must be attached
(``--exclusive=user``, ``-K1``); a separate word after the option is never its
value.  A tokenizer of srun command lines therefore consumes the next word
only for ``arg == "required"``.

Lookups follow ``getopt_long``: a long option may be abbreviated to any
unique prefix; an exact name always wins over a longer option it prefixes
(``--mem`` is not ambiguous with ``--mem-per-cpu``); a prefix that matches
several different options is ambiguous.

This module uses the standard library only and does no work at import time
beyond building the tables.
"""

from __future__ import annotations

from .lazyclass import dataclass, finish, table_row
from .lazyre import lazy

__all__ = [
    "OptionSpec",
    "GEOMETRY_QUANTITIES",
    "SBATCH",
    "SRUN",
    "PYXIS",
    "ALIASES",
    "VALUE_KINDS",
    "lookup",
    "lookup_exact",
    "canonical",
    "suggest",
    "ambiguous",
    "unknown_kind",
    "with_site_options",
    "DEFAULT_SLURM_VERSION",
    "parse_slurm_version",
    "steps_inherit",
    "read_as_short",
    "has_expansion",
    "validate",
]


@dataclass(frozen=True)
class OptionSpec:
    """One command-line option and what it means.

    ``long`` is the name without dashes, ``short`` the one-letter form or
    ``None``, ``arg`` one of ``"required"``, ``"optional"``, ``"none"``,
    ``value`` the value grammar: the validator kind for :func:`validate` or
    ``None`` (free form), and ``pyxis`` is true for the options that only
    exist when the pyxis SPANK plugin is loaded.

    The rest is what the option means to the job:

    * ``aliases``: the other long names of the same option (``--tasks-per-node``
      for ``--ntasks-per-node``); ``canonical`` the preferred name of the option;
    * ``geometry``: the quantity of the job's geometry it sets, one of
      :data:`GEOMETRY_QUANTITIES` (``"tasks_per_node"`` for
      ``--ntasks-per-node``), ``"placement"`` for an option that only says
      where the tasks go (``--nodelist``, ``--gpu-bind``), or ``None``;
    * ``steps_inherit``: whether an ``srun`` step inside the allocation gets
      the batch header's value without repeating it; pyxis options reach the
      batch step only;
    * ``not_inherited``: the Slurm releases ``(first, last)`` (``(major,
      minor)`` pairs, ``last`` excluded) in which steps do not inherit it
      although they do before and after (``--cpus-per-task``: 22.05 to 23.11);
    * ``accumulates``: given twice, the values add up instead of replacing
      each other (``--mail-type``);
    * ``list_valued``: the value is a comma-separated list of entries, but
      only the last flag counts: pyxis receives one value per option on the
      side that builds the container (``--container-mounts``,
      ``--container-env``; DOMAIN.md §9), so a second flag drops the first's;
    * ``free_text``: the value is text for people (``--job-name``,
      ``--comment``), not something the job uses as a name or path;
    * ``toggle``: a pyxis setting that this option and its ``--no-…`` twin turn
      on and off (``--container-mount-home`` / ``--no-container-mount-home``).
    """

    long: str
    short: str | None
    arg: str
    value: str | None = None
    pyxis: bool = False
    aliases: tuple = ()
    canonical: str = ""
    geometry: str | None = None
    steps_inherit: bool = True
    not_inherited: tuple | None = None
    accumulates: bool = False
    list_valued: bool = False
    free_text: bool = False
    toggle: str | None = None
    site: bool = False  # declared by the configuration (a site's SPANK plugin), not Slurm's


_R, _O, _N = "required", "optional", "none"

# (long, short, arg, value kind).  Options of all of salloc/sbatch/srun or of
# both sbatch and srun.
_BOTH = [
    ("account", "A", _R, None),
    ("acctg-freq", None, _R, None),
    ("autocomplete", None, _R, None),  # hidden: shell completion, exits
    ("bb", None, _R, None),
    ("bbf", None, _R, None),
    ("begin", "b", _R, None),
    ("chdir", "D", _R, None),
    ("cluster", None, _R, None),  # same as --clusters
    ("cluster-constraint", None, _R, None),
    ("clusters", "M", _R, None),
    ("comment", None, _R, None),
    ("consolidate-segments", None, _N, None),  # 25.11
    ("constraint", "C", _R, None),
    ("container", None, _R, None),  # Slurm's own OCI support, not pyxis
    ("container-id", None, _R, None),
    ("context", None, _R, None),
    ("contiguous", None, _N, None),
    ("core-spec", "S", _R, None),
    ("cores-per-socket", None, _R, "count"),
    ("cpu-freq", None, _R, None),
    ("cpus-per-gpu", None, _R, "count"),
    ("cpus-per-task", "c", _R, "count"),
    ("deadline", None, _R, None),
    ("delay-boot", None, _R, None),
    ("dependency", "d", _R, None),
    ("distribution", "m", _R, None),
    ("error", "e", _R, None),
    ("exclude", "x", _R, None),
    ("exclusive", None, _O, "exclusive"),
    ("export", None, _R, None),
    ("extra", None, _R, None),
    ("extra-node-info", "B", _R, None),
    ("gpu-bind", None, _R, None),
    ("gpu-freq", None, _R, None),
    ("gpus", "G", _R, "gpus"),
    ("gpus-per-node", None, _R, "gpus"),
    ("gpus-per-socket", None, _R, "gpus"),
    ("gpus-per-task", None, _R, "gpus"),
    ("gres", None, _R, "gres"),
    ("gres-flags", None, _R, None),
    ("help", "h", _N, None),
    ("hint", None, _R, None),
    ("hold", "H", _N, None),
    ("input", "i", _R, None),
    ("job-name", "J", _R, None),
    ("licenses", "L", _R, None),
    ("mail-type", None, _R, None),
    ("mail-user", None, _R, None),
    ("mcs-label", None, _R, None),
    ("mem", None, _R, "mem"),
    ("mem-bind", None, _R, None),
    ("mem-per-cpu", None, _R, "mem"),
    ("mem-per-gpu", None, _R, "mem"),
    ("mincpus", None, _R, "count"),
    ("network", None, _R, None),
    ("nice", None, _O, None),
    ("no-kill", "k", _O, None),
    ("nodefile", "F", _R, None),
    ("nodelist", "w", _R, None),
    ("nodes", "N", _R, "nodes"),
    ("ntasks", "n", _R, "count"),
    ("ntasks-per-core", None, _R, "count"),
    ("ntasks-per-gpu", None, _R, "count"),
    ("ntasks-per-node", None, _R, "count"),
    ("ntasks-per-socket", None, _R, "count"),
    ("ntasks-per-tres", None, _R, "count"),
    ("oom-kill-step", None, _O, None),  # 25.05, [=0|1]
    ("open-mode", None, _R, None),
    ("output", "o", _R, None),
    ("overcommit", "O", _N, None),
    ("oversubscribe", "s", _N, None),
    ("partition", "p", _R, None),
    ("power", None, _R, None),  # 22.05; removed with the power plugins
    ("prefer", None, _R, None),
    ("priority", None, _R, None),
    ("profile", None, _R, None),
    ("propagate", None, _O, None),
    ("qos", "q", _R, None),
    ("quiet", "Q", _N, None),
    ("reboot", None, _N, None),
    ("reservation", None, _R, None),
    ("resources", None, _R, None),  # hierarchical resources (25.x)
    ("resv-ports", None, _O, None),  # srun; sbatch too since 25.11
    ("segment", None, _R, None),
    ("signal", None, _R, None),
    ("sockets-per-node", None, _R, "count"),
    ("spread-job", None, _N, None),
    ("spread-segments", None, _N, None),  # 25.11
    ("stepmgr", None, _N, None),
    ("switches", None, _R, None),
    ("tasks-per-node", None, _R, "count"),  # deprecated --ntasks-per-node
    ("test-only", None, _N, None),
    ("thread-spec", None, _R, "count"),
    ("threads-per-core", None, _R, "count"),
    ("time", "t", _R, "time"),
    ("time-min", None, _R, "time"),
    ("tmp", None, _R, "mem"),
    ("tres-bind", None, _R, None),
    ("tres-per-task", None, _R, None),
    ("usage", None, _N, None),
    ("use-min-nodes", None, _N, None),
    ("verbose", "v", _N, None),
    ("version", "V", _N, None),
    ("wckey", None, _R, None),
]

_SBATCH_ONLY = [
    ("array", "a", _R, "array"),
    ("batch", None, _R, None),
    ("export-file", None, _R, None),
    ("get-user-env", None, _O, None),
    ("gid", None, _R, None),
    ("ignore-pbs", None, _N, None),
    ("kill-on-invalid-dep", None, _R, None),
    ("no-requeue", None, _N, None),
    ("parsable", None, _N, None),
    ("requeue", None, _O, None),  # no argument before 25.11, then [=expedite]
    ("uid", None, _R, None),
    ("wait", "W", _N, None),  # sbatch -W: wait for the job; srun -W takes seconds
    ("wait-all-nodes", None, _R, None),
    ("wrap", None, _R, None),
]

_SRUN_ONLY = [
    ("accel-bind", None, _R, None),
    ("bcast", None, _O, None),
    ("bcast-exclude", None, _R, None),
    ("compress", None, _O, None),
    ("cpu-bind", None, _R, None),
    ("cpu_bind", None, _R, None),  # old spelling kept for OpenMPI
    ("debugger-test", None, _N, None),
    ("disable-status", "X", _N, None),
    ("epilog", None, _R, None),
    ("exact", None, _N, None),
    ("external-launcher", None, _O, None),
    ("het-group", None, _R, None),
    ("immediate", "I", _O, None),
    ("interactive", None, _N, None),
    ("jobid", None, _R, None),
    ("kill-on-bad-exit", "K", _O, "kill-on-bad-exit"),
    ("label", "l", _N, None),
    ("mpi", None, _R, None),
    ("msg-timeout", None, _R, "count"),
    ("multi-prog", None, _N, None),
    ("no-allocate", "Z", _N, None),
    ("overlap", None, _O, None),
    ("pack-group", None, _R, None),  # old name of --het-group
    ("preserve-env", "E", _N, None),
    ("prolog", None, _R, None),
    ("pty", None, _O, None),
    ("quit-on-interrupt", None, _N, None),
    ("relative", "r", _R, None),
    ("send-libs", None, _O, None),
    ("slurmd-debug", None, _R, None),
    ("task-epilog", None, _R, None),
    ("task-prolog", None, _R, None),
    ("threads", "T", _R, "count"),
    ("treewidth", None, _R, None),
    ("unbuffered", "u", _N, None),
    ("wait", "W", _R, None),
    ("wait-for-children", None, _N, None),  # 25.05
    ("whole", None, _N, None),
    ("x11", None, _O, None),  # only when Slurm is built with X11 support
]

# pyxis SPANK options (pyxis args.c spank_opts: has_arg 1 = required, 0 = none).
_PYXIS = [
    ("container-image", None, _R, None),
    ("container-mounts", None, _R, None),
    ("container-workdir", None, _R, None),
    ("container-name", None, _R, None),
    ("container-save", None, _R, None),
    ("container-mount-home", None, _N, None),
    ("no-container-mount-home", None, _N, None),
    ("container-remap-root", None, _N, None),
    ("no-container-remap-root", None, _N, None),
    ("container-entrypoint", None, _N, None),
    ("no-container-entrypoint", None, _N, None),
    ("container-entrypoint-log", None, _N, None),
    ("container-writable", None, _N, None),
    ("container-readonly", None, _N, None),
    ("container-env", None, _R, None),
]


# ---------------------------------------------------------------------------
# Option names: the rest of the project names an option through these.

ACCOUNT = "account"
ARRAY = "array"
CHDIR = "chdir"
COMMENT = "comment"
CPUS_PER_GPU = "cpus-per-gpu"
CPUS_PER_TASK = "cpus-per-task"
DISTRIBUTION = "distribution"
ERROR = "error"
EXCLUDE = "exclude"
EXCLUSIVE = "exclusive"
EXPORT = "export"
GPU_BIND = "gpu-bind"
GPUS = "gpus"
GPUS_PER_NODE = "gpus-per-node"
GPUS_PER_TASK = "gpus-per-task"
GRES = "gres"
HET_GROUP = "het-group"
INPUT = "input"
JOB_NAME = "job-name"
KILL_ON_BAD_EXIT = "kill-on-bad-exit"
MAIL_TYPE = "mail-type"
MEM = "mem"
MEM_PER_CPU = "mem-per-cpu"
MINCPUS = "mincpus"
MPI = "mpi"
NODELIST = "nodelist"
NODES = "nodes"
NTASKS = "ntasks"
NTASKS_PER_GPU = "ntasks-per-gpu"
NTASKS_PER_NODE = "ntasks-per-node"
OPEN_MODE = "open-mode"
OUTPUT = "output"
PARTITION = "partition"
RELATIVE = "relative"
TIME = "time"
VERBOSE = "verbose"
CONTAINER_ENV = "container-env"
CONTAINER_ENTRYPOINT = "container-entrypoint"
CONTAINER_IMAGE = "container-image"
CONTAINER_MOUNT_HOME = "container-mount-home"
CONTAINER_MOUNTS = "container-mounts"
CONTAINER_NAME = "container-name"
CONTAINER_READONLY = "container-readonly"
CONTAINER_REMAP_ROOT = "container-remap-root"
CONTAINER_SAVE = "container-save"
CONTAINER_WORKDIR = "container-workdir"
CONTAINER_WRITABLE = "container-writable"
NO_CONTAINER_ENTRYPOINT = "no-container-entrypoint"
NO_CONTAINER_MOUNT_HOME = "no-container-mount-home"
NO_CONTAINER_REMAP_ROOT = "no-container-remap-root"

#: Long names Slurm treats as the same option (same ``val`` in slurm_opt.c),
#: mapped to the preferred spelling.
ALIASES: dict[str, str] = {
    "cluster": "clusters",
    "cpu_bind": "cpu-bind",
    "pack-group": HET_GROUP,
    "tasks-per-node": NTASKS_PER_NODE,
}

#: The quantities of a job's geometry an option can set (``OptionSpec.geometry``).
GEOMETRY_QUANTITIES = (
    "nodes", "ntasks", "tasks_per_node", "cpus_per_task", "gpus", "gpus_per_node", "gpus_per_task",
)

# What the options mean (see OptionSpec); an option not listed means nothing to the geometry.
_GEOMETRY = {
    NODES: "nodes",
    NTASKS: "ntasks",
    NTASKS_PER_NODE: "tasks_per_node",
    CPUS_PER_TASK: "cpus_per_task",
    GPUS: "gpus",
    GPUS_PER_NODE: "gpus_per_node",
    GRES: "gpus_per_node",
    GPUS_PER_TASK: "gpus_per_task",
    NODELIST: "placement",
    EXCLUDE: "placement",
    RELATIVE: "placement",
    DISTRIBUTION: "placement",
    GPU_BIND: "placement",
    NTASKS_PER_GPU: "placement",
}
# Slurm 22.05 stopped passing --cpus-per-task from the allocation to srun; 23.11 restored it.
_NOT_INHERITED = {CPUS_PER_TASK: ((22, 5), (23, 11))}
_ACCUMULATING = frozenset({MAIL_TYPE, VERBOSE})
# Comma-separated lists of which only the last flag reaches pyxis where it builds the container.
_LISTS = frozenset({CONTAINER_MOUNTS, CONTAINER_ENV})
_FREE_TEXT = frozenset({JOB_NAME, COMMENT})
_TOGGLES = {
    CONTAINER_MOUNT_HOME: "mount-home",
    NO_CONTAINER_MOUNT_HOME: "mount-home",
    CONTAINER_REMAP_ROOT: "remap-root",
    NO_CONTAINER_REMAP_ROOT: "remap-root",
    CONTAINER_ENTRYPOINT: "entrypoint",
    NO_CONTAINER_ENTRYPOINT: "entrypoint",
    CONTAINER_WRITABLE: "writable",
    CONTAINER_READONLY: "writable",
}


_NAMES_OF: dict = {}  # preferred name -> every alias of it
for _name, _target in ALIASES.items():
    _NAMES_OF.setdefault(_target, []).append(_name)


def _spec(long, short, arg, value, pyxis):
    preferred = ALIASES.get(long, long)
    names = _NAMES_OF.get(preferred)
    if names is None:  # most options: no other name (an alias's own name is always listed)
        aliases = ()
    else:
        aliases = tuple(sorted(name for name in names if name != long))
        if preferred != long:
            aliases = tuple(sorted(set(aliases) | {preferred}))
    return table_row(OptionSpec, {
        "long": long, "short": short, "arg": arg, "value": value, "pyxis": pyxis,
        "aliases": aliases,
        "canonical": preferred,
        "geometry": _GEOMETRY.get(preferred),
        "steps_inherit": not pyxis,
        "not_inherited": _NOT_INHERITED.get(preferred),
        "accumulates": preferred in _ACCUMULATING,
        "list_valued": preferred in _LISTS,
        "free_text": preferred in _FREE_TEXT,
        "toggle": _TOGGLES.get(preferred),
        "site": False,
    })


def _build(rows, pyxis=False):
    finish(OptionSpec)  # the table's rows are made without ``__init__`` (``table_row``)
    return {
        long: _spec(long, short, arg, value, pyxis)
        for long, short, arg, value in rows
    }


PYXIS: dict[str, OptionSpec] = _build(_PYXIS, pyxis=True)
_SHARED = _build(_BOTH)  # the same (immutable) specs in both tables
SBATCH: dict[str, OptionSpec] = {**_SHARED, **_build(_SBATCH_ONLY), **PYXIS}
SRUN: dict[str, OptionSpec] = {**_SHARED, **_build(_SRUN_ONLY), **PYXIS}

#: The validator kinds :func:`validate` knows.
VALUE_KINDS = (
    "time",
    "nodes",
    "count",
    "gpus",
    "gres",
    "mem",
    "array",
    "exclusive",
    "kill-on-bad-exit",
)

# Short-letter indexes, built lazily per table.
_SHORT_CACHE: dict[int, tuple[dict[str, OptionSpec], int, dict[str, OptionSpec]]] = {}


def _short_index(table: dict[str, OptionSpec]) -> dict[str, OptionSpec]:
    cached = _SHORT_CACHE.get(id(table))
    if cached is not None and cached[0] is table and cached[1] == len(table):
        return cached[2]
    index = {spec.short: spec for spec in table.values() if spec.short}
    _SHORT_CACHE[id(table)] = (table, len(table), index)
    return index


def _clean(name: str) -> str:
    name = name.lstrip("-")
    eq = name.find("=")
    return name if eq < 0 else name[:eq]


def canonical(name: str) -> str:
    """The preferred long name for ``name`` (resolves :data:`ALIASES`)."""
    return ALIASES.get(name, name)


def lookup_exact(table: dict[str, OptionSpec], name: str) -> OptionSpec | None:
    """The option called exactly ``name`` (a single letter is a short option).

    Leading dashes and an ``=value`` suffix are ignored.
    """
    name = _clean(name)
    if not name:
        return None
    if len(name) == 1:
        return _short_index(table).get(name)
    return table.get(name)


# ``lookup``'s answers in sbatch's and srun's own tables (never changed after import), kept for
# the run: a name that is no key is searched as a prefix of every key, for every step that uses it.
_LOOKUPS: "dict[tuple[bool, str], OptionSpec | None]" = {}


def lookup(table: dict[str, OptionSpec], name: str) -> OptionSpec | None:
    """Find an option as getopt_long would.

    ``name`` is written without leading dashes (they are stripped if present,
    as is an ``=value`` suffix).  A single letter is a short option.  A longer
    name matches exactly, or else as the unique prefix of one option (aliases
    of the same option count once).  Returns ``None`` for an unknown name and
    for an ambiguous prefix.
    """
    if table is SRUN or table is SBATCH:
        key = (table is SRUN, name)
        try:
            return _LOOKUPS[key]
        except KeyError:
            found = _lookup(table, name)
            if len(_LOOKUPS) < 4096:
                _LOOKUPS[key] = found
            return found
    return _lookup(table, name)


def _lookup(table: dict[str, OptionSpec], name: str) -> OptionSpec | None:
    name = _clean(name)
    if not name:
        return None
    if len(name) == 1:
        return _short_index(table).get(name)
    spec = table.get(name)
    if spec is not None:
        return spec
    matches = [key for key in table if key.startswith(name)]
    if len(matches) == 1:
        return table[matches[0]]
    targets = {canonical(key) for key in matches}
    if len(targets) != 1:
        return None  # unknown, or ambiguous between different options
    target = targets.pop()
    return table.get(target) or table[matches[0]]


def suggest(table: dict[str, OptionSpec], name: str) -> str | None:
    """The one long option ``name`` was most likely meant to be, or ``None``.

    For a misspelt long name (``ntask-per-node`` -> ``ntasks-per-node``,
    ``gpu-per-node`` -> ``gpus-per-node``, ``ntasks_per_node`` ->
    ``ntasks-per-node``).  Aliases collapse to their preferred name.  Returns
    ``None`` when nothing is close enough or when two different options are
    about equally close.
    """
    import difflib  # only needed here; keeps the module import light

    name = _clean(name)
    if not name:
        return None
    normal = name.lower().replace("_", "-")
    if normal in table and normal != name:
        return canonical(normal)
    known = _KNOWN_MISTAKES.get(normal)
    if known is not None and known in table:
        return known
    scores: dict[str, float] = {}
    matcher = difflib.SequenceMatcher(b=normal, autojunk=False)
    for key in table:
        matcher.set_seq1(key)
        if matcher.real_quick_ratio() < _SUGGEST_CUTOFF:
            continue
        if matcher.quick_ratio() < _SUGGEST_CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= _SUGGEST_CUTOFF:
            target = canonical(key)
            scores[target] = max(ratio, scores.get(target, 0.0))
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    best, best_score = ranked[0]
    if best == name:
        return None
    if len(ranked) > 1 and best_score - ranked[1][1] < _SUGGEST_MARGIN:
        return None
    return best


#: The Slurm release the rules assume when the configuration names none.
DEFAULT_SLURM_VERSION = (24, 5)


def parse_slurm_version(text: str):
    """``"22.05"``, ``"22.05.8"``, ``"slurm 23.11.4"`` → ``(22, 5)`` / ``(23, 11)``; None when
    the text names no release."""
    words = str(text).strip().split()
    if not words:
        return None
    parts = words[-1].split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def steps_inherit(spec: OptionSpec, version) -> bool:
    """Whether an srun step of Slurm ``version`` takes this header option from the allocation."""
    if not spec.steps_inherit:
        return False
    if spec.not_inherited is not None:
        first, last = spec.not_inherited
        return not (first <= tuple(version) < last)
    return True


def with_site_options(table: dict[str, OptionSpec], declared) -> dict[str, OptionSpec]:
    """``table`` plus the options a site's plugins add, as the configuration lists them:
    ``"environment="`` takes a value, ``"no-gpu-reset"`` is a flag. Returns ``table`` itself
    when there are none."""
    key = (id(table), tuple(str(item) for item in declared or ()))
    if not key[1]:
        return table
    cached = _SITE_TABLES.get(key)
    if cached is not None and cached[0] is table:
        return cached[1]
    extra: dict[str, OptionSpec] = {}
    for item in declared or ():
        name = str(item).strip().lstrip("-")
        takes_value = name.endswith("=")
        name = name.rstrip("=")
        if name and name not in table:
            extra[name] = OptionSpec(name, None, _R if takes_value else _N, canonical=name, steps_inherit=False, site=True)
    built = {**table, **extra} if extra else table
    if len(_SITE_TABLES) < 64:
        _SITE_TABLES[key] = (table, built)
    return built


_SITE_TABLES: dict = {}


def unknown_kind(table: dict[str, OptionSpec], other: dict[str, OptionSpec], name: str):
    """What an unknown long option ``name`` of ``table`` is: ``("other", spec)`` an option of the
    other command (srun's in sbatch), ``("ambiguous", names)`` an abbreviation of several,
    ``("near", name)`` a near miss of one known option (a misspelling), or ``("unknown", None)``
    far from every known option (it may come from a plugin of the site)."""
    spec = lookup_exact(other, name)
    if spec is not None:
        return "other", spec
    candidates = ambiguous(table, name)
    if len(candidates) > 1:
        return "ambiguous", candidates
    suggestion = suggest(table, name)
    if suggestion is not None:
        return "near", suggestion
    return "unknown", None


def ambiguous(table: dict[str, OptionSpec], name: str) -> list[str]:
    """The preferred names of every option ``name`` abbreviates (more than one: ambiguous)."""
    return sorted({canonical(key) for key in table if key.startswith(name)})


def read_as_short(table: dict[str, OptionSpec], word: str) -> tuple[str, bool]:
    """How getopt reads ``-abc…`` as one-letter options: (rendering, rejected).

    ``-ntasks=8`` reads as ``-n tasks=8`` (``--ntasks`` with a value it rejects),
    ``-HQ`` as ``-H -Q``; ``rejected`` says the command refuses it.
    """
    body = word[1:]
    parts: list[str] = []
    i = 0
    while i < len(body):
        letter = body[i]
        spec = lookup_exact(table, letter)
        if spec is None:
            parts.append(f"-{letter}")
            return " ".join(parts), True
        rest = body[i + 1 :]
        if spec.arg != "none" and rest:
            parts.append(f"-{letter} {rest}")
            if spec.value is not None:
                return " ".join(parts), validate(spec.value, rest, spec.long) is not None
            return " ".join(parts), False
        parts.append(f"-{letter}")
        i += 1
    return " ".join(parts), False


_SUGGEST_CUTOFF = 0.8
_SUGGEST_MARGIN = 0.03

# Names people reach for that are too far from the real one for difflib.
_KNOWN_MISTAKES = {
    "time-limit": "time",
    "timelimit": "time",
    "walltime": "time",
    "wall-time": "time",
    "name": "job-name",
    "output-file": "output",
    "error-file": "error",
    "num-nodes": "nodes",
    "nnodes": "nodes",
    "num-tasks": "ntasks",
    "ntasks-per-gpus": "ntasks-per-gpu",
    "gpus-per-nodes": "gpus-per-node",
    "job-array": "array",
    "array-job": "array",
    "memory": "mem",
}

# ---------------------------------------------------------------------------
# Value validation

_EXPANSION = lazy(r"\$[A-Za-z_{(0-9@*#?$!-]|`")
_UINT = lazy(r"\+?[0-9]+\Z")
_INT_MAX = 2**31 - 1

_TIME_HELP = "use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"


def _label(kind: str, option: str | None) -> str:
    if option:
        return "--" + option.lstrip("-")
    return {
        "time": "--time",
        "nodes": "--nodes",
        "gres": "--gres",
        "array": "--array",
        "exclusive": "--exclusive",
        "kill-on-bad-exit": "--kill-on-bad-exit",
        "mem": "--mem",
        "gpus": "--gpus",
    }.get(kind, kind)


def _valid_timespec(text: str) -> bool:
    # Same grammar as Slurm's _is_valid_timespec (parse_time.c): digits, at
    # most one '-' (before any ':') and at most two ':', with enough numbers.
    groups = dashes = colons = 0
    in_digits = False
    for ch in text:
        if "0" <= ch <= "9":
            if not in_digits:
                groups += 1
                in_digits = True
        elif ch == "-":
            in_digits = False
            dashes += 1
            if colons:
                return False
        elif ch == ":":
            in_digits = False
            colons += 1
        else:
            return False
    if not groups or dashes > 1 or colons > 2:
        return False
    need = (0, 2, 3) if not dashes else (0, 3, 4)
    return groups >= need[colons]


def _check_time(value: str, label: str) -> str | None:
    if value.lower() in ("-1", "infinite", "unlimited"):
        return None
    if value.startswith("-") or not _valid_timespec(value):
        return f'invalid {label} "{value}": {_TIME_HELP}'
    return None


_NODE_NUM = lazy(r"([0-9]+)([kK])?([mM])?\Z")


def _node_number(text: str) -> int | None:
    m = _NODE_NUM.match(text)
    if not m:
        return None
    num = int(m.group(1))
    if m.group(2):
        num *= 1024
    if m.group(3):
        num *= 1024 * 1024
    return num


def list_entries(value: str | None) -> list:
    """The entries of a ``list_valued`` option's value, in order, empty ones dropped
    (``/a:/a,,/b:/b`` → ``["/a:/a", "/b:/b"]``); pyxis splits on the commas alone."""
    return [entry for entry in (value or "").split(",") if entry]


def _check_nodes(value: str, label: str) -> str | None:
    help_ = "use N, MIN-MAX or a size list such as 1,2,4 or 2-16:2"

    def bad(part: str) -> str:
        return f'invalid {label} "{value}": "{part}" is not a valid node count; {help_}'

    if "," in value or ":" in value:
        # size_string form (newer releases): list of N, N-M or N-M:STEP.
        for item in value.split(","):
            body, _, step = item.partition(":")
            low, dash, high = body.partition("-")
            if not low.isdigit() or (dash and not high.isdigit()):
                return bad(item)
            if int(low) < 1:
                return f'invalid {label} "{value}": node counts must be at least 1'
            if ":" in item:
                if not dash or not step.isdigit() or int(step) < 1:
                    return bad(item)
            if dash and int(high) < int(low):
                return (f'invalid {label} "{value}": maximum node count {high} '
                        f"is less than minimum {low}")
        return None
    if "-" in value:
        low_s, _, high_s = value.partition("-")
        low = _node_number(low_s) if low_s else 1  # "-4" means 1-4 to sbatch
        if low is None:
            return bad(low_s)
        high = _node_number(high_s)
        if high is None:
            return bad(high_s)
        if high != 0 and high < low:
            return (f'invalid {label} "{value}": maximum node count {high} '
                    f"is less than minimum {low}")
        return None
    num = _node_number(value)
    if num is None:
        return bad(value)
    if num == 0:
        return (f'invalid {label} "{value}": a job needs at least one node '
                "(0 nodes is only for burst-buffer-only jobs)")
    return None


def _check_count(value: str, label: str) -> str | None:
    if not _UINT.match(value) or not 1 <= int(value) <= _INT_MAX:
        message = f'invalid {label} "{value}": must be a whole number >= 1'
        if label.startswith("--"):
            message += f' (sbatch: Invalid numeric value "{value}" for {label}.)'
        return message
    return None


_COUNT_SUFFIX = lazy(r"[0-9]+[kKmMgGtTpP]?\Z")
_GRES_WORD = lazy(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")


def _check_gpus(value: str, label: str) -> str | None:
    help_ = "use [type:]count, e.g. 8 or a100:8, comma-separated for several types"
    if not value:
        return f'invalid {label} "": {help_}'
    for item in value.split(","):
        parts = item.split(":")
        if len(parts) > 2:
            return f'invalid {label} "{value}": "{item}" has too many fields; {help_}'
        if len(parts) == 2 and not _GRES_WORD.match(parts[0]):
            return f'invalid {label} "{value}": "{parts[0]}" is not a GPU type; {help_}'
        if not _COUNT_SUFFIX.match(parts[-1]):
            return f'invalid {label} "{value}": "{parts[-1]}" is not a GPU count; {help_}'
    return None


def _check_gres(value: str, label: str) -> str | None:
    help_ = 'use name[[:type]:count], e.g. gpu:8 or gpu:a100:4, comma-separated'
    lowered = value.lower()
    if lowered == "none":
        return None
    if lowered in ("help", "list"):
        return (f'invalid {label} "{value}": sbatch prints the GRES list and '
                "exits without submitting")
    if not value:
        return f'invalid {label} "": {help_}'
    for item in value.split(","):
        body = item[5:] if item.startswith("gres/") else item
        parts = body.split(":")
        if len(parts) > 3 or not parts[0]:
            return f'invalid {label} "{value}": "{item}" is not a GRES; {help_}'
        if not _GRES_WORD.match(parts[0]):
            return f'invalid {label} "{value}": "{parts[0]}" is not a GRES name; {help_}'
        if len(parts) == 3:
            kind, count = parts[1], parts[2]
            if not _GRES_WORD.match(kind):
                return f'invalid {label} "{value}": "{kind}" is not a GRES type; {help_}'
            if not _COUNT_SUFFIX.match(count):
                return f'invalid {label} "{value}": "{count}" is not a count; {help_}'
        elif len(parts) == 2:
            # name:count or name:type; a word that starts with a digit but is
            # not a count ("4x") is neither.
            if not (_COUNT_SUFFIX.match(parts[1]) or
                    (_GRES_WORD.match(parts[1]) and not parts[1][0].isdigit())):
                return f'invalid {label} "{value}": "{parts[1]}" is not a type or count; {help_}'
    return None


_MEM = lazy(r"\+?([0-9]+)(?:([kKmMgGtT])[bB]?)?\Z")


def _check_mem(value: str, label: str) -> str | None:
    m = _MEM.match(value)
    if not m or int(m.group(1)) >= 2**63:
        return (f'invalid {label} "{value}": use a whole number of megabytes or '
                "a number with a K, M, G or T suffix, e.g. 64G "
                f"(sbatch: Invalid {label} specification)")
    return None


_ARRAY_ITEM = lazy(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?\Z")


def _check_array(value: str, label: str) -> str | None:
    help_ = "use indexes like 0-15, 1,3,5-7 or 0-15:4, optionally with %N to limit running tasks"
    body, pct, throttle = value.partition("%")
    if pct and not throttle.isdigit():
        return f'invalid {label} "{value}": "%{throttle}" is not a task limit; {help_}'
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    if not body:
        return f'invalid {label} "{value}": no indexes; {help_}'
    for item in body.split(","):
        m = _ARRAY_ITEM.match(item)
        if not m:
            return f'invalid {label} "{value}": "{item}" is not an index or range; {help_}'
        low, high, step = m.groups()
        if high is not None and int(high) < int(low):
            return f'invalid {label} "{value}": range "{item}" ends before it starts'
        if step is not None and int(step) < 1:
            return f'invalid {label} "{value}": step in "{item}" must be at least 1'
    return None


_EXCLUSIVE = ("user", "mcs", "topo", "exclusive", "oversubscribe")


def _check_exclusive(value: str, label: str) -> str | None:
    if value.lower() not in _EXCLUSIVE:
        return (f'invalid {label}="{value}": write {label} alone or '
                f"{label}=user, {label}=mcs or {label}=topo")
    return None


def _check_kill_on_bad_exit(value: str, label: str) -> str | None:
    if value not in ("0", "1"):
        return f'invalid {label}="{value}": use {label}=1 (or 0 to turn it off)'
    return None


_CHECKS = {
    "time": _check_time,
    "nodes": _check_nodes,
    "count": _check_count,
    "gpus": _check_gpus,
    "gres": _check_gres,
    "mem": _check_mem,
    "array": _check_array,
    "exclusive": _check_exclusive,
    "kill-on-bad-exit": _check_kill_on_bad_exit,
}


def has_expansion(value: str) -> bool:
    """Whether a value holds a shell expansion (``$X``, ``${X}``, ``$(cmd)``, backquotes),
    which sbatch passes on literally."""
    return _EXPANSION.search(value) is not None


def validate(kind: str, value: str | None, option: str | None = None) -> str | None:
    """Check an option value; ``None`` when sbatch/srun would accept it.

    ``kind`` is one of :data:`VALUE_KINDS` (an ``OptionSpec.value``).  The
    result is otherwise a short message naming the option and the value, e.g.
    ``invalid --time "1:2:3:4": use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM
    or D-HH:MM:SS``.  ``option`` (long name, dashes optional) is used in the
    message; without it a default name for the kind is used.

    ``value=None`` means the option was written without a value (only legal
    for options with an optional argument) and is accepted.

    Values that contain a shell expansion (``$X``, ``${X}``, ``$(cmd)``,
    backquotes) cannot be checked statically and are accepted (``None``).
    Note that sbatch itself never expands variables in ``#SBATCH`` lines: a
    caller checking header directives has to deal with such values itself.

    Raises ``ValueError`` for an unknown kind.
    """
    check = _CHECKS.get(kind)
    if check is None:
        raise ValueError(f"unknown option value kind: {kind!r}")
    if value is None or _EXPANSION.search(value):
        return None
    return check(value, _label(kind, option))


# ---------------------------------------------------------------------------
# What an option does, for people (the language server's hover): one line each for the options
# multi-node training jobs use, and the Slurm releases that changed an option.

ABOUT: dict[str, str] = {
    ACCOUNT: "The account the job's usage is charged to.",
    ARRAY: "Submit a job array: one job per index (`0-15`, `1,3,5`, `0-99%8` runs at most 8 at a time).",
    CHDIR: "The working directory of the batch script (sbatch) or of the step's tasks (srun).",
    "constraint": "Only nodes with these features (`a100&ib`, `[rack1|rack2]`).",
    CPUS_PER_GPU: "CPUs allocated for each GPU.",
    CPUS_PER_TASK: "CPUs allocated to each task (threads of a dataloader, OpenMP).",
    "dependency": "Start only after other jobs reached a state (`afterok:123`, `singleton`).",
    DISTRIBUTION: "How tasks are placed on nodes, sockets and cores (`block`, `cyclic`, `plane=N`).",
    ERROR: "The file the standard error goes to (`%j` job id, `%x` job name, `%t` task).",
    EXCLUDE: "Nodes the job must not run on.",
    EXCLUSIVE: "No other job shares the nodes (sbatch); the step's resources are not shared with other steps (srun).",
    EXPORT: "Which environment variables reach the job or the step (`ALL`, `NONE`, `ALL,NAME=value`).",
    GPU_BIND: "How GPUs are bound to tasks (`closest`, `single:1`, `map_gpu:…`).",
    GPUS: "GPUs for the whole job (`8`, `a100:8`).",
    GPUS_PER_NODE: "GPUs on every node of the allocation.",
    GPUS_PER_TASK: "GPUs for each task; each task sees only its own unless `--gpu-bind=none`.",
    GRES: "Generic resources per node (`gpu:8`, `gpu:a100:8`).",
    HET_GROUP: "The components of a heterogeneous job the step runs in.",
    INPUT: "Where the standard input of the tasks comes from.",
    JOB_NAME: "The job's name (`%x` in file names, `squeue -n`).",
    KILL_ON_BAD_EXIT: "End the whole step when one task exits with a non-zero status.",
    "label": "Prefix each output line with the number of the task that wrote it.",
    MAIL_TYPE: "When Slurm sends mail (`BEGIN`, `END`, `FAIL`, `ALL`).",
    MEM: "Memory per node (`0`: all of the node's memory).",
    MEM_PER_CPU: "Memory per allocated CPU.",
    "mem-per-gpu": "Memory per allocated GPU.",
    MPI: "The MPI plugin that starts the tasks (`pmix`, `pmi2`, `none`).",
    NODELIST: "Nodes the job must run on.",
    NODES: "Number of nodes (`2`, or a range `2-4`).",
    NTASKS: "Number of tasks (processes) of the job or the step.",
    NTASKS_PER_GPU: "Tasks started for each GPU.",
    NTASKS_PER_NODE: "Tasks started on each node: one per GPU for srun-native training, one for torchrun.",
    OPEN_MODE: "`append` or `truncate` the output and error files (a requeued job appends).",
    OUTPUT: "The file the standard output goes to (`%j` job id, `%x` job name, `%t` task).",
    "overlap": "The step may share the allocation's resources with steps already running.",
    PARTITION: "The partition (queue) the job runs in.",
    "qos": "The quality of service the job asks for.",
    RELATIVE: "Start the step at this node of the allocation (0 is the first).",
    "requeue": "The job may be requeued after a node failure or preemption.",
    "reservation": "Run in this reservation.",
    "signal": "Send a signal this long before the time limit (`B:USR1@300`: to the batch shell, 300 s before).",
    TIME: "The time limit (`MM`, `HH:MM:SS`, `D-HH`): the job is ended when it is reached.",
    "time-min": "The least time limit the job accepts, for backfill.",
    "unbuffered": "Pass the tasks' output through without buffering it.",
    "wait": "sbatch: wait for the job to end; srun: seconds to wait after the first task exits before ending the others.",
    "whole": "The step gets the whole of each allocated node, not just what it asks for.",
    CONTAINER_IMAGE: "pyxis: the container image the tasks run in (`nvcr.io/nvidia/pytorch:25.01-py3`, a `.sqsh` file).",
    CONTAINER_MOUNTS: "pyxis: host paths mounted into the container (`SRC:DST[:flags]`, comma-separated).",
    CONTAINER_WORKDIR: "pyxis: the working directory inside the container.",
    CONTAINER_NAME: "pyxis: a name for the container, so later steps reuse it.",
    CONTAINER_SAVE: "pyxis: save the container's state to this squashfs file when the step ends.",
    CONTAINER_ENV: "pyxis: variables whose host value overrides the image's.",
    CONTAINER_MOUNT_HOME: "pyxis: mount the user's home directory into the container.",
    NO_CONTAINER_MOUNT_HOME: "pyxis: do not mount the user's home directory into the container.",
    CONTAINER_REMAP_ROOT: "pyxis: the user is root inside the container.",
    NO_CONTAINER_REMAP_ROOT: "pyxis: the user keeps their own identity inside the container.",
    CONTAINER_ENTRYPOINT: "pyxis: run the image's entry point.",
    NO_CONTAINER_ENTRYPOINT: "pyxis: do not run the image's entry point.",
    CONTAINER_WRITABLE: "pyxis: the container's file system is writable.",
    CONTAINER_READONLY: "pyxis: the container's file system is read-only.",
}

RELEASE_NOTES: dict[str, str] = {
    "consolidate-segments": "new in Slurm 25.11",
    "spread-segments": "new in Slurm 25.11",
    "resources": "new in Slurm 25.x (hierarchical resources)",
    "oom-kill-step": "new in Slurm 25.05",
    "wait-for-children": "new in Slurm 25.05",
    "resv-ports": "sbatch takes it since Slurm 25.11 (srun before)",
    "requeue": "takes no value before Slurm 25.11, then an optional `=expedite`",
    "power": "Slurm 22.05; removed with the power plugins",
    "tasks-per-node": "an old name of --ntasks-per-node",
    "pack-group": "the old name of --het-group",
    "cpu_bind": "the old spelling of --cpu-bind",
    "x11": "only when Slurm is built with X11 support",
}


def describe(spec: OptionSpec, command: str, version=DEFAULT_SLURM_VERSION) -> list:
    """What ``spec`` does, as Markdown lines: its one-line description, its forms, its value, what
    it means for steps, and the Slurm releases that differ (``version``: the release checked against)."""
    name = spec.canonical or spec.long
    value = {"required": "=VALUE", "optional": "[=VALUE]", "none": ""}[spec.arg]
    forms = f"`--{spec.long}{value}`"
    if spec.short:
        forms += f", `-{spec.short}{' VALUE' if spec.arg == 'required' else ''}`"
    lines = [f"**{command}** {forms}" + (" (pyxis)" if spec.pyxis else "")]
    about = ABOUT.get(name) or ABOUT.get(spec.long)
    if about:
        lines.append(about)
    facts = []
    if spec.aliases:
        facts.append("also spelled " + ", ".join(f"`--{alias}`" for alias in spec.aliases))
    if spec.value:
        facts.append(f"value: {spec.value}")
    if spec.accumulates:
        facts.append("given twice, the values add up")
    if spec.list_valued:
        facts.append("a comma-separated list; given twice, only the last one counts: write one list")
    if command == "#SBATCH":
        if spec.pyxis:
            facts.append("pyxis options in the header reach the batch step only, not the srun steps")
        elif not spec.steps_inherit:
            facts.append("srun steps do not inherit it")
    if spec.not_inherited is not None:
        first, last = spec.not_inherited
        facts.append(f"srun of Slurm {first[0]}.{first[1]:02d} up to {last[0]}.{last[1]:02d} does not take it "
                     "from the allocation: repeat it on the step"
                     + (" — this is the release checked against" if not steps_inherit(spec, version) else ""))
    note = RELEASE_NOTES.get(spec.long)
    if note:
        facts.append(note)
    lines.extend(f"- {fact}" for fact in facts)
    return lines

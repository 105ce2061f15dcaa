"""The container of every step (pyxis), and the filesystem paths the job uses on each side.

A step is containerized by its own ``--container-image`` or ``--container-name``. Its
``--container-mounts`` may be repeated and each value is a comma-separated list of
``SRC[:DST[:FLAGS]]`` entries (pyxis accumulates them; ``SRC`` alone means ``SRC:SRC``). Values
assembled in variables, with ``+=``, or in a loop that appends one ``--container-mounts`` per
iteration are read from every alternative the value model sees, so a mount added in any of them
counts.

Paths have a side. The batch shell and slurmstepd work on the host: the ``--output``/``--error``
directories, ``--chdir``, what the batch shell creates, enters, redirects into, and the cache
variables it exports. A step's task works inside its container: ``--container-workdir``, ``cd`` in
the task command, absolute paths among its arguments (``--data-path /lustre/…``,
``checkpoint.save=/lustre/…``), and the cache variables (``HF_HOME``, ``UV_CACHE_DIR``,
``NEMO_HOME``…) in its environment.

A path is *shared* when it lies under a configured shared root (``settings["shared_roots"]``) or,
without configuration, when the script itself says it is a host path: a mount source, a
well-known shared filesystem (``/lustre``, ``/gpfs``, ``/scratch``, ``/fsx``, ``/shared``, home
directories), or a path the batch shell uses on the host. Paths that only exist inside an image
(``/opt/Megatron-Bridge``, ``/workspace``) and node-local ones (``/tmp``, ``/root``) never are.

Entry point: ``containers(script)``, that is ``Script.containers``.
"""
from __future__ import annotations

import bisect
import os
import posixpath

from .. import options as option_table
from ..lazyclass import dataclass, field
from ..shell import ancestors, node_span, parse
from ..source import Span
from . import sourced as sourced_files
from . import steps as step_model
from .steps import Command, Step, StepOption
from .values import Assignment, Piece, Value, Values, Word
from .values import split_value as split_words
from ..lazyre import IGNORECASE, lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple
    from .script import Script
    from .sourced import Origin, SourcedFile

# Variables whose value is a cache directory some tool of the task writes into.
CACHE_VARIABLES = (
    "HF_HOME",
    "UV_CACHE_DIR",
    "NEMO_HOME",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "TRANSFORMERS_CACHE",
    "TORCH_HOME",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "XDG_CACHE_HOME",
    "PIP_CACHE_DIR",
    "NEMO_MODELS_CACHE",
)
# Where each of the main caches lands when its variable is not set (inside a container: per node).
CACHE_DEFAULTS = {
    "HF_HOME": "~/.cache/huggingface",
    "UV_CACHE_DIR": "~/.cache/uv",
    "NEMO_HOME": "/root/.cache/nemo",
}
# A directory name each cache conventionally gets under a shared cache root.
CACHE_LEAVES = {"HF_HOME": "huggingface", "UV_CACHE_DIR": "uv", "NEMO_HOME": "nemo"}

# Top-level directories of shared filesystems on HPC clusters.
WELL_KNOWN_ROOTS = ("/lustre", "/gpfs", "/scratch", "/fsx", "/shared", "/nfs", "/home", "/project", "/projects")
# Directories that belong to a node or to an image, never to a shared filesystem.
LOCAL_PREFIXES = (
    "/tmp",
    "/var",
    "/dev",
    "/run",
    "/proc",
    "/sys",
    "/root",
    "/opt",
    "/usr",
    "/etc",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/workspace",
)
# Batch-level commands whose path arguments the batch shell itself touches on the host.
HOST_FILE_COMMANDS = frozenset(
    {"mkdir", "cd", "pushd", "touch", "tee", "cp", "mv", "rm", "ln", "rsync", "chmod", "chown", "ls", "du", "find"}
)
# srun options (besides pyxis's) that change where or with what environment a task runs.
STEP_ENVIRONMENT_OPTIONS = ("export", "chdir")

_NAME = lazy(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_DEFAULTED_NAME = lazy(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)[:\-=?+]")

# Benchmark and monitoring programs that come in their own images (NCCL tests, perftest, OSU
# micro-benchmarks, nvbandwidth, gpu-burn): a step that runs one needs nothing from the host.
BENCHMARK_PROGRAMS = frozenset(
    {
        "all_reduce_perf", "all_gather_perf", "alltoall_perf", "broadcast_perf", "reduce_perf",
        "reduce_scatter_perf", "sendrecv_perf", "gather_perf", "scatter_perf", "hypercube_perf",
        "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat",
        "osu_latency", "osu_bw", "osu_bibw", "osu_allreduce", "osu_alltoall", "nvbandwidth",
        "gpu_burn", "gpu-burn", "dcgmi", "dcgmproftester12", "nvidia-smi",
    }
)
# Stock framework and base images: they carry no program of the user's, so a relative entry point
# or a module in such an image is the user's own file, left on the host.
STOCK_IMAGE = lazy(
    r"(^|[/#])(nvidia/)?(pytorch|nemo|cuda|tensorflow|jax|ubuntu|debian|python|rockylinux|centos)([:/_.\-]|$)",
    IGNORECASE,
)


# Images known to set a WORKDIR, where pyxis starts a step that gives no --container-workdir
# (DOMAIN.md §9): the NGC framework images. A site adds its own with the ``image-workdirs``
# setting (image pattern -> directory).
IMAGE_WORKDIRS = (
    (lazy(r"^(nvcr\.io[/#])?nvidia/(pytorch|nemo|tensorflow|jax|pax|nemo-automodel)([:@]|$)", IGNORECASE), "/workspace"),
)


def image_environment(container: "StepContainer", settings: Optional[Dict[str, object]]) -> Dict[str, str]:
    """The variables the step's image sets itself, as the site lists them (``image-environment``:
    image pattern -> {NAME: value}); empty when the image is unknown or not listed."""
    image = container.image
    if image is None or image.value is None or not image.value_known:
        return {}
    name = image_name(image.value)
    found: Dict[str, str] = {}
    table = (settings or {}).get("image_environment")
    if not table:
        return found
    import fnmatch  # here: it imports ``re``, and only a site's settings need it

    for pattern, variables in table.items():
        if isinstance(variables, dict) and fnmatch.fnmatchcase(name, image_name(str(pattern))):
            found.update({str(k): str(v) for k, v in variables.items()})
    return found


def image_name(text: str) -> str:
    """An image reference without pyxis's ``#`` registry separator (``nvcr.io#nvidia/x`` → ``nvcr.io/nvidia/x``)."""
    return text.replace("#", "/", 1) if "#" in text else text


def image_workdir(container: "StepContainer", settings: Optional[Dict[str, object]]) -> Optional[str]:
    """The WORKDIR of the step's image when known (a site setting first, then the table), else None."""
    image = container.image
    if image is None or image.value is None or not image.value_known:
        return None
    name = image_name(image.value)
    table = (settings or {}).get("image_workdirs")
    if table:
        import fnmatch  # (see image_environment)

        for pattern, workdir in table.items():
            if fnmatch.fnmatchcase(name, image_name(str(pattern))) and str(workdir).startswith("/"):
                return str(workdir)
    for pattern, workdir in IMAGE_WORKDIRS:
        if pattern.search(name):
            return workdir
    return None


def batch_directory(script: "Script", step: Step) -> Optional[Value]:
    """The directory the batch shell is in when it runs the step: the last ``cd`` it runs before
    it (None: the job's directory, ``--chdir`` or the submission directory)."""
    at = step.command.node.start_byte
    found: Optional[Value] = None
    for command in script.commands:
        if command.in_string or command.node.start_byte >= at:
            continue
        if command.program in ("cd", "pushd") and len(command.argv) > 1 and not command.argv[1].text.startswith("-"):
            found = command.argv[1].value
    return found


# -- paths ---------------------------------------------------------------------------------------
_NORMALIZED: Dict[str, str] = {}


def normalize(path: str) -> str:
    """A path without ``//``, ``/./`` or a trailing slash (``/`` stays ``/``)."""
    normal = _NORMALIZED.get(path)
    if normal is not None:
        return normal
    if not path:
        return path
    normal = posixpath.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    if len(_NORMALIZED) > 4096:  # the same few paths recur within a file; keep the memo small
        _NORMALIZED.clear()
    _NORMALIZED[path] = normal
    return normal


def is_under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it, component-wise (``/a/bc`` is not under ``/a/b``)."""
    path, root = normalize(path), normalize(root)
    if not path or not root:
        return False
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


@dataclass(frozen=True)
class PathValue:
    """A path as the model knows it: the whole text (unknown parts as ``${NAME}``) and the part
    known before the first unknown piece."""

    text: str
    known: str
    complete: bool
    home: bool = False  # starts at a home directory (``~``, ``$HOME``)

    @classmethod
    def of(cls, value: Value) -> "PathValue":
        known: List[str] = []
        complete = True
        for piece in value.pieces:
            if not piece.known:
                complete = False
                break
            known.append(piece.text)
        text = value.text
        first = value.pieces[0] if value.pieces else None
        home = text.startswith("~") or (
            first is not None and not first.known and first.name == "HOME"
        )
        return cls(text, "".join(known), complete, home)

    @classmethod
    def literal(cls, text: str) -> "PathValue":
        return cls(text, text, True, text.startswith("~"))

    @property
    def absolute(self) -> bool:
        return self.known.startswith("/")

    @property
    def directory(self) -> str:
        """The longest known directory prefix: the whole path when complete, else the known part
        cut at its last ``/`` (``/lustre/fsw/${USER}/x`` → ``/lustre/fsw``)."""
        if self.complete:
            return normalize(self.text)
        cut = self.known.rfind("/")
        if cut < 0:
            return ""
        return normalize(self.known[: cut + 1]) if cut > 0 else "/"

    def under(self, root: str) -> Optional[bool]:
        """True/False when the known part decides it, None when the unknown part could."""
        if not self.absolute:
            return None
        directory = self.directory
        if directory and is_under(directory, root):
            return True
        if not self.complete and (normalize(root) + "/").startswith(self.known):
            return None  # /lustre/${USER} may well be under /lustre/alice
        return False


def _ancestors(directory: str) -> List[str]:
    """A normalized absolute directory and every directory above it, ``/`` last."""
    out = [directory]
    cut = directory.rfind("/")
    while cut > 0:
        directory = directory[:cut]
        out.append(directory)
        cut = directory.rfind("/")
    if out[-1] != "/":
        out.append("/")
    return out


class PathIndex:
    """Path uses, asked for the first one (in their order) that lies under a directory.

    ``first_under(root)`` is ``next(u for u in uses if u.path.under(root) is True)``, answered
    from the directories above each use's known directory instead of a walk of every use: rules
    ask it for every mount of every step."""

    def __init__(self, uses: Sequence["PathUse"]) -> None:
        self.uses = list(uses)
        first: Dict[str, int] = {}
        for index, use in enumerate(self.uses):
            path = use.path
            if not path.absolute:
                continue
            directory = path.directory
            if not directory:
                continue
            for above in _ancestors(directory):
                if above not in first:
                    first[above] = index
        self._first = first

    def first_index(self, root: str) -> Optional[int]:
        root = normalize(root)
        if not root:
            return None
        return self._first.get(root)

    def first_under(self, *roots: str) -> Optional["PathUse"]:
        """The first use under any of ``roots``."""
        found = [i for i in (self.first_index(root) for root in roots) if i is not None]
        return self.uses[min(found)] if found else None


_LOCAL: Dict[str, bool] = {}


def _is_local(path: str) -> bool:
    """Whether the path is on a node-local filesystem (memoised: asked for every path use)."""
    local = _LOCAL.get(path)
    if local is None:
        local = any(is_under(path, prefix) for prefix in LOCAL_PREFIXES)
        if len(_LOCAL) > 4096:
            _LOCAL.clear()
        _LOCAL[path] = local
    return local


def is_home_cache(path: PathValue) -> bool:
    """``~/.cache/…`` or ``$HOME/.cache/…``: the per-user default cache."""
    if not path.home:
        return False
    rest = path.text[1:] if path.text.startswith("~") else path.text[len("${HOME}") :]
    return rest == "/.cache" or rest.startswith("/.cache/")


# -- mounts --------------------------------------------------------------------------------------
@dataclass
class Mount:
    """One ``SRC[:DST[:FLAGS]]`` entry of a ``--container-mounts`` value."""

    source: PathValue
    destination: PathValue
    flags: str
    option: StepOption
    value: Value  # the entry as evaluated, pieces mapping to source bytes
    span: Span  # where the entry is written (the option when it cannot be located)

    @property
    def text(self) -> str:
        return self.value.text

    @property
    def same_path(self) -> Optional[bool]:
        """Whether the directory keeps its host path inside the container (None: unknown)."""
        if self.source.complete and self.destination.complete:
            return normalize(self.source.text) == normalize(self.destination.text)
        if self.source.text == self.destination.text:
            return True  # ``$X:$X``
        return None

    def covers(self, path: PathValue) -> Optional[bool]:
        """Whether a path inside the container lies under this mount's destination."""
        destination = self.destination
        if not destination.absolute:
            return None  # unknown (or relative) destination: it may cover anything
        if destination.complete:
            return path.under(destination.text)
        # /lustre/${USER}: covers what starts like it, maybe
        if path.absolute and (path.known.startswith(destination.known) or destination.known.startswith(path.known)):
            return None
        return False

    def host_path(self, container_path: str) -> Optional[str]:
        """The host path of a container path under this mount's destination."""
        if not (self.source.complete and self.destination.complete and self.source.absolute):
            return None
        if not is_under(container_path, self.destination.text):
            return None
        rest = normalize(container_path)[len(normalize(self.destination.text)) :]
        return normalize(self.source.text) + rest if rest else normalize(self.source.text)


@dataclass
class StepContainer:
    """What pyxis does for one step."""

    step: Step
    image: Optional[StepOption] = None
    name: Optional[StepOption] = None
    mount_options: List[StepOption] = field(default_factory=list)
    mounts: List[Mount] = field(default_factory=list)
    workdir: Optional[StepOption] = None
    mount_home: Optional[bool] = None  # False: --no-container-mount-home
    pyxis_options: List[StepOption] = field(default_factory=list)
    uncertain: bool = False  # words the model cannot read stand among the step's options
    auto_mounts: List[str] = field(default_factory=list)  # mounted by the cluster's configuration
    loop_flags: Optional["LoopFlags"] = None  # a loop appends one --container-mounts per entry
    environment_mounts: Optional[StepOption] = None  # mounts from PYXIS_CONTAINER_MOUNTS
    environment_env: Optional[StepOption] = None  # the names PYXIS_CONTAINER_ENV lists
    # A file the model cannot read is sourced before the step: it may export PYXIS_CONTAINER_*
    environment_unknown: bool = False
    from_environment: Dict[str, str] = field(default_factory=dict)  # option -> PYXIS_* variable

    @property
    def containerized(self) -> bool:
        return self.image is not None or self.name is not None

    @property
    def has_mounts(self) -> bool:
        return bool(self.mount_options) or self.environment_mounts is not None

    @property
    def workdir_path(self) -> Optional[PathValue]:
        if self.workdir is None or self.workdir.value is None:
            return None
        return PathValue.of(option_value(self.workdir))

    def mounted(self, path: PathValue) -> Optional[bool]:
        """Whether a container path is visible from the host: True, False, or None (unknown)."""
        maybe = False
        if any(path.under(root) for root in self.auto_mounts):
            return True
        for mount in self.mounts:
            covered = mount.covers(path)
            if covered:
                return True
            if covered is None:
                maybe = True
        if path.home and self.mount_home is not False:
            return None  # pyxis may mount the home directory (enroot's default)
        if path.absolute and path.known.startswith("/home/") and self.mount_home is not False:
            return None
        if maybe or (self.environment_unknown and not self.has_mounts):
            return None  # (an unread sourced file may export PYXIS_CONTAINER_MOUNTS)
        return False

    def mount_for(self, path: PathValue) -> Optional[Mount]:
        for mount in self.mounts:
            if mount.covers(path):
                return mount
        return None

    def mount_from(self, host_path: PathValue) -> Optional[Mount]:
        """A mount whose source holds this host path."""
        for mount in self.mounts:
            if mount.source.complete and mount.source.absolute and host_path.under(mount.source.text):
                return mount
        return None


# -- paths the job uses --------------------------------------------------------------------------
@dataclass
class PathUse:
    """One place where the job uses a filesystem path."""

    path: PathValue
    side: str  # "host" (batch shell, slurmstepd) or "container" (a step's task)
    kind: str  # output, error, chdir, mkdir, cd, file, cache, workdir, argument, environment
    span: Span  # the bytes to point at
    step: Optional[Step] = None
    variable: Optional[str] = None  # the variable the path was read from, when one

    @property
    def text(self) -> str:
        return self.path.text


@dataclass
class EnvSetting:
    """What a step's task sees for one environment variable."""

    name: str
    values: List[Value]  # alternatives, most likely last; empty when not set
    # "task", "srun", "batch", "batch-unexported", "unset", "unknown" (a file sourced before it is
    # not read), "image" (the image's own value wins over the host's)
    where: str
    assignment: Optional["Assignment"] = None  # the batch-level assignment, when from there
    span: Optional[Span] = None  # the bytes that set it
    overrides: Optional[str] = None  # "image": the host's own setting the image's value wins over
    origin: Optional["Origin"] = None  # set by a file the task string sources: where in it

    @property
    def value(self) -> Optional[Value]:
        return self.values[-1] if self.values else None

    @property
    def is_set(self) -> bool:
        return self.where in ("task", "srun", "batch", "image")

    @property
    def path(self) -> Optional[PathValue]:
        value = self.value
        if value is None or not self.is_set:
            return None
        return PathValue.of(value)


class Containers:
    """Every step's container, the paths the job uses, and which of them are shared."""

    def __init__(self, script: "Script") -> None:
        self.script = script
        self.steps: List[StepContainer] = [_step_container(script, step) for step in script.steps]
        self._by_step: Dict[int, StepContainer] = {id(c.step): c for c in self.steps}
        configured = script.settings.get("shared_roots") if script.settings else None
        self.roots_configured = bool(configured)
        self.configured_roots: List[str] = [normalize(str(r)) for r in (configured or []) if str(r).startswith("/")]
        auto = script.settings.get("container_auto_mounts") if script.settings else None
        # directories the cluster's enroot configuration mounts into every container
        self.auto_mounts: List[str] = [normalize(str(r)) for r in (auto or []) if str(r).startswith("/")]
        for container in self.steps:
            container.auto_mounts = self.auto_mounts
        self._env_cache: Dict[Tuple[int, str], EnvSetting] = {}
        # per step: the names something may set, whether anything may, the --export list (_may_be_set)
        self._settable: Dict[int, Tuple[set, bool, Optional[str]]] = {}
        self._image_env: Dict[int, Tuple[StepContainer, Dict[str, str]]] = {}  # per container
        self.container_paths: List[PathUse] = []
        for container in self.steps:
            if container.containerized:
                self.container_paths.extend(self._container_paths(container))

    @property
    def host_paths(self) -> List[PathUse]:
        """The paths the job uses on the host (``_host_paths``), found when first asked: only the
        questions about a containerized step's paths read them, and finding them evaluates the
        argv of every file command of the batch shell (``mkdir``, ``cd``, ``rm``…), which
        nothing else may ask for. Shared: do not modify."""
        found = self.__dict__.get("_host_paths")
        if found is None:
            found = self.__dict__["_host_paths"] = _host_paths(self.script)
        return found

    # -- lookups ------------------------------------------------------------------------------
    def for_step(self, step: Step) -> StepContainer:
        found = self._by_step.get(id(step))
        if found is None:
            found = _step_container(self.script, step)
            self._by_step[id(step)] = found
        return found

    @property
    def containerized(self) -> List[StepContainer]:
        return [c for c in self.steps if c.containerized]

    @property
    def mount_sources(self) -> List[str]:
        """Every complete absolute mount source of the job's steps (asked for each path; the
        steps' mounts are all known once the analysis is built). Shared: do not modify."""
        found = self.__dict__.get("_mount_sources")
        if found is None:
            found = []
            for container in self.steps:
                for mount in container.mounts:
                    if mount.source.complete and mount.source.absolute:
                        found.append(normalize(mount.source.text))
            self.__dict__["_mount_sources"] = found
        return found

    def paths_for(self, step: Step) -> List[PathUse]:
        return self._paths_by_step().get(id(step), [])

    def _paths_by_step(self) -> Dict[int, List[PathUse]]:
        found = self.__dict__.get("_by_step_paths")
        if found is None:
            found = {}
            for use in self.container_paths:
                found.setdefault(id(use.step), []).append(use)
            self.__dict__["_by_step_paths"] = found
        return found

    @property
    def host_index(self) -> PathIndex:
        """The host paths, indexed by the directories they lie under."""
        found = self.__dict__.get("_host_index")
        if found is None:
            found = self.__dict__["_host_index"] = PathIndex(self.host_paths)
        return found

    @property
    def shell_index(self) -> PathIndex:
        """The host paths the batch shell itself uses, indexed like ``host_index``: without the
        log files (``--output``/``--error``), which Slurm opens on the host for the job."""
        found = self.__dict__.get("_shell_index")
        if found is None:
            uses = [use for use in self.host_paths if use.kind not in SLURM_OPENED]
            found = self.__dict__["_shell_index"] = PathIndex(uses)
        return found

    def step_index(self, step: Step) -> PathIndex:
        """The container paths of one step, indexed by the directories they lie under."""
        indexes = self.__dict__.setdefault("_step_indexes", {})
        found = indexes.get(id(step))
        if found is None:
            found = indexes[id(step)] = PathIndex(self.paths_for(step))
        return found

    # -- shared or not --------------------------------------------------------------------------
    def is_shared(self, path: PathValue) -> bool:
        """Whether a path lies on a shared filesystem (see the module docstring)."""
        if path.home:
            return not self.roots_configured or any(r == "~" for r in self.configured_roots)
        if not path.absolute:
            return False
        directory = path.directory
        if not directory or directory == "/":
            return False
        if self.roots_configured:
            return any(is_under(directory, root) for root in self.configured_roots)
        if _is_local(directory):
            return False
        if any(is_under(directory, source) for source in self.mount_sources if source != "/"):
            return True
        if any(is_under(directory, root) for root in WELL_KNOWN_ROOTS):
            return True
        for use in self.host_paths:
            host = use.path
            if not host.absolute or _is_local(host.directory) or host.directory.count("/") < 2:
                continue
            if is_under(directory, host.directory):
                return True
            if host.complete and directory.count("/") >= 2 and is_under(host.directory, directory):
                return True
        return False

    def is_container_local(self, container: StepContainer, path: PathValue) -> bool:
        """A path inside the container that is not shared with the other nodes."""
        if container.mount_for(path) is not None:
            mount = container.mount_for(path)
            assert mount is not None
            return mount.source.complete and _is_local(mount.source.directory) and not self.roots_configured
        if is_home_cache(path):
            return True
        if not path.absolute:
            return False
        if self.is_shared(path):
            return False  # on the shared filesystem (not mounted: a path-not-mounted problem)
        if container.mounted(path) is None:
            return False  # unknown mounts may cover it
        return _is_local(path.directory) or container.containerized

    # -- self-contained steps -------------------------------------------------------------------
    def program_in_image(self, container: StepContainer) -> Optional[str]:
        """Why a step runs a program that lives in its image and uses no host path, or None.

        The step uses no host path: none of its paths (working directory, arguments, caches) is
        shared or in the home directory. Its program lives in the image: a known benchmark
        (``all_reduce_perf``), an absolute path not on the shared filesystem
        (``/opt/bench/bin/run``, ``python /opt/app/serve.py``), or, in an image that is not a
        stock framework or base image (``./bench.sqsh``, ``registry/team/bench:1``), a module or
        a relative script (the container starts outside any host directory when nothing is
        mounted)."""
        step = container.step
        for use in self.paths_for(step):
            path = use.path
            if path.home or (path.absolute and (not path.complete or self.is_shared(path))):
                return None
        if container.workdir is not None and container.workdir_path is None:
            return None
        image = container.image.value if container.image is not None else None
        own_image = image is not None and container.image.value_known and not STOCK_IMAGE.search(image)
        reason: Optional[str] = None
        for command in step.task_commands:
            argv = command.argv
            if command.begin >= len(argv) or not argv[command.begin].known:
                return None
            program = argv[command.begin].text
            base = posixpath.basename(program)
            if base in BENCHMARK_PROGRAMS:
                reason = reason or f"the benchmark `{base}`"
            elif program.startswith("/") and not self.is_shared(PathValue.literal(program)):
                reason = reason or f"`{program}` from the image"
        for launch in self.script.launches:
            entry = launch.entry
            if launch.step is not step or entry is None or not entry.known:
                continue
            if entry.kind == "script" and entry.name.startswith("/"):
                if self.is_shared(PathValue.literal(entry.name)):
                    return None
                reason = reason or f"`{entry.name}` from the image"
            elif entry.kind in ("script", "module") and own_image:
                reason = reason or f"`{entry.name}` from the image `{image}`"
            elif entry.kind in ("script", "module"):
                return None  # a stock image: the user's own entry point, left on the host
        return reason

    # -- environment of a task ------------------------------------------------------------------
    def from_submission(self, name: str) -> bool:
        """Whether the script takes ``name`` from the submission environment rather than leaving
        it unset: it requires it (``${NAME:?…}``, ``${NAME?…}``) or exports it without assigning
        it (``[ -n "${NAME:-}" ] && export NAME``). sbatch passes the submitter's environment on
        by default, so the tasks then see the submitter's value."""
        found = self.__dict__.setdefault("_from_submission", {})
        if name not in found:
            values = self.script.values
            assigned = any(a.kind in ("assign", "append", "array", "read", "for") for a in values.assignments.get(name, []))
            required = False
            for node in self.script.nodes_of_type("expansion"):
                text = self.script.data[node.start_byte : node.end_byte]
                if text.startswith(("${%s:?" % name).encode()) or text.startswith(("${%s?" % name).encode()):
                    required = True
                    break
            found[name] = required or (not assigned and bool(values.exports.get(name)))
        return found[name]

    def task_env(self, step: Step, name: str) -> EnvSetting:
        key = (id(step), name)
        found = self._env_cache.get(key)
        if found is None:
            if self._may_be_set(step, name):
                found = _task_env(self.script, step, name, self.for_step(step))
            else:
                found = EnvSetting(name, [], "unset")  # what _task_env finds, without the search
            found = self._image_wins(step, found)
            self._env_cache[key] = found
        return found

    def _image_wins(self, step: Step, setting: EnvSetting) -> EnvSetting:
        """Pyxis sets host variables in the container after the image's own, but the image's
        values win unless the variable is named in ``--container-env`` (DOMAIN.md §9): a value
        set inside the task command itself still wins."""
        container = self.for_step(step)
        if not container.containerized or setting.where == "task":
            return setting
        own = self._image_environment(container)
        if setting.name not in own:
            return setting
        listed = step.option(option_table.CONTAINER_ENV) or container.environment_env
        if listed is not None and listed.value is not None and setting.name in listed.value.split(","):
            return setting
        overrides = None
        if setting.where in ("srun", "batch") and setting.value is not None:
            overrides = setting.value.text
        value = Value((Piece(own[setting.name], None),))
        return EnvSetting(setting.name, [value], "image", None, setting.span, overrides)

    def _image_environment(self, container: StepContainer) -> Dict[str, str]:
        """``image_environment`` of a step's container (once per container; shared, read only)."""
        found = self._image_env.get(id(container))
        if found is None:  # (the container is kept alive with it, so its id stays its own)
            found = self._image_env[id(container)] = (container, image_environment(container, self.script.settings))
        return found[1]

    def _may_be_set(self, step: Step, name: str) -> bool:
        """False when nothing can set ``name`` for the step's tasks: no assignment in the batch
        script, none before the task command or in its string (or a file it sources), and no
        mention in ``--export``."""
        names, anything, exported = self._settable_of(step)
        return name in names or anything or (exported is not None and name in exported)

    def _settable_of(self, step: Step) -> Tuple[set, bool, Optional[str]]:
        """``_may_be_set``'s facts of a step (found once per step)."""
        found = self._settable.get(id(step))
        if found is None:
            names = set(self.script.values.assignments)
            for command in step.task_commands:
                names.update(env.name for env in command.env)
            names.update(task_string_assignments(self.script, step))
            sources = task_sources(self.script, step, self.for_step(step))
            for entry in sources:
                if entry.values is not None:
                    names.update(entry.values.assignments)
            values = self.script.values
            # the task string sources a file the model cannot read, or one is sourced before the step
            anything = any(not entry.resolved for entry in sources) or bool(
                values.sourced and values.unresolved_source(step.command.node.start_byte) is not None
            )
            export = step.option(option_table.EXPORT)
            exported = export.value if export is not None else None
            found = self._settable[id(step)] = (names, anything, exported)
        return found

    # -- building the container side ------------------------------------------------------------
    def _container_paths(self, container: StepContainer) -> List[PathUse]:
        step = container.step
        out: List[PathUse] = []
        if container.workdir is not None and container.workdir.value is not None:
            value = option_value(container.workdir)
            span = site_span(value.pieces, command_pieces(step.command)) or container.workdir.span
            out.append(PathUse(PathValue.of(value), "container", "workdir", span, step, variable_of(self.script, value)))
        for command in step.task_commands:
            out.extend(_command_paths(self.script, command, step))
        names, anything, exported = self._settable_of(step)
        own = self._image_environment(container)
        for name in CACHE_VARIABLES:
            if not (name in names or anything or (exported is not None and name in exported)) and name not in own:
                continue  # (not _may_be_set) what task_env answers without a search: unset, no path
            setting = self.task_env(step, name)
            if not setting.is_set or setting.value is None:
                continue
            path = PathValue.of(setting.value)
            if not (path.absolute or path.home):
                continue
            span = setting.span or site_span(setting.value.pieces, command_pieces(step.command)) or step.srun_word.span
            out.append(PathUse(path, "container", "cache", span, step, name))
        return out


def containers(script: "Script") -> Containers:
    """The container analysis of a script (computed once)."""
    return script.containers


# -- values of options ---------------------------------------------------------------------------
def option_value(opt: StepOption) -> Value:
    """The value of a step option as pieces (``--opt=VALUE`` or ``--opt VALUE``)."""
    word = opt.words[-1]
    if len(opt.words) > 1:
        return word.value
    value = word.value
    text = value.text.encode("utf-8")
    cut = text.find(b"=")
    if cut < 0:
        # -xVALUE short forms
        written = opt.written.encode("utf-8")
        cut = len(written) - 1 if text.startswith(written) else -1
    return value.slice(cut + 1, len(text))


def split_value(value: Value, separator: str) -> List[Value]:
    """Cut a value at every known ``separator`` character."""
    parts: List[List[Piece]] = [[]]
    for piece in value.pieces:
        if not piece.known or separator not in piece.text:
            parts[-1].append(piece)
            continue
        raw = piece.text.encode("utf-8")  # (a known piece renders as its text)
        start = 0
        sub = Value((piece,))
        mark = separator.encode("utf-8")
        index = raw.find(mark)
        while index >= 0:
            if index > start:
                parts[-1].extend(sub.slice(start, index).pieces)
            parts.append([])
            start = index + 1
            index = raw.find(mark, start)
        if start < len(raw):
            parts[-1].extend(sub.slice(start, len(raw)).pieces)
    return [Value(tuple(p)) for p in parts]


def site_span(pieces: Sequence[Piece], context: Optional[Sequence[Piece]] = None) -> Optional[Span]:
    """Where a run of pieces (one word, one path) is written in the batch script.

    A piece that reached the run through an expansion holding nothing but (part of) this run
    (``$WORKDIR`` in ``--save $WORKDIR/ckpt``) is located at that expansion; expansions that
    also brought in other words (``$CMD``, ``$SRUN_CMD``) are looked through, to where the piece
    is written inside them. ``context`` is every piece of the enclosing command or string (the
    run itself when not given).
    """
    located = [p for p in pieces if p.span is not None]
    if not located:
        return None
    own = _extent(located)
    cover: Optional[_Cover] = None
    extents: Optional[SiteExtents] = None  # what each expansion site brought
    inside: Dict[Tuple[int, int], bool] = {}  # per site: all it brought lies in the run (many pieces share one)
    spans: List[Span] = []
    for piece in located:
        span = piece.span
        for site in piece.via:  # innermost first: keep the outermost one inside the run
            key = (site.start, site.end)
            verdict = inside.get(key)
            if verdict is None:
                if extents is None:
                    extents = context.site_extents() if isinstance(context, Context) else SiteExtents(pieces if context is None else context)
                through = extents.get(site)
                if through is None or own is None:
                    verdict = False
                else:
                    if cover is None:
                        cover = _Cover(own)
                    verdict = cover.covers(through)
                inside[key] = verdict
            if not verdict:
                break
            span = site
        assert span is not None
        if spans and spans[-1] == span:
            continue
        spans.append(span)
    for before, after in zip(spans, spans[1:]):
        if after.start < before.end:
            return None
    return Span(spans[0].start, spans[-1].end)


class Context(list):
    """The pieces of one command's argv (see ``command_pieces``), with what each expansion site
    brought into it indexed once for every ``site_span`` asked in that command. Read only."""

    __slots__ = ("_extents",)

    def site_extents(self) -> "SiteExtents":
        try:
            return self._extents
        except AttributeError:
            self._extents = SiteExtents(self)
            return self._extents


def command_pieces(command: Command) -> List[Piece]:
    """Every piece of a command's argv: the context for ``site_span`` of anything in it (built
    once per command; shared, do not modify)."""
    found = command.__dict__.get("_pieces")
    if found is None:
        found = command.__dict__["_pieces"] = Context()
        extend = found.extend
        for word in command.argv:
            extend(word.pieces)
    return found


class SiteExtents:
    """For the expansion sites in some pieces' ``via``: the source bytes of the pieces each site
    brought (those with a span), as ``_extent`` gives them (counted in one pass over the pieces:
    a context is asked about most of its sites)."""

    __slots__ = ("_extents",)

    def __init__(self, pieces: Sequence[Piece]) -> None:
        extents: Dict[Tuple[int, int], Dict[Tuple[int, int], int]] = {}
        for piece in pieces:
            via = piece.via
            if not via:
                continue
            span = piece.span
            if span is None:
                continue
            at = (span.start, span.end)
            if len(via) == 1:
                site = via[0]
                key = (site.start, site.end)
                found = extents.get(key)
                if found is None:
                    extents[key] = {at: 1}
                else:
                    found[at] = found.get(at, 0) + 1
                continue
            for key in {(site.start, site.end) for site in via}:  # a piece counts once per site
                found = extents.get(key)
                if found is None:
                    extents[key] = {at: 1}
                else:
                    found[at] = found.get(at, 0) + 1
        self._extents = extents

    def get(self, site: Span) -> Optional[Dict[Tuple[int, int], int]]:
        return self._extents.get((site.start, site.end))


def _extent(pieces: Sequence[Piece]) -> Optional[Dict[Tuple[int, int], int]]:
    """The source bytes a set of pieces covers, as a multiset of spans."""
    out: Dict[Tuple[int, int], int] = {}
    for piece in pieces:
        if piece.span is None:
            continue
        key = (piece.span.start, piece.span.end)
        out[key] = out.get(key, 0) + 1
    return out or None


class _Cover:
    """The spans of a run's pieces, asked whether every byte of other spans is covered by them.

    A span counts as covered when the bytes the run's spans share with it, summed over those
    spans, are as many as it has. The sum is read off the integral of the depth (how many of the
    run's spans hold a byte), so a question costs a binary search, not a walk of the run: a
    command built from a long ``$CMD`` asks about hundreds of pieces against hundreds."""

    __slots__ = ("_points", "_depth", "_area", "_whole")

    def __init__(self, whole: Dict[Tuple[int, int], int]) -> None:
        self._whole = whole
        change: Dict[int, int] = {}
        for (start, end) in whole:
            if end > start:
                change[start] = change.get(start, 0) + 1
                change[end] = change.get(end, 0) - 1
        points = sorted(change)
        depth: List[int] = []
        area: List[int] = []
        level = total = 0
        previous = points[0] if points else 0
        for point in points:
            total += level * (point - previous)
            level += change[point]
            depth.append(level)
            area.append(total)
            previous = point
        self._points, self._depth, self._area = points, depth, area

    def _integral(self, x: int) -> int:
        """The summed overlap of the run's spans with the bytes before ``x``."""
        i = bisect.bisect_right(self._points, x) - 1
        if i < 0:
            return 0
        return self._area[i] + self._depth[i] * (x - self._points[i])

    def covers(self, part: Dict[Tuple[int, int], int]) -> bool:
        whole = self._whole
        for key in part:
            if key in whole:
                continue  # one of the run's own spans: it covers itself (the others add to that)
            start, end = key
            if self._integral(end) - self._integral(start) < end - start:
                return False
        return True


def variable_of(script: "Script", value: Value) -> Optional[str]:
    """The variable a value was read from, when its first piece came through one expansion."""
    if not value.pieces:
        return None
    first = value.pieces[0]
    if not first.known and first.name:
        return first.name
    if first.via:
        text = script.data[first.via[0].start : first.via[0].end].decode("utf-8", "replace")
        match = _NAME.match(text)
        if match:
            return match.group(1)
        match = _DEFAULTED_NAME.match(text)
        if match:
            return match.group(1)
    return None


# -- building a step's container -----------------------------------------------------------------
def _alternative_steps(script: "Script", step: Step) -> List[Step]:
    """The step re-read with every alternative value of its srun words (loops, branches)."""
    command = step.command
    argv = command.argv
    first_task = len(argv) - len(step.task_argv)
    out: List[Step] = []
    reading: Optional[step_model.OptionReading] = None
    fields: Dict[int, List[Value]] = {}  # each alternative split once (the words of one expansion share them)
    for index in range(0, first_task):
        word = argv[index]
        if not word.alternatives:
            continue
        for alternative in word.alternatives[:-1]:
            parts = fields.get(id(alternative))
            if parts is None:
                parts = fields[id(alternative)] = _split(alternative)
            words = [Word(part, word.node, word.span, None) for part in parts]
            new_argv = argv[:index] + words + argv[index + 1 :]
            start = step_model.unwrap(new_argv)
            if start >= len(new_argv) or not new_argv[start].known or posixpath.basename(new_argv[start].text) != "srun":
                continue
            fake = Command(command.node, new_argv, command.env, command.in_string)
            try:
                if start == step.srun_index and index > start:
                    # options only; those the step's own reading gives before and after the word, shared
                    if reading is None:
                        reading = step_model.OptionReading(step)
                    out.append(reading.reread(fake, index, index + 1, len(words)))
                else:
                    out.append(step_model.read_step(script.values, fake, start, with_task=False))  # options only
            except Exception:  # pragma: no cover - a model corner case must not stop linting
                continue
    return out


def _split(value: Value) -> List[Value]:
    return split_words(value)


class _Variant:
    """A variant of a step's reading told by what differs from the step's own (``OptionReading``)
    reading: the options it shares with that reading before and after the stretch it reads anew
    (``before``: how many come first; ``after``: where the shared ones begin again, None when
    none do), and the pyxis options of that stretch (``new``), each a ``StepOption`` or a
    template read once per alternative, made into the variant's own option when it is kept."""

    __slots__ = ("owner", "argv", "index", "parts", "before", "after", "new", "_words")

    def __init__(self, owner: "_StepVariants", argv: List[Word], index: int, parts: List[Value], before: int,
                 after: Optional[int], new: list) -> None:
        self.owner = owner
        self.argv = argv  # the step's argv, whose word at ``index`` the variant replaces by ``parts``
        self.index = index
        self.parts = parts
        self.before = before
        self.after = after
        self.new = new  # StepOption, or (template StepOption, positions of its words in parts)
        self._words: Optional[Dict[int, Word]] = None

    def word(self, n: int) -> Word:
        """The variant's word for ``parts[n]`` (one object per part, as a re-read argv has)."""
        words = self._words
        if words is None:
            words = self._words = {}
        found = words.get(n)
        if found is None:
            replaced = self.argv[self.index]
            found = words[n] = Word(self.parts[n], replaced.node, replaced.span, None)
        return found

    def option(self, entry) -> StepOption:
        """One of ``new`` as the variant's own option."""
        if entry.__class__ is StepOption:
            return entry
        template, positions = entry
        return StepOption(template.name, template.spec, template.value, [self.word(n) for n in positions],
                          template.written, template.value_known)

    def context(self) -> "_VariantContext":
        """The pieces of the variant's argv, the context of its mounts (``command_pieces``)."""
        return _VariantContext(self)


class _VariantContext(Context):
    """``command_pieces`` of a variant's argv for ``site_span``, without the pieces themselves:
    what each expansion site brought is the step's own figure less what the replaced word
    brought (once per word and site), plus what the new words bring (once per alternative),
    instead of every piece of the argv indexed again for each variant. Read only."""

    __slots__ = ("variant", "_found")

    def __init__(self, variant: _Variant) -> None:
        super().__init__()
        self.variant = variant
        self._found: Dict[Tuple[int, int], Optional[Dict[Tuple[int, int], int]]] = {}

    def site_extents(self) -> "_VariantContext":
        return self

    def get(self, site: Span) -> Optional[Dict[Tuple[int, int], int]]:
        key = (site.start, site.end)
        found = self._found.get(key, False)
        if found is not False:
            return found
        variant = self.variant
        owner = variant.owner
        rest = owner.without(variant.index, site, key)
        added = owner.brought(variant.parts).get(site)
        if not added:
            found = rest
        elif not rest:
            found = added
        else:
            found = dict(rest)
            for at, count in added.items():
                found[at] = found.get(at, 0) + count
        self._found[key] = found
        return found


_SENTINEL = Word(Value((Piece("x", None),)), None, None, None)  # a program word: the options end


def _clean_reading(parts: Sequence[Value], skip: int) -> Optional[List[Tuple[StepOption, Tuple[int, ...]]]]:
    """The pyxis options among ``parts[skip:]`` read as srun option words, each with the
    positions of its words in ``parts``; None unless the reading takes every part and no more,
    whatever follows (no part ends the options, and the last does not take the next word as its
    value): the words then read the same wherever they stand among the options."""
    if skip >= len(parts):
        return []
    words = [Word(part, None, None, None) for part in parts[skip:]]
    for word in words:
        if word.known and word.text == "--":
            return None
    options: List[StepOption] = []
    _, end, _ = step_model._read_options(words + [_SENTINEL], 0, options, False)
    if end != len(words):
        return None
    position = {id(word): index + skip for index, word in enumerate(words)}
    return [
        (opt, tuple(position[id(word)] for word in opt.words))
        for opt in options if opt.spec is not None and opt.spec.pyxis
    ]


class _StepVariants:
    """A step's own option reading, with what ``_variants`` asks of it for every variant."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.reading = reading = step_model.OptionReading(step)
        options = reading.options
        self.flags = [i for i, opt in enumerate(options) if opt.name == option_table.CONTAINER_MOUNTS]
        self.parsed: Dict[Tuple[int, int], Optional[List[Tuple[StepOption, Tuple[int, ...]]]]] = {}
        self.values: Dict[int, Value] = {}  # option_value of a template flag
        self.argv = step.command.argv
        self._extents: Dict[int, SiteExtents] = {}  # per replaced word, per alternative's words
        self._without: Dict[Tuple[int, Tuple[int, int]], Optional[Dict[Tuple[int, int], int]]] = {}

    def brought(self, pieces_of) -> SiteExtents:
        """What each site brought into a word or a list of words (indexed once per step)."""
        found = self._extents.get(id(pieces_of))
        if found is None:
            if pieces_of.__class__ is Word:
                pieces = pieces_of.pieces
            else:
                pieces = [p for part in pieces_of for p in part.pieces]
            found = self._extents[id(pieces_of)] = SiteExtents(pieces)
        return found

    def without(self, index: int, site: Span, key: Tuple[int, int]) -> Optional[Dict[Tuple[int, int], int]]:
        """What ``site`` brought into the step's argv but its word at ``index`` (``_extent``'s form)."""
        memo = (index, key)
        if memo in self._without:
            return self._without[memo]
        whole = command_pieces(self.step.command).site_extents().get(site)
        removed = self.brought(self.argv[index]).get(site) if whole else None
        if removed:
            found: Optional[Dict[Tuple[int, int], int]] = {}
            for at, count in whole.items():
                left = count - removed.get(at, 0)  # (the word's pieces are among the argv's)
                if left:
                    found[at] = left
            found = found or None
        else:
            found = whole
        self._without[memo] = found
        return found

    def variant(self, argv: List[Word], index: int, alternative: Value, parts: List[Value]) -> Optional[_Variant]:
        """The variant of the step with ``argv[index]`` replaced by ``parts`` (the words of
        ``alternative``), as ``OptionReading.reread`` would read it; None when its reading of the
        new words may depend on what stands around them (then it is read in full)."""
        reading = self.reading
        marks = reading.marks
        new: list = []
        mark = marks.get(index)
        head: Optional[StepOption] = None
        if mark is not None:  # the word begins an option (or is an unknown word among them)
            before = mark[0]
            skip = 0
        else:  # the value of the option at index - 1: read again with the first new word
            mark = marks.get(index - 1)
            if mark is None or not parts:
                return None
            before = mark[0]
            skip = 1
            own = reading.options[before]
            if own.spec is not None and own.spec.pyxis:
                head = own  # (made below, with the variant's word)
        key = (id(alternative), skip)
        if key in self.parsed:
            templates = self.parsed[key]
        else:
            templates = self.parsed[key] = _clean_reading(parts, skip)
        if templates is None:
            return None
        after: Optional[int]
        following = index + 1
        if following in marks:  # the step's own reading begins at the next word: they agree from there
            after = marks[following][0]
            tail: List[StepOption] = []
        elif following >= len(argv):
            after = None
            tail = []
        else:  # read on until the step's own reading begins at a word
            tail = []
            ended, stop, _ = step_model._read_options(argv, following, tail, False, None, None, marks, following, 0)
            after = None if ended else marks[stop][0]
        variant = _Variant(self, argv, index, parts, before, after, new)
        if head is not None:
            again: List[StepOption] = []
            _, end, _ = step_model._read_options([argv[index - 1], variant.word(0)], 0, again, False)
            if end != 2 or len(again) != 1:
                return None
            new.append(again[0])
        new.extend(templates)
        for opt in tail:
            if opt.spec is not None and opt.spec.pyxis:
                new.append(opt)
        return variant

    def flag_value(self, entry) -> Optional[Value]:
        """``option_value`` of a template flag (alike for every variant made from it), or None."""
        if entry.__class__ is StepOption:
            return None
        template = entry[0]
        found = self.values.get(id(template))
        if found is None:
            found = self.values[id(template)] = option_value(template)
        return found


def _variants(script: "Script", step: Step):
    """``_alternative_steps``, but a variant whose new words read alike wherever they stand comes
    as a ``_Variant`` (what it gives the container), without the step read again for it."""
    command = step.command
    argv = command.argv
    first_task = len(argv) - len(step.task_argv)
    begin = step.srun_index
    # a word after the srun word changes nothing the wrappers before it are read from
    shortcut = step_model.unwrap(argv) == begin
    own: Optional[_StepVariants] = None
    reading: Optional[step_model.OptionReading] = None
    fields: Dict[int, List[Value]] = {}
    for index in range(0, first_task):
        word = argv[index]
        if not word.alternatives:
            continue
        for alternative in word.alternatives[:-1]:
            parts = fields.get(id(alternative))
            if parts is None:
                parts = fields[id(alternative)] = _split(alternative)
            if shortcut and index > begin:
                if own is None:
                    own = _StepVariants(step)
                    reading = own.reading
                found = own.variant(argv, index, alternative, parts)
                if found is not None:
                    yield found
                    continue
            words = [Word(part, word.node, word.span, None) for part in parts]
            new_argv = argv[:index] + words + argv[index + 1 :]
            start = step_model.unwrap(new_argv)
            if start >= len(new_argv) or not new_argv[start].known or posixpath.basename(new_argv[start].text) != "srun":
                continue
            fake = Command(command.node, new_argv, command.env, command.in_string)
            try:
                if start == begin and index > start:
                    if reading is None:
                        reading = step_model.OptionReading(step)
                    variant = reading.reread(fake, index, index + 1, len(words))
                else:
                    variant = step_model.read_step(script.values, fake, start, with_task=False)  # options only
            except Exception:  # pragma: no cover - a model corner case must not stop linting
                continue
            yield variant


def _step_container(script: "Script", step: Step, shortcut: bool = True) -> StepContainer:
    """A step's container: its own reading (the primary), then every alternative value of its
    srun words (``shortcut=False``: each variant read in full, as ``_alternative_steps`` gives it)."""
    container = StepContainer(step, uncertain=step.options_incomplete)
    seen_mounts: Set[Tuple[str, str]] = set()
    container.loop_flags = loop_built_flags(script, step, option_table.CONTAINER_MOUNTS)
    read: Set[Tuple[Tuple[int, ...], str, bool]] = set()  # the mount options read: their words
    _take_variant(container, step.options, step.command, True, read, seen_mounts)
    # A loop that appends one flag per entry: the step's own reading holds the last iteration's
    # flag, the only one pyxis receives; the alternatives hold earlier iterations' (lost) ones.
    if container.loop_flags is None:
        for variant in (_variants(script, step) if shortcut else _alternative_steps(script, step)):
            if variant.__class__ is _Variant:
                _take_shortcut(container, variant, read, seen_mounts)
            else:
                _take_variant(container, variant.options, variant.command, False, read, seen_mounts)
    _environment_options(script, step, container, seen_mounts)
    return container


def _take_variant(container: StepContainer, options: List[StepOption], command: Command, primary: bool,
                  read: Set[Tuple[Tuple[int, ...], str, bool]], seen_mounts: Set[Tuple[str, str]]) -> None:
    """What one reading of the step's options (the primary, or a variant) gives its container."""
    flags = [opt for opt in options if opt.name == option_table.CONTAINER_MOUNTS]
    if flags:
        _take_last_flag(container, flags[-1], command, read, seen_mounts)
    for opt in options:
        spec = opt.spec
        if spec is None or not spec.pyxis:
            continue
        if primary:
            container.pyxis_options.append(opt)
        _take_option(container, opt, primary)


def _take_last_flag(container: StepContainer, last: StepOption, command,
                    read: Set[Tuple[Tuple[int, ...], str, bool]], seen_mounts: Set[Tuple[str, str]],
                    value: Optional[Value] = None) -> None:
    """The mounts of a reading's last ``--container-mounts`` (pyxis receives only the last flag
    of a step, DOMAIN.md §9); ``command`` gives the context to locate them in (a Command, or a
    ``_Variant``); ``value``: the flag's ``option_value`` when known already."""
    key = (tuple(id(word) for word in last.words), last.written, last.value is None)
    if key in read:  # (read again, the same words list only mounts seen already)
        return
    read.add(key)
    if last.value is not None:
        if value is None:
            value = option_value(last)
        if not _all_seen(value, seen_mounts):  # else no mount to add, none to locate
            context = command.context() if command.__class__ is _Variant else command_pieces(command)
            container.mounts.extend(_mounts_of(value, last, context, seen_mounts, None))


def _take_option(container: StepContainer, opt: StepOption, primary: bool) -> None:
    """One pyxis option of a reading: the step's own (primary) reading wins; alternatives only
    fill in what it lacks."""
    name = opt.name
    if name == option_table.CONTAINER_IMAGE and (primary or container.image is None):
        container.image = opt
    elif name == option_table.CONTAINER_NAME and (primary or container.name is None):
        container.name = opt
    elif name == option_table.CONTAINER_WORKDIR and (container.workdir is None or primary):
        container.workdir = opt
    elif name == option_table.NO_CONTAINER_MOUNT_HOME:
        container.mount_home = False
    elif name == option_table.CONTAINER_MOUNT_HOME and container.mount_home is None:
        container.mount_home = True
    elif name == option_table.CONTAINER_MOUNTS:
        container.mount_options.append(opt)


def _take_shortcut(container: StepContainer, variant: "_Variant", read: Set[Tuple[Tuple[int, ...], str, bool]],
                   seen_mounts: Set[Tuple[str, str]]) -> None:
    """``_take_variant`` of a variant known by what differs from the step's own reading: the
    options it shares with that reading give nothing new (the primary reading already set what
    they set), but their ``--container-mounts`` count among its flags and mount options."""
    owner = variant.owner
    options = owner.reading.options
    before, after = variant.before, variant.after
    mounts = option_table.CONTAINER_MOUNTS
    flags = [options[i] for i in owner.flags if i < before]
    entries = [entry for entry in variant.new if (entry.name if entry.__class__ is StepOption else entry[0].name) == mounts]
    made = [variant.option(entry) for entry in entries]
    flags.extend(made)
    kept = after is not None and owner.flags and owner.flags[-1] >= after  # flags after the stretch
    if kept:
        flags.extend(options[i] for i in owner.flags if i >= after)
    if flags:
        # the step's own last flag, when the variant's last too, was read with the step's own reading
        if not (kept or (not made and owner.flags[-1] < before)):
            value = owner.flag_value(entries[-1]) if made else None
            _take_last_flag(container, flags[-1], variant, read, seen_mounts, value)
        container.mount_options.extend(flags)
    for entry in variant.new:
        name = entry.name if entry.__class__ is StepOption else entry[0].name
        if name == option_table.CONTAINER_IMAGE:
            if container.image is None:
                container.image = variant.option(entry)
        elif name == option_table.CONTAINER_NAME:
            if container.name is None:
                container.name = variant.option(entry)
        elif name == option_table.CONTAINER_WORKDIR:
            if container.workdir is None:
                container.workdir = variant.option(entry)
        elif name == option_table.NO_CONTAINER_MOUNT_HOME:
            container.mount_home = False
        elif name == option_table.CONTAINER_MOUNT_HOME and container.mount_home is None:
            container.mount_home = True


# Pyxis reads its options from ``PYXIS_CONTAINER_*`` variables of srun's environment when the
# flag is not given (pyxis 0.17+, ``args.c`` ``pyxis_args_check_environment_variables``;
# DOMAIN.md §9). The on/off ones take ``1/true/yes/y`` or ``0/false/no/n`` (anything else is
# ignored); each of them stands for the option and its ``--no-…`` twin.
PYXIS_ENVIRONMENT = {
    option_table.CONTAINER_IMAGE: "PYXIS_CONTAINER_IMAGE",
    option_table.CONTAINER_MOUNTS: "PYXIS_CONTAINER_MOUNTS",
    option_table.CONTAINER_WORKDIR: "PYXIS_CONTAINER_WORKDIR",
    option_table.CONTAINER_NAME: "PYXIS_CONTAINER_NAME",
    option_table.CONTAINER_SAVE: "PYXIS_CONTAINER_SAVE",
    option_table.CONTAINER_ENV: "PYXIS_CONTAINER_ENV",
    option_table.CONTAINER_MOUNT_HOME: "PYXIS_CONTAINER_MOUNT_HOME",
    option_table.CONTAINER_REMAP_ROOT: "PYXIS_CONTAINER_REMAP_ROOT",
    option_table.CONTAINER_ENTRYPOINT: "PYXIS_CONTAINER_ENTRYPOINT",
    option_table.CONTAINER_WRITABLE: "PYXIS_CONTAINER_WRITABLE",
}
# The on/off settings: the option, its twin (either given on the step wins over the variable).
PYXIS_TOGGLES = {
    option_table.CONTAINER_MOUNT_HOME: option_table.NO_CONTAINER_MOUNT_HOME,
    option_table.CONTAINER_REMAP_ROOT: option_table.NO_CONTAINER_REMAP_ROOT,
    option_table.CONTAINER_ENTRYPOINT: option_table.NO_CONTAINER_ENTRYPOINT,
    option_table.CONTAINER_WRITABLE: option_table.CONTAINER_READONLY,
}
_PYXIS_VARIABLES = frozenset(PYXIS_ENVIRONMENT.values())
_TRUE, _FALSE = ("1", "true", "yes", "y"), ("0", "false", "no", "n")


def pyxis_bool(text: str) -> Optional[bool]:
    """What pyxis makes of an on/off variable's value (``parse_bool``): None when it ignores it."""
    return True if text in _TRUE else False if text in _FALSE else None


def _environment_value(script: "Script", step: Step, name: str) -> Optional[Tuple[Value, Span]]:
    """The value srun's environment gives ``name`` at the step: a prefix assignment on the srun
    command, else the batch shell's exported value (None when not exported or unknown)."""
    for env in step.command.env:
        if env.name == name:
            return env.value, env.span
    values = script.values
    at = step.command.node.start_byte
    if not values.assignments_before(name, at) or not values.is_exported(name, at):
        return None
    found = values.lookup(name, at, step.command.node)
    if not found:
        return None
    assignment = [a for a in values.assignments_before(name, at) if a.kind in ("assign", "append")]
    if not assignment:
        return None
    if assignment[-1].sourced is not None:
        return found[-1], assignment[-1].span  # exported by a sourced file: its `source` line
    if assignment[-1].value_node is None:
        return None
    return found[-1], _node_span(script, assignment[-1].value_node)


def _reads_pyxis_environment(script: "Script", step: Step) -> bool:
    """Whether any ``PYXIS_CONTAINER_*`` variable is set in the script or on the srun command."""
    assignments = script.values.assignments
    return any(variable in assignments for variable in _PYXIS_VARIABLES) or any(
        env.name in _PYXIS_VARIABLES for env in step.command.env
    )


def _environment_options(script: "Script", step: Step, container: StepContainer, seen: Set[Tuple[str, str]]) -> None:
    """Options pyxis takes from ``PYXIS_CONTAINER_*`` when the step does not give the flag."""
    values = script.values
    container.environment_unknown = bool(values.sourced) and values.unresolved_source(step.command.node.start_byte) is not None
    if not _reads_pyxis_environment(script, step):
        return  # (what the loop below finds: no variable it reads is set)
    given = {opt.name for opt in step.options}
    for option, variable in PYXIS_ENVIRONMENT.items():
        if option in given or PYXIS_TOGGLES.get(option) in given:
            continue
        if not script.values.defined(variable) and not any(e.name == variable for e in step.command.env):
            continue
        found = _environment_value(script, step, variable)
        if found is None:
            continue
        value, span = found
        spec = option_table.lookup_exact(option_table.SRUN, option)
        if option in PYXIS_TOGGLES:
            setting = pyxis_bool(value.text.strip()) if value.known else None
            if setting is None:
                continue  # pyxis ignores a value it cannot read; the model cannot read a run-time one
            if option == option_table.CONTAINER_MOUNT_HOME and container.mount_home is None:
                container.mount_home = setting
            container.from_environment[option] = variable
            continue
        opt = StepOption(option, spec, value.text if value.known else None, [Word(value, None, span)], variable, value.known)
        container.from_environment[option] = variable
        if option == option_table.CONTAINER_ENV:
            container.environment_env = opt
        if option == option_table.CONTAINER_IMAGE and container.image is None:
            container.image = opt
        elif option == option_table.CONTAINER_NAME and container.name is None:
            container.name = opt
        elif option == option_table.CONTAINER_WORKDIR and container.workdir is None:
            container.workdir = opt
        elif option == option_table.CONTAINER_MOUNTS:
            container.environment_mounts = opt
            container.mounts.extend(_mounts_of(value, opt, None, seen, span))


@dataclass
class LoopFlags:
    """An option a loop appends to a variable once per iteration (``for m in $MOUNTS; do
    ARGS="$ARGS --container-mounts=$m"; done``), and the step reads that variable."""

    variable: str  # the variable the flags are appended to
    span: Span  # the appending assignment
    loop: Span  # the loop's first line
    count: Optional[int]  # iterations when the loop's list is known, else None
    listed: Optional[str]  # the variable the loop's list comes from (``$CONTAINER_MOUNTS``), if one


_LOOP_TYPES = ("for_statement", "while_statement", "c_style_for_statement")
_EXPANDED = lazy(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def loop_built_flags(script: "Script", step: Step, option: str) -> Optional[LoopFlags]:
    """Whether the step's options come from a variable that a loop appends ``--OPTION`` to on
    every iteration (followed through variables that hold it, a few levels deep)."""
    data = script.data
    flag = ("--" + option).encode()
    if not _may_loop(script, flag):
        return None
    values = script.values
    at = step.command.node.start_byte
    argv = step.command.argv
    first_task = len(argv) - len(step.task_argv)
    names: List[str] = []
    read: Set[Tuple[int, int]] = set()  # (the words split from one expansion share its node)
    for word in argv[:first_task]:
        node = word.node
        if node is not None:
            key = (node.start_byte, node.end_byte)
            if key not in read:
                read.add(key)
                names.extend(_EXPANDED.findall(data[key[0] : key[1]].decode("utf-8", "replace")))
    seen: Set[str] = set()
    depth = 0
    while names and depth < 6:
        depth += 1
        following: List[str] = []
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            for assignment in values.assignments_before(name, at):
                if assignment.kind not in ("assign", "append", "array"):
                    continue
                text = data[assignment.node.start_byte : assignment.node.end_byte]
                following.extend(_EXPANDED.findall(text.decode("utf-8", "replace")))
                if flag not in text:
                    continue
                appends = assignment.kind == "append" or text.startswith((name + "+=").encode())
                if not appends:
                    import re  # a pattern of the variable's name: only where the flag is in the value

                    appends = re.search(r"\$\{?" + re.escape(name) + r"(\}|\b|\[)", text.decode("utf-8", "replace"))
                if not appends:
                    continue
                loop = next((a for a in ancestors(assignment.node) if a.type in _LOOP_TYPES), None)
                if loop is None or loop.start_byte <= at < loop.end_byte:
                    continue
                count, listed = _loop_count(script, loop)
                line_end = data.find(b"\n", loop.start_byte)
                end = loop.end_byte if line_end < 0 else min(line_end, loop.end_byte)
                return LoopFlags(name, assignment.span, Span(loop.start_byte, end), count, listed)
        names = following
    return None


def _may_loop(script: "Script", flag: bytes) -> bool:
    """Whether ``loop_built_flags`` may find ``flag`` appended in a loop: some assignment of the
    script (of a kind the search follows) holds the flag's text and stands in a loop (an
    assignment a sourced file makes stands at the script's ``source`` command). Found once per
    script: asked for every step, where the search follows the variables of the step's options
    through every assignment of each; a flag written on a step inside a loop (``for TP in …; do
    srun --container-mounts=…``) is no such assignment."""
    memo = script.__dict__.setdefault("_containers_looped_flags", {})
    found = memo.get(flag)
    if found is None:
        found = False
        data = script.data
        if flag in data:
            for assignments in script.values.assignments.values():
                for assignment in assignments:
                    if assignment.kind not in ("assign", "append", "array"):
                        continue
                    node = assignment.node
                    if flag in data[node.start_byte : node.end_byte] and any(a.type in _LOOP_TYPES for a in ancestors(node)):
                        found = True
                        break
                if found:
                    break
        memo[flag] = found
    return found


def _loop_count(script: "Script", loop) -> Tuple[Optional[int], Optional[str]]:
    """How many times a ``for`` loop runs when its list is known, and the variable it reads."""
    if loop.type != "for_statement":
        return None, None
    words = loop.children_by_field_name("value")
    listed = None
    if len(words) == 1 and words[0].type in ("simple_expansion", "expansion", "string"):
        found = _EXPANDED.findall(script.data[words[0].start_byte : words[0].end_byte].decode("utf-8", "replace"))
        listed = found[0] if len(found) == 1 else None
    variable = loop.child_by_field_name("variable")
    if variable is None:
        return None, listed
    name = script.data[variable.start_byte : variable.end_byte].decode("utf-8", "replace")
    body = loop.child_by_field_name("body")
    if body is None or not words:
        return (0 if not words else None), listed
    written = script.values.words_of(words)
    if all(child.type in ("word", "number", "raw_string", "concatenation") for child in written) and not any(
        b"$@" in script.data[c.start_byte : c.end_byte] or b"[@]" in script.data[c.start_byte : c.end_byte] for c in written
    ):
        return len(written), listed  # entries written out, one word each
    found = script.values.lookup(name, body.start_byte, body)
    iterations = set()
    for value in found:
        if not value.known:
            return None, listed
        for piece in value.pieces:
            for key, index in piece.loop:
                if key == loop.start_byte:
                    iterations.add(index)
    return (len(iterations) if iterations else None), listed


def _mounts(opt: StepOption, context: Sequence[Piece], seen: Set[Tuple[str, str]]) -> List[Mount]:
    """The mounts an option lists, but those whose (source, destination) text is in ``seen``
    (which gains the others): a step re-read for every alternative value of a loop-built
    ``$MOUNTS`` mostly lists mounts already read, and locating each again is the costly part."""
    if opt.value is None:
        return []
    return _mounts_of(option_value(opt), opt, context, seen, None)


def _all_seen(value: Value, seen: Set[Tuple[str, str]]) -> bool:
    """Whether every ``SRC[:DST]`` entry of a mount list is in ``seen`` (``_mounts_of`` would
    then give nothing), answered from the value's text: ``split_value`` cuts a value only at
    its known separators, and an unknown piece's text (``${NAME}``) holds none, so each part's
    text is the text's own part. A known piece without text would keep an empty destination
    part that the text cannot show: such a value takes the full reading."""
    if any(piece.known and not piece.text for piece in value.pieces):
        return False
    for entry in value.text.split(","):
        if not entry.strip():
            continue
        parts = entry.split(":")
        source = parts[0]
        destination = parts[1] if len(parts) > 1 and parts[1] else source
        if (source, destination) not in seen:
            return False
    return True


def _mounts_of(value: Value, opt: StepOption, context: Optional[Sequence[Piece]], seen: Set[Tuple[str, str]], at: Optional[Span]) -> List[Mount]:
    """The ``SRC[:DST[:FLAGS]]`` entries of one mount list (``at``: where to point when an entry
    cannot be located)."""
    out = []
    for entry in split_value(value, ","):
        if not entry.pieces or (entry.known and not entry.text.strip()):
            continue
        parts = split_value(entry, ":")
        source = parts[0]
        destination = parts[1] if len(parts) > 1 and parts[1].pieces else source
        key = (source.text, destination.text)
        if key in seen:
            continue
        seen.add(key)
        flags = ":".join(p.text for p in parts[2:])
        # an entry that is one unknown value (``$MOUNTS``) may hold several entries: its unknown
        # destination covers anything (see Mount.covers)
        span = site_span(entry.pieces, entry.pieces if context is None else context) or at or opt.span
        out.append(Mount(PathValue.of(source), PathValue.of(destination), flags, opt, entry, span))
    return out


# -- paths of a task command ---------------------------------------------------------------------
_OPTION_WITH_PATH = lazy(r"^(--?[A-Za-z0-9][\w.\-]*=|[A-Za-z_][\w.\-\[\]]*=)")


def _word_paths(word: Word) -> List[Tuple[Value, int]]:
    """Absolute or home paths in one argument: the word itself, or what follows ``key=``."""
    value = word.value
    text = value.text
    if "/" not in text and "${HOME}" not in text:
        return []  # (every candidate below starts with ``/``, ``~/`` or ``${HOME}``)
    return _value_paths(value, text)


def _value_paths(value: Value, text: str) -> List[Tuple[Value, int]]:
    """``_word_paths`` of a word's value and its text."""
    candidates: List[Tuple[Value, int]] = []
    if text.startswith("/") or text.startswith("~/") or text.startswith("${HOME}"):
        candidates.append((value, 0))
    else:
        match = _OPTION_WITH_PATH.match(text)
        if match:
            rest = text[match.end() :]
            if rest.startswith("/") or rest.startswith("~/") or rest.startswith("${HOME}"):
                offset = len(text[: match.end()].encode("utf-8"))
                candidates.append((value.slice(offset, len(text.encode("utf-8"))), offset))
    out = []
    for candidate, offset in candidates:
        if "://" in candidate.text:
            continue  # a URL, not a path
        # a list of paths (a,b or a:b) is several paths
        for separator in (",", ":"):
            if separator in candidate.text:
                parts = split_value(candidate, separator)
                if len(parts) > 1 and all(p.text.startswith("/") or not p.known for p in parts if p.pieces):
                    out.extend((part, offset) for part in parts if part.pieces and part.text.startswith("/"))
                    break
        else:
            out.append((candidate, offset))
    return out


def _command_paths(script: "Script", command: Command, step: Step) -> List[PathUse]:
    out: List[PathUse] = []
    context = command_pieces(step.command)
    program = command.program
    args = command.args
    if program in ("cd", "pushd"):
        for word in args:
            if word.text.startswith("-"):
                continue
            path = PathValue.of(word.value)
            span = site_span(word.pieces, context) or word.span
            out.append(PathUse(path, "container", "cd", span, step, variable_of(script, word.value)))
            break
        return out
    for word in command.argv:
        for value, _ in _word_paths(word):
            if not value.pieces:
                continue
            span = site_span(value.pieces, context) or word.span
            kind = "argument"
            out.append(PathUse(PathValue.of(value), "container", kind, span, step, variable_of(script, value)))
    for env in command.env:
        if env.name in CACHE_VARIABLES or env.name.endswith(("PATH", "DIR", "HOME", "ROOT")):
            for part in split_value(env.value, ":") if env.name.endswith("PATH") else [env.value]:
                path = PathValue.of(part)
                if path.absolute or path.home:
                    span = site_span(part.pieces, context) or env.span
                    out.append(PathUse(path, "container", "environment", span, step, env.name))
    return out


# -- host paths ----------------------------------------------------------------------------------
# Host paths that Slurm opens itself, not the batch shell (the kinds of their PathUse).
SLURM_OPENED = frozenset({option_table.OUTPUT, option_table.ERROR})

def _host_paths(script: "Script") -> List[PathUse]:
    out: List[PathUse] = []
    header = script.header
    for name in ("output", "error"):
        directive = header.get(name)
        if directive is None or not directive.value or directive.value_span is None:
            continue
        directory = posixpath.dirname(directive.value)
        if directory:
            out.append(PathUse(PathValue.literal(directory), "host", name, directive.value_span))
    directive = header.get(option_table.CHDIR)
    if directive is not None and directive.value and directive.value_span is not None:
        out.append(PathUse(PathValue.literal(directive.value), "host", "chdir", directive.value_span))
    for command in script.commands:
        if command.in_string or command.program not in HOST_FILE_COMMANDS:
            continue
        if _is_step_command(script, command):
            continue
        for word in command.args:
            if word.text.startswith("-"):
                continue
            path = PathValue.of(word.value)
            if not (path.absolute or path.home):
                continue
            span = site_span(word.pieces, command_pieces(command)) or word.span
            out.append(PathUse(path, "host", command.program, span, None, variable_of(script, word.value)))
    out.extend(_redirect_paths(script))
    values = script.values
    seen = set()
    for name in CACHE_VARIABLES:
        for assignment in values.assignments.get(name, []):
            if assignment.kind != "assign" or assignment.value_node is None or assignment.span in seen:
                continue
            seen.add(assignment.span)
            if not values.is_exported(name, assignment.span.end + 1):
                continue
            alternatives = values.evaluate(assignment.value_node)
            if not alternatives:
                continue
            path = PathValue.of(alternatives[-1])
            if path.absolute or path.home:
                span = _node_span(script, assignment.value_node)
                out.append(PathUse(path, "host", "cache", span, None, name))
    return out


def _is_step_command(script: "Script", command: Command) -> bool:
    return any(step.command is command for step in script.steps)


def _redirect_paths(script: "Script") -> List[PathUse]:
    out = []
    for node in script.nodes_of_type("file_redirect"):
        destination = node.child_by_field_name("destination")
        if destination is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            destination = named[-1] if named else None
        if destination is None:
            continue
        alternatives = script.values.evaluate(destination)
        if not alternatives:
            continue
        path = PathValue.of(alternatives[-1])
        if not path.absolute or path.directory.startswith("/dev"):
            continue
        parent = PathValue(posixpath.dirname(path.text), posixpath.dirname(path.known) if path.complete else path.known, path.complete, path.home)
        out.append(PathUse(parent, "host", "file", _node_span(script, destination)))
    return out


def _node_span(script: "Script", node) -> Span:
    return node_span(node, script.data)


# -- the environment a task sees -----------------------------------------------------------------
def _task_env(script: "Script", step: Step, name: str, container: "StepContainer") -> EnvSetting:
    # Inside the task command: NAME=… before a command, or an assignment in the bash -c string.
    for command in step.task_commands:
        for env in command.env:
            if env.name == name:
                return EnvSetting(name, [env.value], "task", None, env.span)
    for value, span in task_string_assignments(script, step).get(name, []):
        return EnvSetting(name, [value], "task", None, span)
    # ``bash -c "source env.sh && …"``: what the file exports, the last file first
    for entry in reversed(task_sources(script, step, container)):
        if not entry.resolved:
            return EnvSetting(name, [], "unknown")  # a file the model cannot read may set it
        found = _task_sourced_setting(script, step, entry, name)
        if found is not None:
            return found
    # srun --export=…,NAME=VALUE
    export = step.option(option_table.EXPORT)
    passes_all = True
    if export is not None and export.value is not None:
        entries = [e for e in export.value.split(",")]
        heads = [e.split("=", 1)[0] for e in entries]
        passes_all = any(h in ("ALL",) for h in heads) or "$" in export.value
        for entry in entries:
            if entry.startswith(name + "="):
                value = option_value(export)
                text = value.text
                start = text.find(name + "=")
                if start >= 0:
                    begin = len(text[: start + len(name) + 1].encode("utf-8"))
                    end_text = text.find(",", start)
                    end = len(text.encode("utf-8")) if end_text < 0 else len(text[:end_text].encode("utf-8"))
                    part = value.slice(begin, end)
                    return EnvSetting(name, [part], "srun", None, site_span(part.pieces, command_pieces(step.command)) or export.span)
        if not passes_all and name not in heads:
            return EnvSetting(name, [], "unset")
    values = script.values
    command = step.command
    at = command.__dict__.get("_containers_env_at")  # (asked for each cache variable of the step)
    if at is None:
        at = command.__dict__["_containers_env_at"] = len(script.data) if command.in_function else command.node.start_byte
    assignments = [a for a in values.assignments_before(name, at) if a.kind in ("assign", "append")]
    opaque = values.sourced and values.unresolved_source(at) is not None
    if not assignments:
        return EnvSetting(name, [], "unknown" if opaque else "unset")
    found = values.lookup(name, at, step.command.node)
    assignment = assignments[-1]
    span = _node_span(script, assignment.value_node) if assignment.value_node is not None else assignment.span
    if opaque and values.unresolved_source(at, after=assignment.span.start) is not None:
        return EnvSetting(name, found, "unknown", assignment, span)  # the unread file may set it again
    if not values.is_exported(name, at):
        if opaque:
            return EnvSetting(name, found, "unknown", assignment, span)  # the unread file may export it
        return EnvSetting(name, found, "batch-unexported", assignment, span)
    return EnvSetting(name, found, "batch", assignment, span)


def _task_sourced_setting(script: "Script", step: Step, entry: "SourcedFile", name: str) -> Optional[EnvSetting]:
    """What a file the task string sources gives ``name`` in the task: its exported value (an
    unexported one only changes a variable the task already has from the batch shell)."""
    assert entry.values is not None
    inner = entry.values
    end = len(entry.data) + 1
    assigned = [a for a in inner.assignments.get(name, []) if a.kind in ("assign", "append", "unset")]
    if not assigned:
        return None
    if assigned[-1].kind == "unset":
        return EnvSetting(name, [], "unset")
    if not inner.is_exported(name, end) and not script.values.is_exported(name, step.command.node.start_byte):
        return None  # a plain variable of the task's shell: the launched program does not see it
    found = inner.lookup(name, end)
    stand_in = Assignment(name, assigned[-1].node, None, entry.span, "assign", True, sourced=entry)
    return EnvSetting(name, found, "task", None, entry.span, origin=sourced_files.origin_of(stand_in))


def task_sources(script: "Script", step: Step, container: Optional["StepContainer"] = None) -> List["SourcedFile"]:
    """The files a task string sources before its program (``srun bash -c "source env.sh &&
    python t.py"``), read where the task's shell finds them: against a ``cd`` earlier in the
    string, else the step's ``--container-workdir``, else (a step on the host) the batch shell's
    directory; a container path through the step's mounts to the host file. A path inside the
    image, or one set at run time, does not resolve: what it may set is unknown."""
    cache = script.task_sources
    key = id(step)
    found = cache.get(key)
    if found is None:
        if container is None:
            container = containers(script).for_step(step)
        found = cache[key] = _task_sources(script, step, container)
    return found


def _task_sources(script: "Script", step: Step, container: "StepContainer") -> List["SourcedFile"]:
    model = sourced_files
    if step.task_string is None:
        return []
    out: List["SourcedFile"] = []
    directory: Optional[str] = None  # the task's working directory, as the task sees it
    context = script.values.context
    for command in step.task_commands:
        if command.program == "cd" and len(command.argv) > 1:
            word = command.argv[1]
            directory = normalize(word.text) if word.known and word.text.startswith("/") else ""
            continue
        if command.program not in ("source", ".") or len(command.argv) < 2:
            continue
        word = command.argv[1]
        entry = model.SourcedFile(site_span(word.value.pieces, command_pieces(step.command)) or step.srun_word.span, word.text)
        out.append(entry)
        path = _task_source_path(script, step, container, word, directory)
        if path is None or path in model.REASONS:
            entry.reason = path or "run-time"
            continue
        if context is None:
            entry.reason = "no-directory"
            continue
        inner_context = model.SourceContext(path, context.submit_dir, context.chdir,
                                            (os.path.realpath(path),), False, context.budget)
        data, reason = model.read(path, model.SourceContext(context.path, context.submit_dir, context.chdir, (), False,
                                                            context.budget))
        entry.path = path
        if data is None:
            entry.reason = reason
            continue
        entry.values = Values(data, parse(data).root_node, None, inner_context, None, os.path.dirname(path))
        entry.data, entry.nested = data, entry.values.sourced
    return out


def _task_source_path(script: "Script", step: Step, container: "StepContainer", word: Word,
                      directory: Optional[str]) -> Optional[str]:
    """The host path of a file a task string sources, or a key of ``sourced.REASONS``."""
    if not word.known or not word.text:
        return "run-time"
    text = word.text
    if text.startswith("~"):
        return "home"
    if not text.startswith("/"):
        if directory == "":
            return "working-directory"  # a cd the model cannot follow
        if directory is None and container.containerized:
            workdir = container.workdir_path
            if workdir is None:
                return "in-image"  # the image's WORKDIR (DOMAIN.md §9)
            directory = normalize(workdir.text) if workdir.complete and workdir.absolute else ""
        if directory is None:
            batch = batch_directory(script, step)
            if batch is not None:
                directory = normalize(batch.text) if batch.known and batch.text.startswith("/") else ""
            else:
                context = script.values.context
                start = context.initial_cwd() if context is not None else None
                directory = (context.submit_dir if start == sourced_files.SUBMIT and context is not None else start) or ""
        if not directory:
            return "working-directory"
        text = posixpath.join(directory, text)
    text = normalize(text)
    if not container.containerized:
        return text
    for mount in reversed(container.mounts):
        host = mount.host_path(text)
        if host is not None:
            return host
    if any(is_under(text, root) for root in container.auto_mounts):
        return text
    return "in-image"


def task_string_assignments(script: "Script", step: Step) -> Dict[str, List[Tuple[Value, Span]]]:
    """Assignments made inside a ``bash -c`` task string, values mapped to batch-script bytes."""
    cache = script.task_string_assignments
    key = id(step)
    if key in cache:
        return cache[key]
    out: Dict[str, List[Tuple[Value, Span]]] = {}
    string = step.task_string
    if string is not None:
        # the string's own assignments, as parsed once per text for the step's task commands
        inner = step_model.task_string_values(script.values, string.text.encode("utf-8"))
        for name, assignments in inner.assignments.items():
            for assignment in assignments:
                if assignment.kind != "assign" or assignment.value_node is None:
                    continue
                alternatives = inner.evaluate(assignment.value_node)
                if not alternatives:
                    continue
                value = step_model.remap(alternatives[-1], string)
                span = site_span(value.pieces, command_pieces(step.command)) or step.srun_word.span
                out.setdefault(name, []).append((value, span))
    cache[key] = out
    return out

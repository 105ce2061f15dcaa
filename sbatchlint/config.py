"""Per-project configuration: ``[tool.sbatchlint]`` in ``pyproject.toml`` or ``.sbatchlint.toml``.

The configuration that applies to a file is the closest one found from the file's directory
upward (in one directory, ``.sbatchlint.toml`` wins over ``pyproject.toml``). ``--config PATH``
forces one file for every path; ``--isolated`` ignores them all. Unknown keys and bad values are
errors that name the file and the key.

    [tool.sbatchlint]
    select = ["ALL"]
    ignore = ["SBL202"]
    extend-select = []
    exclude = ["legacy/*"]
    force-exclude = false
    respect-gitignore = true
    cache-dir = ".sbatchlint_cache"    # where results are cached (relative to this file)
    per-file-ignores = { "experiments/*.sh" = ["SBL011"] }
    severity = { SBL107 = "error" }
    shared-roots = ["/lustre/fsw"]
    container-auto-mounts = ["/lustre"]
    image-workdirs = { "registry.example.com/team/*" = "/app" }  # the WORKDIR of the site's images
    image-environment = { "registry.example.com/team/*" = { HF_HOME = "/opt/hf" } }  # variables they set
    bridge-entry-points = ["recipes/*.py"]
    gpus-per-node = 8
    partitions = { batch = "batch", interactive = "interactive" }
    shellcheck = false
    extra-options = ["environment=", "no-gpu-reset"]
    slurm-version = "24.05"            # or "auto": ask the sbatch on this machine
    gpu-request = "optional"           # the site gives jobs their nodes' GPUs unasked (SBL108)

    [tool.sbatchlint.cluster]   # written by `sbatchlint profile` (see sbatchlint/cluster/profile.py)

The cluster profile is the ``cluster`` table of the configuration that applies, else the closest
``.sbatchlint-cluster.toml`` from the file's directory upward (``--isolated`` ignores both).
"""
from __future__ import annotations

import os
import sys


from .diagnostics import Severity
from .lazyclass import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

CONFIG_NAMES = (".sbatchlint.toml", "pyproject.toml")
PROFILE_NAME = ".sbatchlint-cluster.toml"  # a cluster profile of its own (``cluster/profile.py``)

# key -> (type check, settings name or None for the selection keys)
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude")
# which files are linted (not settings the rules see): key -> Config attribute
_FILE_KEYS = {"force-exclude": "force_exclude", "respect-gitignore": "respect_gitignore"}
_SETTINGS = {
    "shared-roots": ("shared_roots", list),
    "container-auto-mounts": ("container_auto_mounts", list),
    "image-workdirs": ("image_workdirs", dict),
    "image-environment": ("image_environment", dict),
    "bridge-entry-points": ("bridge_entry_points", list),
    "gpus-per-node": ("gpus_per_node", int),
    "partitions": ("partitions", dict),
    "shellcheck": ("shellcheck", bool),
    "python-max-bytes": ("python_max_bytes", int),
    "extra-options": ("extra_options", list),
    "slurm-version": ("slurm_version", str),
    "gpu-request": ("gpu_request", str),
}


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass
class Config:
    path: Optional[str] = None
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    force_exclude: Optional[bool] = None  # None: not set here
    respect_gitignore: Optional[bool] = None
    cache_dir: Optional[str] = None  # as written (relative to ``root``); None: the default
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    severity: Dict[str, Severity] = field(default_factory=dict)
    settings: Dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()

    def relative(self, path: str) -> str:
        try:
            return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        except ValueError:
            return path

    def ignores_for(self, path: str) -> List[str]:
        relative = self.relative(path)
        name = os.path.basename(path)
        out: List[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if _glob(relative, name, pattern):
                out.extend(codes)
        return out

    def excludes(self, path: str) -> bool:
        relative = self.relative(path)
        name = os.path.basename(path)
        return any(_glob(relative, name, pattern) for pattern in self.exclude)


def _glob(relative: str, name: str, pattern: str) -> bool:
    import fnmatch  # here: only a configuration's exclusion patterns need it

    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
        return True
    # a directory pattern excludes what is below it
    return fnmatch.fnmatch(relative, pattern + "/*") or relative.startswith(pattern + "/")


def find(path: str) -> Optional[str]:
    """The closest configuration file for ``path``, or None."""
    directory = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate) and (name != "pyproject.toml" or _has_tool_table(candidate)):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_tool_table(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return b"[tool.sbatchlint" in handle.read()
    except OSError:
        return False


def load(path: str, known_codes: Sequence[str] = ()) -> Config:
    return from_document(_read_toml(path), path, known_codes)


def loads(text: str, path: str = ".sbatchlint.toml", known_codes: Sequence[str] = ()) -> Config:
    """A configuration from TOML text, read as the file ``path`` would be (rule examples use it)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None
    return from_document(document, path, known_codes)


def from_document(document: Dict[str, Any], path: str, known_codes: Sequence[str] = ()) -> Config:
    if os.path.basename(path) == "pyproject.toml":
        table = document.get("tool", {}).get("sbatchlint", {})
        prefix = "tool.sbatchlint."
    else:
        table = document.get("tool", {}).get("sbatchlint", document)
        prefix = ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {prefix.rstrip('.') or 'the file'} must be a table")
    config = Config(path=path)
    for key, value in table.items():
        where = f"{path}: {prefix}{key}"
        if key in _LIST_KEYS:
            values = _strings(value, where)
            if key != "exclude":
                _check_codes(values, known_codes, where)
            if key == "select":
                config.select = values
            elif key == "ignore":
                config.ignore = values
            elif key == "extend-select":
                config.extend_select = values
            else:
                config.exclude = values
        elif key in _FILE_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false, got {value!r}")
            setattr(config, _FILE_KEYS[key], value)
        elif key == "cache-dir":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{where}: expected a directory name, got {value!r}")
            config.cache_dir = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes]")
            for pattern, codes in value.items():
                codes = _strings(codes, f"{where}.{pattern}")
                _check_codes(codes, known_codes, f"{where}.{pattern}")
                config.per_file_ignores[pattern] = codes
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of CODE = \"error\"|\"warning\"|\"info\"")
            for code, level in value.items():
                _check_codes([code], known_codes, f"{where}.{code}")
                try:
                    config.severity[code.upper()] = Severity(str(level).lower())
                except ValueError:
                    raise ConfigError(f"{where}.{code}: expected \"error\", \"warning\" or \"info\", got {level!r}") from None
        elif key == "cluster":
            config.settings["cluster"] = _profile(value, f"{path}: {prefix}cluster", path)
        elif key in _SETTINGS:
            name, kind = _SETTINGS[key]
            if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{where}: expected a positive integer, got {value!r}")
            if kind is not int and not isinstance(value, kind):
                raise ConfigError(f"{where}: expected a {kind.__name__}, got {type(value).__name__}")
            if kind is list:
                value = _strings(value, where)
            if key == "slurm-version" and value.strip().lower() != "auto":
                from .options import parse_slurm_version

                if parse_slurm_version(value) is None:
                    raise ConfigError(f"{where}: expected a Slurm release such as \"24.05\", or \"auto\", got {value!r}")
            if key == "gpu-request" and value not in ("required", "optional"):
                raise ConfigError(f"{where}: expected \"required\" or \"optional\", got {value!r}")
            config.settings[name] = value
        else:
            known = ", ".join(sorted(list(_LIST_KEYS) + list(_FILE_KEYS) + ["cache-dir", "cluster", "per-file-ignores", "severity"]
                                      + list(_SETTINGS)))
            raise ConfigError(f"{where}: unknown key (known keys: {known})")
    return config


def _profile(table: Any, where: str, path: str):
    from .cluster.profile import ProfileError, from_table

    try:
        return from_table(table, where, path)
    except ProfileError as err:
        raise ConfigError(str(err)) from None


def find_profile(path: str) -> Optional[str]:
    """The closest ``.sbatchlint-cluster.toml`` for ``path``, or None."""
    directory = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while True:
        candidate = os.path.join(directory, PROFILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_profile(path: str):
    """The cluster profile in a ``.sbatchlint-cluster.toml`` file (the profile at its top level)."""
    return _profile(_read_toml(path), f"{path}: ", path)


def _read_toml(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None


def _strings(value: Any, where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return list(value)


def _check_codes(codes: Sequence[str], known: Sequence[str], where: str) -> None:
    if not known:
        return
    for code in codes:
        pattern = code.strip().upper()
        if pattern in ("ALL", "SC") or (pattern.startswith("SC") and pattern[2:].isdigit()):
            continue
        if not any(k.startswith(pattern) for k in known):
            raise ConfigError(f"{where}: unknown rule code or prefix {code!r}")

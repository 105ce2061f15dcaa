"""Every rule's code, name, module and language, written out.

The command line checks ``--select``/``--ignore`` codes, the configuration checks its codes and
SBL901 reports unknown codes in suppression comments without importing a single rule; a run
imports only the rule modules its selection and its files' languages need. A test checks this
table against the rules themselves (``registry``): adding a rule is adding its row here too.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Tuple


# (code, name, module under sbatchlint.rules, language: "shell", "python" or "any")
RULES: Tuple[Tuple[str, str, str, str], ...] = (
    ("SBL001", "shell-syntax-error", "header", "shell"),
    ("SBL002", "missing-shebang", "header", "shell"),
    ("SBL003", "directive-after-command", "header", "shell"),
    ("SBL004", "malformed-directive", "header", "shell"),
    ("SBL005", "unknown-directive-option", "directives", "shell"),
    ("SBL006", "invalid-directive-value", "directives", "shell"),
    ("SBL007", "container-option-in-header", "directives", "shell"),
    ("SBL008", "duplicate-directive", "directives", "shell"),
    ("SBL009", "unfilled-placeholder", "directives", "shell"),
    ("SBL010", "output-directory-created-in-job", "directives", "shell"),
    ("SBL011", "log-overwritten", "directives", "shell"),
    ("SBL012", "hash-in-directive-value", "directives", "shell"),
    ("SBL013", "dos-line-endings", "directives", "shell"),
    ("SBL014", "unknown-site-option", "directives", "shell"),
    ("SBL015", "template-file", "header", "shell"),
    ("SBL016", "region-not-analysed", "header", "shell"),
    ("SBL017", "unknown-partition", "cluster", "shell"),
    ("SBL018", "time-over-partition-limit", "cluster", "shell"),
    ("SBL019", "request-beyond-partition-nodes", "cluster", "shell"),
    ("SBL020", "gpu-request-without-gpus", "cluster", "shell"),
    ("SBL021", "account-not-associated", "cluster", "shell"),
    ("SBL022", "plugin-option-not-provided", "cluster", "shell"),
    ("SBL101", "torchrun-multiple-tasks-per-node", "launch", "shell"),
    ("SBL102", "prefer-srun-native", "launch", "shell"),
    ("SBL103", "torchrun-missing-node-args", "launch", "shell"),
    ("SBL104", "tasks-gpus-mismatch", "launch", "shell"),
    ("SBL105", "rendezvous-env-in-batch-shell", "topology", "shell"),
    ("SBL106", "parallelism-does-not-divide", "launch", "shell"),
    ("SBL107", "missing-kill-on-bad-exit", "topology", "shell"),
    ("SBL108", "missing-gpu-request", "topology", "shell"),
    ("SBL109", "cpus-per-task-not-inherited", "topology", "shell"),
    ("SBL110", "uneven-task-distribution", "topology", "shell"),
    ("SBL111", "gpu-per-task-binding", "topology", "shell"),
    ("SBL112", "launcher-in-batch-shell", "launch", "shell"),
    ("SBL113", "torchrun-missing-master-addr", "launch", "shell"),
    ("SBL201", "per-task-variable-expanded-early", "expansion", "shell"),
    ("SBL202", "job-variable-expanded-early", "expansion", "shell"),
    ("SBL203", "variable-not-exported-to-task", "expansion", "shell"),
    ("SBL301", "path-not-mounted", "containers", "shell"),
    ("SBL302", "mount-path-differs", "containers", "shell"),
    ("SBL303", "nemo-home-not-shared", "containers", "shell"),
    ("SBL304", "cache-not-shared", "containers", "shell"),
    ("SBL305", "mounts-without-image", "containers", "shell"),
    ("SBL306", "container-step-without-mounts", "containers", "shell"),
    ("SBL307", "concurrent-uv-sync", "containers", "shell"),
    ("SBL308", "mlm-missing-pythonpath", "containers", "shell"),
    ("SBL309", "stale-experiment-dir", "containers", "shell"),
    ("SBL310", "repeated-container-mounts", "containers", "shell"),
    ("SBL311", "script-directory-from-spool", "containers", "shell"),
    ("SBL312", "relative-path-in-image-workdir", "containers", "shell"),
    ("SBL313", "array-elements-share-directory", "containers", "shell"),
    ("SBL401", "hardcoded-secret", "secrets", "shell"),
    ("SBL402", "secret-expanded-into-command", "secrets", "shell"),
    ("SBL403", "xtrace-with-secrets", "secrets", "shell"),
    ("SBL500", "python-syntax-error", "python", "python"),
    ("SBL501", "torchrun-only-launch-guard", "python", "python"),
    ("SBL502", "barrier-timeout-too-short", "python", "python"),
    ("SBL503", "narrow-artifact-except", "python", "python"),
    ("SBL900", "unused-suppression", "suppression", "shell"),
    ("SBL901", "unknown-suppression-code", "suppression", "shell"),
)

CODES: Tuple[str, ...] = tuple(code for code, _name, _module, _language in RULES)

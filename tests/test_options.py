"""Tests of the sbatch/srun/pyxis option tables and value validators."""

import pytest

from sbatchlint.options import (
    ALIASES,
    PYXIS,
    SBATCH,
    SRUN,
    VALUE_KINDS,
    OptionSpec,
    canonical,
    lookup,
    lookup_exact,
    suggest,
    validate,
)

# ---------------------------------------------------------------------------
# Table shape


@pytest.mark.parametrize("table", [SBATCH, SRUN, PYXIS], ids=["sbatch", "srun", "pyxis"])
def test_table_entries_are_well_formed(table):
    for key, spec in table.items():
        assert isinstance(spec, OptionSpec)
        assert spec.long == key
        assert not key.startswith("-") and "=" not in key and len(key) > 1
        assert spec.arg in ("required", "optional", "none")
        assert spec.value is None or spec.value in VALUE_KINDS
        assert spec.short is None or (len(spec.short) == 1 and spec.short.isalpha())


@pytest.mark.parametrize("table", [SBATCH, SRUN], ids=["sbatch", "srun"])
def test_short_letters_are_unique_per_command(table):
    shorts = [spec.short for spec in table.values() if spec.short]
    assert len(shorts) == len(set(shorts))


def test_pyxis_options_are_merged_into_both_commands():
    assert len(PYXIS) == 15
    for name, spec in PYXIS.items():
        assert spec.pyxis
        assert spec.short is None
        assert SBATCH[name] is spec
        assert SRUN[name] is spec
    assert not any(spec.pyxis for name, spec in SBATCH.items() if name not in PYXIS)
    assert not any(spec.pyxis for name, spec in SRUN.items() if name not in PYXIS)


def test_pyxis_argument_kinds():
    takes_arg = {
        "container-image", "container-mounts", "container-workdir",
        "container-name", "container-save", "container-env",
    }
    for name, spec in PYXIS.items():
        assert spec.arg == ("required" if name in takes_arg else "none"), name
    assert PYXIS["container-image"].arg == "required"
    assert PYXIS["no-container-mount-home"].arg == "none"


def test_aliases_point_at_real_options():
    for alias, target in ALIASES.items():
        table = SRUN if alias in SRUN else SBATCH
        assert alias in table and target in table
        assert table[alias].arg == table[target].arg
    assert canonical("tasks-per-node") == "ntasks-per-node"
    assert canonical("ntasks") == "ntasks"


def test_srun_only_options():
    for name in ("kill-on-bad-exit", "label", "pty", "mpi", "multi-prog", "cpu-bind",
                 "overlap", "exact", "het-group", "unbuffered", "whole"):
        assert name in SRUN, name
        assert name not in SBATCH, name


def test_sbatch_only_options():
    for name in ("array", "wrap", "parsable", "export-file", "ignore-pbs",
                 "no-requeue", "requeue", "kill-on-invalid-dep", "wait-all-nodes"):
        assert name in SBATCH, name
        assert name not in SRUN, name


def test_common_options_in_both():
    for name in ("nodes", "ntasks", "ntasks-per-node", "gpus-per-node", "gres", "time",
                 "mem", "cpus-per-task", "partition", "account", "exclusive", "output",
                 "error", "export", "test-only", "container", "oom-kill-step"):
        assert name in SBATCH and name in SRUN, name


def test_srun_kill_on_bad_exit_takes_an_optional_argument():
    spec = lookup(SRUN, "K")
    assert spec is not None
    assert spec.long == "kill-on-bad-exit"
    assert spec.arg == "optional"
    assert spec.value == "kill-on-bad-exit"
    assert lookup(SRUN, "kill-on-bad-exit") is spec
    assert lookup(SBATCH, "K") is None  # -K is salloc's --kill-command


@pytest.mark.parametrize(
    "table,name,arg",
    [
        (SBATCH, "exclusive", "optional"),
        (SRUN, "exclusive", "optional"),
        (SBATCH, "propagate", "optional"),
        (SRUN, "propagate", "optional"),
        (SBATCH, "nice", "optional"),
        (SBATCH, "no-kill", "optional"),
        (SBATCH, "get-user-env", "optional"),
        (SRUN, "pty", "optional"),
        (SRUN, "overlap", "optional"),
        (SRUN, "immediate", "optional"),
        (SRUN, "resv-ports", "optional"),
        (SBATCH, "spread-job", "none"),
        (SRUN, "label", "none"),
        (SRUN, "exact", "none"),
        (SRUN, "multi-prog", "none"),
        (SBATCH, "parsable", "none"),
        (SBATCH, "test-only", "none"),
        (SBATCH, "wrap", "required"),
        (SRUN, "mpi", "required"),
        (SRUN, "cpu-bind", "required"),
        (SBATCH, "array", "required"),
    ],
)
def test_argument_kinds(table, name, arg):
    assert table[name].arg == arg


def test_wait_differs_between_sbatch_and_srun():
    assert SBATCH["wait"].short == "W" and SBATCH["wait"].arg == "none"
    assert SRUN["wait"].short == "W" and SRUN["wait"].arg == "required"


def test_value_kinds_are_assigned_in_both_tables():
    expected = {
        "time": "time", "time-min": "time", "nodes": "nodes", "ntasks": "count",
        "ntasks-per-node": "count", "cpus-per-task": "count", "ntasks-per-gpu": "count",
        "gpus": "gpus", "gpus-per-node": "gpus", "gpus-per-task": "gpus",
        "gpus-per-socket": "gpus", "gres": "gres", "mem": "mem", "mem-per-cpu": "mem",
        "mem-per-gpu": "mem", "exclusive": "exclusive",
    }
    for name, kind in expected.items():
        assert SBATCH[name].value == kind, name
        assert SRUN[name].value == kind, name
    assert SBATCH["array"].value == "array"
    assert SRUN["kill-on-bad-exit"].value == "kill-on-bad-exit"
    assert SBATCH["job-name"].value is None


# ---------------------------------------------------------------------------
# Lookups


def test_lookup_long_and_short():
    assert lookup(SBATCH, "ntasks-per-node").long == "ntasks-per-node"
    assert lookup(SBATCH, "N").long == "nodes"
    assert lookup(SBATCH, "n").long == "ntasks"
    assert lookup(SBATCH, "c").long == "cpus-per-task"
    assert lookup(SBATCH, "a").long == "array"
    assert lookup(SRUN, "a") is None
    assert lookup(SRUN, "l").long == "label"
    assert lookup(SBATCH, "l") is None
    assert lookup(SBATCH, "G").long == "gpus"
    assert lookup(SBATCH, "nonexistent-option") is None
    assert lookup(SBATCH, "Z") is None
    assert lookup(SBATCH, "") is None


def test_lookup_tolerates_dashes_and_value():
    assert lookup(SBATCH, "--ntasks-per-node").long == "ntasks-per-node"
    assert lookup(SBATCH, "ntasks-per-node=8").long == "ntasks-per-node"
    assert lookup_exact(SBATCH, "--time=10").long == "time"


def test_lookup_unique_prefix():
    assert lookup(SBATCH, "ntasks-per-n").long == "ntasks-per-node"
    assert lookup(SBATCH, "gpus-per-no").long == "gpus-per-node"
    assert lookup(SBATCH, "parti").long == "partition"
    assert lookup(SBATCH, "wra").long == "wrap"
    assert lookup(SRUN, "kill-on").long == "kill-on-bad-exit"
    assert lookup(SRUN, "het").long == "het-group"


def test_lookup_exact_name_beats_longer_options():
    assert lookup(SBATCH, "mem").long == "mem"  # not mem-per-cpu
    assert lookup(SBATCH, "time").long == "time"  # not time-min
    assert lookup(SBATCH, "gpus").long == "gpus"
    assert lookup(SBATCH, "container").long == "container"  # Slurm's, not pyxis
    assert lookup(SBATCH, "cluster").long == "cluster"


def test_lookup_ambiguous_prefix():
    assert lookup(SBATCH, "ntasks-per") is None
    assert lookup(SBATCH, "gpus-per") is None
    assert lookup(SBATCH, "node") is None  # nodes, nodelist, nodefile
    assert lookup(SBATCH, "mem-per") is None
    assert lookup(SBATCH, "clus") is None  # cluster(s) vs cluster-constraint
    assert lookup(SRUN, "cpu") is None
    assert lookup(SBATCH, "container-mount") is None  # mounts vs mount-home


def test_lookup_prefix_of_aliases_is_not_ambiguous():
    # --tasks is a unique prefix of the deprecated --tasks-per-node.
    assert lookup(SBATCH, "tasks").long == "tasks-per-node"
    assert lookup(SRUN, "cpu_").long == "cpu_bind"


def test_lookup_pyxis():
    spec = lookup(SRUN, "container-image")
    assert spec is not None and spec.pyxis and spec.arg == "required"
    assert lookup(SBATCH, "container-image").pyxis
    assert lookup(SRUN, "container-im").long == "container-image"
    assert lookup(SRUN, "no-container-mount-home").arg == "none"
    assert lookup(SRUN, "no-container-m").long == "no-container-mount-home"
    assert lookup(SRUN, "container-mounts").arg == "required"
    assert lookup(SRUN, "container-env").arg == "required"


def test_lookup_exact_has_no_prefix_matching():
    assert lookup_exact(SBATCH, "ntasks-per-n") is None
    assert lookup_exact(SBATCH, "ntasks-per-node").long == "ntasks-per-node"
    assert lookup_exact(SRUN, "K").long == "kill-on-bad-exit"
    assert lookup_exact(SRUN, "container-im") is None
    assert lookup_exact(SBATCH, "") is None


def test_lookup_is_case_sensitive():
    assert lookup(SBATCH, "n").long == "ntasks"
    assert lookup(SBATCH, "N").long == "nodes"
    assert lookup(SBATCH, "Nodes") is None


# ---------------------------------------------------------------------------
# Suggestions


@pytest.mark.parametrize(
    "typo,expected",
    [
        ("ntask-per-node", "ntasks-per-node"),
        ("gpu-per-node", "gpus-per-node"),
        ("ntasks_per_node", "ntasks-per-node"),
        ("gpus-per-nodes", "gpus-per-node"),
        ("cpu-per-task", "cpus-per-task"),
        ("cpus-per-tasks", "cpus-per-task"),
        ("cpus_per_task", "cpus-per-task"),
        ("partion", "partition"),
        ("acount", "account"),
        ("job_name", "job-name"),
        ("jobname", "job-name"),
        ("exlusive", "exclusive"),
        ("dependancy", "dependency"),
        ("mem-per-gpus", "mem-per-gpu"),
        ("tasks-per-nodes", "ntasks-per-node"),
        ("container-images", "container-image"),
        ("no-container-mount-hom", "no-container-mount-home"),
        ("time-limit", "time"),
        ("walltime", "time"),
    ],
)
def test_suggest_realistic_typos(typo, expected):
    assert suggest(SBATCH, typo) == expected


def test_suggest_depends_on_the_command():
    assert suggest(SRUN, "kill-on-bad-exits") == "kill-on-bad-exit"
    assert suggest(SBATCH, "kill-on-bad-exits") is None
    assert suggest(SBATCH, "requeu") == "requeue"
    assert suggest(SRUN, "requeu") is None


def test_suggest_returns_none_when_nothing_is_close():
    assert suggest(SBATCH, "frobnicate") is None
    assert suggest(SBATCH, "xyz") is None
    assert suggest(SBATCH, "") is None


def test_suggest_returns_none_when_not_unique():
    # Equally close to --ntasks-per-core and --ntasks-per-node.
    assert suggest(SBATCH, "ntasks-per-nore") is None


# ---------------------------------------------------------------------------
# Validators


def _ok(kind, *values):
    for value in values:
        assert validate(kind, value) is None, (kind, value)


def _bad(kind, *values):
    for value in values:
        message = validate(kind, value)
        assert message, (kind, value)
        assert f'"{value}"' in message


def test_time_accepted():
    _ok("time", "60", "0", "1:30", "01:00:00", "24:00:00", "1-0", "1-12",
        "1-12:30", "2-00:00:00", "infinite", "INFINITE", "unlimited", "UNLIMITED", "-1")


def test_time_rejected():
    _bad("time", "1:2:3:4", "1-2-3", "abc", "1h", "", "1:", ":30", "1:2-3", "-5", "1.5",
         "2 hours", "10m")


def test_time_message():
    assert validate("time", "1:2:3:4") == (
        'invalid --time "1:2:3:4": use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS'
    )
    assert validate("time", "x", option="time-min").startswith('invalid --time-min "x"')


def test_nodes_accepted():
    _ok("nodes", "1", "2", "16", "2-4", "1-1", "0-4", "1k", "1,2,4", "2-16:2")


def test_nodes_rejected():
    _bad("nodes", "two", "0", "4-2", "1.5", "", "N", "4-", "1,x", "2-16:0", "16:2")


def test_nodes_domain_example():
    message = validate("nodes", "two")
    assert '"two" is not a valid node count' in message


def test_count_accepted():
    _ok("count", "1", "8", "64", "08", "2147483647")


def test_count_rejected():
    _bad("count", "0", "-1", "two", "1.0", "", "8 ", "2147483648", "tasks-per-node=8")


def test_count_domain_examples():
    assert 'Invalid numeric value "0" for --ntasks-per-node.' in validate(
        "count", "0", option="ntasks-per-node")
    assert 'Invalid numeric value "tasks-per-node=8" for --ntasks.' in validate(
        "count", "tasks-per-node=8", option="ntasks")


def test_gpus_accepted():
    _ok("gpus", "8", "1", "0", "a100:8", "volta:3,kepler:1", "h100:4")


def test_gpus_rejected():
    _bad("gpus", "", "a100:", ":8", "8x", "a100:two", "gpu:a100:8", "eight")


def test_gres_accepted():
    _ok("gres", "gpu", "gpu:8", "gpu:0", "gpu:a100:4", "gpu:a100", "gres/gpu:2",
        "gpu:4,nvme:1", "none", "NONE", "gpu:tesla-v100:2", "mps:100", "gpu:1k")


def test_gres_rejected():
    _bad("gres", "", "gpu:", "gpu::2", "gpu:a100:x", ":2", "gpu:a100:4:1", "gpu:4x",
         "gpu=2", "help")


def test_mem_accepted():
    _ok("mem", "0", "4096", "64G", "64g", "64GB", "512M", "1T", "100K", "1024m")


def test_mem_rejected():
    _bad("mem", "", "-1", "64GiB", "1.5G", "G", "64 G", "64X", "lots")


def test_mem_message_names_the_option():
    assert "--mem-per-gpu" in validate("mem", "x", option="mem-per-gpu")
    assert "Invalid --mem specification" in validate("mem", "64GiB")


def test_array_accepted():
    _ok("array", "0", "0-15", "1,3,5-7", "0-15:4", "0-15%4", "1-100%10", "0,6,16-32")


def test_array_rejected():
    _bad("array", "", "15-0", "a-b", "0-15:0", "0-15%", "0-15%x", "1,,2", "-1")


def test_exclusive():
    _ok("exclusive", "user", "mcs", "topo", "USER")
    assert validate("exclusive", None) is None  # written without a value
    _bad("exclusive", "node", "yes", "")


def test_kill_on_bad_exit():
    _ok("kill-on-bad-exit", "0", "1")
    assert validate("kill-on-bad-exit", None) is None  # bare -K
    _bad("kill-on-bad-exit", "2", "yes", "true", "")


@pytest.mark.parametrize("kind", VALUE_KINDS)
@pytest.mark.parametrize("value", ["$X", "${NNODES}", "${GPUS:-8}", "$(nproc)", "`nproc`",
                                   "gpu:$N", "${A}-${B}"])
def test_shell_expansions_are_not_checked(kind, value):
    assert validate(kind, value) is None


def test_unknown_kind_raises():
    with pytest.raises(ValueError):
        validate("colour", "red")


# -- what an option means, read from its table entry ------------------------------------------
def test_aliases_share_one_meaning():
    from sbatchlint.options import NTASKS_PER_NODE, SBATCH

    alias, preferred = SBATCH["tasks-per-node"], SBATCH[NTASKS_PER_NODE]
    assert alias.canonical == preferred.canonical == NTASKS_PER_NODE
    assert alias.aliases == (NTASKS_PER_NODE,) and preferred.aliases == ("tasks-per-node",)
    assert alias.geometry == preferred.geometry == "tasks_per_node"


def test_geometry_and_inheritance_live_on_the_entries():
    from sbatchlint.options import GEOMETRY_QUANTITIES, SBATCH, SRUN

    assert SBATCH["nodes"].geometry == "nodes" and SRUN["gres"].geometry == "gpus_per_node"
    assert SBATCH["gpu-bind"].geometry == "placement" and SBATCH["job-name"].geometry is None
    assert {s.geometry for s in SBATCH.values()} - {None, "placement"} <= set(GEOMETRY_QUANTITIES)
    # pyxis options configure the batch step only; Slurm's own reach the steps
    assert not SBATCH["container-mounts"].steps_inherit and SBATCH["ntasks"].steps_inherit
    # srun of Slurm 22.05 up to 23.11 ignores the allocation's --cpus-per-task
    assert SBATCH["cpus-per-task"].not_inherited == ((22, 5), (23, 11))
    assert SBATCH["ntasks"].not_inherited is None


def test_accumulating_free_text_and_toggles():
    from sbatchlint.options import SBATCH, SRUN

    assert SBATCH["mail-type"].accumulates and not SBATCH["container-mounts"].accumulates
    assert SBATCH["container-mounts"].list_valued and SRUN["container-env"].list_valued
    assert not SBATCH["nodes"].accumulates
    assert SBATCH["job-name"].free_text and not SBATCH["account"].free_text
    assert SBATCH["container-mount-home"].toggle == SBATCH["no-container-mount-home"].toggle == "mount-home"


def test_getopt_reading_helpers():
    from sbatchlint.options import SBATCH, ambiguous, has_expansion, read_as_short

    assert read_as_short(SBATCH, "-HQ") == ("-H -Q", False)
    assert read_as_short(SBATCH, "-ntasks=8") == ("-n tasks=8", True)
    assert "mem-per-cpu" in ambiguous(SBATCH, "mem-per") and len(ambiguous(SBATCH, "mem-per")) > 1
    assert has_expansion("${NNODES}") and not has_expansion("4")

"""`sbatchlint profile` on recorded outputs of other Slurm versions, and the profile as the
configuration layer reads it.

The recorded outputs (tests/data/slurm-outputs/) are written by hand in Slurm's documented
formats; the live test cluster is read by tests/slurm/test_cluster_rules_on_slurm.py.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sbatchlint.cluster import collect, parse
from sbatchlint.cluster.command import merged, render
from sbatchlint.cluster.profile import ProfileError, from_table, to_toml
from sbatchlint.config import ConfigError, loads

DATA = Path(__file__).parent / "data" / "slurm-outputs"
NOW = datetime(2026, 3, 2, 9, 14, tzinfo=timezone.utc)


def recorded(version: str, name: str) -> str:
    return (DATA / version / name).read_text()


def runner(version: str, missing=(), failing=None):
    """A fake Slurm whose commands print the recorded outputs of ``version``."""
    failing = failing or {}
    files = {
        ("sbatch", "--version"): "sbatch-version.txt",
        ("scontrol", "--oneliner", "show", "partition"): "scontrol-partition.txt",
        ("scontrol", "--oneliner", "show", "node"): "scontrol-node.txt",
        ("sbatch", "--help"): "sbatch-help.txt",
        ("srun", "--help"): "sbatch-help.txt",
        ("sinfo",): "sinfo.txt",
        ("sacctmgr",): "sacctmgr-assoc.txt",
    }
    calls = []

    def run(argv):
        calls.append(list(argv))
        if argv[0] in missing:
            raise FileNotFoundError(argv[0])
        if argv[0] in failing:
            return 1, "", failing[argv[0]]
        if argv[:3] == ["scontrol", "show", "config"]:
            return 0, "Configuration data as of 2024-03-02T09:14:00\nClusterName             = alps\nMpiDefault = pmix\n", ""
        for key, name in files.items():
            if tuple(argv[: len(key)]) == key:
                path = DATA / version / name
                if not path.exists():
                    return 1, "", f"{argv[0]}: error: not recorded"
                return 0, path.read_text(), ""
        return 1, "", "unexpected command"

    run.calls = calls
    return run


# -- parsers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text,version", [
    ("slurm 23.11.4\n", "23.11.4"),
    ("slurm-wlm 22.05.8\n", "22.05.8"),
    ("slurm 24.05.3-1\n", "24.05.3"),
    ("slurm 25.05\n", "25.05"),
    ("sbatch: error: something else\n", None),
])
def test_sbatch_version_forms(text, version):
    assert parse.slurm_version(text) == version


@pytest.mark.parametrize("text,expected", [
    ("UNLIMITED", None), ("INFINITE", None), ("NONE", None),
    ("30", 30), ("30:00", 30), ("30:01", 31), ("2:00:00", 120), ("1-00:00:00", 1440),
    ("2-12", 3600), ("1-2:30", 1590), ("junk", None),
])
def test_slurm_times(text, expected):
    assert parse.minutes(text) == expected


def test_hostlists_expand_with_padding():
    assert parse.expand_hostlist("gpu[001-003,010],cpu02,n[1-2]x") == [
        "gpu001", "gpu002", "gpu003", "gpu010", "cpu02", "n1x", "n2x"]


def test_multiline_scontrol_of_23_11():
    partitions = parse.partitions_from_scontrol(recorded("23.11", "scontrol-partition.txt"))
    nodes = parse.nodes_from_scontrol(recorded("23.11", "scontrol-node.txt"))
    assert [p.name for p in partitions] == ["gpu", "cpu", "debug"]
    assert [p.default for p in partitions] == [True, False, False]
    assert partitions[2].max_time == "30:00" and partitions[2].default_time == "00:10:00"
    assert [n.name for n in nodes] == ["gpu001", "gpu002", "gpu003", "gpu004", "cpu01", "cpu02"]
    assert nodes[0].gres == ["gpu:h100:8"] and nodes[0].gpus == 8
    assert nodes[5].cpus == 120  # CPUEfctv (CPUs left for jobs), not CPUTot
    assert nodes[5].partitions == ["cpu", "debug"]


def test_profile_of_23_11_cluster():
    profile = collect.collect(runner("23.11"), user="jdoe", now=NOW)
    assert profile.slurm_version == "23.11.4"
    assert profile.cluster == "alps"
    gpu, cpu, debug = profile.partitions
    assert (gpu.name, gpu.default, gpu.max_time, gpu.nodes, gpu.cpus_per_node, gpu.memory_per_node,
            gpu.gpus_per_node, gpu.gres) == ("gpu", True, "2-00:00:00", 4, 112, 2000000, 8, ("gpu:h100:8",))
    assert (cpu.nodes, cpu.cpus_per_node, cpu.memory_per_node, cpu.gpus_per_node, cpu.gres) == (2, 128, 1024000, 0, ())
    # a partition over unlike nodes: the most any of them has
    assert (debug.nodes, debug.cpus_per_node, debug.gpus_per_node) == (2, 120, 8)
    assert profile.pyxis is True
    # written as extra-options writes them: "=" for an option that takes a value
    assert {"container-image=", "container-mount-home", "no-container-entrypoint", "container-env=",
            "environment="} <= set(profile.plugin_options)
    assert "cpus-per-gpu=" not in profile.plugin_options  # Slurm's own options are not plugin options
    # the other cluster's association is left out; the user name is not kept
    assert profile.associations == (("llm-pretrain", ""), ("teaching", "cpu"), ("teaching", "debug"))
    assert profile.not_read == ()
    assert "jdoe" not in to_toml(profile)


def test_profile_of_20_11_cluster_without_plugins_or_accounting():
    run = runner("20.11", failing={"sacctmgr": "sacctmgr: error: Problem talking to the database: Connection refused"})
    profile = collect.collect(run, user="jdoe", now=NOW)
    assert profile.slurm_version == "20.11.9"
    normal, v100 = profile.partitions
    # no Partitions= on the nodes: the partition's host list decides
    assert (normal.nodes, normal.cpus_per_node, normal.gpus_per_node, normal.max_time) == (3, 48, 2, "1-00:00:00")
    assert (v100.nodes, v100.cpus_per_node, v100.gpus_per_node) == (3, 48, 4)
    assert set(v100.gres) == {"gpu:tesla:2", "gpu:v100:4", "mps:400"}
    assert profile.plugin_options is None and profile.pyxis is None  # no --help recorded
    assert profile.associations is None
    assert any(line.startswith("associations: sacctmgr failed: ") and "Connection refused" in line
               for line in profile.not_read)
    assert any(line.startswith("plugin-options:") for line in profile.not_read)


def test_sinfo_is_the_fallback_when_scontrol_fails():
    run = runner("24.05", failing={"scontrol": "scontrol: error: Invalid user for SlurmUser"})
    profile = collect.collect(run, user="jdoe", now=NOW)
    gh200, debug, xfer = profile.partitions
    assert (gh200.name, gh200.default, gh200.max_time, gh200.default_time, gh200.nodes, gh200.cpus_per_node,
            gh200.memory_per_node, gh200.gpus_per_node) == ("gh200", True, "12:00:00", "30:00", 2, 288, 460000, 4)
    assert (debug.default, debug.max_time, debug.default_time, debug.nodes) == (False, "30:00", "NONE", 1)
    assert xfer.gpus_per_node == 0 and xfer.gres == ()
    assert ["sinfo", "-h", "-N", "-o", parse.SINFO_FORMAT] in run.calls
    assert "partitions: read with sinfo (scontrol gave no answer)" in profile.not_read


def test_no_slurm_at_all_is_one_error():
    with pytest.raises(collect.NoSlurm):
        collect.collect(runner("23.11", missing=("sbatch", "srun", "scontrol", "sinfo", "sacctmgr")), user="jdoe")


def test_the_user_name_never_reaches_the_profile():
    run = runner("23.11", failing={"sacctmgr": "sacctmgr: error: user 'jdoe' has no associations"})
    profile = collect.collect(run, user="jdoe", now=NOW)
    assert "jdoe" not in to_toml(profile)
    assert "associations: sacctmgr failed: sacctmgr: error: user '$USER' has no associations" in profile.not_read


def test_a_credential_in_an_error_message_is_not_kept():
    token = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
    run = runner("23.11", failing={"sacctmgr": f"sacctmgr: error: bad auth token {token}"})
    profile = collect.collect(run, user="jdoe", now=NOW)
    assert token not in to_toml(profile)
    assert any(line.startswith("associations: sacctmgr failed: sacctmgr: error: bad auth token hf_")
               for line in profile.not_read)


def test_the_profile_feeds_the_release_and_the_plugin_options(tmp_path):
    from sbatchlint.runner import CommandLine, Resolver

    profile = collect.collect(runner("23.11"), user="jdoe", now=NOW)
    (tmp_path / ".sbatchlint-cluster.toml").write_text(to_toml(profile))
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --environment=edf\nsrun hostname\n")
    settings = Resolver(CommandLine(), []).options_for(str(tmp_path / "job.sh")).settings
    assert settings["slurm_version"] == "23.11.4"
    assert "environment=" in settings["extra_options"]
    # what the configuration or the command line say wins
    (tmp_path / ".sbatchlint.toml").write_text('slurm-version = "22.05"\nextra-options = ["environment"]\n')
    settings = Resolver(CommandLine(settings={"shellcheck": False}), []).options_for(str(tmp_path / "job.sh")).settings
    assert settings["slurm_version"] == "22.05"
    assert settings["extra_options"].count("environment") == 1 and "environment=" not in settings["extra_options"]
    settings = Resolver(CommandLine(settings={"slurm_version": "25.05"}), []).options_for(str(tmp_path / "job.sh")).settings
    assert settings["slurm_version"] == "25.05"


def test_with_the_clusters_plugin_options_an_unknown_option_is_an_error_not_a_guess(tmp_path):
    from lintutil import lint_text
    from sbatchlint.config import load_profile

    profile = collect.collect(runner("23.11"), user="jdoe", now=NOW)
    (tmp_path / ".sbatchlint-cluster.toml").write_text(to_toml(profile))
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --uenv=prgenv-gnu\nsrun hostname\n"
    assert [d.code for d in lint_text(text, ["SBL014", "SBL022"])] == ["SBL014"]
    found = lint_text(text, ["SBL014", "SBL022"], settings={"cluster": load_profile(str(tmp_path / ".sbatchlint-cluster.toml"))})
    assert [d.code for d in found] == ["SBL022"]
    assert "neither a Slurm option nor one of this cluster's plugins" in found[0].message


# -- the file ---------------------------------------------------------------------------------
def test_profile_round_trips_through_toml():
    profile = collect.collect(runner("23.11"), user="jdoe", now=NOW)
    import tomllib

    again = from_table(tomllib.loads(to_toml(profile)), "x")
    assert again == profile
    assert again.taken == "2026-03-02T09:14:00Z"


def test_pyproject_keeps_everything_but_its_old_profile():
    existing = ('[project]\nname = "x"\n\n[tool.sbatchlint]\nselect = ["ALL"]\n\n'
                '[tool.sbatchlint.cluster]\ncluster = "old"\n\n[tool.sbatchlint.cluster.partitions.old]\nnodes = 1\n\n'
                '[tool.ruff]\nline-length = 100\n')
    profile = collect.collect(runner("23.11"), user="jdoe", now=NOW)
    text = render(profile, "pyproject.toml", existing)
    import tomllib

    document = tomllib.loads(text)
    assert document["project"] == {"name": "x"}
    assert document["tool"]["ruff"] == {"line-length": 100}
    assert document["tool"]["sbatchlint"]["select"] == ["ALL"]
    assert set(document["tool"]["sbatchlint"]["cluster"]["partitions"]) == {"gpu", "cpu", "debug"}
    assert loads(text, "pyproject.toml").settings["cluster"].cluster == "alps"


def test_merged_replaces_only_the_named_tables():
    text = merged("a = 1\n[cluster]\nx = 1\n[cluster.partitions.p]\nnodes = 1\n[per-file-ignores]\n\"a\" = []\n",
                  "[cluster]\ncluster = \"new\"\n", "cluster")
    assert text == "a = 1\n[per-file-ignores]\n\"a\" = []\n\n[cluster]\ncluster = \"new\"\n"


@pytest.mark.parametrize("table,message", [
    ({"partitions": {"gpu": {"nodes": "four"}}}, "cluster.partitions.gpu.nodes: expected a whole number"),
    ({"partitions": {"gpu": {"max-time": "two days"}}}, "cluster.partitions.gpu.max-time: not a Slurm time"),
    ({"slurm-version": "latest"}, "cluster.slurm-version: expected a Slurm version"),
    ({"colour": "blue"}, "cluster.colour: unknown key"),
    ({"associations": [{"partition": "gpu"}]}, "cluster.associations[0]: needs an account"),
])
def test_bad_profile_is_a_one_line_error(table, message):
    with pytest.raises(ProfileError) as raised:
        from_table(table, "cluster")
    assert message in str(raised.value)


def test_config_names_the_file_and_key_of_a_bad_profile():
    with pytest.raises(ConfigError) as raised:
        loads('[cluster.partitions.gpu]\nnodes = -1\n', "/p/.sbatchlint.toml")
    assert str(raised.value).startswith("/p/.sbatchlint.toml: cluster.partitions.gpu.nodes: expected a whole number")


# -- the command and the linter, end to end with a stand-in Slurm on PATH ------------------------
def fake_slurm(bin_dir: Path, version: str) -> None:
    """Shell scripts named like Slurm's commands that print the recorded outputs."""
    bin_dir.mkdir()
    scripts = {
        "sbatch": f'case "$1" in --version) /bin/cat {DATA}/{version}/sbatch-version.txt;; '
                  f'--help) /bin/cat {DATA}/{version}/sbatch-help.txt;; *) exit 1;; esac',
        "srun": f'/bin/cat {DATA}/{version}/sbatch-help.txt',
        "scontrol": f'case "$*" in *partition*) /bin/cat {DATA}/{version}/scontrol-partition.txt;; '
                    f'*node*) /bin/cat {DATA}/{version}/scontrol-node.txt;; '
                    '*config*) echo "ClusterName = alps";; esac',
        "sacctmgr": 'echo "sacctmgr: error: Problem talking to the database: Connection refused" >&2; exit 1',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)


def sbatchlint(args, cwd, path_dir=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    if path_dir is not None:
        env["PATH"] = str(path_dir)  # only the stand-in: the real Slurm of this machine stays out
    return subprocess.run([sys.executable, "-m", "sbatchlint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_profile_command_writes_the_file_the_linter_reads(tmp_path):
    fake_slurm(tmp_path / "bin", "23.11")
    project = tmp_path / "project"
    (project / "jobs").mkdir(parents=True)
    done = sbatchlint(["profile"], project, tmp_path / "bin")
    assert done.returncode == 0, done.stderr
    assert (project / ".sbatchlint-cluster.toml").exists()
    assert "wrote .sbatchlint-cluster.toml: cluster alps; Slurm 23.11.4; 3 partitions (gpu*, cpu, debug)" in done.stderr
    assert "could not read associations: sacctmgr failed:" in done.stderr
    job = project / "jobs" / "train.sh"
    job.write_text("#!/bin/bash\n#SBATCH --partition=gpus\n#SBATCH --nodes=2\nsrun hostname\n")
    lint = sbatchlint(["--select", "SBL0", "jobs/train.sh"], project)
    assert lint.returncode == 1
    assert "partition `gpus` does not exist on this cluster" in lint.stdout
    assert "did you mean `gpu`?" in lint.stdout
    assert "cluster profile of alps taken" in lint.stdout
    # --isolated ignores the profile like any configuration
    assert sbatchlint(["--isolated", "--select", "SBL0", "jobs/train.sh"], project).returncode == 0


def test_profile_print_writes_nothing(tmp_path):
    fake_slurm(tmp_path / "bin", "23.11")
    done = sbatchlint(["profile", "--print"], tmp_path, tmp_path / "bin")
    assert done.returncode == 0, done.stderr
    assert "[partitions.gpu]" in done.stdout and 'max-time = "2-00:00:00"' in done.stdout
    assert not (tmp_path / ".sbatchlint-cluster.toml").exists()


def test_profile_command_without_slurm_is_one_line(tmp_path):
    (tmp_path / "bin").mkdir()
    done = sbatchlint(["profile"], tmp_path, tmp_path / "bin")
    assert done.returncode == 2
    assert done.stderr.startswith("sbatchlint: error: no Slurm client command could be run")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / ".sbatchlint-cluster.toml").exists()


def test_profile_into_pyproject(tmp_path):
    fake_slurm(tmp_path / "bin", "23.11")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    done = sbatchlint(["profile", "-o", "pyproject.toml"], tmp_path, tmp_path / "bin")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "demo"\n\n[tool.sbatchlint.cluster]\n')
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --partition=cpu\n#SBATCH --gpus-per-node=4\nsrun hostname\n")
    lint = sbatchlint(["--select", "SBL0", "job.sh"], tmp_path)
    assert "asks for GPUs but the nodes of partition `cpu` have no GPUs" in lint.stdout


def test_a_bad_profile_file_is_one_line(tmp_path):
    (tmp_path / ".sbatchlint-cluster.toml").write_text("[partitions.gpu]\nnodes = 'many'\n")
    (tmp_path / "job.sh").write_text("#!/bin/bash\nsrun hostname\n")
    lint = sbatchlint(["job.sh"], tmp_path)
    assert lint.returncode == 2
    assert lint.stderr.strip() == (f"sbatchlint: error: {tmp_path}/.sbatchlint-cluster.toml: "
                                   "partitions.gpu.nodes: expected a whole number, got 'many'")

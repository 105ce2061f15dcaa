"""The container family's claims about Slurm itself, proved on the local 2-node cluster.

SBL311: in a batch job `$0` and `${BASH_SOURCE[0]}` are slurmd's spooled copy of the script, so
their directory is the spool directory; the script works with `bash job.sh` and fails under
sbatch, and the fixed script (`--unsafe-fixes`) runs when submitted from its directory.

SBL310: of a repeated `--container-mounts`, only the last value reaches the remote side
(slurmstepd), where pyxis builds the container. The test cluster's pyxis stand-in
(`fake_pyxis.c`) is the probe: it hands each task what the remote side received, as
`FAKE_PYXIS_REMOTE_CONTAINER_MOUNTS` (values in arrival order, joined by `|`).
"""
from __future__ import annotations

import subprocess

import pytest

from proofs import findings, fixed_by_sbatchlint, script

pytestmark = pytest.mark.slurm


SELF_DIRECTORY_JOB = """
    #!/bin/bash
    #SBATCH --job-name=selfdir
    #SBATCH --nodes=1
    #SBATCH --time=1
    echo "ZERO=$0"
    echo "SOURCE=${BASH_SOURCE[0]}"
    source "$(dirname "$0")/settings.sh"
    echo "GREETING=$GREETING"
    """


def test_sbl311_a_batch_jobs_own_path_is_the_spooled_copy(slurm):
    (slurm.workdir / "settings.sh").write_text('GREETING="from the settings file"\n')
    job = slurm.script(script(SELF_DIRECTORY_JOB), "selfdir.sbatch")
    (finding,) = findings(job)
    assert finding["code"] == "SBL311" and "spool directory" in finding["message"]

    # outside Slurm the script finds its settings file next to it
    local = subprocess.run(["bash", str(job)], capture_output=True, text=True, cwd="/", timeout=30)
    assert "GREETING=from the settings file" in local.stdout, local.stderr

    # in a batch job $0 and BASH_SOURCE name slurmd's copy, and the settings file is not there
    info, out = slurm.run(job, timeout=60)
    zero = next(line for line in out.splitlines() if line.startswith("ZERO="))[len("ZERO="):]
    source = next(line for line in out.splitlines() if line.startswith("SOURCE="))[len("SOURCE="):]
    assert zero.endswith("/slurm_script") and "slurmd" in zero, zero
    assert source == zero
    assert not zero.startswith(str(slurm.workdir))
    assert "settings.sh: No such file or directory" in out
    assert "GREETING=from the settings file" not in out

    # the fix reads $SLURM_SUBMIT_DIR in a job: submitted from the script's directory, it runs
    fixed = fixed_by_sbatchlint(job, "selfdir.fixed.sbatch", unsafe=True)
    assert "${SLURM_SUBMIT_DIR:-$(dirname \"$0\")}/settings.sh" in fixed.read_text()
    assert findings(fixed) == []
    info, out = slurm.run(fixed, timeout=60)
    assert info.ok, (info, out)
    assert "GREETING=from the settings file" in out


def test_sbl310_a_repeated_spank_option_reaches_the_job_once_with_its_last_value(slurm):
    """Slurm keeps one value per SPANK option: for options given to sbatch it hands the job the
    plugin's option in the environment (`SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option>`), and a
    repeated `--container-mounts` arrives there once, holding the last value only. (For srun's own
    options the remote side is slurmstepd, which the test cluster's stand-in plugin does not
    report; DOMAIN.md §9 records that measurement.)"""
    job = slurm.script(script("""
        #!/bin/bash
        #SBATCH --job-name=mounts
        #SBATCH --nodes=1
        #SBATCH --time=1
        #SBATCH --container-mounts=/lustre/data:/lustre/data
        #SBATCH --container-mounts=/lustre/ckpt:/lustre/ckpt
        env | grep '^SLURM_SPANK_.*container_mounts='
        """), "mounts.sbatch")
    info, out = slurm.run(job, timeout=60)
    assert info.ok, (info, out)
    received = [line.split("=", 1)[1] for line in out.splitlines() if "container_mounts=" in line]
    assert received == ["/lustre/ckpt:/lustre/ckpt"]
    # one comma-separated list keeps both
    merged = slurm.script(job.read_text().replace(
        "#SBATCH --container-mounts=/lustre/data:/lustre/data\n#SBATCH --container-mounts=/lustre/ckpt:/lustre/ckpt",
        "#SBATCH --container-mounts=/lustre/data:/lustre/data,/lustre/ckpt:/lustre/ckpt"), "merged.sbatch")
    info, out = slurm.run(merged, timeout=60)
    assert info.ok, (info, out)
    received = [line.split("=", 1)[1] for line in out.splitlines() if "container_mounts=" in line]
    assert received == ["/lustre/data:/lustre/data,/lustre/ckpt:/lustre/ckpt"]


MOUNTS_JOB = """
    #!/bin/bash
    #SBATCH --job-name=mounts-probe
    #SBATCH --nodes=1
    #SBATCH --time=1
    srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 \\
         --container-mounts=/lustre/data:/lustre/data \\
         --container-mounts=/lustre/ckpt:/lustre/ckpt \\
         bash -c 'printenv FAKE_PYXIS_REMOTE_CONTAINER_MOUNTS || echo NO-PROBE'
    """


def _received(out: str):
    lines = [line for line in out.splitlines() if line.startswith("/")]
    assert len(lines) == 1, out
    return lines[0].split("|")


def test_sbl310_the_remote_side_receives_only_the_last_container_mounts(slurm):
    job = slurm.script(script(MOUNTS_JOB), "mounts.sbatch")
    (finding,) = findings(job)
    assert finding["code"] == "SBL310" and finding["severity"] == "error"

    info, out = slurm.run(job, timeout=120)
    assert info.ok, (info, out)
    if "NO-PROBE" in out:
        pytest.skip("the cluster's fake_pyxis.so predates the probe: run tests/slurm/start-cluster.sh")
    # srun accepted both flags, but slurmstepd received the last value only
    assert set(_received(out)) == {"/lustre/ckpt:/lustre/ckpt"}

    # the safe fix merges them into one list, which arrives whole
    fixed = fixed_by_sbatchlint(job, "mounts.fixed.sbatch")
    assert fixed.read_text().count("--container-mounts") == 1
    assert findings(fixed) == []
    info, out = slurm.run(fixed, timeout=120)
    assert info.ok, (info, out)
    assert set(_received(out)) == {"/lustre/data:/lustre/data,/lustre/ckpt:/lustre/ckpt"}

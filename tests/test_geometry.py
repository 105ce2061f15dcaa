"""Task geometry of steps: counts, inheritance from the header, and where each value is set."""
from __future__ import annotations

from textwrap import dedent

from sbatchlint.model.geometry import geometry, gres_gpus, job_geometry, parse_nodes
from sbatchlint.model.script import Script
from sbatchlint.source import Source


def script_of(text: str) -> Script:
    return Script(Source(dedent(text).lstrip("\n").encode("utf-8"), "job.sh"))


def step_geometries(text: str):
    script = script_of(text)
    return script, [geometry(script, step) for step in script.steps]


def text_at(script: Script, span) -> str:
    return script.data[span.start : span.end].decode()


def test_header_geometry_is_inherited():
    script, (g,) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        #SBATCH --gpus-per-node=8
        srun python train.py
        """
    )
    assert (g.nodes.value, g.tasks_per_node.value, g.ntasks.value, g.gpus_per_node.value) == (2, 8, 16, 8)
    assert g.multi_node
    assert g.nodes.origin.where == "header" and text_at(script, g.nodes.origin.span) == "--nodes=2"
    assert text_at(script, g.tasks_per_node.origin.value_span) == "8"
    assert g.ntasks.origin.where == "derived"
    assert g.world_size == 16


def test_step_flags_override_header():
    script, (g,) = step_geometries(
        """
        #!/bin/bash
        #SBATCH -N 4
        #SBATCH --gres=gpu:8
        srun --ntasks-per-node=1 -N2 --gpus-per-node=4 torchrun train.py
        """
    )
    assert (g.nodes.value, g.tasks_per_node.value, g.ntasks.value, g.gpus_per_node.value) == (2, 1, 2, 4)
    assert g.tasks_per_node.origin.where == "step"
    assert text_at(script, g.tasks_per_node.origin.span) == "--ntasks-per-node=1"
    assert text_at(script, g.nodes.origin.value_span) == "2"
    assert g.gpus_per_node.origin.option == "gpus-per-node"


def test_job_task_count_wins_over_a_disagreeing_step_ntasks_per_node():
    # srun reads SLURM_NTASKS as its --ntasks: "can't honor --ntasks-per-node … Ignoring" (22.05)
    script, (ignored, agreeing, own_total, other_nodes) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        srun --ntasks-per-node=1 torchrun train.py
        srun --ntasks-per-node=8 python train.py
        srun --ntasks=2 --ntasks-per-node=1 torchrun train.py
        srun -N1 python train.py
        """
    )
    assert (ignored.tasks_per_node.value, ignored.ntasks.value) == (8, 16)
    assert ignored.tasks_per_node.origin.where == "header"
    assert [opt.written for opt in ignored.ignored] == ["--ntasks-per-node"]
    assert agreeing.tasks_per_node.origin.where == "step" and not agreeing.ignored
    assert (own_total.tasks_per_node.value, own_total.ntasks.value) == (1, 2)
    # -N1 keeps the job's 16 tasks: "can't honor --ntasks-per-node set to 8 … requested tasks 16
    # with the number of requested nodes 1" (measured, model/geometry.py TASK_LAYOUT)
    assert other_nodes.nodes.value == 1 and other_nodes.ntasks.value == 16


def test_one_task_warm_up_step():
    _, (warm, full) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        srun --nodes=1 --ntasks=1 uv sync
        srun uv run python train.py
        """
    )
    assert (warm.nodes.value, warm.ntasks.value, warm.tasks_per_node.value) == (1, 1, 1)
    assert not warm.multi_node
    assert (full.nodes.value, full.ntasks.value) == (2, 16)


def test_single_task_without_nodes_shrinks_to_one_node():
    _, (g,) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=8
        srun -n 1 hostname
        """
    )
    assert (g.nodes.value, g.ntasks.value, g.tasks_per_node.value) == (1, 1, 1)


def test_ntasks_derives_tasks_per_node_only_when_it_divides():
    # --nodes=2 --ntasks=16 places the tasks by free CPUs (measured 8+8, 15+1, 6+10): not known
    _, (free,) = step_geometries("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=16\nsrun python a.py\n")
    assert free.tasks_per_node.value is None and free.tasks_per_node.origin.where == "derived"
    assert free.ntasks.origin.where == "header"
    _, (even,) = step_geometries("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nsrun -n8 python a.py\n")
    assert even.tasks_per_node.value == 4 and even.tasks_per_node.origin.where == "derived"
    _, (odd,) = step_geometries("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=15\nsrun python a.py\n")
    assert odd.tasks_per_node.value is None and odd.ntasks.value == 15


def test_defaults_one_task_per_node():
    _, (g,) = step_geometries("#!/bin/bash\n#SBATCH --nodes=3\nsrun hostname\n")
    assert (g.nodes.value, g.tasks_per_node.value, g.ntasks.value) == (3, 1, 3)
    assert g.tasks_per_node.origin.where == "default"
    _, (nothing,) = step_geometries("#!/bin/bash\nsrun hostname\n")
    assert (nothing.nodes.value, nothing.ntasks.value) == (1, 1)
    assert not nothing.multi_node


def test_node_range_is_multi_node_but_unknown():
    _, (g,) = step_geometries("#!/bin/bash\n#SBATCH --nodes=1-4\nsrun hostname\n")
    assert g.nodes.value is None and (g.nodes.low, g.nodes.high) == (1, 4)
    assert g.multi_node


def test_values_resolve_through_variables_and_job_variables():
    script, (g, h) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        #SBATCH --gpus-per-node=8
        NNODES=${SLURM_JOB_NUM_NODES:-4}
        GPUS=8
        srun --nodes=$NNODES --ntasks-per-node=$GPUS python a.py
        srun --nodes=${SLURM_NNODES} --ntasks-per-node=8 python a.py
        """
    )
    assert (g.nodes.value, g.tasks_per_node.value) == (2, 8)
    # a value that came through a variable is not editable in place
    assert g.tasks_per_node.origin.value_span is None
    assert h.nodes.value == 2


def test_unknown_values_stay_unknown():
    _, steps = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        for N in 1 2 4; do
          srun --nodes=$N --ntasks-per-node=8 python a.py
        done
        srun --ntasks-per-node="$(nproc)" python a.py
        srun $EXTRA_SRUN_ARGS python a.py
        """
    )
    loop, computed, opaque = steps
    assert loop.nodes.value is None and not loop.multi_node and loop.ntasks.value is None
    assert computed.tasks_per_node.value is None and computed.tasks_per_node.origin.where == "step"
    assert computed.nodes.value == 2 and computed.ntasks.value is None
    # an option word the model cannot read may set anything: nothing inherited is known
    assert opaque.options_incomplete
    assert opaque.tasks_per_node.value is None and opaque.nodes.value is None


def test_options_in_srun_cmd_variable_are_editable():
    script, (g,) = step_geometries(
        """
        #!/bin/bash
        #SBATCH --nodes=2
        SRUN_CMD="srun --ntasks=16 --gpus-per-node=8"
        $SRUN_CMD python train.py
        """
    )
    assert g.ntasks.origin.where == "step"
    assert text_at(script, g.ntasks.origin.span) == "--ntasks=16"
    assert text_at(script, g.ntasks.origin.value_span) == "16"
    assert g.gpus_per_node.value == 8


def test_gpu_forms():
    def gpus(header, step="srun python a.py"):
        _, (g,) = step_geometries("#!/bin/bash\n" + header + step + "\n")
        return g.gpus_per_node.value, g.gpu_requested

    assert gpus("#SBATCH --nodes=2\n#SBATCH --gres=gpu:a100:4\n") == (4, True)
    assert gpus("#SBATCH --nodes=2\n#SBATCH --gpus=16\n") == (8, True)
    assert gpus("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=2\n") == (8, True)
    assert gpus("#SBATCH --nodes=2\n#SBATCH --gres=nvme:1\n") == (None, False)
    assert gpus("#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n", "srun --gres=none hostname") == (0, False)
    assert gpus("#SBATCH --nodes=2\n", "GRES=gpu:4\nsrun --gres=$GRES python a.py") == (4, True)
    assert gpus("#SBATCH --nodes=2\n", "for G in gpu:4 nvme:1; do srun --gres=$G python a.py; done") == (None, True)


CPUS_JOB = """
        #!/bin/bash
        #SBATCH --nodes=1
        #SBATCH --cpus-per-task=16
        srun python a.py
        srun -c 8 python a.py
        export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
        srun python a.py
        """


def test_cpus_per_task_is_inherited_from_slurm_23_11_on():
    """Slurm 23.11 restored the inheritance 22.05 dropped; the default target is 24.05."""
    for settings in ({}, {"slurm_version": "23.11"}, {"slurm_version": "24.05"}, {"slurm_version": "21.08"}):
        script = Script(Source(dedent(CPUS_JOB).lstrip("\n").encode("utf-8"), "job.sh"), settings)
        plain, own, after_export = [geometry(script, step) for step in script.steps]
        assert plain.cpus_per_task.value == 16 and plain.cpus_per_task.origin.where == "header", settings
        assert own.cpus_per_task.value == 8 and own.cpus_per_task.origin.where == "step"
        assert after_export.cpus_per_task.origin.where == "environment"


def test_cpus_per_task_is_not_inherited_on_22_05():
    script = Script(Source(dedent(CPUS_JOB).lstrip("\n").encode("utf-8"), "job.sh"), {"slurm_version": "22.05"})
    plain, own, after_export = [geometry(script, step) for step in script.steps]
    assert plain.cpus_per_task.value == 1 and plain.cpus_per_task.origin.where == "default"
    assert plain.job_cpus_per_task.value == 16
    assert own.cpus_per_task.value == 8 and own.cpus_per_task.origin.where == "step"
    assert after_export.cpus_per_task.value == 16
    assert after_export.cpus_per_task.origin.where == "environment"


def test_job_geometry_and_memoisation():
    script = script_of("#!/bin/bash\n#SBATCH --ntasks=16\n#SBATCH --ntasks-per-node=8\nsrun a\n")
    job = job_geometry(script)
    assert (job.nodes.value, job.tasks_per_node.value) == (2, 8)
    step = script.steps[0]
    assert geometry(script, step) is geometry(script, step)


def test_parsers():
    assert parse_nodes("2") == (2, 2) and parse_nodes("2-4") == (2, 4) and parse_nodes("x") == (None, None)
    assert gres_gpus("gpu") == 1 and gres_gpus("gpu:a100") == 1 and gres_gpus("gres/gpu:8") == 8
    assert gres_gpus("nvme:1,gpu:h100:8") == 8 and gres_gpus("none") == 0

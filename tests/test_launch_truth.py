"""Launch and expansion rules on the shapes real jobs take (SBL105, SBL112, SBL113, SBL201…)."""
from __future__ import annotations

from lintutil import codes
from sbatchlint.model.script import Script
from sbatchlint.source import Source

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
MASTER = 'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'


def test_sbl105_rank_exported_before_torchrun_is_overwritten_by_torchrun():
    text = (
        HEADER + MASTER + "export RANK=$SLURM_PROCID\nexport LOCAL_RANK=$SLURM_LOCALID\n"
        "srun torchrun --nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 --nproc_per_node=8 train.py\n"
    )
    assert "SBL105" not in codes(text)


def test_sbl105_still_reports_node_rank_and_srun_native_launches():
    node_rank = (
        HEADER + MASTER + "export NODE_RANK=$SLURM_NODEID\n"
        "srun bash -c 'torchrun --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --nproc_per_node=8 train.py'\n"
    )
    assert "SBL105" in codes(node_rank)
    native = HEADER.replace("--ntasks-per-node=1", "--ntasks-per-node=8") + "export RANK=$SLURM_PROCID\nsrun python train.py\n"
    assert "SBL105" in codes(native)


def sbl201(text: str) -> list:
    return [c for c in codes(text) if c == "SBL201"]


def test_sbl201_node_rank_under_a_c10d_rendezvous_is_not_read():
    c10d = (
        HEADER + MASTER
        + "srun torchrun --nnodes=2 --node_rank=$SLURM_NODEID --rdzv_backend=c10d "
        "--rdzv_endpoint=$MASTER_ADDR:29500 --nproc_per_node=8 train.py\n"
    )
    assert sbl201(c10d) == []
    static = HEADER + MASTER + "srun torchrun --nnodes=2 --node_rank=$SLURM_NODEID --master_addr=$MASTER_ADDR --nproc_per_node=8 train.py\n"
    assert sbl201(static) == ["SBL201"]


def test_sbl201_a_loop_variable_named_node_rank_is_the_scripts_own():
    loop = HEADER + MASTER + (
        'HOSTS=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))\n'
        "for NODE_RANK in 0 1; do\n"
        '  srun --nodes=1 --ntasks=1 -w "${HOSTS[$NODE_RANK]}" bash -c "torchrun --nnodes=2 --node_rank=$NODE_RANK '
        '--master_addr=$MASTER_ADDR --nproc_per_node=8 train.py" &\n'
        "done\nwait\n"
    )
    assert sbl201(loop) == []
    from_slurm = HEADER + "NODE_RANK=$SLURM_NODEID\nsrun bash -c \"torchrun --node_rank=$NODE_RANK --nproc_per_node=8 t.py\"\n"
    assert sbl201(from_slurm) == ["SBL201"]


GPU_HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
TRAIN = 'srun torchrun --nnodes=2 --node_rank=$SLURM_NODEID --master_addr=$HEAD --nproc_per_node=8 train.py\n'


def sbl108(text: str, settings=None) -> list:
    return [c for c in codes(text, settings=settings) if c == "SBL108"]


def test_sbl108_reports_a_gpu_launch_without_a_gpu_request():
    assert sbl108(GPU_HEADER + TRAIN) == ["SBL108"]


def test_sbl108_whole_nodes_get_their_gpus():
    assert sbl108(GPU_HEADER + "#SBATCH --exclusive\n" + TRAIN) == []
    assert sbl108(GPU_HEADER + "#SBATCH --exclusive=user\n" + TRAIN) == ["SBL108"]


def test_sbl108_cpu_tools_need_no_gpu():
    prep = "srun python -m torch.distributed.run --nproc_per_node=8 tools/preprocess_data.py --input corpus.jsonl\n"
    assert sbl108(GPU_HEADER + prep) == []
    void = GPU_HEADER + "export NVIDIA_VISIBLE_DEVICES=void\n" + TRAIN
    assert sbl108(void) == []
    cpu = GPU_HEADER + "#SBATCH --partition=cpu\n" + TRAIN
    assert sbl108(cpu) == []


def test_sbl108_setting_for_sites_without_gpu_gating():
    assert sbl108(GPU_HEADER + TRAIN, settings={"gpu_request": "optional"}) == []


def test_a_comment_inside_an_array_of_launcher_options_is_no_option():
    text = HEADER + (
        "declare -a TORCHRUN_ARGS=(\n"
        "    --nproc_per_node=8     # one per GPU\n"
        "    --nnodes=$SLURM_JOB_NUM_NODES\n"
        "    --rdzv_id=$SLURM_JOB_ID\n"
        "    --rdzv_backend=c10d\n"
        "    --rdzv_endpoint=$(hostname)\n"
        ")\n"
        'srun torchrun "${TORCHRUN_ARGS[@]}" train.py\n'
    )
    assert "SBL103" not in codes(text)
    assert "SBL103" in codes(text.replace("    --nnodes=$SLURM_JOB_NUM_NODES\n", ""))


def test_sbl202_a_value_of_its_own_is_computed_once_on_purpose():
    own = HEADER + (
        "SAVE_DIR=/lustre/results/${SLURM_JOB_ID}\n"
        'CMD="torchrun --nnodes=2 --node_rank=\\$SLURM_NODEID --master_addr=$HEAD train.py --save $SAVE_DIR"\n'
        'srun bash -c "$CMD"\n'
    )
    assert "SBL202" not in codes(own)
    inline = HEADER + 'CMD="torchrun --nnodes=$SLURM_JOB_NUM_NODES --node_rank=\\$SLURM_NODEID --master_addr=$HEAD train.py"\nsrun bash -c "$CMD"\n'
    assert "SBL202" in codes(inline)


def test_a_backslash_newline_in_a_launcher_string_makes_no_empty_word():
    text = HEADER + (
        'HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
        'LAUNCHER="accelerate launch \\\n'
        "    --num_machines $SLURM_NNODES \\\n"
        "    --rdzv_backend c10d \\\n"
        "    --main_process_ip $HEAD \\\n"
        '    --machine_rank $SLURM_PROCID"\n'
        "srun $LAUNCHER train.py\n"
    )
    script = Script(Source(text.encode(), "job.sh"))
    assert "" not in [w.text for w in script.steps[0].command.argv]
    # accelerate's --machine_rank under a c10d rendezvous is not read: no SBL201
    assert "SBL201" not in codes(text)
    assert "SBL201" in codes(text.replace("    --rdzv_backend c10d \\\n", ""))

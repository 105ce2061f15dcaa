"""Launch rules on the shapes real jobs build their commands in: arrays extended with ``+=``,
defaults of variables Slurm always sets, wrappers in front of the launcher, single-quoted
launcher variables, branches, and node counts decided at submission."""
from __future__ import annotations

from lintutil import codes, fix_text, lint_text, said
from sbatchlint.model.script import Script
from sbatchlint.source import Source

ONE_PER_NODE = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
EIGHT_PER_NODE = ONE_PER_NODE.replace("--ntasks-per-node=1", "--ntasks-per-node=8")
HEAD = 'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
C10D = "--nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 --nproc_per_node=8"


def only(code: str, text: str, settings=None) -> list:
    return [d for d in lint_text(text, settings=settings) if d.code == code]


# -- arrays extended with += ---------------------------------------------------------------------
def test_an_array_extended_in_a_branch_keeps_its_first_elements():
    text = ONE_PER_NODE + (
        "STEP_OPTS=(--container-image=registry.example/train:3 --no-container-mount-home)\n"
        'if [[ -n "$EXTRA_MOUNTS" ]]; then\n'
        '    STEP_OPTS+=(--container-mounts="$EXTRA_MOUNTS")\n'
        "fi\n"
        'srun --kill-on-bad-exit=1 "${STEP_OPTS[@]}" python serve.py\n'
    )
    script = Script(Source(text.encode(), "job.sh"))
    argv = [w.text for w in script.steps[0].command.argv]
    assert argv[2:5] == ["--container-image=registry.example/train:3", "--no-container-mount-home", "--container-mounts=${EXTRA_MOUNTS}"]
    assert only("SBL305", text) == []
    # without the image the mounts are ignored: still reported
    assert len(only("SBL305", text.replace("--container-image=registry.example/train:3 ", ""))) == 1


def test_launcher_options_appended_to_an_array_are_all_read():
    text = ONE_PER_NODE + HEAD + (
        "LAUNCH=(--nproc_per_node=8)\n"
        "LAUNCH+=(--nnodes=2 --rdzv_backend=c10d)\n"
        'LAUNCH+=(--rdzv_endpoint="$MASTER_ADDR:29500")\n'
        'srun --kill-on-bad-exit=1 torchrun "${LAUNCH[@]}" train.py\n'
    )
    assert codes(text, ["SBL103", "SBL104"]) == []
    missing_nnodes = text.replace("--nnodes=2 ", "")
    assert codes(missing_nnodes, ["SBL103", "SBL104"]) == ["SBL103"]


def test_an_array_append_joins_the_elements_before_it_in_a_string():
    text = ONE_PER_NODE + HEAD + (
        "LAUNCH=(--nproc_per_node=8 --nnodes=2)\n"
        'LAUNCH+=(--rdzv_backend=c10d --rdzv_endpoint="$MASTER_ADDR:29500")\n'
        'srun --kill-on-bad-exit=1 bash -c "torchrun ${LAUNCH[*]} train.py"\n'
    )
    assert codes(text, ["SBL103", "SBL104"]) == []


# -- defaults of variables Slurm always sets --------------------------------------------------------
def test_a_default_of_a_variable_slurm_always_sets_never_applies():
    text = ONE_PER_NODE + "srun --kill-on-bad-exit=1 torchrun --nnodes=${SLURM_NNODES:-1} --nproc_per_node=8 train.py\n"
    script = Script(Source(text.encode(), "job.sh"))
    nnodes = script.launches[0].option("nnodes")
    assert nnodes is not None and not nnodes.known  # not the literal 1
    found = only("SBL103", text)
    assert len(found) == 1 and "--node_rank" in found[0].message
    # a variable of the script's own keeps its default
    own = ONE_PER_NODE + "srun --kill-on-bad-exit=1 torchrun --nnodes=${NODES:-1} --nproc_per_node=8 train.py\n"
    assert Script(Source(own.encode(), "job.sh")).launches[0].option("nnodes").number == 1


# -- wrappers with their own grammars ---------------------------------------------------------------
def launch_kinds(text: str) -> list:
    script = Script(Source(text.encode(), "job.sh"))
    return [(launch.kind, launch.entry.name if launch.entry else None) for launch in script.launches]


def test_profilers_and_binders_in_front_of_the_launcher_are_read_through():
    for wrapper in (
        "nsys profile -t cuda,nvtx --force-overwrite true -o run_%q{SLURM_PROCID}",
        "nsys profile --stats=false --capture-range=cudaProfilerApi",
        "numactl -C 0-31 --membind 0",
        "numactl --cpunodebind=0 -l",
        "taskset -c 0-31",
        "env -u CUDA_LAUNCH_BLOCKING NCCL_DEBUG=INFO",
        "timeout 3h",
    ):
        text = EIGHT_PER_NODE + f"srun --kill-on-bad-exit=1 {wrapper} torchrun --nproc_per_node=8 --master_port=29500 train.py\n"
        assert launch_kinds(text) == [("torchrun", "train.py")], wrapper
        assert codes(text, ["SBL101"]) == ["SBL101"], wrapper


def test_a_wrapper_option_value_is_not_the_program():
    # -o takes "torchrun_prof": the program is python, not torchrun
    text = ONE_PER_NODE + "srun --kill-on-bad-exit=1 nsys profile -o torchrun_prof python train.py\n"
    assert launch_kinds(text) == [("srun-native", "train.py")]
    text = ONE_PER_NODE + "srun --kill-on-bad-exit=1 numactl -N 1 -m 1 torchrun --nproc_per_node=8 train.py\n"
    assert launch_kinds(text) == [("torchrun", "train.py")]


def test_wrappers_that_run_no_command_hide_no_launcher():
    assert launch_kinds(ONE_PER_NODE + "srun nsys stats torchrun.nsys-rep\n") == []
    assert launch_kinds(ONE_PER_NODE + "srun taskset -p 0x3 1234\n") == []


def test_apptainer_run_is_the_images_own_runscript():
    exec_ = ONE_PER_NODE + HEAD + (
        "srun --kill-on-bad-exit=1 apptainer exec --nv --bind /scratch:/scratch train.sif "
        "torchrun --nproc_per_node=8 train.py\n"
    )
    assert launch_kinds(exec_) == [("torchrun", "train.py")]
    assert codes(exec_, ["SBL103"]) == ["SBL103"]
    run = exec_.replace("apptainer exec", "apptainer run")
    assert launch_kinds(run) == []
    assert codes(run, ["SBL103"]) == []


def test_apptainer_steps_get_no_pyxis_findings():
    text = ONE_PER_NODE + HEAD + (
        "srun --kill-on-bad-exit=1 singularity exec --nv -B /lustre/data:/data train.sif "
        f"torchrun {C10D} train.py --data /data\n"
    )
    assert [c for c in codes(text) if c.startswith("SBL3")] == []


def test_the_batch_shell_fix_puts_srun_before_per_process_wrappers():
    text = ONE_PER_NODE + "time nsys profile -o prof_%h torchrun --nproc_per_node=8 train.py\n"
    assert codes(text, ["SBL112"]) == ["SBL112"]
    fixed = fix_text(text, ["SBL112"], unsafe=True)
    step = fixed.splitlines()[-1]
    assert step.startswith("time srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --kill-on-bad-exit=1 nsys profile -o prof_%h torchrun ")
    assert fix_text(fixed, ["SBL112"], unsafe=True) == fixed
    assert codes(fixed, ["SBL112"]) == []


# -- single-quoted launcher variables -----------------------------------------------------------------
SINGLE_QUOTED = ONE_PER_NODE + HEAD + (
    'export LAUNCHER="python -u -m torch.distributed.launch --nproc_per_node 8 --nnodes 2 \\\n'
    '    --master_addr $MASTER_ADDR --master_port 6000"\n'
    'export PROGRAM="pretrain_gpt.py --tensor-model-parallel-size 2"\n'
    "srun bash -c '$LAUNCHER --node_rank $SLURM_PROCID $PROGRAM'\n"
)


def test_a_launcher_the_task_takes_from_the_environment_is_read():
    script = Script(Source(SINGLE_QUOTED.encode(), "job.sh"))
    (launch,) = script.launches
    assert launch.kind == "torch.distributed.launch"
    assert launch.entry is not None and launch.entry.name == "pretrain_gpt.py"
    assert launch.has("master_addr", "node_rank")
    assert launch.parallelism["tp"].number == 2
    found = only("SBL107", SINGLE_QUOTED)
    assert len(found) == 1 and "torch.distributed.launch step runs 2 tasks" in found[0].message
    fixed = fix_text(SINGLE_QUOTED, ["SBL107"])
    assert "srun --kill-on-bad-exit=1 bash -c '$LAUNCHER --node_rank $SLURM_PROCID $PROGRAM'" in fixed
    assert fix_text(fixed, ["SBL107"]) == fixed
    # the task expands $SLURM_PROCID itself and gets the master address: nothing else to say
    assert codes(SINGLE_QUOTED, ["SBL103", "SBL113", "SBL201"]) == []


def test_a_variable_the_task_does_not_receive_stays_unknown():
    plain = SINGLE_QUOTED.replace("export LAUNCHER=", "LAUNCHER=")
    assert Script(Source(plain.encode(), "job.sh")).launches == []
    assert "SBL203" in codes(plain)  # the task sees it empty: reported as such
    none = SINGLE_QUOTED.replace("srun bash", "srun --export=NONE bash")
    assert Script(Source(none.encode(), "job.sh")).launches == []
    quoted = SINGLE_QUOTED.replace("'$LAUNCHER --node_rank", "'\"$LAUNCHER\" --node_rank")
    assert Script(Source(quoted.encode(), "job.sh")).launches == []  # one word: no program of that name


# -- node counts decided at submission ------------------------------------------------------------
NO_NODES = "#!/bin/bash\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"


def test_per_task_variables_are_reported_when_sbatch_decides_the_node_count():
    accelerate = NO_NODES + (
        'srun --kill-on-bad-exit=1 bash -c "accelerate launch --num_machines \\$SLURM_NNODES '
        '--machine_rank $SLURM_PROCID --main_process_ip $(hostname) train.py"\n'
    )
    found = only("SBL201", accelerate)
    assert len(found) == 1 and found[0].fix is not None
    assert "\\$SLURM_PROCID" in fix_text(accelerate, ["SBL201"])
    direct = NO_NODES + "srun --kill-on-bad-exit=1 python train.py --rank $SLURM_PROCID\n"
    assert codes(direct, ["SBL201"]) == ["SBL201"]
    # a step that sets its own single task (or node) gets the batch shell's value anyway
    assert codes(direct.replace("srun ", "srun -n1 "), ["SBL201"]) == []
    assert codes(direct.replace("srun ", "srun -N1 ").replace("$SLURM_PROCID", "$SLURM_NODEID"), ["SBL201"]) == []
    assert codes(direct.replace("srun ", "srun -n1 ").replace("$SLURM_PROCID", "$SLURM_NODEID"), ["SBL201"]) == []


def test_sbl103_warns_when_a_launch_written_for_several_nodes_gets_its_count_at_submission():
    text = NO_NODES + "srun --kill-on-bad-exit=1 torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 train.py\n"
    (finding,) = only("SBL103", text)
    assert finding.severity.name == "WARNING"
    assert "several nodes (`sbatch -N`) without --node_rank" in finding.message
    # a launch with no node option at all: nothing says it is meant for several nodes
    assert codes(NO_NODES + "srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 train.py\n", ["SBL103"]) == []
    # with the node count in the header it is an error, as before
    (error,) = only("SBL103", text.replace("#SBATCH --ntasks", "#SBATCH --nodes=2\n#SBATCH --ntasks"))
    assert error.severity.name == "ERROR"


def test_sbl113_and_sbl101_when_sbatch_decides_the_node_count():
    static = NO_NODES + (
        "srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes=$SLURM_NNODES --node_rank=$SLURM_NODEID "
        "--nproc_per_node=8 train.py'\n"
    )
    (finding,) = only("SBL113", static)
    assert "several nodes (`sbatch -N`)" in finding.message
    eight = NO_NODES.replace("--ntasks-per-node=1", "--ntasks-per-node=8") + (
        "srun --kill-on-bad-exit=1 torchrun --nproc_per_node=8 --master_port=29500 train.py\n"
    )
    assert codes(eight, ["SBL101"]) == ["SBL101"]


# -- SBL112 hands Bridge entry points to SBL102's migration ------------------------------------------
BRIDGE_IN_BATCH = (
    "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
    "cd /lustre/fsw/bob/Megatron-Bridge\nrm -rf nemo_experiments\n"
    "torchrun --nproc_per_node=8 examples/recipes/qwen/pretrain.py train.train_iters=500\n"
)


def test_sbl112_gives_a_bridge_entry_point_the_step_sbl102_migrates():
    (finding,) = only("SBL112", BRIDGE_IN_BATCH)
    assert "SBL102 then migrates it" in finding.fix.description
    step = fix_text(BRIDGE_IN_BATCH, ["SBL112"], unsafe=True).splitlines()[-1]
    assert step.startswith("srun --kill-on-bad-exit=1 torchrun --nnodes=${SLURM_JOB_NUM_NODES} --rdzv_backend=c10d ")
    both = fix_text(BRIDGE_IN_BATCH, ["SBL112", "SBL102"], unsafe=True)
    assert "#SBATCH --ntasks-per-node=8\n" in both
    assert both.splitlines()[-1] == "srun --kill-on-bad-exit=1 python examples/recipes/qwen/pretrain.py train.train_iters=500"
    assert fix_text(both, ["SBL112", "SBL102"], unsafe=True) == both
    # any other entry point keeps one torchrun per node with the c10d rendezvous
    other = BRIDGE_IN_BATCH.replace("examples/recipes/qwen/pretrain.py", "train_vit.py")
    fixed = fix_text(other, ["SBL112", "SBL102"], unsafe=True)
    assert fixed.splitlines()[-1].startswith(
        "srun --ntasks=${SLURM_JOB_NUM_NODES} --ntasks-per-node=1 --kill-on-bad-exit=1 torchrun --nnodes="
    )


# -- every branch's step, the branch named -------------------------------------------------------------
BRANCHES = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"


def test_sbl101_checks_the_step_each_branch_writes_and_names_the_branch():
    text = BRANCHES + (
        'if [ "$PROFILE" = per-gpu ]; then\n'
        '    SRUN_CMD="srun --ntasks-per-node=8"\n'
        "else\n"
        '    SRUN_CMD="srun --ntasks-per-node=1"\n'
        "fi\n"
        "$SRUN_CMD --kill-on-bad-exit=1 torchrun --nproc_per_node=8 --master_port=29500 train.py\n"
    )
    (finding,) = only("SBL101", text)
    assert finding.message.startswith("8 tasks")
    assert finding.notes[0] == 'this is the step as it is written in the `if [ "$PROFILE" = per-gpu ]` branch (line 4)'
    assert finding.fix is None  # the edit would belong to one branch's assignment
    # the else branch is checked the same way
    swapped = text.replace("per-node=8", "per-node=X").replace("per-node=1", "per-node=8").replace("per-node=X", "per-node=1")
    (other,) = only("SBL101", swapped)
    assert other.message.startswith("8 tasks")
    assert other.notes[0] == "this is the step as it is written in the `else` branch (line 6)"
    # both branches fine: nothing
    assert only("SBL101", text.replace("per-node=8", "per-node=1")) == []


def test_sbl101_names_an_elif_branch():
    text = BRANCHES + (
        'if [ -n "$IMAGE" ]; then\n    SRUN_CMD="srun --container-image=$IMAGE"\n'
        'elif [[ $DEBUG == 1 ]]; then\n    SRUN_CMD="srun -n16"\n'
        'else\n    SRUN_CMD="srun"\nfi\n'
        "$SRUN_CMD --kill-on-bad-exit=1 torchrun --nproc_per_node=8 --master_port=29500 train.py\n"
    )
    (finding,) = only("SBL101", text)
    assert "the `elif [[ $DEBUG == 1 ]]` branch (line 6)" in said(finding)


def test_sbl103_names_the_branch_whose_launch_lacks_the_node_rank():
    text = BRANCHES + "#SBATCH --ntasks-per-node=1\n" + (
        'if [ "$RDZV" = static ]; then\n'
        '    DIST="--nnodes=2 --master_addr=$(hostname)"\n'
        "else\n"
        '    DIST="--nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500"\n'
        "fi\n"
        'srun --kill-on-bad-exit=1 bash -c "torchrun $DIST --nproc_per_node=8 train.py"\n'
    )
    (finding,) = only("SBL103", text)
    assert finding.message.endswith("without --node_rank")
    assert finding.notes[0] == 'this is the launch as it is written in the `if [ "$RDZV" = static ]` branch (line 5)'
    assert finding.fix is None
    fine = text.replace('--master_addr=$(hostname)"', '--node_rank=\\$SLURM_NODEID --master_addr=$(hostname)"')
    assert only("SBL103", fine) == []


# -- option strings split the way bash splits them ------------------------------------------------------
def step_words(text: str) -> list:
    script = Script(Source(text.encode(), "job.sh"))
    return [w.text for w in script.steps[-1].command.argv]


def test_an_unquoted_option_string_splits_on_blanks_and_keeps_its_quote_characters():
    text = ONE_PER_NODE + "A=\"--comment='a b' --kill-on-bad-exit=1\"\nsrun $A python train.py\n"
    assert step_words(text) == ["srun", "--comment='a", "b'", "--kill-on-bad-exit=1", "python", "train.py"]
    # srun stops at `b'`, its program: the kill option is that program's argument, not srun's
    script = Script(Source(text.encode(), "job.sh"))
    assert [w.text for w in script.steps[0].task_argv][:2] == ["b'", "--kill-on-bad-exit=1"]
    assert not script.steps[0].has("kill-on-bad-exit")


def test_a_quoted_option_string_is_one_word():
    text = ONE_PER_NODE + 'SRUN_ARGS="--wait=60 --kill-on-bad-exit=1"\nsrun "$SRUN_ARGS" torchrun --nproc_per_node=8 train.py\n'
    assert step_words(text)[:2] == ["srun", "--wait=60 --kill-on-bad-exit=1"]
    script = Script(Source(text.encode(), "job.sh"))
    assert not script.steps[0].has("kill-on-bad-exit")  # srun sees one --wait with a strange value
    assert codes(text, ["SBL107"]) == ["SBL107"]
    assert codes(text.replace('"$SRUN_ARGS"', "$SRUN_ARGS"), ["SBL107"]) == []


def test_array_elements_keep_their_blanks():
    text = ONE_PER_NODE + (
        "OPTS=(--kill-on-bad-exit=1 \"--comment=two words\" --ntasks-per-node=1)\n"
        'srun "${OPTS[@]}" python train.py\n'
    )
    assert step_words(text) == ["srun", "--kill-on-bad-exit=1", "--comment=two words", "--ntasks-per-node=1", "python", "train.py"]
    # ${OPTS[*]} unquoted joins and splits again
    starred = text.replace('"${OPTS[@]}"', "${OPTS[*]}")
    assert step_words(starred)[2:4] == ["--comment=two", "words"]


def test_past_sixteen_values_the_oldest_stand_as_one_unknown():
    branches = "".join(f'if [ "$MODE" = m{i} ]; then SRUN_CMD="srun --ntasks-per-node={i}"; fi\n' for i in range(1, 21))
    text = ONE_PER_NODE + 'SRUN_CMD="srun"\n' + branches + "$SRUN_CMD --kill-on-bad-exit=1 hostname\n"
    script = Script(Source(text.encode(), "job.sh"))
    found = script.values.lookup("SRUN_CMD", len(script.data))
    assert len(found) == 16
    assert not found[0].known and found[0].pieces[0].name == "SRUN_CMD"
    assert [v.text for v in found[1:]] == [f"srun --ntasks-per-node={i}" for i in range(6, 21)]


def test_sbl107_names_the_branch_whose_srun_lacks_the_option():
    text = EIGHT_PER_NODE + (
        'if [ -n "$IMAGE" ]; then\n'
        '    SRUN_CMD="srun --container-image=$IMAGE --container-mounts=/lustre:/lustre"\n'
        "else\n"
        '    SRUN_CMD="srun --kill-on-bad-exit=1"\n'
        "fi\n"
        "$SRUN_CMD python train.py\n"
    )
    (finding,) = only("SBL107", text)
    assert finding.message == "this python step runs 16 tasks without `--kill-on-bad-exit=1` in one of its branches"
    assert finding.notes[0] == 'the step as written in the `if [ -n "$IMAGE" ]` branch (line 5)'
    assert finding.fix is None
    both = text.replace("--container-mounts=/lustre:/lustre", "--container-mounts=/lustre:/lustre -K")
    assert only("SBL107", both) == []


def test_sbl113_names_the_branch_without_a_master_address():
    text = ONE_PER_NODE + (
        'if [ -z "$HEAD" ]; then\n'
        '    DIST="--nnodes=2 --node_rank=\\$SLURM_NODEID"\n'
        "else\n"
        '    DIST="--nnodes=2 --node_rank=\\$SLURM_NODEID --master_addr=$HEAD"\n'
        "fi\n"
        'srun --kill-on-bad-exit=1 bash -c "torchrun $DIST --nproc_per_node=8 train.py"\n'
    )
    (finding,) = only("SBL113", text)
    assert finding.message.endswith("no `--master_addr`")
    assert finding.notes[0] == 'this is the launch as it is written in the `if [ -z "$HEAD" ]` branch (line 5)'
    assert finding.fix is None
    # the branch the script runs last, told apart from a c10d one
    last = ONE_PER_NODE + (
        'if [ "$RDZV" = c10d ]; then\n'
        '    DIST="--nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500"\n'
        "else\n"
        '    DIST="--nnodes=2 --node_rank=\\$SLURM_NODEID --rdzv_backend=static"\n'
        "fi\n"
        'srun --kill-on-bad-exit=1 bash -c "torchrun $DIST --nproc_per_node=8 train.py"\n'
    )
    (finding,) = only("SBL113", last)
    assert "as it is written in the `else` branch (line 7)" in said(finding)

"""A seeded generator of realistic Slurm job scripts, shared by the fuzz, scaling, fix and plan tests
and by the benchmarks.

It lives under ``tests/`` so that it is never installed with the package; ``tests/conftest.py``
puts ``tests/`` on ``sys.path`` and the scripts in ``bench/`` do the same, so both import it as
``import scriptgen``.

    job = scriptgen.generate(seed=7)                 # one script and what it should run
    jobs = scriptgen.corpus(40, seed=1, size=2)      # 40 scripts, twice the default size
    jobs = scriptgen.corpus(40, literal=True, runnable=True, workdir="/tmp/x")

The same ``(seed, size, literal, runnable, workdir)`` always gives the same bytes. What varies is
what real multi-node PyTorch / Megatron-Bridge scripts vary in: header task/node/CPU/GPU options
(``--ntasks-per-node``, ``--ntasks`` alone, both, neither; ``--gpus-per-node``, ``--gres``,
``--gpus-per-task``; ``--exclusive``), step options that override them (``-N``/``-n``,
``--ntasks-per-node``), written inline or one option per ``\\``-continued line, in a
``SRUN_CMD="srun …"`` string or an options array; launchers (srun-native Python, Bridge recipes,
torchrun once per node or once per task, static or c10d rendezvous, ``bash -c`` task strings
built up as ``CMD="$CMD …"``); steps in ``for`` loops, ``if``/``else`` and ``case`` branches;
here-documents; containers with mounts accumulated in loops.

``size`` scales a script linearly: ``size`` blocks of steps, ``4 × size`` variables,
``2 × size`` mounts, ``size + 1`` branch alternatives. ``literal=True`` writes every count and
path as a literal (or a variable assigned one), so a reader of the script can know every value
the job depends on; otherwise some come from the environment, defaults or command substitutions.
``runnable=True`` keeps a script within the local two-node test cluster (2 nodes of 16 CPUs and
8 GPUs, at most 2 processes per torchrun, ``python3`` rather than ``uv``, entry points relative to
``workdir``) so it can be submitted as it is.

Each :class:`Job` carries metadata: the job's geometry and, for every ``srun`` step in script
order, the launcher, the geometry the generator meant (``None`` where Slurm's answer depends on
more than the script says, e.g. ``--ntasks`` without a per-node count), how many times it runs
and in which branch alternative.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional

__all__ = ["Job", "StepMeta", "generate", "corpus", "LAUNCHERS"]

# Launcher kinds a step may use.
LAUNCHERS = (
    "python",  # srun-native: srun … python train.py (one process per task)
    "bridge",  # srun-native Megatron-Bridge recipe
    "torchrun-per-node",  # one task per node, torchrun --nproc_per_node=G, static rendezvous
    "torchrun-c10d",  # one task per node, c10d rendezvous
    "torchrun-per-task",  # several tasks per node each starting a standalone torchrun
    "bash-c",  # srun bash -c "…" with per-task variables escaped
    "cpu-tool",  # a single-task helper step (data prep, uv sync, conversion)
)


@dataclass
class StepMeta:
    """What one ``srun`` step should run, as the generator meant it (None: not known cheaply)."""

    line: int  # 1-based line of the word ``srun`` (or of ``$SRUN_CMD``)
    launcher: str  # one of LAUNCHERS
    nodes: Optional[int]
    tasks_per_node: Optional[int]
    ntasks: Optional[int]
    nproc_per_node: Optional[int] = None  # processes each task's torchrun starts
    runs: int = 1  # times the batch shell reaches it (loop iterations)
    branch: Optional[str] = None  # "if", "else", "case:<pattern>" when inside a branch
    entry: Optional[str] = None  # the Python file the step starts, relative to the work dir
    style: str = "inline"  # inline | continued | srun-cmd | array | string
    container: bool = False


@dataclass
class Job:
    text: str
    seed: int
    size: int
    literal: bool
    runnable: bool
    nodes: int
    tasks_per_node: Optional[int]  # None when only --ntasks is given on several nodes
    ntasks: int
    gpus_per_node: Optional[int]
    cpus_per_task: Optional[int]
    exclusive: bool
    steps: List[StepMeta] = field(default_factory=list)
    entries: List[str] = field(default_factory=list)  # Python files the steps start

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")


BRIDGE_RECIPES = (
    "examples/recipes/llama/pretrain_llama3_8b.py",
    "examples/recipes/qwen/finetune_qwen3_8b.py",
    "examples/recipes/llama/finetune_llama3_8b.py",
)
PLAIN_ENTRIES = ("train.py", "tools/eval_shards.py", "scripts/train_ddp.py")
MLM_ENTRY = "pretrain_gpt.py"
IMAGES = ("nvcr.io/nvidia/nemo:25.09", "nvcr.io/nvidia/pytorch:25.01-py3", "/lustre/fsw/images/nemo-25.07.sqsh")


class _Writer:
    """The script's lines, and the metadata of the steps written so far."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.steps: List[StepMeta] = []
        self.indent = ""
        self.runs = 1
        self.branch: Optional[str] = None

    def add(self, *lines: str) -> None:
        for text in lines:
            self.lines.append((self.indent + text) if text else "")

    @property
    def next_line(self) -> int:
        return len(self.lines) + 1


# Directives an evaluation sweep writes after its first command (all valid for sbatch).
LATE_DIRECTIVES = [
    "--hint=nomultithread", "--constraint=a100", "--mail-type=ALL", "--comment=eval", "--open-mode=append",
    "--requeue", "--signal=USR1@90", "--mem=0", "--distribution=block", "--wckey=eval", "--nice=10",
    "--export=ALL", "--begin=now", "--array=0-12",
]


class _Gen:
    def __init__(self, seed: int, size: int, literal: bool, runnable: bool, workdir: Optional[str],
                 late: bool = False) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.rng = random.Random(f"sbatchlint-scriptgen:{seed}:{size}:{literal}:{runnable}")
        self.late = late
        # the late shape draws from a generator of its own: the other shapes keep their bytes
        self.late_rng = random.Random(f"sbatchlint-scriptgen-late:{seed}:{size}")
        self.seed = seed
        self.size = size
        self.literal = literal
        self.runnable = runnable
        self.w = _Writer()
        self.entries: List[str] = []
        self.shared = "/lustre/fsw/proj%d" % (seed % 97)
        self.workdir = workdir or (self.shared + ("/Megatron-Bridge" if seed % 2 else "/Megatron-LM"))
        self.python = "python3" if runnable else "uv run python"
        self.counter = 0

    # -- helpers ------------------------------------------------------------------------------------
    def choice(self, seq):
        return self.rng.choice(seq)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def entry(self, path: str) -> str:
        if path not in self.entries:
            self.entries.append(path)
        return path

    # -- the job ------------------------------------------------------------------------------------
    def header(self) -> None:
        rng = self.rng
        nodes = rng.choice([1, 2, 2]) if self.runnable else rng.choice([1, 2, 2, 4, 8, 16])
        gpus = rng.choice([2, 4, 8]) if self.runnable else 8
        mode = rng.choice(["tpn", "tpn", "tpn", "ntasks", "both", "none"])
        if mode in ("tpn", "both"):
            tpn = rng.choice([1, 2, gpus] if self.runnable else [1, 8, 8])
        elif mode == "ntasks":
            tpn = rng.choice([1, 2] if self.runnable else [1, 8])
        else:
            tpn = 1
        cpus = None
        if self.chance(0.6):
            budget = 16 // max(tpn, 1) if self.runnable else 96 // max(tpn, 1)
            cpus = max(1, min(budget, rng.choice([1, 2, 4] if self.runnable else [1, 2, 4, 8, 12])))
        gpu_form = rng.choice(["gpus-per-node", "gpus-per-node", "gres", "gpus-per-task", "none"])
        if gpu_form == "gpus-per-task" and (tpn > gpus or mode == "none"):
            # sbatch refuses --gpus-per-task without a task count
            gpu_form = "gpus-per-node"
        exclusive = self.chance(0.3)
        self.job = dict(nodes=nodes, tpn=tpn if (mode != "ntasks" or nodes == 1) else None, ntasks=nodes * tpn,
                        gpus=gpus if gpu_form != "none" else None, cpus=cpus, exclusive=exclusive, mode=mode,
                        raw_tpn=tpn, gpu_form=gpu_form)
        w = self.w
        w.add("#!/bin/bash")
        if self.chance(0.5):
            w.add("# %s: generated job %d" % (self.choice(["pretraining", "fine-tuning", "evaluation sweep"]), self.seed))
        options = [f"--job-name=gen{self.seed}"]
        short = self.chance(0.3)
        options.append(f"-N {nodes}" if short else f"--nodes={nodes}")
        if mode in ("tpn", "both"):
            options.append(f"--ntasks-per-node={tpn}")
        if mode in ("ntasks", "both"):
            options.append(f"-n {nodes * tpn}" if short else f"--ntasks={nodes * tpn}")
        if gpu_form == "gpus-per-node":
            options.append(f"--gpus-per-node={gpus}")
        elif gpu_form == "gres":
            options.append(f"--gres=gpu:{gpus}")
        elif gpu_form == "gpus-per-task":
            options.append("--gpus-per-task=1")
        if cpus is not None:
            options.append(f"--cpus-per-task={cpus}")
        options.append("--time=%s" % ("00:10:00" if self.runnable else "%02d:00:00" % self.rng.randint(1, 12)))
        if not self.runnable:
            options.append(f"--account=proj{self.seed % 7}")
            options.append("--partition=" + self.choice(["batch", "gpu", "batch_long"]))
            options.append(f"--output={self.shared}/logs/%x_%j.out")
        if exclusive:
            options.append("--exclusive")
        self.rng.shuffle(options)
        if self.late:
            self.late_header(options)
            return
        for option in options:
            w.add(f"#SBATCH {option}")
        w.add("")

    def late_header(self, options: List[str]) -> None:
        """An evaluation sweep's header: a command after the first directives, every other
        directive after it (sbatch ignores them), more of them than the fixer has passes."""
        w, rng = self.w, self.late_rng
        keep = rng.randint(1, 2)
        for option in options[:keep]:
            w.add(f"#SBATCH {option}")
        w.add(rng.choice(["set -x -e", "set -e", "module purge"]))
        extra = rng.sample(LATE_DIRECTIVES, rng.randint(10, len(LATE_DIRECTIVES)))
        for option in options[keep:] + extra:
            w.add(f"#SBATCH {option}" + (rng.choice(["", "   # as before"]) if rng.random() < 0.3 else ""))
        w.add("")

    def late_jobs(self) -> None:
        """Jobs written in a loop from an unquoted here-document, each with its own late header,
        then submitted: the evaluation sweep's other shape."""
        w, rng = self.w, self.late_rng
        tasks = rng.sample(["boolq", "copa", "rte", "wic", "wsc", "cb", "anli"], rng.randint(2, 4))
        w.add(f"for TASK in {' '.join(tasks)}; do")
        w.add("  JOB=$SHARED/jobs/eval_$TASK.slurm")
        w.lines.append("cat <<EOT > $JOB")
        w.lines.append("#!/bin/bash")
        w.lines.append("#SBATCH --nodes=1")
        w.lines.append("set -x -e")
        for option in rng.sample(LATE_DIRECTIVES, rng.randint(10, len(LATE_DIRECTIVES))):
            w.lines.append(f"#SBATCH {option}")
        w.lines.append(f"srun {self.python} eval.py --task $TASK --out $SHARED/eval/$TASK")
        w.lines.append("EOT")
        w.add("  sbatch $JOB")
        w.add("done")

    def preamble(self) -> None:
        w, rng = self.w, self.rng
        w.add(self.choice(["set -euo pipefail", "set -e", "set -eo pipefail"]))
        if not self.runnable and self.chance(0.3):
            w.add("module load cuda/12.4 nccl")
        if self.job["cpus"] is not None and self.chance(0.5):
            w.add("export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK")
        w.add(f"SHARED={self.shared}")
        w.add(f"WORKDIR={self.workdir}")
        self.image = self.choice(IMAGES)
        w.add(f"IMAGE={self.image}")
        # variables: 4 per size unit
        for k in range(4 * self.size):
            kind = k % 4
            if kind == 0:
                w.add(f"export {self.choice(['HF_HOME', 'UV_CACHE_DIR', 'NEMO_HOME', 'TRITON_CACHE_DIR'])}=$SHARED/cache/c{k}")
            elif kind == 1:
                w.add(f"GBS_{k}={rng.choice([64, 128, 256, 512])}")
            elif kind == 2:
                if self.literal:
                    w.add(f"RUN_NAME_{k}=gen{self.seed}_{k}")
                else:
                    w.add(f"RUN_NAME_{k}=gen{self.seed}_$(date +%Y%m%d)_{k}")
            else:
                if self.literal:
                    w.add(f"export NCCL_DEBUG_{k}=WARN")
                else:
                    w.add(f"SEQ_{k}=${{SEQ_LEN:-{rng.choice([2048, 4096])}}}")
        # mounts: 2 per size unit, accumulated into one comma-separated list
        mounts = [f"$SHARED/m{k}:/mnt/m{k}" for k in range(2 * self.size)]
        if self.chance(0.5):
            w.add('MOUNTS="$SHARED:$SHARED"')
            w.add("for M in %s; do" % " ".join(mounts))
            w.add('  MOUNTS="$MOUNTS,$M"')
            w.add("done")
        else:
            w.add('MOUNTS="$SHARED:$SHARED,%s"' % ",".join(mounts))
        if not self.literal:
            w.add("NNODES=${SLURM_JOB_NUM_NODES:-%d}" % self.job["nodes"])
            w.add("GPUS_PER_NODE=${GPUS_PER_NODE:-%d}" % (self.job["gpus"] or 8))
        w.add('MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)')
        w.add(f"MASTER_PORT={29500 + self.seed % 400}")
        w.add('cd "$WORKDIR"')
        if not self.runnable and self.chance(0.4):
            w.add("mkdir -p $SHARED/logs/$SLURM_JOB_ID")
            w.add(f"cat > $SHARED/logs/$SLURM_JOB_ID/config_{self.seed}.yaml <<EOF")
            w.lines.append("run: gen%d" % self.seed)
            w.lines.append("nodes: $SLURM_JOB_NUM_NODES")
            w.lines.append("image: $IMAGE")
            w.lines.append("EOF")
        w.add("")

    # -- steps --------------------------------------------------------------------------------------
    def step_geometry(self, launcher: str):
        """(srun options, nodes, tasks per node, ntasks, nproc) for a step of this launcher."""
        job = self.job
        nodes, tpn = job["nodes"], job["tpn"]
        gpus = job["gpus"] or 8
        nproc_max = 2 if self.runnable else gpus
        if launcher == "cpu-tool":
            return ["--nodes=1", "--ntasks=1"], 1, 1, 1, None
        if launcher in ("torchrun-per-node", "torchrun-c10d"):
            nproc = self.choice([1, 2]) if self.runnable else gpus
            if job["raw_tpn"] == 1 and job["mode"] != "ntasks" and self.chance(0.5):
                return [], nodes, 1, nodes, nproc
            return [f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1"], nodes, 1, nodes, nproc
        if launcher == "torchrun-per-task":
            nproc = min(nproc_max, self.choice([1, 2]))
            per = 2
            if self.runnable and not self._fits(per):
                per = 1
            return [f"--nodes={nodes}", f"--ntasks={nodes * per}", f"--ntasks-per-node={per}"], nodes, per, nodes * per, nproc
        # srun-native and bash -c: inherit the job's geometry or set their own
        pick = self.rng.random()
        if pick < 0.55:
            return [], nodes, tpn, job["ntasks"], None
        if pick < 0.75 and nodes > 1:
            return ["-N 1", "-n 1"], 1, 1, 1, None
        per = self.choice([1, 2]) if self.runnable else self.choice([1, 4, 8])
        if self.runnable and not self._fits(per):
            per = 1
        return [f"-N {nodes}", f"--ntasks={nodes * per}", f"--ntasks-per-node={per}"], nodes, per, nodes * per, None

    def _fits(self, per: int) -> bool:
        """Whether ``per`` tasks of one CPU each fit on every node of the allocation (runnable
        scripts: a step asking for more than the job holds on a node waits for ever)."""
        job = self.job
        if job["exclusive"]:
            return per * (job["cpus"] or 1) <= 16  # SRUN_CPUS_PER_TASK may pass the job's CPUs on
        if job["mode"] == "ntasks" and job["nodes"] > 1:
            return per <= 1  # the job's tasks may be packed unevenly: some node may hold one
        return per <= job["raw_tpn"]

    def container_options(self) -> List[str]:
        opts = ['--container-image="$IMAGE"', '--container-mounts="$MOUNTS"']
        if not self.runnable and self.chance(0.5):
            opts.append('--container-workdir="$WORKDIR"')
        if self.chance(0.5):
            opts.append("--no-container-mount-home")
        return opts

    def task_command(self, launcher: str, nproc: Optional[int], nodes: int) -> (List[str], Optional[str]):
        """The words of the task command (unquoted shell words, batch-shell syntax)."""
        py = self.python
        if launcher == "python":
            entry = self.entry(self.choice(PLAIN_ENTRIES))
            return [*py.split(), entry, "--epochs", str(self.rng.randint(1, 5)), "--batch-size", "$GBS_1"], entry
        if launcher == "bridge":
            entry = self.entry(self.choice(BRIDGE_RECIPES))
            return [*py.split(), entry, "train.global_batch_size=$GBS_1", f"model.tensor_model_parallel_size={self.choice([1, 2])}"], entry
        if launcher == "cpu-tool":
            if self.runnable:
                entry = self.entry("tools/prepare_data.py")
                return ["python3", entry, "--out", "$SHARED/data"], entry
            return (["uv", "sync"], None) if self.chance(0.5) else ([*py.split(), self.entry("tools/prepare_data.py"), "--out", "$SHARED/data"], "tools/prepare_data.py")
        raise AssertionError(launcher)

    def torchrun_words(self, launcher: str, nproc: int, nodes: int, escape: bool) -> List[str]:
        d = "\\$" if escape else "$"
        launcher_words = self.choice([["torchrun"], ["python3" if self.runnable else "python", "-m", "torch.distributed.run"]])
        if self.runnable:
            launcher_words = ["python3", "-m", "torch.distributed.run"]
        nnodes = str(nodes) if (self.literal or self.chance(0.5)) else "$NNODES"
        if launcher == "torchrun-per-task":
            return [*launcher_words, "--standalone", f"--nproc_per_node={nproc}"]
        if launcher == "torchrun-c10d":
            return [*launcher_words, f"--nnodes={nnodes}", f"--nproc_per_node={nproc}", "--rdzv_backend=c10d",
                    "--rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT", "--rdzv_id=$SLURM_JOB_ID"]
        return [*launcher_words, f"--nproc_per_node={nproc}", f"--nnodes={nnodes}", f"--node_rank={d}SLURM_NODEID",
                "--master_addr=$MASTER_ADDR", "--master_port=$MASTER_PORT"]

    def write_srun(self, options: List[str], task: List[str], style: str) -> int:
        """Write an srun line (or lines) with these options; returns the line of the srun word."""
        w = self.w
        if style == "continued":
            indent = self.choice(["  ", "    ", "\t"])
            line = w.next_line
            w.add("srun " + options[0] + " \\" if options else "srun \\")
            for option in options[1:]:
                w.add(indent + option + " \\")
            w.add(indent + " ".join(task))
            return line
        if style == "srun-cmd":
            name = self.fresh("SRUN_CMD")
            w.add(f'{name}="srun {" ".join(o.replace(chr(34), "") for o in options)}"')
            line = w.next_line
            w.add(f"${name} " + " ".join(task))
            return line
        if style == "array":
            name = self.fresh("SRUN_ARGS")
            w.add(f"{name}=({' '.join(options)})")
            line = w.next_line
            w.add(f'srun "${{{name}[@]}}" ' + " ".join(task))
            return line
        line = w.next_line
        w.add(" ".join(["srun", *options, *task]))
        return line

    def step(self, launcher: str) -> None:
        w = self.w
        geo_opts, nodes, tpn, ntasks, nproc = self.step_geometry(launcher)
        options = list(geo_opts)
        if launcher not in ("cpu-tool",) and self.chance(0.6):
            options.insert(0, self.choice(["--kill-on-bad-exit=1", "-K"]))
        container = self.chance(0.5)
        if container:
            options.extend(self.container_options())
        if self.chance(0.15) and not self.runnable:
            options.append("--mpi=pmix")
        style = self.choice(["inline", "continued", "continued", "srun-cmd", "array"])
        entry = None
        if launcher.startswith("torchrun") or launcher == "bash-c":
            # run through a task string the task's shell expands
            if launcher == "bash-c":
                entry = self.entry(self.choice(PLAIN_ENTRIES))
                body = f"cd $WORKDIR && {self.python} {entry} --rank \\$SLURM_PROCID --local-rank \\$SLURM_LOCALID"
            else:
                entry = self.entry(MLM_ENTRY if launcher != "torchrun-per-task" else self.choice(PLAIN_ENTRIES))
                body = " ".join(self.torchrun_words(launcher, nproc, nodes, escape=True)) + f" {entry} --tensor-model-parallel-size 1"
            if self.chance(0.5) and style != "srun-cmd":
                name = self.fresh("CMD")
                head, _, tail = body.partition(f" {entry}")
                w.add(f'{name}="{head}"')
                w.add(f'{name}="${name} {entry}{tail}"')
                task = ["bash", "-c", f'"${name}"']
                style_label = style
            elif style == "srun-cmd" or self.chance(0.5):
                task = ["bash", "-c", f'"{body}"']
                style_label = style
            elif launcher == "bash-c":
                task = ["bash", "-c", f'"{body}"']
                style_label = style
            else:
                # torchrun directly on srun's command line: nothing per task may be written there,
                # so a per-node launch uses the c10d rendezvous
                if launcher == "torchrun-per-node":
                    launcher = "torchrun-c10d"
                task = self.torchrun_words(launcher, nproc, nodes, escape=False) + [entry, "--tensor-model-parallel-size", "1"]
                style_label = style
        else:
            task, entry = self.task_command(launcher, nproc, nodes)
            style_label = style
        line = self.write_srun(options, task, style)
        w.steps.append(StepMeta(line=line, launcher=launcher, nodes=nodes, tasks_per_node=tpn, ntasks=ntasks,
                                nproc_per_node=nproc, runs=w.runs, branch=w.branch, entry=entry, style=style_label,
                                container=container))

    def launcher(self) -> str:
        weights = [("python", 3), ("bridge", 2), ("torchrun-per-node", 2), ("torchrun-c10d", 1), ("bash-c", 2),
                   ("cpu-tool", 1), ("torchrun-per-task", 1)]
        total = sum(k for _, k in weights)
        pick = self.rng.random() * total
        for name, weight in weights:
            pick -= weight
            if pick < 0:
                return name
        return "python"

    def block(self, index: int) -> None:
        """One unit of size: a few steps, some in a loop, a branch or a case."""
        w = self.w
        shape = self.rng.choice(["plain", "loop", "if", "plain", "loop"])
        w.add(f"# stage {index + 1}")
        if shape == "plain":
            self.step(self.launcher())
        elif shape == "loop":
            var = self.fresh("TP")
            items = [str(self.rng.choice([1, 2, 4])) for _ in range(2)]
            w.add(f"for {var} in {' '.join(items)}; do")
            w.indent, w.runs = "  ", len(items)
            w.add(f'echo "stage {index + 1}: {var}=${var}"')
            self.step(self.launcher())
            w.indent, w.runs = "", 1
            w.add("done")
        else:
            mode = self.choice(["pretrain", "finetune"])
            w.add(f"MODE_{index}={mode}" if self.literal else f"MODE_{index}=${{MODE:-{mode}}}")
            w.add(f'if [ "$MODE_{index}" = "pretrain" ]; then')
            w.indent, w.branch = "  ", "if"
            self.step(self.launcher())
            w.indent, w.branch = "", None
            w.add("else")
            w.indent, w.branch = "  ", "else"
            self.step(self.launcher())
            w.indent, w.branch = "", None
            w.add("fi")
        w.add("")

    def cases(self) -> None:
        """A ``case`` over ``size + 1`` alternatives, each running one step."""
        w = self.w
        choices = [f"cfg{k}" for k in range(self.size + 1)]
        chosen = self.choice(choices)
        w.add(f"CONFIG={chosen}" if self.literal else f"CONFIG=${{CONFIG:-{chosen}}}")
        w.add('case "$CONFIG" in')
        for pattern in choices:
            w.add(f"  {pattern})")
            w.indent, w.branch = "    ", f"case:{pattern}"
            self.step(self.choice(["python", "bridge", "bash-c"]))
            w.add(";;")
            w.indent, w.branch = "", None
        w.add("esac")

    def build(self) -> Job:
        self.header()
        self.preamble()
        if self.late:
            self.late_jobs()
        if not self.runnable and self.chance(0.4):
            self.step("cpu-tool")
            self.w.add("")
        for index in range(self.size):
            self.block(index)
        if self.chance(0.5):
            self.cases()
        if not self.runnable and self.chance(0.3):
            self.w.add("cat <<'EOF' > $SHARED/logs/summary_$SLURM_JOB_ID.txt")
            self.w.lines.append("finished at $(date)")
            self.w.lines.append("EOF")
        self.w.add('echo "done"')
        job = self.job
        return Job(
            text="\n".join(self.w.lines) + "\n",
            seed=self.seed,
            size=self.size,
            literal=self.literal,
            runnable=self.runnable,
            nodes=job["nodes"],
            tasks_per_node=job["tpn"],
            ntasks=job["ntasks"],
            gpus_per_node=job["gpus"],
            cpus_per_task=job["cpus"],
            exclusive=job["exclusive"],
            steps=self.w.steps,
            entries=list(self.entries),
        )


def generate(seed: int, size: int = 1, literal: bool = False, runnable: bool = False, workdir: Optional[str] = None,
             late: bool = False) -> Job:
    """One job script, the same bytes for the same arguments. ``runnable`` implies ``literal``.
    ``late``: the evaluation-sweep shape (directives after the first command, more of them than
    the fixer's passes, and jobs written in a loop from here-documents with such headers)."""
    return _Gen(seed, size, literal or runnable, runnable, workdir, late).build()


def corpus(count: int, seed: int = 0, size: int = 1, literal: bool = False, runnable: bool = False,
           workdir: Optional[str] = None, late: bool = False) -> List[Job]:
    """``count`` scripts with the seeds ``seed``, ``seed + 1``, …"""
    return [generate(seed + k, size, literal, runnable, workdir, late) for k in range(count)]


def shapes(jobs: List[Job]) -> Dict[str, int]:
    """How often each launcher and step style occurs: for tests that a corpus covers them."""
    out: Dict[str, int] = {}
    for job in jobs:
        for step in job.steps:
            for key in (f"launcher:{step.launcher}", f"style:{step.style}", "branch" if step.branch else "", "loop" if step.runs > 1 else ""):
                if key:
                    out[key] = out.get(key, 0) + 1
    return out

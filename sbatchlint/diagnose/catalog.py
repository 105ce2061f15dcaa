"""What ``sbatchlint diagnose`` recognises: one entry per diagnosis, with a stable id.

Each entry has a title, the meaning (for its documentation page), the fix, the sbatchlint
rules that would have caught the cause before submission (``rules``), and an example log
excerpt in the shape real logs have. The examples are checked by the tests: diagnosing each
one gives its own id.
"""
from __future__ import annotations

from textwrap import dedent

from ..lazyclass import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Tuple


@dataclass(frozen=True)
class Kind:
    id: str
    title: str  # a few words, for the index
    meaning: str  # what happened, for the page
    fix: str  # one or two sentences
    rules: Tuple[str, ...] = ()
    example: str = ""
    expected: bool = False  # a known, harmless outcome: explained, not alarmed about
    cause: bool = True  # False: said in addition to the cause (a consequence, a note)


def _x(text: str) -> str:
    return dedent(text).strip("\n") + "\n"


KINDS: Tuple[Kind, ...] = (
    Kind(
        "python-exception",
        "A Python exception ended the first failing task",
        "A task raised an exception and exited with code 1. The exception and the last stack "
        "frame of the first task that failed are the cause; tracebacks of other tasks that "
        "follow it are usually consequences (a peer closed the connection, a signal arrived).",
        "Fix the error at the frame shown; the other tasks only stopped because this one did.",
        example=_x("""
            3: [2026-03-02 09:14:07,310] [rank3] INFO iteration 1200 | loss 2.184
            3: [rank3]: Traceback (most recent call last):
            3: [rank3]:   File "/lustre/proj/train.py", line 212, in <module>
            3: [rank3]:     main()
            3: [rank3]:   File "/lustre/proj/train.py", line 187, in main
            3: [rank3]:     batch = collate(samples)
            3: [rank3]:   File "/lustre/proj/data.py", line 41, in collate
            3: [rank3]:     raise KeyError(f"sample {key} has no 'labels' field")
            3: [rank3]: KeyError: "sample 88121 has no 'labels' field"
            srun: error: gpu-b07: task 3: Exited with exit code 1
            srun: launch/slurm: _step_signal: Terminating StepId=48211.0
            slurmstepd: error: *** STEP 48211.0 ON gpu-b06 CANCELLED AT 2026-03-02T09:14:08 ***
            srun: error: gpu-b06: tasks 0-1: Terminated
            srun: error: gpu-b07: task 2: Terminated
        """),
    ),
    Kind(
        "import-error",
        "A module could not be imported",
        "A task failed with `ImportError` or `ModuleNotFoundError`. When it happens on rank 0 "
        "only, while loading a checkpoint's remote model code or saving artifacts, the other "
        "ranks wait for rank 0 in a barrier and time out.",
        "Install the missing package in the environment every task uses; when the import is "
        "optional remote code loaded while saving artifacts, catch `ImportError` there as well.",
        rules=("SBL503",),
        example=_x("""
            0: [rank0]: Traceback (most recent call last):
            0: [rank0]:   File "/lustre/proj/convert.py", line 58, in <module>
            0: [rank0]:     bridge.save_artifacts(out_dir)
            0: [rank0]:   File "/lustre/proj/hf_pretrained/base.py", line 133, in save_artifacts
            0: [rank0]:     module = importlib.import_module(f"transformers_modules.{name}")
            0: [rank0]: ModuleNotFoundError: No module named 'transformers_modules.minimax_m2'
            srun: error: dgx-011: task 0: Exited with exit code 1
            slurmstepd: error: *** STEP 7712.0 ON dgx-011 CANCELLED AT 2026-05-11T16:20:41 ***
            srun: error: dgx-012: tasks 8-15: Terminated
            srun: error: dgx-011: tasks 1-7: Terminated
        """),
    ),
    Kind(
        "cuda-out-of-memory",
        "CUDA out of memory on a GPU",
        "A rank asked the GPU for more memory than was free (`torch.OutOfMemoryError: CUDA out "
        "of memory`). The message names the GPU, what was asked for and what was free.",
        "Use more GPUs for the model (more tensor, pipeline or expert parallelism, or more "
        "nodes), a smaller micro batch, or activation recomputation.",
        rules=("SBL106",),
        example=_x("""
            [rank5]: Traceback (most recent call last):
            [rank5]:   File "/workspace/train.py", line 301, in forward_step
            [rank5]:     output = model(tokens, position_ids, attention_mask)
            [rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 5 has a total capacity of 79.10 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in use.
            W0302 11:02:10.551000 7781 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 7790 closing signal SIGTERM
            E0302 11:02:11.102000 7781 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 5 (pid: 7795) of binary: /usr/bin/python
        """),
    ),
    Kind(
        "moe-expert-memory",
        "CUDA out of memory: too many experts per GPU",
        "A mixture-of-experts model ran out of GPU memory and the log shows its expert count "
        "and parallel sizes. Only expert parallelism (EP) splits the experts over GPUs: each "
        "GPU holds num_experts / EP experts, each of them split by the expert tensor parallel "
        "size (ETP, which Megatron sets to TP when it is not given). Tensor parallelism alone "
        "does not reduce the expert memory.",
        "Raise EP (and the node count with it) until num_experts / EP experts fit, keeping "
        "ETP·EP·PP a divisor of the world size.",
        rules=("SBL106",),
        example=_x("""
            [2026-04-20 08:00:12] num_experts ..................................... 256
            [2026-04-20 08:00:12] expert_model_parallel_size ...................... 4
            [2026-04-20 08:00:12] tensor_model_parallel_size ...................... 2
            [rank6]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 6 has a total capacity of 79.10 GiB of which 802.00 MiB is free.
            srun: error: node17: task 6: Exited with exit code 1
        """),
    ),
    Kind(
        "host-out-of-memory",
        "The kernel's OOM killer ended a task",
        "A task was killed with signal 9 and Slurm recorded an out-of-memory kill "
        "(`oom_kill event`, state OUT_OF_MEMORY): the node's host memory, not the GPU's, ran out.",
        "Ask for more memory (`--mem=0` for the whole node), load fewer copies of the data per "
        "node (fewer data-loader workers, memory-mapped datasets), or spread the tasks over more nodes.",
        example=_x("""
            [rank2]:[W0412 10:31:07.000000 1877 ProcessGroupNCCL.cpp:1168] Warning: ... (function operator())
            slurmstepd: error: Detected 1 oom_kill event in StepId=90211.0. Some of the step tasks have been OOM Killed.
            srun: error: cpu-a3: task 2: Out Of Memory
            srun: launch/slurm: _step_signal: Terminating StepId=90211.0
            srun: error: cpu-a3: tasks 0-1,3: Terminated
        """),
    ),
    Kind(
        "killed",
        "A task was killed with signal 9",
        "A task ended with SIGKILL (exit code 137, -9 or `Killed`) and the log shows no "
        "out-of-memory kill. Something outside the program ended it: the job's own clean-up after "
        "a time limit or cancellation, an administrator, or a node health check.",
        "Check whether the job was cancelled or reached its time limit at that moment; otherwise "
        "ask the site which agent kills processes on the node.",
        example=_x("""
            E1105 03:12:44.120000 2210 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -9) local_rank: 1 (pid: 2231) of binary: /opt/venv/bin/python
            torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
            ============================================================
            train.py FAILED
            ------------------------------------------------------------
            Failures:
              <NO_OTHER_FAILURES>
            ------------------------------------------------------------
            Root Cause (first observed failure):
            [0]:
              time      : 2026-11-05_03:12:44
              host      : node04
              rank      : 1 (local_rank: 1)
              exitcode  : -9 (pid: 2231)
              error_file: <N/A>
              traceback : Signal 9 (SIGKILL) received by PID 2231
            ============================================================
        """),
    ),
    Kind(
        "segmentation-fault",
        "A task crashed with a segmentation fault",
        "A task died of signal 11 (exit code 139, -11 or `Segmentation fault`): native code "
        "(a CUDA extension, a data loader library, a driver mismatch) read invalid memory.",
        "Run the failing rank with `faulthandler` on (`python -X faulthandler`) to see the "
        "Python frame; check that the container's CUDA and driver versions match the node.",
        example=_x("""
            2: Fatal Python error: Segmentation fault
            2: Current thread 0x00007f5e2c9ff740 (most recent call first):
            2:   File "/opt/venv/lib/python3.11/site-packages/flash_attn/flash_attn_interface.py", line 96 in _flash_attn_forward
            srun: error: gpu07: task 2: Segmentation fault (core dumped)
            srun: error: gpu07: tasks 0-1,3: Terminated
        """),
    ),
    Kind(
        "nccl-watchdog-timeout",
        "An NCCL collective timed out (watchdog abort)",
        "A collective operation did not complete within the process group's timeout; NCCL's "
        "watchdog then aborted the process (signal 6, exit code -6 or 134). When another task "
        "failed before, the timeout is only its consequence; alone, it means a rank stopped "
        "taking part (a hang, a deadlock, a slow rank 0) or the network stalled.",
        "Find the rank that did not reach the collective (the one not in the timeout messages); "
        "raise the process group timeout only if that rank was legitimately busy.",
        rules=("SBL502",),
        example=_x("""
            [rank12]:[E0721 22:40:05.613000 5531 ProcessGroupNCCL.cpp:616] [Rank 12] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1881, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.
            [rank12]:[E0721 22:40:05.901000 5531 ProcessGroupNCCL.cpp:1632] [PG ID 0 PG GUID 0(default_pg) Rank 12] Process group watchdog thread terminated with exception: [Rank 12] Watchdog caught collective operation timeout
            terminate called after throwing an instance of 'c10::DistBackendError'
            srun: error: hgx-22: task 12: Aborted (core dumped)
        """),
    ),
    Kind(
        "nccl-network-error",
        "NCCL could not talk to another node",
        "NCCL reported a system or network error (`unhandled system error`, socket or "
        "InfiniBand errors such as `NET/IB : Got completion with error`, `Connection reset by "
        "peer`). Unless another rank died first, the network path between the nodes failed.",
        "Rerun with `NCCL_DEBUG=INFO` to see which interface NCCL uses; set `NCCL_SOCKET_IFNAME` "
        "/ `NCCL_IB_HCA` to the cluster's fabric, and exclude a node that keeps failing (`--exclude`).",
        example=_x("""
            gpu-r2n4:91177:91410 [3] NCCL INFO Channel 00/0 : 11[3] -> 19[3] [send] via NET/IB/3
            gpu-r2n4:91177:91412 [3] NCCL WARN NET/IB : Got completion from peer 10.20.3.14<41878> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.20.3.12 remoteGid ::ffff:10.20.3.14
            gpu-r2n4:91177:91412 [3] NCCL INFO transport/net.cc:1298 -> 6
            [rank11]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
            [rank11]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
            srun: error: gpu-r2n4: task 11: Exited with exit code 1
        """),
    ),
    Kind(
        "rank0-unreachable",
        "The other ranks timed out waiting for rank 0",
        "Ranks on other nodes gave up waiting for rank 0 (`retrieving ncclUniqueId from [0] … "
        "wait timeout`, `possible application crash on rank 0`, a barrier or receive that timed "
        "out) while rank 0 had not failed yet. Rank 0 was busy or stuck: saving artifacts or "
        "exporting before a barrier, an ImportError in remote model code, an out-of-memory "
        "during export, or a network fault between the nodes.",
        "Look at what rank 0 was doing (shown below the evidence). Long work on rank 0 before a "
        "barrier needs a longer process group timeout (`init_process_group(timeout=…)`).",
        rules=("SBL502", "SBL503"),
        example=_x("""
            [2026-06-03 14:00:02,114] [rank0] INFO saving tokenizer, config and remote code to /lustre/ckpt/hf
            [rank8]: torch.distributed.DistBackendError: [8] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: //worker/attempt_0/default_pg/0//cuda//0
            [rank8]: This may indicate a possible application crash on rank 0 or a network set up issue.
            srun: error: node-b2: task 8: Exited with exit code 1
            srun: error: node-b2: tasks 9-15: Exited with exit code 1
        """),
    ),
    Kind(
        "address-in-use",
        "A port was already taken on the node (EADDRINUSE)",
        "A process could not listen on its port (`EADDRINUSE`, `address already in use`): "
        "another process on the same host holds it. In a multi-node job this is usually "
        "torchrun started by more than one task per node with a fixed `--master_port` (each "
        "launcher tries to host the rendezvous store), or every node believing it is node "
        "rank 0 because `$SLURM_NODEID` was expanded once by the batch shell.",
        "Start one torchrun per node (`--ntasks-per-node=1`), or launch srun-native; pass the "
        "node rank as `\\$SLURM_NODEID` so each task expands its own.",
        rules=("SBL101", "SBL201"),
        example=_x("""
            torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use
            srun: error: node01: task 1: Exited with exit code 1
            srun: launch/slurm: _step_signal: Terminating StepId=5531.0
            slurmstepd: error: *** STEP 5531.0 ON node01 CANCELLED AT 2026-02-14T10:03:12 ***
            srun: error: node01: task 0: Terminated
            srun: error: node02: tasks 2-3: Terminated
        """),
    ),
    Kind(
        "rendezvous-timeout",
        "The ranks never found each other (rendezvous timeout)",
        "The rendezvous did not complete: a c10d `RendezvousTimeoutError`, a TCP store client "
        "that `timed out … while trying to connect`, or `Timed out after N seconds waiting for "
        "clients`. The endpoint (`MASTER_ADDR`/`--rdzv_endpoint`) points at the wrong host "
        "(localhost on several nodes), or some nodes never started their launcher.",
        "Derive `MASTER_ADDR` from the first host of `$SLURM_JOB_NODELIST` and give every "
        "launcher the node count and node rank (or a c10d rendezvous).",
        rules=("SBL105", "SBL103"),
        example=_x("""
            [E0918 07:45:31.004000 3301 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1171] The node 'gpu02_3301_0' has failed to join the rendezvous: timed out
            torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError
            srun: error: gpu02: task 1: Exited with exit code 1
        """),
    ),
    Kind(
        "duplicate-world",
        "The same world was formed twice",
        "Two groups of processes each formed a world of their own: the same global rank (two "
        "rank 0s) appears on different tasks or hosts. The launchers were not told the node "
        "count and node rank, or each task ran its own torchrun. The job can even finish, having "
        "trained the same thing twice.",
        "Give torchrun `--nnodes=$SLURM_JOB_NUM_NODES --node_rank=\\$SLURM_NODEID` and a shared "
        "`--master_addr`, with one torchrun per node.",
        rules=("SBL103", "SBL201", "SBL101"),
        example=_x("""
            node01: [2026-07-01 12:00:03] global rank 0 of world size 8 on node01
            node02: [2026-07-01 12:00:03] global rank 0 of world size 8 on node02
            node01: [2026-07-01 12:00:03] global rank 1 of world size 8 on node01
            node02: [2026-07-01 12:00:03] global rank 1 of world size 8 on node02
        """),
    ),
    Kind(
        "duplicate-gpu",
        "Two ranks on one GPU (Duplicate GPU detected)",
        "NCCL found two ranks of one communicator on the same GPU of the same host. `LOCAL_RANK` "
        "was the same for several tasks (set once in the batch shell), or each task sees only "
        "one GPU and they all pick device 0.",
        "Let each task take `LOCAL_RANK` from `$SLURM_LOCALID` (escaped, or set by the "
        "launcher), and do not bind one GPU per task for a distributed step.",
        rules=("SBL105", "SBL201", "SBL111"),
        example=_x("""
            [rank1]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5
            [rank1]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
            [rank1]: Last error:
            [rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000
            srun: error: a100-03: task 1: Exited with exit code 1
        """),
    ),
    Kind(
        "torchrun-only-guard",
        "The script refuses to run without torchrun",
        "The Python script checks only torchrun's `WORLD_SIZE` and exits (`must be launched with "
        "torchrun`), but srun-native tasks have `SLURM_NTASKS` and `SLURM_PROCID` instead.",
        "Accept Slurm's variables too: treat the run as distributed when `WORLD_SIZE` or "
        "`SLURM_NTASKS` is set.",
        rules=("SBL501",),
        example=_x("""
            0: ERROR: this script must be launched with torchrun (WORLD_SIZE is not set)
            1: ERROR: this script must be launched with torchrun (WORLD_SIZE is not set)
            srun: error: h100-7: tasks 0-1: Exited with exit code 1
        """),
    ),
    Kind(
        "packed-sequence-not-shared",
        "Packed sequences written on one node only",
        "`TypeError: 'NoneType' object is not an iterator` while loading packed sequences: the "
        "`.npy` files were written under `NEMO_HOME` on one node, and on the others it is the "
        "container's own `/root/.cache/nemo`.",
        "Export `NEMO_HOME` to a directory on the shared filesystem, mounted into the container.",
        rules=("SBL303",),
        example=_x("""
            [rank9]:   File "/opt/Megatron-Bridge/src/megatron/bridge/data/datasets/packed_sequence.py", line 77, in __iter__
            [rank9]:     yield next(self._iterator)
            [rank9]: TypeError: 'NoneType' object is not an iterator
            srun: error: node-c2: tasks 8-15: Exited with exit code 1
        """),
    ),
    Kind(
        "megatron-core-shadowed",
        "The container's megatron-core shadows the project's",
        "`ModuleNotFoundError: No module named 'megatron.core.…'`: the container's preinstalled "
        "megatron-core was imported instead of the project's `3rdparty/Megatron-LM`.",
        "Run `uv sync` once before the training step (one task), then `uv run --no-sync` in "
        "every task; for Megatron-LM scripts put `3rdparty/Megatron-LM` on `PYTHONPATH`.",
        rules=("SBL307", "SBL308"),
        example=_x("""
            4: Traceback (most recent call last):
            4:   File "/lustre/proj/3rdparty/Megatron-LM/pretrain_gpt.py", line 12, in <module>
            4:     from megatron.core.activations import squared_relu
            4: ModuleNotFoundError: No module named 'megatron.core.activations'
            srun: error: dgx-4: tasks 0-7: Exited with exit code 1
        """),
    ),
    Kind(
        "usage-error",
        "A program was called with wrong arguments (exit code 2)",
        "A task exited with code 2 after `usage:` / `error: unrecognized arguments` / "
        "`error: the following arguments are required`: the command line does not match what "
        "the program accepts, often a variable that expanded to nothing or an option of another version.",
        "Compare the command line in the script with the program's `--help`.",
        example=_x("""
            1: usage: finetune.py [-h] [--config-file CONFIG_FILE] [--seq-length SEQ_LENGTH]
            1: finetune.py: error: unrecognized arguments: --nproc_per_node=8
            srun: error: n002: tasks 0-7: Exited with exit code 2
        """),
    ),
    Kind(
        "command-not-found",
        "A command was not found in the task's environment",
        "A task's shell could not find a program (`command not found`, exit code 127). For "
        "`uv: command not found`, the container has no uv.",
        "Use a container with the program installed (for uv: one with uv, or `pip install uv` "
        "first), or call it by its full path.",
        example=_x("""
            /var/spool/slurmd/job01234/slurm_script: line 31: uv: command not found
            srun: error: node3: tasks 0-7: Exited with exit code 127
        """),
    ),
    Kind(
        "no-space-left",
        "No space left on device",
        "A write failed with `No space left on device` (errno 28). Inside a container this is "
        "usually a uv, pip or Hugging Face cache under `/root/.cache` filling the container's "
        "small writable layer.",
        "Put the caches on the shared filesystem: `export UV_CACHE_DIR=…`, `HF_HOME=…` on a "
        "mounted path.",
        rules=("SBL304",),
        example=_x("""
            0: error: Failed to install: torch-2.5.1-cp311-cp311-manylinux_2_28_x86_64.whl (torch==2.5.1)
            0:   Caused by: failed to write to file `/root/.cache/uv/.tmpX1c9/torch/lib/libtorch_cuda.so`: No space left on device (os error 28)
            srun: error: gpu-11: task 0: Exited with exit code 2
        """),
    ),
    Kind(
        "fp8-weight-mismatch",
        "Weight mismatch after an FP8 round trip (expected)",
        "`Weight mismatch detected` after converting an FP8 checkpoint to Megatron and back: the "
        "export is BF16 and the comparison against the FP8 original exceeds its tolerance. The "
        "conversion itself is correct.",
        "Nothing to fix in the job. Compare against a BF16 reference, or loosen the comparison "
        "tolerance for FP8 originals.",
        expected=True,
        example=_x("""
            [rank0]: model.layers.3.mlp.experts.17.down_proj.weight ❌ max diff 0.1406
            [rank0]: ValueError: Weight mismatch detected
            srun: error: node1: task 0: Exited with exit code 1
        """),
    ),
    Kind(
        "slurm-gpu-spec-missing",
        "Slurm refused the step: no GPU specification",
        "Slurm refused to start the step (`Cannot find GPU specification`): the allocation or "
        "the step asked for no GPUs on a partition that requires them.",
        "Request GPUs in both the allocation and the step: `--gpus-per-node=8`.",
        rules=("SBL108",),
        example=_x("""
            srun: error: Cannot find GPU specification
            srun: error: Unable to create step for job 4410: Invalid generic resource (gres) specification
        """),
    ),
    Kind(
        "slurm-invalid-partition",
        "Slurm refused the job: invalid partition",
        "The partition name does not exist on this cluster (`invalid partition specified`).",
        "Use a partition `sinfo --summarize` lists.",
        rules=("SBL017",),
        example=_x("""
            sbatch: error: invalid partition specified: pool0
            sbatch: error: Batch job submission failed: Invalid partition name specified
        """),
    ),
    Kind(
        "slurm-invalid-account",
        "Slurm refused the job: account and partition do not go together",
        "The account may not use that partition (`Invalid account or account/partition combination specified`).",
        "List your associations with `sacctmgr -nP show assoc where user=$USER format=account,partition` and pick a pair from it.",
        rules=("SBL021",),
        example=_x("""
            srun: error: Unable to allocate resources: Invalid account or account/partition combination specified
        """),
    ),
    Kind(
        "slurm-node-config-unavailable",
        "Slurm refused the step: requested node configuration not available",
        "The step asked for something its allocation cannot give (`Requested node configuration "
        "is not available`), typically `-w NODE` naming a node outside the allocation, or more "
        "GPUs or CPUs per node than the nodes have.",
        "Drop `-w` (shared caches are reachable from every node) or request matching resources.",
        rules=("SBL019",),
        example=_x("""
            srun: error: Unable to create step for job 90017: Requested node configuration is not available
        """),
    ),
    Kind(
        "missing-output-directory",
        "The job failed at launch: its log directory does not exist",
        "Slurm could not open the job's `--output`/`--error` file because its directory does "
        "not exist. The job fails at launch (JobLaunchFailure, exit code 0:53), writes no log, "
        "and a `mkdir -p` inside the script never runs.",
        "Create the log directory before `sbatch` (or write logs to an existing directory).",
        rules=("SBL010",),
        example="",  # there is no log: the page shows the script and the command instead
    ),
    Kind(
        "time-limit",
        "The job reached its time limit",
        "Slurm cancelled the job at its time limit (`CANCELLED … DUE TO TIME LIMIT`, state "
        "TIMEOUT): the tasks were sent SIGTERM, then SIGKILL. No task had failed before.",
        "Ask for more time (`--time`), or save checkpoints and resume in a follow-up job.",
        example=_x("""
            3: [2026-08-09 23:59:31,004] [rank3] INFO iteration 41000 | loss 1.902
            slurmstepd: error: *** JOB 66120 ON a100-01 CANCELLED AT 2026-08-10T00:00:07 DUE TO TIME LIMIT ***
            0: slurmstepd: error: *** STEP 66120.0 ON a100-01 CANCELLED AT 2026-08-10T00:00:07 DUE TO TIME LIMIT ***
            srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
            srun: error: a100-01: tasks 0-3: Terminated
        """),
    ),
    Kind(
        "hang-until-time-limit",
        "The other tasks waited for the failed one until the time limit",
        "A task failed, but the step went on: the other tasks waited for it until the job's "
        "time limit, holding every node for nothing. Without `--kill-on-bad-exit=1`, srun lets "
        "a step continue when one of its tasks exits with an error.",
        "Run the training step with `srun --kill-on-bad-exit=1`.",
        rules=("SBL107",),
        cause=False,
        example=_x("""
            1: [rank1]: RuntimeError: shard 7 of the dataset is corrupt
            srun: error: node2: task 1: Exited with exit code 1
            slurmstepd: error: *** JOB 3021 ON node1 CANCELLED AT 2026-01-19T06:00:11 DUE TO TIME LIMIT ***
            srun: error: node1: task 0: Terminated
        """),
    ),
    Kind(
        "node-failure",
        "A node failed",
        "Slurm lost a node during the job (`DUE TO NODE FAILURE`, state NODE_FAIL): the tasks "
        "on it vanished and the rest were cancelled. Nothing in the job caused it.",
        "Resubmit, excluding the node (`--exclude=NODE`) if it fails again; report it to the site.",
        example=_x("""
            slurmstepd: error: *** JOB 55501 ON gpu-c11 CANCELLED AT 2026-09-30T02:14:55 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***
            srun: error: gpu-c11: tasks 0-7: Killed
        """),
    ),
    Kind(
        "cancelled",
        "The job was cancelled",
        "The job or step was cancelled (`CANCELLED AT …` with no time limit or node failure) "
        "and no task had failed before: someone ran `scancel`, or a dependency or preemption ended it.",
        "Nothing in the log says why: check who cancelled it (`sacct -j JOB -o State,Reason`).",
        example=_x("""
            [2026-10-02 13:40:00,201] [rank0] INFO iteration 300 | loss 3.310
            slurmstepd: error: *** JOB 1202 ON node7 CANCELLED AT 2026-10-02T13:40:05 ***
            srun: error: node7: tasks 0-3: Terminated
        """),
    ),
    Kind(
        "traceback-cut-off",
        "The failing rank's traceback was cut off",
        "The log ends (or the step was cancelled) in the middle of a traceback, before its "
        "exception line: with `--kill-on-bad-exit` the step is killed while the failing rank "
        "is still writing. The rank is still named; its error is not in the log.",
        "Rerun with `PYTHONUNBUFFERED=1`, or write each rank's output to its own file "
        "(`srun --output=%x-%j-%t.out`) so nothing is lost when the step is cancelled.",
        cause=False,
        example=_x("""
            0: [2026-03-14 02:10:45,553] [rank0] INFO iteration 20 | loss 6.021
            srun: error: gpu-d4: task 5: Exited with exit code 1
            srun: launch/slurm: _step_signal: Terminating StepId=7301.0
            5: Traceback (most recent call last):
            5:   File "/lustre/proj/train.py", line 98, in <module>
        """),
    ),
    Kind(
        "task-failed",
        "A task failed with no recognised cause",
        "A task exited with an error, but the log holds no message this command recognises. "
        "The first failure and its evidence are shown all the same.",
        "Look at the lines of the first failing task just before its exit.",
        cause=False,
        example=_x("""
            [2026-10-09 18:20:00,417] [rank0] INFO evaluation done
            srun: error: cn031: task 3: Exited with exit code 3
            srun: launch/slurm: _step_signal: Terminating StepId=5120.0
            slurmstepd: error: *** STEP 5120.0 ON cn030 CANCELLED AT 2026-10-09T18:20:02 ***
            srun: error: cn030: tasks 0-2: Terminated
        """),
    ),
)

BY_ID: Dict[str, Kind] = {kind.id: kind for kind in KINDS}

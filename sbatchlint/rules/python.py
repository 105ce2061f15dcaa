"""SBL500–SBL503: the Python script a step launches.

These rules receive a ``PythonModule`` (``sbatchlint/python/module.py``) instead of a batch script.
This module must stay importable without libcst, which only loads when a ``.py`` file is linted:
every analysis is imported inside ``check``.
"""
from __future__ import annotations


from ..diagnostics import Diagnostic, Fix, Severity
from ..registry import register
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator


class PythonRule(Rule):
    language = "python"


@register
class PythonSyntaxError(PythonRule):
    """Why a code of its own rather than SBL001 shell-syntax-error: SBL001 speaks of bash and of
    regions a shell parser skipped, while here the whole Python file goes unchecked for a different
    reason (a syntax error, or a file too large or too deeply nested to analyse safely), with
    CPython's message. Keeping it in the SBL5xx family also means ``--select SBL5`` / ``--ignore
    SBL5`` turn every finding about Python files on or off together."""

    code = "SBL500"
    name = "python-syntax-error"
    severity = Severity.ERROR
    summary = "A launched Python file could not be analysed: a syntax error, or too large or deeply nested."
    what = """
        Reports, once per file, a Python file that the SBL5xx rules could not read: the first syntax
        error with CPython's own message and position, or a file too large (over 1 MiB) or too deeply
        nested to parse safely. None of the other Python rules looked at such a file, so their
        silence says nothing about it.
    """
    why = """
        A syntax error in the entry point surfaces only when the job starts: after the queue wait,
        with every node allocated, each task dies at import. When the file was launched through
        torchrun the real message hides among one traceback per rank.
    """
    fix_safety = "There is no automatic fix: only the author knows what the broken line meant."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                import torch.distributed as dist


                def main():
                    dist.init_process_group(backend="nccl"
                    print("process group ready")
                """
            ),
            contains="never closed",
            title="an unclosed call",
        ),
        Good(
            clean(
                """
                import torch.distributed as dist


                def main():
                    dist.init_process_group(backend="nccl")
                    print("process group ready")
                """
            )
        ),
    ))

    def check(self, module) -> Iterator[Diagnostic]:
        problem = module.problem
        if problem is None:
            return
        yield self.report(module, module.problem_span(), f"{problem.message}; the file was not checked",
                          label="not analysed")


@register
class TorchrunOnlyLaunchGuard(PythonRule):
    code = "SBL501"
    name = "torchrun-only-launch-guard"
    severity = Severity.ERROR
    summary = "The script exits unless torchrun's WORLD_SIZE is set, so an srun-native launch is refused."
    what = """
        Finds guards that end the program (`sys.exit`, `raise`, `exit()`, `parser.error`, `assert`)
        unless `WORLD_SIZE` (or `RANK`, `LOCAL_RANK`) is set, without also accepting the variable
        srun sets for the same purpose (`SLURM_NTASKS`, `SLURM_PROCID`, `SLURM_LOCALID`). The
        condition is evaluated, not matched: `"WORLD_SIZE" not in os.environ`,
        `os.environ.get("WORLD_SIZE") is None`, `not os.getenv("WORLD_SIZE")`, `from os import
        environ`, `import os as _os`, defaults, and a name assigned from such a read all count.
    """
    why = """
        Only torchrun sets `WORLD_SIZE`. Launched srun-natively (one task per GPU, as Megatron-Bridge
        recommends) the script stops at once with its "must be launched with torchrun" message on
        every task, although the task knows its rank and world size from srun's variables.
    """
    fix_safety = """
        Safe: each test of a torchrun variable is paired with the same test of its Slurm counterpart
        (`and` where the test means "missing", `or` where it means "set"), so the guard still stops
        a launch that has neither and lets a torchrun launch through exactly as before. The code
        after the guard must then read the Slurm variable too (Megatron-Bridge does).
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                import os
                import sys

                import torch.distributed as dist

                if "WORLD_SIZE" not in os.environ:
                    sys.exit("must be launched with torchrun")

                dist.init_process_group(backend="nccl")
                """
            ),
            fixed=clean(
                """
                import os
                import sys

                import torch.distributed as dist

                if "WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not in os.environ:
                    sys.exit("must be launched with torchrun")

                dist.init_process_group(backend="nccl")
                """
            ),
            contains="WORLD_SIZE",
        ),
        Bad(
            clean(
                """
                from os import environ


                def main() -> None:
                    if environ.get("WORLD_SIZE") is None:  # torchrun sets it
                        raise SystemExit("launch this script with torchrun")
                """
            ),
            fixed=clean(
                """
                from os import environ


                def main() -> None:
                    if environ.get("WORLD_SIZE") is None and environ.get("SLURM_NTASKS") is None:  # torchrun sets it
                        raise SystemExit("launch this script with torchrun")
                """
            ),
            title="an imported environ, a comment kept",
        ),
        Bad(
            clean(
                """
                import os as _os

                assert "WORLD_SIZE" in _os.environ, "use torchrun"
                """
            ),
            fixed=clean(
                """
                import os as _os

                assert "WORLD_SIZE" in _os.environ or "SLURM_NTASKS" in _os.environ, "use torchrun"
                """
            ),
            title="an assert",
        ),
        Good(
            clean(
                """
                import os
                import sys

                if "WORLD_SIZE" not in os.environ and "SLURM_NTASKS" not in os.environ:
                    sys.exit("launch with torchrun or srun")
                """
            )
        ),
        Good(
            clean(
                """
                import os

                world_size = int(os.environ.get("WORLD_SIZE", "1"))
                if world_size == 1:
                    print("running on a single process")
                """
            ),
            title="a fallback, not an exit",
        ),
    ))

    def check(self, module) -> Iterator[Diagnostic]:
        if module.tree is None:
            return
        from ..python.launch_guard import find_guards
        from ..python.rewrite import replace

        for guard in find_guards(module):
            variables = " / ".join(guard.variables)
            counterparts = " / ".join(guard.counterparts) or "the Slurm task variables"
            verb = "is" if len(guard.variables) == 1 else "are"
            fix = None
            if guard.fixed_test is not None:
                edits = module.edits(replace(module.tree, {id(guard.test): guard.fixed_test}))
                if edits:
                    fix = Fix.safe(f"also accept {counterparts}", *edits)
            yield self.report(
                module,
                module.span(guard.test),
                f"the script exits when torchrun's {variables} {verb} missing",
                fix,
                label="torchrun-only",
                help=f"also accept {counterparts}",
                notes=(f"launched srun-natively (srun sets {counterparts} instead) it refuses to run",),
            )


@register
class BarrierTimeoutTooShort(PythonRule):
    code = "SBL502"
    name = "barrier-timeout-too-short"
    severity = Severity.WARNING
    summary = "init_process_group keeps the 10-minute timeout while rank 0 does long work before a barrier."
    what = """
        Reports `init_process_group` called without a `timeout` (as `dist.init_process_group`,
        `torch.distributed.init_process_group` or an imported name, with or without other keyword
        arguments) in a file where rank 0 alone does long work (saving or exporting weights,
        `save_artifacts`, `save_pretrained`, `snapshot_download`, `from_pretrained`, `torch.save`…)
        while the other ranks wait in a barrier or another collective. Rank-0 blocks are recognised as
        `if rank == 0:`, `if dist.get_rank() == 0:`, `if is_rank_0():`, the code after `if rank != 0:
        return`, and through calls of the file's own functions.
    """
    why = """
        The process group's default timeout is 10 minutes for NCCL. Exporting a large model or
        downloading it on rank 0 easily takes longer; meanwhile every other rank sits in the barrier,
        hits the timeout and aborts (`Watchdog caught collective operation timeout`, or an
        `ncclUniqueId` timeout on the ranks of other nodes), which kills the job just as its work
        was being saved.
    """
    fix_safety = """
        Unsafe: it adds `timeout=timedelta(minutes=60)` (and `from datetime import timedelta` unless
        `timedelta` or the `datetime` module is already imported). A longer timeout also makes a
        genuinely hung job wait longer before it fails, and 60 minutes may still be too short for the
        largest exports; choose the value knowingly.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                import torch.distributed as dist
                from transformers import AutoModelForCausalLM


                def main():
                    dist.init_process_group(backend="nccl")
                    model = AutoModelForCausalLM.from_pretrained("/checkpoints/final")
                    if dist.get_rank() == 0:
                        model.save_pretrained("/export/hf")  # tens of GB on a shared filesystem
                    dist.barrier()
                    dist.destroy_process_group()


                if __name__ == "__main__":
                    main()
                """
            ),
            fixed=clean(
                """
                import torch.distributed as dist
                from transformers import AutoModelForCausalLM
                from datetime import timedelta


                def main():
                    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=60))
                    model = AutoModelForCausalLM.from_pretrained("/checkpoints/final")
                    if dist.get_rank() == 0:
                        model.save_pretrained("/export/hf")  # tens of GB on a shared filesystem
                    dist.barrier()
                    dist.destroy_process_group()


                if __name__ == "__main__":
                    main()
                """
            ),
            unsafe=True,
            contains="save_pretrained",
        ),
        Bad(
            clean(
                """
                import datetime

                import torch
                from megatron.bridge import save_artifacts


                def is_rank_0():
                    return torch.distributed.get_rank() == 0


                torch.distributed.init_process_group(
                    "nccl",
                    device_id=torch.device("cuda", 0),
                )
                if is_rank_0():
                    save_artifacts("/results/export")
                torch.distributed.barrier()
                """
            ),
            fixed=clean(
                """
                import datetime

                import torch
                from megatron.bridge import save_artifacts


                def is_rank_0():
                    return torch.distributed.get_rank() == 0


                torch.distributed.init_process_group(
                    "nccl",
                    device_id=torch.device("cuda", 0),
                    timeout=datetime.timedelta(minutes=60),
                )
                if is_rank_0():
                    save_artifacts("/results/export")
                torch.distributed.barrier()
                """
            ),
            unsafe=True,
            title="an existing import datetime, one argument per line",
        ),
        Good(
            clean(
                """
                from datetime import timedelta

                import torch.distributed as dist

                dist.init_process_group(backend="nccl", timeout=timedelta(minutes=60))
                if dist.get_rank() == 0:
                    dist.barrier()
                """
            )
        ),
        Good(
            clean(
                """
                import torch
                import torch.distributed as dist

                dist.init_process_group(backend="nccl")
                state = {"step": 100}
                dist.barrier()
                if dist.get_rank() == 0:
                    torch.save(state, "/results/final.pt")
                dist.destroy_process_group()
                """
            ),
            title="rank 0 saves after the last barrier",
        ),
    ))

    def check(self, module) -> Iterator[Diagnostic]:
        if module.tree is None:
            return
        from ..python.process_group import find_hazard, init_calls_without_timeout, timeout_fix

        calls = init_calls_without_timeout(module)
        if not calls:
            return
        hazard = find_hazard(module)
        if hazard is None:
            return
        work = module.code(hazard.work.call.func)
        wait = module.code(hazard.wait.call.func)
        waiters = "the other ranks wait" if hazard.wait.who != "all" else "every other rank waits"
        for call in calls:
            fix = None
            tree = timeout_fix(module, call)
            if tree is not None:
                edits = module.edits(tree)
                if edits:
                    fix = Fix.unsafe("add timeout=timedelta(minutes=60)", *edits)
            message = f"rank 0 runs `{work}` (line {module.line(hazard.work.call)}) while {waiters} in `{wait}`"
            yield self.report(
                module,
                module.span(call.func),
                message if len(message) <= 100 else message[: message.rindex(" in `")],  # the wait is in a note
                fix,
                label="no timeout",
                help="pass timeout=timedelta(minutes=60) (or longer)",
                notes=(
                    "the process group keeps its default timeout (10 minutes with NCCL)",
                    f"when `{work}` takes longer, the ranks waiting in `{wait}` (line {module.line(hazard.wait.call)}) "
                    "time out and the job dies",
                ),
            )


@register
class NarrowArtifactExcept(PythonRule):
    code = "SBL503"
    name = "narrow-artifact-except"
    severity = Severity.WARNING
    summary = "`except OSError:` around artifact or remote-code loading lets an ImportError kill rank 0."
    what = """
        Finds a `try` whose body calls `save_artifacts` or loads with `trust_remote_code=True`
        (directly or through the file's own functions) and whose handlers catch `OSError` (or a
        subclass, or `IOError`/`EnvironmentError`) but nothing that catches `ImportError`.
    """
    why = """
        Remote model code and artifact export import modules at run time; a package missing from the
        container raises `ImportError`, not `OSError`. The handler does not catch it, rank 0 dies,
        and every other rank waits at the next barrier until the NCCL timeout: the job hangs instead
        of degrading the way the handler intended.
    """
    fix_safety = """
        Safe: `ImportError` is added to the exceptions the handler already treats as a recoverable
        failure of the same call, so the handler's own recovery runs for it too; nothing else changes.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                from transformers import AutoModelForCausalLM


                def load(path):
                    try:
                        return AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True)
                    except OSError:
                        print(f"cannot load {path}; training from scratch")
                        return None
                """
            ),
            fixed=clean(
                """
                from transformers import AutoModelForCausalLM


                def load(path):
                    try:
                        return AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True)
                    except (OSError, ImportError):
                        print(f"cannot load {path}; training from scratch")
                        return None
                """
            ),
            contains="trust_remote_code",
        ),
        Bad(
            clean(
                """
                import logging

                from megatron.bridge import save_artifacts

                try:
                    save_artifacts("/results/export")
                except (OSError, ValueError) as err:
                    logging.warning("export skipped: %s", err)
                """
            ),
            fixed=clean(
                """
                import logging

                from megatron.bridge import save_artifacts

                try:
                    save_artifacts("/results/export")
                except (OSError, ValueError, ImportError) as err:
                    logging.warning("export skipped: %s", err)
                """
            ),
            title="a tuple of exceptions",
        ),
        Good(
            clean(
                """
                from transformers import AutoModelForCausalLM

                try:
                    model = AutoModelForCausalLM.from_pretrained("/models/base", trust_remote_code=True)
                except (OSError, ImportError):
                    model = None
                """
            )
        ),
        Good(
            clean(
                """
                import json

                try:
                    with open("/results/config.json") as handle:
                        config = json.load(handle)
                except OSError:
                    config = {}
                """
            ),
            title="an OSError handler around plain file reading",
        ),
    ))

    def check(self, module) -> Iterator[Diagnostic]:
        if module.tree is None:
            return
        from ..python.artifacts import find_narrow_excepts, widened
        from ..python.rewrite import replace

        for found in find_narrow_excepts(module):
            handler = found.handler
            assert handler.type is not None
            edits = module.edits(replace(module.tree, {id(handler): widened(handler)}))
            yield self.report(
                module,
                module.span(handler.type),
                f"`except {found.caught}` around `{found.what}` (line {module.line(found.call)}) does not catch "
                "ImportError",
                Fix.safe("also catch ImportError", *edits) if edits else None,
                label="ImportError escapes",
                help="catch (OSError, ImportError)",
                notes=("an ImportError from remote model code escapes it: rank 0 dies and the other ranks hang at the "
                       "next barrier",),
            )

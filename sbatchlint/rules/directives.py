"""SBL005–SBL013: what sbatch makes of each ``#SBATCH`` option, its value and the file itself.

sbatch collects the words of every ``#SBATCH`` line of the header into one argument vector and
hands it to ``getopt_long``: an unknown option, a stray word, a missing argument or a value the
option's parser rejects stops the submission. Values are read literally: no variable is expanded,
an unquoted ``#`` starts a comment, and the log paths are opened by Slurm before the script runs.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from .. import options as option_table
from .. import shell
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model.header import MAGIC, Directive, tokenize
from ..registry import register
from ..source import Span
from .base import Bad, Good, Rule, clean

SBATCH = option_table.SBATCH
SRUN = option_table.SRUN

# A shell expansion sbatch leaves as it is: $X, ${X}, $(cmd), `cmd`.
EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@*#?$!-]|`")
# Options whose value is free text: a literal "$X" in them is odd but harmless.
FREE_TEXT = frozenset({"job-name", "comment"})
# Options Slurm or pyxis accumulate instead of replacing: repeating them is not a duplicate.
ACCUMULATING = frozenset({"mail-type", "verbose", "container-mounts", "container-env"})


def _text(script, span: Span) -> str:
    return script.source.text(span)


def _later_directive(script, directive: Directive) -> bool:
    directives = script.header.directives
    return directives.index(directive) + 1 < len(directives)


def _previous_on_line(script, directive: Directive) -> Optional[Directive]:
    same_line = script.header.lines.get(directive.line, [])
    index = same_line.index(directive) if directive in same_line else -1
    return same_line[index - 1] if index > 0 else None


def _attached(directive: Directive) -> bool:
    """A short option whose value is glued to the letter (``-N2``, ``-ntasks``)."""
    return (
        directive.dashes == "-"
        and directive.value is not None
        and directive.value_span is not None
        and directive.value_span.start == directive.option_span.end
    )


def one_dash_long(directive: Directive) -> Optional[str]:
    """The long option a one-dash word such as ``-ntasks-per-node=8`` was meant to be."""
    if not _attached(directive):
        return None
    assert directive.value is not None
    if directive.value.startswith("="):
        return None  # ``-N=2``: a short option with a stray '=' (SBL006)
    body = directive.option + directive.value
    name, equals, _ = body.partition("=")
    if len(name) < 3 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
        return None
    exact = option_table.lookup_exact(SBATCH, name)
    if exact is not None:
        return option_table.canonical(exact.long)
    if not equals:
        return None  # ``-Jtraining``, ``-pgpu``: a short option and its value, as intended
    spec = option_table.lookup(SBATCH, name)
    if spec is not None:
        return option_table.canonical(spec.long)
    return option_table.suggest(SBATCH, name)


def read_as_short(word: str) -> Tuple[str, bool]:
    """How getopt reads ``-abc…`` as one-letter options: (rendering, rejected)."""
    body = word[1:]
    parts: List[str] = []
    i = 0
    while i < len(body):
        letter = body[i]
        spec = option_table.lookup_exact(SBATCH, letter)
        if spec is None:
            parts.append(f"-{letter}")
            return " ".join(parts), True
        rest = body[i + 1 :]
        if spec.arg != "none" and rest:
            parts.append(f"-{letter} {rest}")
            if spec.value is not None:
                return " ".join(parts), option_table.validate(spec.value, rest, spec.long) is not None
            return " ".join(parts), False
        parts.append(f"-{letter}")
        i += 1
    return " ".join(parts), False


def _ambiguous(name: str) -> List[str]:
    return sorted({option_table.canonical(key) for key in SBATCH if key.startswith(name)})


@register
class UnknownDirectiveOption(Rule):
    code = "SBL005"
    name = "unknown-directive-option"
    severity = Severity.ERROR
    summary = "An `#SBATCH` option sbatch does not know, a long option with one dash, or a stray word."
    what = """
        Reads every `#SBATCH` word with sbatch's own option table (all releases from 22.05 to
        25.x, plus pyxis's `--container-*` options) and reports the ones getopt would not accept:
        a misspelt long option (with the closest real one), an abbreviation that fits several
        options, an `srun`-only option, an unknown one-letter option, a word that is no option at
        all, and a long option written with a single dash. Unique abbreviations such as
        `--ntasks-per-n=8` are accepted, as sbatch accepts them.
    """
    why = """
        sbatch refuses the whole script ("unrecognized option", "Invalid directive found in batch
        script"), so the job never reaches the queue. A single dash is worse: getopt reads
        `-ntasks-per-node=8` as `-n tasks-per-node=8`, the short option for `--ntasks` with a
        nonsense value, and `-partition=gpu` silently asks for a partition called
        `artition=gpu`.
    """
    fix_safety = """
        Unsafe: the fix replaces the option with its unique close match (or adds the missing
        dash). The result is an option sbatch applies, so the job requests something it did not
        request before; check that the suggestion is what you meant.
    """
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntask-per-node=8
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                srun hostname
                """
            ),
            unsafe=True,
            contains="did you mean `--ntasks-per-node`",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2 -ntasks-per-node=8
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2 --ntasks-per-node=8
                srun hostname
                """
            ),
            unsafe=True,
            contains="`-n tasks-per-node=8`",
            title="a long option with one dash",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --kill-on-bad-exit=1
                srun hostname
                """
            ),
            contains="srun option",
            title="an srun-only option",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nice 10
                srun hostname
                """
            ),
            contains="Invalid directive found in batch script: 10",
            title="an optional value written as a separate word",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCHED jobs are described below
                srun hostname
                """
            ),
            contains="Invalid directive found in batch script: ED",
            title="a comment that begins with `#SBATCH`",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH -N2 -n 16 --ntasks-per-n=8 --job-name=train
                #SBATCH --container-image=nvcr.io\\#nvidia/pytorch:25.01-py3
                srun hostname
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        previous_flagged: Optional[Directive] = None
        comment_line = None  # `#SBATCHED …`: one finding for the line, not one per word
        for directive in script.header.directives:
            if directive.line == comment_line:
                continue
            if directive.dashes == "" and directive.span.start == directive.line_span.start + len(MAGIC):
                comment_line = directive.line
            found = self._check(script, directive, previous_flagged)
            flagged = False
            for diagnostic in found:
                flagged = True
                yield diagnostic
            previous_flagged = directive if flagged else None

    def _check(self, script, directive: Directive, previous_flagged: Optional[Directive]) -> Iterator[Diagnostic]:
        text = _text(script, directive.span)
        if directive.dashes == "":
            yield from self._stray(script, directive, previous_flagged)
            return
        if directive.dashes == "-":
            meant = one_dash_long(directive)
            if meant is not None:
                yield self._one_dash(script, directive, meant)
                return
            if directive.spec is None:
                yield self.report(
                    script,
                    directive.option_span,
                    f"`-{directive.option}` is not an sbatch option: sbatch refuses the script "
                    f"(invalid option -- '{directive.option}')",
                    label="unknown option",
                )
                return
            if directive.spec.arg == "none" and _attached(directive):
                word = "-" + directive.option + (directive.value or "")
                reading, rejected = read_as_short(word)
                if rejected:
                    yield self.report(
                        script,
                        directive.span,
                        f"sbatch reads `{word}` as the one-letter options `{reading}` and refuses the script",
                        label="not an option",
                    )
            return
        if directive.spec is not None:
            return
        name = directive.option
        written = "--" + name
        srun_only = option_table.lookup_exact(SRUN, name)
        if srun_only is not None:
            yield self.report(
                script,
                directive.option_span,
                f"`{written}` is an srun option, not an sbatch one: sbatch refuses the script "
                f"(unrecognized option '{written}')",
                label="srun option",
                help=f"pass `--{srun_only.long}` to the `srun` line(s) that need it",
            )
            return
        candidates = _ambiguous(name)
        if len(candidates) > 1:
            listed = ", ".join(f"`--{c}`" for c in candidates)
            yield self.report(
                script,
                directive.option_span,
                f"`{written}` is an ambiguous abbreviation ({listed}): sbatch refuses the script "
                f"(option '{written}' is ambiguous)",
                label="ambiguous",
            )
            return
        suggestion = option_table.suggest(SBATCH, name)
        message = f"`{written}` is not an sbatch option: sbatch refuses the script (unrecognized option '{written}')"
        fix = None
        if suggestion is not None:
            message += f"; did you mean `--{suggestion}`?"
            fix = Fix.unsafe(f"replace `{written}` with `--{suggestion}`", Edit(directive.option_span, "--" + suggestion))
        yield self.report(script, directive.option_span, message, fix, label="unknown option")

    def _stray(self, script, directive: Directive, previous_flagged: Optional[Directive]) -> Iterator[Diagnostic]:
        before = _previous_on_line(script, directive)
        if before is not None and before is previous_flagged:
            return  # most likely the value of the option just reported
        word = directive.option
        message = (
            f"`{word}` is not an option: sbatch stops with \"Invalid directive found in batch script: {word}\""
        )
        help_ = None
        if directive.span.start == directive.line_span.start + len(MAGIC):
            help_ = (
                "sbatch reads every line that begins with `#SBATCH` as directives, even with no blank"
                " after it; to keep this line a comment, start it with `##`"
            )
        elif before is not None and before.spec is not None and before.value is None and before.dashes:
            if before.spec.arg == "optional":
                help_ = f"an optional value must be attached: `--{before.spec.long}={word}`"
            elif before.spec.arg == "none":
                help_ = f"`{before.written}` takes no value"
        elif before is not None and before.spec is not None and before.value is not None:
            help_ = "quote a value that contains blanks: sbatch splits the line at every blank"
        yield self.report(script, directive.span, message, label="not an option", help=help_)

    def _one_dash(self, script, directive: Directive, meant: str) -> Diagnostic:
        word = "-" + directive.option + (directive.value or "")
        reading, rejected = read_as_short(word)
        first = directive.spec
        if first is None:
            consequence = f"the unknown short option `-{directive.option}`, and refuses the script"
        elif first.arg != "none":
            consequence = f"`{reading}` (--{first.long} with the value \"{directive.value}\")"
            consequence += ", which it rejects" if rejected else ", which is not what was meant"
        else:
            consequence = f"the one-letter options `{reading}`"
            consequence += ", and refuses the script" if rejected else ", which is not what was meant"
        message = f"`{word}` has one dash: sbatch reads it as {consequence}; write `--{meant}`"
        name = (directive.option + (directive.value or "")).partition("=")[0]
        raw = script.data[directive.span.start : directive.span.end]
        fix = None
        written = ("-" + name).encode(script.source.encoding, errors="replace")
        if raw.startswith(written):
            target = Span(directive.span.start, directive.span.start + len(written))
            fix = Fix.unsafe(f"write `--{meant}`", Edit(target, "--" + meant))
        return self.report(script, directive.span, message, fix, label="read as short options")


@register
class InvalidDirectiveValue(Rule):
    code = "SBL006"
    name = "invalid-directive-value"
    severity = Severity.ERROR
    summary = "An `#SBATCH` value sbatch rejects (time, node/task/GPU counts, memory, array, exclusive)."
    what = """
        Checks the values of the options sbatch parses itself: `--time`, `--nodes` (N, MIN-MAX or
        a size list), `--ntasks*`, `--cpus-per-task`, `--gpus*` and `--gres`, `--mem*`,
        `--array` and the `--exclusive` forms. It also reports a required value that is missing,
        a value given to an option that takes none (`--hold=1`), a short option written with `=`
        (`-N=2` gives `--nodes` the value `=2`), a quote that is never closed, and variables:
        sbatch never expands `$VAR`, `${VAR}` or `$(cmd)` in `#SBATCH` lines.
    """
    why = """
        sbatch refuses a malformed value at submission ("Invalid --time specification", "\\"two\\"
        is not a valid node count"), and a variable in a directive is passed on literally:
        `--nodes=$NNODES` is rejected, and `--output=$HOME/run.log` points into a directory
        literally called `$HOME`, which does not exist, so the job fails at launch.
    """
    fix_safety = """
        There is no automatic fix: only the author knows which value was meant. For variables,
        set the option on the command line instead (`sbatch --nodes="$NNODES" job.sh`) or use
        Slurm's own patterns (`%j`, `%x`, `%u`) in log paths.
    """
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --time=1:30:00:00
                srun hostname
                """
            ),
            contains="--time",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=$NNODES
                srun hostname
                """
            ),
            contains="does not expand variables",
            title="a variable in a directive",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH -N=2
                srun hostname
                """
            ),
            contains='"=2"',
            title="a short option with '='",
        ),
        Bad("#!/bin/bash\n#SBATCH --ntasks-per-node=0 --mem=64Gb --exclusive=yes\nsrun hostname\n", count=2),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH -N 2-4 --ntasks-per-node=8 --gpus-per-node=h100:8
                #SBATCH --time=2-00:00:00 --mem=0 --exclusive
                #SBATCH --array=0-15%4 --job-name=$RUN
                srun hostname
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        for directive in script.header.directives:
            if directive.unclosed_quote is not None:
                at = directive.unclosed_quote
                quote = chr(script.data[at])
                yield self.report(
                    script,
                    Span(at, directive.line_span.end),
                    f"the {quote} opened here is never closed: sbatch stops with \"Unmatched `{quote}`\"",
                    label="unmatched quote",
                )
                continue
            spec = directive.spec
            if spec is None or one_dash_long(directive) is not None:
                continue
            label = f"--{spec.long}"
            written = _text(script, directive.span)
            value = directive.value
            if value is None:
                if spec.arg == "required":
                    if _later_directive(script, directive):
                        consequence = "sbatch takes the next word of the header as its value"
                    else:
                        consequence = f"sbatch stops with \"option '{label}' requires an argument\""
                    yield self.report(
                        script,
                        directive.span,
                        f"`{written}` has no value on its line: {consequence}",
                        label="missing value",
                    )
                continue
            assert directive.value_span is not None
            if spec.arg == "none":
                if directive.dashes == "--":
                    yield self.report(
                        script,
                        directive.span,
                        f"`{label}` takes no value: sbatch refuses `{written}` "
                        f"(option '{label}' doesn't allow an argument)",
                        label="takes no value",
                    )
                continue  # short flags glued together (``-HQ``) are SBL005's business
            if directive.dashes == "-" and _attached(directive) and value.startswith("="):
                message = (
                    f"a short option takes its value without `=`: sbatch gives {label} the value \"{value}\""
                )
                if spec.value is not None and option_table.validate(spec.value, value, spec.long):
                    message += " and rejects it"
                message += f"; write `-{directive.option} {value[1:]}` or `{label}={value[1:]}`"
                yield self.report(script, directive.value_span, message, label="value starts with '='")
                continue
            if EXPANSION.search(value):
                if spec.value is not None:
                    yield self.report(
                        script,
                        directive.value_span,
                        f"sbatch does not expand variables in `#SBATCH` lines: {label} gets the literal "
                        f"value \"{value}\" and sbatch rejects it",
                        label="not expanded",
                        help=f"pass it at submission instead: `sbatch {label}=\"{value}\" job.sh`",
                    )
                elif spec.long not in FREE_TEXT:
                    help_ = None
                    if spec.long in ("output", "error", "input"):
                        help_ = "use Slurm's patterns instead (%j job id, %x job name, %u user) or a literal path"
                    yield self.report(
                        script,
                        directive.value_span,
                        f"sbatch does not expand variables in `#SBATCH` lines: {label} is used literally "
                        f"as \"{value}\"",
                        label="not expanded",
                        help=help_,
                    )
                continue
            if spec.value is None:
                continue
            complaint = option_table.validate(spec.value, value, spec.long)
            if complaint is not None:
                yield self.report(
                    script, directive.value_span, f"{complaint}; sbatch refuses the script", label="rejected by sbatch"
                )


# -- SBL007 -------------------------------------------------------------------------------------
IDENTITY = frozenset({"container-image", "container-name", "container-save"})
PAIRS = {
    "container-mount-home": "mount-home",
    "no-container-mount-home": "mount-home",
    "container-remap-root": "remap-root",
    "no-container-remap-root": "remap-root",
    "container-entrypoint": "entrypoint",
    "no-container-entrypoint": "entrypoint",
    "container-writable": "writable",
    "container-readonly": "writable",
}
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_@%+=:,./#-]*\Z")


def containerized(step) -> bool:
    return step.has("container-image", "container-name")


def step_has(step, directive: Directive) -> bool:
    """Whether a step already sets (or cannot be told apart from setting) the header's option."""
    name = directive.name or ""
    if name in ("container-mounts", "container-env"):
        wanted = set(filter(None, (directive.value or "").split(",")))
        present: set = set()
        for option in step.options:
            if option.name != name:
                continue
            if not option.value_known or option.value is None:
                return True
            present.update(option.value.split(","))
        return wanted <= present
    family = PAIRS.get(name)
    if family is not None:
        return any(step.has(other) for other, group in PAIRS.items() if group == family)
    return step.has(name)


def _missing_entries(step, directive: Directive) -> Optional[str]:
    """For an accumulating option, the header's entries the step does not list yet."""
    present: set = set()
    for option in step.options:
        if option.name == directive.name and option.value is not None:
            present.update(option.value.split(","))
    wanted = [entry for entry in (directive.value or "").split(",") if entry]
    return ",".join(entry for entry in wanted if entry not in present)


def _render_option(directive: Directive, quote: str, value: Optional[str]) -> Optional[str]:
    assert directive.name is not None
    flag = "--" + directive.name
    if value is None:
        return flag
    if EXPANSION.search(value) or "$" in value:
        return None  # sbatch kept it literal; the shell would expand it
    if _PLAIN_VALUE.match(value):
        return f"{flag}={value}"
    if quote == "":
        return f"{flag}={shlex.quote(value)}"
    return None


def _header_removal(script, directives: Sequence[Directive]) -> List[Edit]:
    """Edits that delete directives from the header: whole lines when nothing else is on them."""
    source = script.source
    edits: List[Edit] = []
    by_line: Dict[int, List[Directive]] = {}
    for directive in directives:
        by_line.setdefault(directive.line, []).append(directive)
    for line, removed in by_line.items():
        on_line = script.header.lines.get(line, [])
        if len(removed) == len(on_line):
            edits.append(Edit.delete(source.line_span(line, with_newline=True)))
            continue
        for directive in removed:
            start = directive.span.start
            while start > directive.line_span.start and script.data[start - 1 : start] in (b" ", b"\t"):
                start -= 1
            edits.append(Edit.delete(Span(start, directive.span.end)))
    return edits


@register
class ContainerOptionInHeader(Rule):
    code = "SBL007"
    name = "container-option-in-header"
    severity = Severity.WARNING
    summary = "A pyxis container option in `#SBATCH` while the steps bring their own `--container-image`."
    what = """
        Finds pyxis options (`--container-mounts`, `--container-workdir`, `--container-env`,
        `--no-container-mount-home`, …) in the `#SBATCH` header of a job whose `srun` steps are
        containerized with their own `--container-image` or `--container-name`, when at least one
        of those steps does not set the option itself. Jobs without a containerized step are not
        reported, nor are the options that choose the batch step's own container
        (`--container-image`, `--container-name`, `--container-save`).
    """
    why = """
        Pyxis applies header options to the batch step only; an `srun --container-image=…` step
        is configured by its own flags alone. The mounts, working directory or environment the
        author put in the header never reach the training processes, which then cannot see the
        repository or the data. On clusters where pyxis's sbatch support is off, sbatch rejects
        the options outright.
    """
    fix_safety = """
        Safe: the option is added to every containerized step that lacks it (inside the string
        when the step is built in a variable such as `SRUN_CMD="srun --container-image=…"`) and
        removed from the header. When the header also selects a container for the batch step
        (`--container-image`), the header line is kept, so the batch step is unchanged. No fix is
        offered when a value would need quoting inside a string, holds a `$`, or was truncated by
        a `#`.
    """
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --container-mounts=/lustre/proj:/lustre/proj
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-mounts=/lustre/proj:/lustre/proj --container-image=nvcr.io/nvidia/pytorch:25.01-py3 python train.py
                """
            ),
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2 --no-container-mount-home
                IMAGE=nvcr.io/nvidia/pytorch:25.01-py3
                SRUN_CMD="srun --container-image=$IMAGE --container-mounts=/lustre:/lustre"
                $SRUN_CMD python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                IMAGE=nvcr.io/nvidia/pytorch:25.01-py3
                SRUN_CMD="srun --no-container-mount-home --container-image=$IMAGE --container-mounts=/lustre:/lustre"
                $SRUN_CMD python train.py
                """
            ),
            title="a step built in a variable",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --container-mounts=/lustre:/lustre
                srun hostname
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/lustre:/lustre python train.py
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        header = script.header
        steps = [step for step in script.steps if containerized(step)]
        if not steps:
            return
        moved = [
            d for d in header.effective
            if d.spec is not None and d.spec.pyxis and d.name not in IDENTITY and any(not step_has(s, d) for s in steps)
        ]
        if not moved:
            return
        keeps_header = any(d.name in ("container-image", "container-name") for d in header.effective)
        fix = self._fix(script, moved, steps, keeps_header)
        for directive in moved:
            missing = [s for s in steps if not step_has(s, directive)]
            lines = ", ".join(str(script.source.line_of(s.span.start)) for s in missing)
            plural = "s" if len(missing) > 1 else ""
            yield self.report(
                script,
                directive.span,
                f"`--{directive.name}` in `#SBATCH` does not reach the containerized step{plural} "
                f"(line{plural} {lines}): pyxis applies header options to the batch step only, "
                "and sbatch without pyxis's sbatch support rejects them",
                fix,
                label="not seen by the steps",
                help=f"put `--{directive.name}` on the `srun` line{plural} instead",
            )

    def _fix(self, script, moved: Sequence[Directive], steps, keeps_header: bool) -> Optional[Fix]:
        insertions: Dict[int, List[str]] = {}
        for directive in moved:
            if directive.truncated_at is not None:
                return None
            for step in steps:
                if step_has(step, directive):
                    continue
                offset, quote = step.insertion_after_srun()
                if offset is None:
                    return None
                value = directive.value
                if directive.name in ("container-mounts", "container-env"):
                    value = _missing_entries(step, directive)
                rendered = _render_option(directive, quote, value)
                if rendered is None:
                    return None
                texts = insertions.setdefault(offset, [])
                if rendered not in texts:
                    texts.append(rendered)
        edits = [Edit.insert(offset, "".join(" " + t for t in texts)) for offset, texts in insertions.items()]
        if not keeps_header:
            edits.extend(_header_removal(script, moved))
        names = ", ".join(f"`--{d.name}`" for d in moved)
        where = "add" if keeps_header else "move"
        return Fix.safe(f"{where} {names} to the containerized steps", *edits)


# -- SBL008 -------------------------------------------------------------------------------------
def _same_value(spec, a: Optional[str], b: Optional[str]) -> bool:
    if a == b:
        return True
    if a is None or b is None:
        return False
    if spec is not None and spec.value == "count" and a.isdigit() and b.isdigit():
        return int(a) == int(b)
    return a.strip() == b.strip()


@register
class DuplicateDirective(Rule):
    code = "SBL008"
    name = "duplicate-directive"
    severity = Severity.WARNING
    summary = "The same `#SBATCH` option set twice with different values: only the last one counts."
    what = """
        Groups the header's options by the option they set, whatever the spelling (`-N 2`,
        `--nodes=4`, an abbreviation, a deprecated alias), and reports each one a later line
        overrides with a different value. Options Slurm or pyxis accumulate (`--mail-type`,
        `--container-mounts`, `--container-env`) are not duplicates.
    """
    why = """
        sbatch applies the options in order and the last value wins, silently: a header edited
        over time easily says `--nodes=2` near the top and `-N 4` further down, and the job asks
        for whatever came last. Pyxis options such as `--container-workdir` are worse: given
        twice with different values, pyxis refuses the job.
    """
    fix_safety = "There is no automatic fix: only the author knows which of the two values is meant."
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH -N 2
                #SBATCH --time=01:00:00
                #SBATCH --nodes=4
                srun hostname
                """
            ),
            count=1,
            contains="line 4",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2 --time=01:00:00
                #SBATCH -N 2
                #SBATCH --mail-type=BEGIN --mail-type=END
                srun hostname
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        groups: Dict[str, List[Directive]] = {}
        for directive in script.header.effective:
            if directive.name is None:
                continue
            name = option_table.canonical(directive.name)
            if name in ACCUMULATING or (directive.spec is not None and directive.spec.arg == "none"):
                continue  # accumulated, or a flag: setting it twice changes nothing
            groups.setdefault(name, []).append(directive)
        for name, directives in groups.items():
            winner = directives[-1]
            winner_text = _text(script, winner.span)
            for directive in directives[:-1]:
                if _same_value(directive.spec, directive.value, winner.value):
                    continue
                written = _text(script, directive.span)
                if directive.spec is not None and directive.spec.pyxis:
                    message = (
                        f"`--{name}` is given twice with different values (`{written}` here, `{winner_text}` "
                        f"on line {winner.line}): pyxis refuses the job (\"--{name} specified multiple times\")"
                    )
                else:
                    message = (
                        f"`{written}` is overridden by `{winner_text}` on line {winner.line}: sbatch uses the "
                        "last value, so this one has no effect"
                    )
                yield self.report(script, directive.span, message, label="overridden", help="keep only one of them")


# -- SBL009 -------------------------------------------------------------------------------------
_ANGLE_ANY = re.compile(r"<[^<>\s][^<>\n]*>")
_ANGLE_SHELL = re.compile(r"<([A-Za-z][A-Za-z0-9_./:@-]*)>")
_WORD_PLACEHOLDERS = re.compile(
    r"(?i)(?<![A-Za-z0-9$_{])(?:"
    r"your[_-][a-z0-9][a-z0-9_-]*"
    r"|change[_-]?me"
    r"|(?:replace|fill)[_-]?(?:me|in)"
    r"|[a-z0-9]+(?:_[a-z0-9]+)*_here"
    r")(?![A-Za-z0-9])"
)
# What every placeholder above starts with or contains, searched in the whole file first: only
# the nodes around a match are read (a superset of both patterns, so no placeholder is missed).
# Searched in the lowered bytes (ASCII lowering keeps every offset), which is faster than (?i);
# the word pattern only when one of its literals occurs at all (a substring test is far cheaper).
_ANGLE_CANDIDATE = re.compile(rb"<[a-z_][a-z0-9_./:@ -]*>")
_WORD_CANDIDATE = re.compile(rb"your[_-]|change[_-]?me|(?:replace|fill)[_-]?(?:me|in)|_here")
_WORD_LITERALS = (b"your", b"change", b"replace", b"fill", b"_here")


def _has_word_candidate(lowered: bytes) -> bool:
    return any(literal in lowered for literal in _WORD_LITERALS) and _WORD_CANDIDATE.search(lowered) is not None


def _candidate_ranges(lowered: bytes) -> List[Tuple[int, int]]:
    ranges = [m.span() for m in _ANGLE_CANDIDATE.finditer(lowered)]
    if any(literal in lowered for literal in _WORD_LITERALS):
        ranges.extend(m.span() for m in _WORD_CANDIDATE.finditer(lowered))
    return ranges
_SHELL_KINDS = frozenset({"<", "word", "string_content", "raw_string"})
_PLACEHOLDER_WORDS = frozenset(
    """your path dir directory folder account user username project partition email mail workspace
    shared fs filesystem cluster qos reservation nodes nnodes name""".split()
)
# Programs whose arguments mention placeholders on purpose: messages, tests, template fillers.
_QUOTING_PROGRAMS = frozenset(
    """echo printf [ test grep egrep fgrep rg sed awk gawk perl envsubst logger : read die fail error
    warn log info usage fatal abort""".split()
)


def _angle_is_placeholder(content: str) -> bool:
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", content):
        return True
    parts = [p.lower() for p in re.split(r"[_\-/ .:@]+", content) if p]
    return any(p in _PLACEHOLDER_WORDS or "your" in p for p in parts)


def _placeholders_in(text: str, header: bool) -> Iterator[Tuple[int, int]]:
    """(start, end) character ranges of placeholders in ``text``."""
    taken: List[Tuple[int, int]] = []
    if header:
        for match in _ANGLE_ANY.finditer(text):
            taken.append(match.span())
    else:
        for match in _ANGLE_SHELL.finditer(text):
            if _angle_is_placeholder(match.group(1)):
                taken.append(match.span())
    for match in _WORD_PLACEHOLDERS.finditer(text):
        start, end = match.span()
        if not any(a <= start < b for a, b in taken):
            taken.append((start, end))
    return iter(sorted(taken))


def _char_span(base: int, text: str, start: int, end: int) -> Span:
    before = len(text[:start].encode("utf-8"))
    length = len(text[start:end].encode("utf-8"))
    return Span(base + before, base + before + length)


def _mentioned_on_purpose(node, data: bytes) -> bool:
    """Inside a comment, a heredoc, a test, a case pattern, a `${X:?message}` or a message command."""
    child = node
    for parent in shell.ancestors(node):
        kind = parent.type
        if kind in ("heredoc_body", "heredoc_redirect", "test_command", "comment", "arithmetic_expansion"):
            return True
        if kind == "case_item":
            patterns = parent.children_by_field_name("value")
            if any(p.start_byte == child.start_byte and p.end_byte == child.end_byte for p in patterns):
                return True
        if kind == "expansion" and any(c.type in (":?", "?") for c in parent.children):
            return True
        if kind == "command":
            name = parent.child_by_field_name("name")
            if name is not None and posixpath.basename(shell.text(name, data)) in _QUOTING_PROGRAMS:
                return True
        child = parent
    return False


@register
class UnfilledPlaceholder(Rule):
    code = "SBL009"
    name = "unfilled-placeholder"
    severity = Severity.ERROR
    summary = "A template placeholder (`<YOUR_ACCOUNT>`, `your_account_here`, `CHANGE_ME`) left in the script."
    what = """
        Looks for the marks templates use for values the user must fill in: `<YOUR_ACCOUNT>`,
        `<SHARED_FS>`, `<NNODES>`, `<path/to/data>`, `your_account_here`, `YOUR_PROJECT`,
        `CHANGE_ME`, `PUT_TOKEN_HERE`. It reads `#SBATCH` values, assignments and the arguments of
        commands, including unquoted `<NAME>` words that bash takes for redirections. Comments,
        here-documents, messages (`echo`, `printf`), tests and `case` patterns that check for a
        placeholder on purpose are left alone.
    """
    why = """
        A placeholder is passed on literally. In a directive sbatch rejects it or asks for an
        account, partition or path that does not exist. In a command it is worse: bash reads
        `--account=<YOUR_ACCOUNT>` as an input redirection from a file named `YOUR_ACCOUNT` and
        an output redirection into the next word, so the job dies with "No such file or
        directory" or overwrites a file, after waiting in the queue.
    """
    fix_safety = "There is no automatic fix: only the user knows the value to fill in."
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=<YOUR_ACCOUNT>
                #SBATCH --nodes=2
                srun hostname
                """
            ),
            contains="<YOUR_ACCOUNT>",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                DATA_ROOT=<SHARED_FS>/datasets
                srun python train.py --data "$DATA_ROOT" --nodes <NNODES>
                """
            ),
            count=2,
            title="placeholders read as redirections",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                export WANDB_ENTITY=your_team_here
                srun python train.py
                """
            ),
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=proj42
                #SBATCH --nodes=2
                srun hostname
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=proj42  # replace <YOUR_ACCOUNT> with your own
                #SBATCH --nodes=1
                ACCOUNT=${SLURM_JOB_ACCOUNT:?set <YOUR_ACCOUNT> first}
                if [[ "$ACCOUNT" == "<YOUR_ACCOUNT>" ]]; then
                  echo "usage: edit <YOUR_ACCOUNT> in $0" >&2
                  exit 1
                fi
                cat > notes.txt <<EOF
                fill in <SHARED_FS> and your_account_here
                EOF
                srun python generate.py --prompt "<s>[INST] hello [/INST]" < input.txt > out.txt
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        for span, text in self._header_hits(script):
            yield self._report(script, span, text, directive=True)
        reported: List[Span] = []
        for span, text, redirect in self._shell_hits(script):
            if any(other.contains(span) for other in reported):
                continue  # the NAME of a ``<NAME>`` already reported
            reported.append(span)
            yield self._report(script, span, text, directive=False, redirect=redirect)

    def _report(self, script, span: Span, text: str, directive: bool, redirect: bool = False) -> Diagnostic:
        if directive:
            consequence = "sbatch passes it on as it is, so the job asks for something that does not exist"
        elif redirect:
            inner = text[1:-1]
            consequence = (
                f"bash reads it as redirections (input from a file named `{inner}`, output into the next "
                "word), so the command fails or clobbers a file"
            )
        else:
            consequence = "the script uses it as literal text"
        return self.report(
            script,
            span,
            f"unfilled template placeholder `{text}`: {consequence}",
            label="fill this in",
        )

    def _header_hits(self, script) -> Iterator[Tuple[Span, str]]:
        source = script.source
        words = None  # whether the file holds a word-style placeholder anywhere (asked once)
        for line, directives in script.header.lines.items():
            if not directives:
                continue
            start = directives[0].span.start
            end = max(d.span.end for d in directives)
            if script.data.find(b"<", start, end) < 0:
                if words is None:
                    words = _has_word_candidate(script.data.lower())
                if not words:
                    continue  # neither an angle bracket nor a placeholder word on this line
            text = source.text(Span(start, end))
            for a, b in _placeholders_in(text, header=True):
                yield _char_span(start, text, a, b), text[a:b]

    def _shell_hits(self, script) -> Iterator[Tuple[Span, str, bool]]:
        data = script.data
        for node in _candidate_nodes(script):
            kind = node.type
            if kind == "<":
                # ``<NAME>`` unquoted: a redirection from NAME followed by one into the next word.
                match = re.match(rb"<([A-Za-z_][A-Za-z0-9_./:@-]*)>", data[node.start_byte : node.start_byte + 200])
                if match is None:
                    continue
                content = match.group(1).decode("utf-8", "replace")
                if not _angle_is_placeholder(content):
                    continue  # ``sort <in >out``: real redirections
                if not _mentioned_on_purpose(node, data):
                    span = Span(node.start_byte, node.start_byte + match.end(1) + 1)
                    yield span, "<" + content + ">", True
                continue
            if kind not in ("word", "string_content", "raw_string"):
                continue
            text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
            hits = list(_placeholders_in(text, header=False))
            if not hits or _mentioned_on_purpose(node, data):
                continue
            for a, b in hits:
                yield _char_span(node.start_byte, text, a, b), text[a:b], False


def _candidate_nodes(script) -> List:
    """The nodes SBL009 reads (``<``, words, string contents), in source order, of those that
    overlap a candidate match: the rest of the tree cannot hold a placeholder."""
    root = script.root
    found: Dict[Tuple[int, int, int], object] = {}
    for start, end in _candidate_ranges(script.data.lower()):
        inner = root.descendant_for_byte_range(start, end)
        if inner is None:
            continue
        parent = inner
        while parent is not None:  # nodes holding the whole match
            if parent.type in _SHELL_KINDS:
                found[(parent.start_byte, -parent.end_byte, parent.kind_id)] = parent
            parent = parent.parent
        for node in shell.walk(inner):  # nodes inside it that overlap the match
            if node.type in _SHELL_KINDS and node.start_byte < end and node.end_byte > start:
                found[(node.start_byte, -node.end_byte, node.kind_id)] = node
    return [found[key] for key in sorted(found)]


# -- SBL010 / SBL011: the log files ---------------------------------------------------------------
# Slurm's filename patterns and the batch-shell variables that hold the same value.
_PATTERN = re.compile(r"%(%|[0-9]*[A-Za-z])")
_PATTERN_TOKENS = {"j": "{jobid}", "x": "{jobname}", "u": "{user}", "A": "{arrayjob}", "a": "{arraytask}"}
_VARIABLE_TOKENS = {
    "SLURM_JOB_ID": "{jobid}",
    "SLURM_JOBID": "{jobid}",
    "SLURM_JOB_NAME": "{jobname}",
    "USER": "{user}",
    "SLURM_JOB_USER": "{user}",
    "SLURM_ARRAY_JOB_ID": "{arrayjob}",
    "SLURM_ARRAY_TASK_ID": "{arraytask}",
}
_SUBMIT = "{submit}"
_MKDIR_VALUE_OPTIONS = ("-m", "--mode", "--context", "-Z")


def _pattern_template(path: str) -> Optional[str]:
    """A log path with Slurm's patterns as tokens; None when it holds a pattern we cannot follow."""
    out: List[str] = []
    position = 0
    for match in _PATTERN.finditer(path):
        out.append(path[position : match.start()])
        code = match.group(1)
        if code == "%":
            out.append("%")
        else:
            token = _PATTERN_TOKENS.get(code[-1])
            if token is None:
                return None
            out.append(token)
        position = match.end()
    out.append(path[position:])
    return "".join(out)


def _resolve(path: str, base: str) -> str:
    if not path.startswith("/"):
        path = base.rstrip("/") + "/" + path
    return posixpath.normpath(path)


def _job_base(script) -> str:
    chdir = script.header.value("chdir")
    if chdir and not EXPANSION.search(chdir):
        return _resolve(chdir, _SUBMIT)
    return _SUBMIT


def _value_template(value) -> Optional[str]:
    """A path word as the batch shell builds it, run-time variables as tokens."""
    out: List[str] = []
    for index, piece in enumerate(value.pieces):
        if piece.known:
            out.append(piece.text)
            continue
        if piece.name in ("SLURM_SUBMIT_DIR",) and index == 0:
            out.append(_SUBMIT)
            continue
        token = _VARIABLE_TOKENS.get(piece.name or "")
        if token is None:
            return None
        out.append(token)
    return "".join(out)


def _created_directories(script) -> List[Tuple[str, bool, object]]:
    """(resolved path, made with -p, command) for every ``mkdir`` the job runs."""

    def build(script) -> List[Tuple[str, bool, object]]:
        if b"mkdir" not in script.data.replace(b"\\", b""):
            return []  # no command can be mkdir (a backslash inside the name is still seen)
        base = _job_base(script)
        batch = script.commands
        moves = [c.span.start for c in batch if c.program in ("cd", "pushd", "popd")]
        commands = list(batch) + [c for step in script.steps for c in step.task_commands]
        found = []
        for command in commands:
            if command.program != "mkdir":
                continue
            anchor = command.step.span.start if command.step is not None else command.span.start
            moved = any(start < anchor for start in moves)
            parents = False
            skip = False
            paths = []
            for word in command.args:
                text = word.text
                if skip:
                    skip = False
                    continue
                if word.known and text.startswith("-") and text != "-":
                    if text in _MKDIR_VALUE_OPTIONS:
                        skip = True
                    if text == "--parents" or (not text.startswith("--") and "p" in text[1:]):
                        parents = True
                    continue
                paths.append(word)
            for word in paths:
                alternatives = word.alternatives or [word.value]
                for value in alternatives:
                    template = _value_template(value)
                    if template is None or not template or any(c in template for c in " \t\n*?["):
                        continue
                    if not template.startswith(("/", _SUBMIT)) and moved:
                        continue  # relative to a directory the script changed into
                    if template.startswith(_SUBMIT):
                        resolved = posixpath.normpath(template)
                    else:
                        resolved = _resolve(template, base)
                    found.append((resolved, parents, command))
        return found

    return script.derived("directives.mkdir", build)


def _log_directives(script) -> Iterator[Directive]:
    for name in ("output", "error"):
        directive = script.header.get(name)
        if directive is not None and directive.value and directive.value_span is not None:
            yield directive


def _is_below(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@register
class OutputDirectoryCreatedInJob(Rule):
    code = "SBL010"
    name = "output-directory-created-in-job"
    severity = Severity.ERROR
    summary = "The directory of `--output`/`--error` is created by the job itself: too late."
    what = """
        Resolves the directory of the `--output` and `--error` logs (relative to `--chdir` or the
        submission directory, with `%j`, `%x`, `%u`, `%A`, `%a` matched against
        `$SLURM_JOB_ID`, `$SLURM_JOB_NAME`, `$USER`, …) and reports it when the script creates
        that directory itself, with `mkdir` directly, through a variable (`mkdir -p "$LOGDIR"`)
        or in a step (`srun mkdir -p logs`), or creates a directory below it with `mkdir -p`.
    """
    why = """
        Slurm opens the log files before the first line of the script runs. When their directory
        does not exist yet, the job fails at launch (JobLaunchFailure, exit code 0:53) without
        writing any log, and the script's own `mkdir` never runs. It works on the author's
        machine, where the directory is left over from an earlier run, and fails on a fresh
        checkout.
    """
    fix_safety = """
        There is no automatic fix: the directory has to exist before `sbatch` is called
        (`mkdir -p logs && sbatch job.sh`), which is outside the script.
    """
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=logs/%x_%j.out
                mkdir -p logs
                srun hostname
                """
            ),
            contains="create it before `sbatch`",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=/lustre/proj/logs/%j/train.out
                LOGDIR=/lustre/proj/logs/$SLURM_JOB_ID
                mkdir -p "$LOGDIR"
                srun hostname
                """
            ),
            contains="named after the job",
            title="a per-job directory created through a variable",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=logs/%x_%j.out
                mkdir -p checkpoints
                srun hostname
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=logs/%x_%j.out
                cd /lustre/proj/run
                mkdir -p logs
                srun hostname
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        created = None
        base = None
        for directive in _log_directives(script):
            value = directive.value or ""
            if EXPANSION.search(value) or value.lower() == "none" or "\\" in value:
                continue
            directory = posixpath.dirname(value)
            if not directory or directory == "/":
                continue
            template = _pattern_template(directory)
            if template is None:
                continue
            if created is None:
                created = _created_directories(script)
                base = _job_base(script)
            assert base is not None
            wanted = _resolve(template, base)
            for path, parents, command in created:
                if path == wanted or (parents and _is_below(path, wanted)):
                    yield self._finding(script, directive, directory, template, command)
                    break

    def _finding(self, script, directive: Directive, directory: str, template: str, command) -> Diagnostic:
        line = script.source.line_of(command.span.start)
        shown = _text(script, command.span)
        message = (
            f"the log directory `{directory}` is created by the job itself (`{shown}`, line {line}), but Slurm "
            "opens the log before the script runs: where it does not exist yet the job fails at launch "
            "(JobLaunchFailure, exit code 0:53) with no log at all"
        )
        if any(token in template for token in ("{jobid}", "{arrayjob}", "{arraytask}")):
            message += "; a directory named after the job cannot exist before it, so keep the job id in the file name"
            help_ = "write the logs into a fixed directory created before `sbatch`, e.g. `logs/%x_%j.out`"
        else:
            message += "; create it before `sbatch`"
            help_ = f"run `mkdir -p {directory}` before `sbatch` (e.g. `mkdir -p {directory} && sbatch job.sh`)"
        return self.report(script, directive.value_span, message, label="must exist at submission", help=help_)


def _value_offsets(data: bytes, span: Span) -> List[int]:
    """The source offset of every byte of a directive value (quotes and escapes removed)."""
    offsets: List[int] = []
    quote = 0
    i = span.start
    while i < span.end:
        byte = data[i]
        if byte == 92 and i + 1 < span.end:
            offsets.append(i + 1)
            i += 2
            continue
        if quote:
            if byte == quote:
                quote = 0
            else:
                offsets.append(i)
            i += 1
            continue
        if byte in (34, 39):
            quote = byte
            i += 1
            continue
        offsets.append(i)
        i += 1
    return offsets


def _unique_patterns(value: str) -> set:
    return {m.group(1)[-1] for m in _PATTERN.finditer(value) if m.group(1) != "%"}


@register
class LogOverwritten(Rule):
    code = "SBL011"
    name = "log-overwritten"
    severity = Severity.INFO
    summary = "`--output`/`--error` without `%j` (or `%A`/`%a` in an array): each run overwrites the last log."
    what = """
        Checks that the `--output` and `--error` paths contain a pattern unique to the job:
        `%j`, `%J` or `%A`. In an array job (`--array`) each task needs its own file as well, so
        `%A` must come with `%a` (or `%j` is used, which differs per task). `/dev/null` and
        `none` are left alone.
    """
    why = """
        Without a job-specific pattern every submission writes the same file: Slurm truncates it
        when the next run starts, so the log of the run that failed is gone by the time anyone
        looks, and array tasks that share one file write over each other.
    """
    fix_safety = """
        Unsafe: the fix renames the log (`train.log` becomes `train_%j.log`; `_%A_%a` in an
        array job), which breaks anything that reads the old fixed name, such as a monitoring
        script or a `tail -f` habit.
    """
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=train.log
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=train_%j.log
                srun hostname
                """
            ),
            unsafe=True,
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --array=0-7
                #SBATCH -o "logs/sweep_%A.out"
                srun python sweep.py --index "$SLURM_ARRAY_TASK_ID"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --array=0-7
                #SBATCH -o "logs/sweep_%A_%a.out"
                srun python sweep.py --index "$SLURM_ARRAY_TASK_ID"
                """
            ),
            unsafe=True,
            title="an array job whose tasks share one file",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --output=logs/%x_%j.out --error=/dev/null
                srun hostname
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --array=0-7
                #SBATCH --output=logs/sweep_%A_%a.out
                srun python sweep.py --index "$SLURM_ARRAY_TASK_ID"
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        array = script.header.get("array") is not None
        for directive in _log_directives(script):
            value = directive.value or ""
            if value.lower() in ("/dev/null", "none") or EXPANSION.search(value) or "\\" in value:
                continue
            if value.endswith("/") or directive.truncated_at is not None:
                continue
            codes = _unique_patterns(value)
            if "j" in codes or "J" in codes or ("A" in codes and (not array or "a" in codes)):
                continue
            yield self._finding(script, directive, value, codes, array)

    def _finding(self, script, directive: Directive, value: str, codes: set, array: bool) -> Diagnostic:
        label = f"--{directive.name}"
        appended = script.header.value("open-mode") in ("append", "a", "A")
        verb = "appends to" if appended else "overwrites"
        if array and "A" in codes:
            message = (
                f"{label} `{value}` is the same file for every task of the array: the tasks write over each "
                "other; add `%a`"
            )
        elif array:
            message = f"{label} `{value}` has no `%A`: every submission of the array {verb} the last logs"
        else:
            message = f"{label} `{value}` has no `%j`: every run {verb} the log of the previous one"
        insert_at, text = self._insertion(value, codes, array)
        fix = None
        assert directive.value_span is not None
        offsets = _value_offsets(script.data, directive.value_span)
        encoded_before = len(value[:insert_at].encode(script.source.encoding, errors="replace"))
        if offsets and len(offsets) == len(value.encode(script.source.encoding, errors="replace")):
            offset = offsets[encoded_before - 1] + 1 if encoded_before else offsets[0]
            if text.startswith("%A_") and encoded_before < len(offsets):
                offset = offsets[encoded_before]
            fix = Fix.unsafe(f"add `{text.strip('_')}` to the file name", Edit.insert(offset, text))
        return self.report(script, directive.value_span, message, fix, label="not unique per job")

    @staticmethod
    def _insertion(value: str, codes: set, array: bool) -> Tuple[int, str]:
        """Where to insert which pattern (index into ``value``)."""
        if array and "a" in codes and "A" not in codes:
            match = next(m for m in _PATTERN.finditer(value) if m.group(1)[-1] == "a")
            return match.start(), "%A_"
        if array and "A" in codes:
            match = [m for m in _PATTERN.finditer(value) if m.group(1)[-1] == "A"][-1]
            return match.end(), "_%a"
        slash = value.rfind("/")
        name_start = slash + 1
        dot = value.rfind(".")
        at = dot if dot > name_start else len(value)
        return at, "_%A_%a" if array else "_%j"


# -- SBL012 -------------------------------------------------------------------------------------
@register
class HashInDirectiveValue(Rule):
    code = "SBL012"
    name = "hash-in-directive-value"
    severity = Severity.ERROR
    summary = "An unescaped `#` inside an `#SBATCH` value: sbatch cuts the value and the rest of the line."
    what = """
        Finds a `#` glued to an `#SBATCH` word, such as the registry separator in
        `--container-image=nvcr.io#nvidia/pytorch:25.01-py3`. A `#` after a blank starts an
        ordinary comment and is fine; `\\#` and a `#` inside quotes are kept by sbatch.
    """
    why = """
        sbatch treats an unescaped `#` as the start of a comment even in the middle of a word:
        the value stops before it and everything after it on the line is dropped, including other
        options. The container image becomes `nvcr.io`, a job name is cut short, and nothing
        warns about it.
    """
    fix_safety = "Safe: `\\#` is how sbatch spells a literal `#`, which is what the author wrote."
    examples = (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --job-name=exp#42 --time=01:00:00
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --job-name=exp\\#42 --time=01:00:00
                srun hostname
                """
            ),
            contains="--time=01:00:00",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2  # two nodes
                #SBATCH --job-name=exp\\#42 --comment="run #42"
                srun hostname
                """
            )
        ),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        source = script.source
        for directive in script.header.directives:
            at = directive.truncated_at
            if at is None:
                continue
            kept = directive.value if directive.value is not None else directive.option
            written = _text(script, Span(directive.span.start, directive.dropped.end if directive.dropped else at + 1))
            message = f"the `#` in `{written}` starts a comment: sbatch reads \"{kept}\""
            rest_start = directive.dropped.end if directive.dropped else at + 1
            dropped = [t.text for t in tokenize(source, rest_start, directive.line_span.end)]
            if dropped:
                shown = " ".join(dropped)
                message += f" and ignores the rest of the line (`{shown}`)"
            message += "; write `\\#`"
            yield self.report(
                script,
                Span(at, directive.dropped.end if directive.dropped else at + 1),
                message,
                Fix.safe("escape the `#` as `\\#`", Edit.insert(at, "\\")),
                label="read as a comment",
            )


# -- SBL013 -------------------------------------------------------------------------------------
@register
class DosLineEndings(Rule):
    """DOS line breaks (CRLF) anywhere in the file.

    This rule is not in the original catalog's header family list, but it belongs there: before
    reading a single directive, sbatch scans the whole script for a ``\\r\\n`` pair and refuses to
    submit it ("Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line breaks
    (\\n)."). Scripts edited on Windows or pasted from some web pages carry them, and the linter
    keeps every byte as it is, so without this rule such a file would lint clean (the other rules
    read CRLF lines correctly) and still be refused at submission.
    """

    code = "SBL013"
    name = "dos-line-endings"
    severity = Severity.ERROR
    summary = "The script has DOS line breaks (CRLF): sbatch refuses to submit it."
    what = """
        Reports a script that contains Windows line breaks (`\\r\\n`), once per file, at the first
        one, with the number of lines that end that way.
    """
    why = """
        sbatch checks the whole file before anything else and stops with "Batch script contains
        DOS line breaks (\\r\\n) instead of expected UNIX line breaks (\\n)." Even a single CRLF
        line, often pasted from a web page or added by an editor on Windows, makes the job
        unsubmittable; bash itself would also see a stray `\\r` at the end of every word.
    """
    fix_safety = """
        Safe: every `\\r\\n` becomes `\\n`, which is exactly what `dos2unix` does and what sbatch
        asks for. A lone `\\r` that is not followed by `\\n` is left alone.
    """
    examples = (
        Bad(
            "#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun hostname\r\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n",
            contains="3 lines",
        ),
        Bad(
            "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\r\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n",
            title="a single pasted line",
        ),
        Good("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"),
    )

    def check(self, script) -> Iterator[Diagnostic]:
        data = script.data
        first = data.find(b"\r\n")
        if first < 0:
            return
        positions = []
        at = first
        while at >= 0:
            positions.append(at)
            at = data.find(b"\r\n", at + 2)
        count = len(positions)
        lines = "1 line" if count == 1 else f"{count} lines"
        yield self.report(
            script,
            Span(first, first + 2),
            f"the script has DOS line breaks (\\r\\n) on {lines}: sbatch refuses it (\"Batch script contains "
            "DOS line breaks (\\r\\n) instead of expected UNIX line breaks (\\n).\")",
            Fix.safe("convert every \\r\\n to \\n", *(Edit.delete(Span(p, p + 1)) for p in positions)),
            label="\\r\\n",
        )

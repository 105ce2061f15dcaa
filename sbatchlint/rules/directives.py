"""SBL005–SBL013: what sbatch makes of each ``#SBATCH`` option, its value and the file itself.

sbatch collects the words of every ``#SBATCH`` line of the header into one argument vector and
hands it to ``getopt_long``: an unknown option, a stray word, a missing argument or a value the
option's parser rejects stops the submission. Values are read literally: no variable is expanded,
an unquoted ``#`` starts a comment, and the log paths are opened by Slurm before the script runs.
"""
from __future__ import annotations


from .. import options as option_table
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model import logs, placeholders
from ..model.containers import command_pieces, option_value, site_span
from ..model.header import Directive
from ..lazyre import lazy
from ..registry import register
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Sequence, Tuple

SBATCH = option_table.SBATCH
SRUN = option_table.SRUN


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
        `--ntasks-per-n=8` are accepted, as sbatch accepts them. A long option close to no
        known one may come from a site plugin: that is SBL014's warning, not this error; the
        options listed in `extra-options` are known.
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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        previous_flagged: Optional[Directive] = None
        comment_line = None  # `#SBATCHED …`: one finding for the line, not one per word
        for directive in script.header.directives:
            if directive.line == comment_line:
                continue
            if directive.dashes == "--" and directive.spec is not None:
                previous_flagged = None  # a known long option (most): ``_check`` has nothing to say
                continue
            if directive.dashes == "" and directive.glued:
                comment_line = directive.line
            found = self._check(script, directive, previous_flagged)
            flagged = False
            for diagnostic in found:
                flagged = True
                yield diagnostic
            previous_flagged = directive if flagged else None

    def _check(self, script, directive: Directive, previous_flagged: Optional[Directive]) -> Iterator[Diagnostic]:
        if directive.separator and directive.placement == "header":
            return  # the next component of a heterogeneous job
        if directive.dashes == "":
            yield from self._stray(script, directive, previous_flagged)
            return
        if directive.dashes == "-":
            meant = directive.one_dash_long
            if meant is not None:
                yield self._one_dash(script, directive, meant)
                return
            if directive.spec is None:
                yield self.report(
                    script,
                    directive.option_span,
                    f"`-{directive.option}` is not an sbatch option",
                    label="unknown option",
                    notes=(f"sbatch refuses the script (invalid option -- '{directive.option}')",),
                )
                return
            if directive.spec.arg == "none" and directive.attached:
                word = "-" + directive.option + (directive.value or "")
                reading, rejected = option_table.read_as_short(SBATCH, word)
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
        kind, found = option_table.unknown_kind(script.header.table, SRUN, name)
        if kind == "unknown":
            return  # far from every option: perhaps a plugin's (SBL014)
        if kind == "other":
            srun_only = found
            yield self.report(
                script,
                directive.option_span,
                f"`{written}` is an srun option, not an sbatch one",
                label="srun option",
                help=f"pass `--{srun_only.long}` to the `srun` line(s) that need it",
                notes=(f"sbatch refuses the script (unrecognized option '{written}')",),
            )
            return
        if kind == "ambiguous":
            candidates = found
            listed = ", ".join(f"`--{c}`" for c in candidates)
            yield self.report(
                script,
                directive.option_span,
                f"`{written}` is an ambiguous abbreviation ({listed})",
                label="ambiguous",
                notes=(f"sbatch refuses the script (option '{written}' is ambiguous)",),
            )
            return
        suggestion = found
        message = f"`{written}` is not an sbatch option; did you mean `--{suggestion}`?"
        fix = Fix.unsafe(f"replace `{written}` with `--{suggestion}`", Edit(directive.option_span, "--" + suggestion))
        yield self.report(
            script, directive.option_span, message, fix, label="unknown option",
            notes=(f"sbatch refuses the script (unrecognized option '{written}')",),
        )

    def _stray(self, script, directive: Directive, previous_flagged: Optional[Directive]) -> Iterator[Diagnostic]:
        before = script.header.previous_on_line(directive)
        if before is not None and before is previous_flagged:
            return  # most likely the value of the option just reported
        word = directive.option
        message = f"`{word}` is not an option"
        help_ = None
        if directive.glued:
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
        yield self.report(
            script, directive.span, message, label="not an option", help=help_,
            notes=(f"sbatch stops with \"Invalid directive found in batch script: {word}\"",),
        )

    def _one_dash(self, script, directive: Directive, meant: str) -> Diagnostic:
        word = "-" + directive.option + (directive.value or "")
        reading, rejected = option_table.read_as_short(SBATCH, word)
        first = directive.spec
        if first is None:
            consequence = f"the unknown short option `-{directive.option}`, and refuses the script"
        elif first.arg != "none":
            consequence = f"`{reading}` (--{first.long} with the value \"{directive.value}\")"
            consequence += ", which it rejects" if rejected else ", which is not what was meant"
        else:
            consequence = f"the one-letter options `{reading}`"
            consequence += ", and refuses the script" if rejected else ", which is not what was meant"
        message = f"`{word}` has one dash; write `--{meant}`"
        fix = None
        target = directive.one_dash_name_span
        if target is not None:
            fix = Fix.unsafe(f"write `--{meant}`", Edit(target, "--" + meant))
        return self.report(
            script, directive.span, message, fix, label="read as short options", notes=(f"sbatch reads it as {consequence}",)
        )


@register
class UnknownSiteOption(Rule):
    code = "SBL014"
    name = "unknown-site-option"
    severity = Severity.WARNING
    summary = "An `#SBATCH` long option Slurm does not know, far from every known one: perhaps a site plugin's."
    what = """
        Reports a long option in the header that neither sbatch, srun nor pyxis knows and that is
        no near miss of a known one (a near miss such as `--ntask-per-node` is SBL005, an error
        with "did you mean"). Sites add options through SPANK plugins (`--environment=…`, a
        site's own container or reservation flags): list them in the configuration as
        `extra-options = ["environment=", "no-gpu-reset"]` (a trailing `=` for an option that
        takes a value) and they are read as options of their own, with no finding. With a
        cluster profile that lists the cluster's plugin options (`sbatchlint profile`), the
        answer is known and SBL022 reports the option as an error instead.
    """
    why = """
        Where no plugin provides the option, sbatch refuses the script ("unrecognized option");
        where one does, the option is fine. Without knowing the cluster the linter cannot tell,
        so it warns instead of calling the script broken.
    """
    fix_safety = "There is no automatic fix: declare the option in `extra-options`, or remove it."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --environment=pytorch-25.01
                srun python train.py
                """
            ),
            contains="site plugin",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --ntasks-per-node=8
                srun python train.py
                """
            ),
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        profile = None
        if script.settings.get("cluster") is not None:  # the profile module only when there is one
            from ..cluster.profile import in_settings

            profile = in_settings(script.settings)
        if profile is not None and profile.plugin_options is not None:
            return  # the cluster's plugins are known: SBL022 says it as an error
        for directive in script.header.directives:
            if directive.dashes != "--" or directive.spec is not None:
                continue
            written = "--" + directive.option
            kind, _ = option_table.unknown_kind(script.header.table, SRUN, directive.option)
            if kind != "unknown":
                continue
            yield self.report(
                script,
                directive.option_span,
                f"`{written}` is not an option of sbatch, srun or pyxis and is close to none",
                label="unknown option",
                notes=(f"unless a site plugin adds it, sbatch refuses the script (unrecognized option '{written}')",),
                help=f"if your cluster provides it, add \"{directive.option}=\" (or \"{directive.option}\" for a flag) "
                "to `extra-options` in the configuration",
            )


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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for directive in script.header.directives:
            if directive.unclosed_quote is not None:
                at = directive.unclosed_quote
                quote = directive.quote_char
                yield self.report(
                    script,
                    Span(at, directive.line_span.end),
                    f"the {quote} opened here is never closed: sbatch stops with \"Unmatched `{quote}`\"",
                    label="unmatched quote",
                )
                continue
            spec = directive.spec
            # (only a one-dash word can be a long option written with one dash: ``attached``)
            if spec is None or (directive.dashes == "-" and directive.one_dash_long is not None):
                continue
            value = directive.value
            if value is not None and spec.arg != "none" and directive.dashes != "-" and not option_table.has_expansion(value):
                if spec.value is None or _validated(spec.value, value, spec.long) is None:
                    continue  # a plain valid value (most directives): nothing below reports it
            label = f"--{spec.long}"
            written = directive.text
            if value is None:
                if spec.arg == "required":
                    if script.header.has_later(directive):
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
            if directive.dashes == "-" and directive.attached and value.startswith("="):
                message = f"`-{directive.option}{value}` gives {label} the value \"{value}\""
                if spec.value is not None and option_table.validate(spec.value, value, spec.long):
                    message += ", which sbatch rejects"
                yield self.report(
                    script, directive.value_span, message, label="value starts with '='",
                    help=f"write `-{directive.option} {value[1:]}` or `{label}={value[1:]}`",
                    notes=("a short option takes its value without `=`",),
                )
                continue
            if option_table.has_expansion(value):
                if spec.value is not None:
                    yield self.report(
                        script,
                        directive.value_span,
                        f"{label} gets the literal value \"{value}\", which sbatch rejects",
                        label="not expanded",
                        help=f"pass it at submission instead: `sbatch {label}=\"{value}\" job.sh`",
                        notes=("sbatch does not expand variables in `#SBATCH` lines",),
                    )
                elif not spec.free_text:
                    help_ = None
                    if spec.long in (option_table.OUTPUT, option_table.ERROR, option_table.INPUT):
                        help_ = "use Slurm's patterns instead (%j job id, %x job name, %u user) or a literal path"
                    yield self.report(
                        script,
                        directive.value_span,
                        f"{label} is used literally as \"{value}\"",
                        label="not expanded",
                        help=help_,
                        notes=("sbatch does not expand variables in `#SBATCH` lines",),
                    )
                continue
            if spec.value is None:
                continue
            complaint = _validated(spec.value, value, spec.long)
            if complaint is not None:
                message, help_, notes = _complaint_lines(complaint)
                yield self.report(
                    script, directive.value_span, message, label="rejected by sbatch", help=help_, notes=notes
                )


# ``options.validate``'s answers (a function of its arguments alone), kept across the files of a
# run: headers repeat the same few values (``--nodes=2``, ``--time=04:00:00``) from file to file.
_VALIDATED: Dict[Tuple[str, str, str], Optional[str]] = {}


def _validated(kind: str, value: str, option: str) -> Optional[str]:
    key = (kind, value, option)
    try:
        return _VALIDATED[key]
    except KeyError:
        complaint = option_table.validate(kind, value, option)
        if len(_VALIDATED) < 4096:
            _VALIDATED[key] = complaint
        return complaint


_SBATCH_SAYS = lazy(r" \((sbatch: .*)\)\Z")


def _complaint_lines(complaint: str) -> Tuple[str, Optional[str], Tuple[str, ...]]:
    """``options.validate``'s sentence as a first line (the option, the value, what is wrong with it),
    the advice as help and sbatch's answer as a note."""
    refused = "sbatch refuses the script"
    said = _SBATCH_SAYS.search(complaint)
    if said:
        complaint = complaint[: said.start()]
        refused += f" ({said.group(1)})"
    head, quote, detail = complaint.partition('": ')
    if not quote:
        return complaint, None, (refused,)
    head += '"'
    if detail.startswith(("use ", "write ")):
        return head, detail, (refused,)
    reason, _, advice = detail.partition("; ")
    message = f"{head}: {reason}"
    if len(message) > 100:
        return head, advice or None, (reason, refused)
    return message, advice or None, (refused,)


# -- SBL007 -------------------------------------------------------------------------------------
# The options that choose the batch step's own container: they stay in the header.
IDENTITY = frozenset({option_table.CONTAINER_IMAGE, option_table.CONTAINER_NAME, option_table.CONTAINER_SAVE})


def containerized(step) -> bool:
    return step.has(option_table.CONTAINER_IMAGE, option_table.CONTAINER_NAME)


def step_has(step, directive: Directive) -> bool:
    """Whether a step already sets (or cannot be told apart from setting) the header's option."""
    name = directive.name or ""
    spec = directive.spec
    if spec is not None and spec.list_valued:
        wanted = set(option_table.list_entries(directive.value))
        present: set = set()
        for option in step.options:
            if option.name != name:
                continue
            if not option.value_known or option.value is None:
                return True
            present.update(option_table.list_entries(option.value))
        return wanted <= present
    family = spec.toggle if spec is not None else None
    if family is not None:
        return any(step.has(other) for other, other_spec in SBATCH.items() if other_spec.toggle == family)
    return step.has(name)


def _missing_entries(step, directive: Directive) -> Optional[str]:
    """For a list-valued option, the header's entries the step does not list yet."""
    present: set = set()
    for option in step.options:
        if option.name == directive.name and option.value is not None:
            present.update(option_table.list_entries(option.value))
    return ",".join(entry for entry in option_table.list_entries(directive.value) if entry not in present)


_PLAIN_LIST = lazy(r"^[\w./:@%+,=-]+$")


def _appended_entries(script, step, directive: Directive, entries: str) -> Optional[Edit]:
    """The edit that adds a list-valued option's missing entries to the one flag the step
    already writes (pyxis keeps only the last ``--container-mounts`` of a step, so a second flag
    would drop the step's own list); None when that flag is not one plain list written out."""
    own = [option for option in step.options if option.name == directive.name]
    if len(own) != 1 or any(word.alternatives for word in own[0].words):
        return None
    value = option_value(own[0])
    if not value.pieces or any(p.span is None or p.loop or p.task or not p.known for p in value.pieces):
        return None
    site = site_span(value.pieces, command_pieces(step.command))
    if site is None or site.start >= site.end or not _PLAIN_LIST.match(script.text(site)):
        return None
    return Edit.insert(site.end, "," + entries)


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
        removed from the header. A step that already writes its own `--container-mounts` or
        `--container-env` gets the header's missing entries appended to that list, since pyxis
        keeps only the last flag of a step; when that list is not written out plainly, there is
        no fix. When the header also selects a container for the batch step
        (`--container-image`), the header line is kept, so the batch step is unchanged. No fix is
        offered when a value would need quoting inside a string, holds a `$`, or was truncated by
        a `#`.
    """
    examples = Examples(lambda: (
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
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --container-mounts=/lustre/proj:/lustre/proj
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/scratch:/scratch python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --container-mounts=/scratch:/scratch,/lustre/proj:/lustre/proj python train.py
                """
            ),
            title="a step with mounts of its own: the header's join its list (pyxis keeps one flag)",
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        header = script.header
        steps = [step for step in script.steps if containerized(step)]
        if not steps:
            return
        moved = [
            d for d in header.effective
            if d.spec is not None and not d.spec.steps_inherit and d.name not in IDENTITY and any(not step_has(s, d) for s in steps)
        ]
        if not moved:
            return
        keeps_header = any(d.name in (option_table.CONTAINER_IMAGE, option_table.CONTAINER_NAME) for d in header.effective)
        fix = self._fix(script, moved, steps, keeps_header)
        for directive in moved:
            missing = [s for s in steps if not step_has(s, directive)]
            lines = ", ".join(str(script.source.line_of(s.span.start)) for s in missing)
            plural = "s" if len(missing) > 1 else ""
            yield self.report(
                script,
                directive.span,
                f"`--{directive.name}` in `#SBATCH` does not reach the containerized step{plural} on line{plural} {lines}",
                fix,
                label="not seen by the steps",
                help=f"put `--{directive.name}` on the `srun` line{plural} instead",
                notes=(
                    "pyxis applies header options to the batch step only, and sbatch without pyxis's sbatch support "
                    "rejects them",
                ),
            )

    def _fix(self, script, moved: Sequence[Directive], steps, keeps_header: bool) -> Optional[Fix]:
        insertions: Dict[int, List[str]] = {}
        places: Dict[int, tuple] = {}
        appends: List[Edit] = []
        for directive in moved:
            if directive.truncated_at is not None:
                return None
            for step in steps:
                if step_has(step, directive):
                    continue
                value = directive.value
                if directive.spec is not None and directive.spec.list_valued:
                    value = _missing_entries(step, directive)
                    if any(option.name == directive.name for option in step.options):
                        appended = _appended_entries(script, step, directive, value)
                        if appended is None:
                            return None
                        appends.append(appended)
                        continue
                offset, quote = step.insertion_after_srun()
                if offset is None:
                    return None
                rendered = directive.as_step_word(quote, value)
                if rendered is None:
                    return None
                texts = insertions.setdefault(offset, [])
                places.setdefault(offset, (step, quote))
                if rendered not in texts:
                    texts.append(rendered)
        from ..model import placement  # only a fix inserts step options

        edits = [placement.add_step_options(script, places[offset][0], texts, offset, places[offset][1])
                 for offset, texts in insertions.items()]
        edits.extend(appends)
        if not keeps_header:
            edits.extend(Edit.delete(span) for span in script.header.removal_spans(moved))
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
        overrides with a different value. Options Slurm accumulates (`--mail-type`) are not
        duplicates; pyxis's lists (`--container-mounts`, `--container-env`) are, when the last one
        leaves out an entry of an earlier one: pyxis receives only the last. Neither are the options
        of the components of a heterogeneous job: each `#SBATCH hetjob` line starts a component
        with options of its own.
    """
    why = """
        sbatch applies the options in order and the last value wins, silently: a header edited
        over time easily says `--nodes=2` near the top and `-N 4` further down, and the job asks
        for whatever came last. Pyxis options such as `--container-workdir` are worse: given
        twice with different values, pyxis refuses the job.
    """
    fix_safety = "There is no automatic fix: only the author knows which of the two values is meant."
    examples = Examples(lambda: (
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
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1 --gpus-per-node=8
                #SBATCH --container-image=nvcr.io/nvidia/pytorch:25.01-py3
                #SBATCH --container-mounts=/lustre/data:/data
                #SBATCH --container-mounts=/lustre/ckpt:/ckpt
                python train.py --data /data --save /ckpt
                """
            ),
            count=1,
            contains="this `--container-mounts` list is lost",
            title="two mount lists: the batch step's container gets only the last",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1 --gpus-per-node=8
                #SBATCH --container-image=nvcr.io/nvidia/pytorch:25.01-py3
                #SBATCH --container-mounts=/lustre/data:/data
                #SBATCH --container-mounts=/lustre/data:/data,/lustre/ckpt:/ckpt
                python train.py --data /data --save /ckpt
                """
            ),
            title="the last list holds every mount",
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
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2 --ntasks-per-node=8
                #SBATCH hetjob
                #SBATCH --nodes=1 --ntasks-per-node=1
                srun --het-group=0 python train.py : --het-group=1 python serve.py
                """
            ),
            title="a heterogeneous job",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        groups: Dict[str, List[Directive]] = {}
        canonical = option_table.canonical
        for directive in script.header.effective:
            spec = directive.spec
            if spec is None:
                continue  # (an unknown option: ``directive.name`` is None)
            if spec.accumulates or spec.arg == "none":
                continue  # accumulated, or a flag: setting it twice changes nothing
            # each component of a heterogeneous job has options of its own
            groups.setdefault((directive.component, canonical(spec.long)), []).append(directive)
        for (_, name), directives in groups.items():
            if len(directives) < 2:
                continue  # given once
            winner = directives[-1]
            winner_text = winner.text
            for directive in directives[:-1]:
                if _same_value(directive.spec, directive.value, winner.value):
                    continue
                written = directive.text
                if directive.spec is not None and directive.spec.list_valued:
                    entries = option_table.list_entries
                    lost = set(entries(directive.value)) - set(entries(winner.value))
                    if not lost:
                        continue  # the last list holds every entry of this one
                    yield self.report(
                        script,
                        directive.span,
                        f"this `--{name}` list is lost: pyxis receives only the last one (line {winner.line})",
                        label="dropped",
                        help=f"write one comma-separated `--{name}` list",
                        notes=(f"a list given twice does not add up: the container gets `{winner_text}`, not `{written}`",),
                    )
                    continue
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
@register
class UnfilledPlaceholder(Rule):
    code = "SBL009"
    name = "unfilled-placeholder"
    severity = Severity.ERROR
    summary = "A template placeholder (`<YOUR_ACCOUNT>`, `your_account_here`, `CHANGE_ME`) left in the script."
    what = """
        Looks for the marks templates use for values the user must fill in: `<YOUR_ACCOUNT>`,
        `<SHARED_FS>`, `<NNODES>`, `<path/to/data>`, `your_account_here`, `YOUR_PROJECT`,
        `CHANGE_ME`, `PUT_TOKEN_HERE`, `project_xxxxxxxxx`. It reads `#SBATCH` values,
        assignments and the arguments of commands, including unquoted `<NAME>` words that bash
        takes for redirections; any `<name>` glued into an assignment's value
        (`CONT=/lustre/fsw/<team>/img`) is reported, whatever the name, with both redirections
        named. Comments, here-documents, messages (`echo`, `printf`), tests and `case` patterns
        that check for a placeholder on purpose are left alone, and so are placeholder words in a
        job name, a comment or a log's file name (`--job-name=your_account-sample_job-0`, written
        by job generators): the name works as it is. Placeholders matter where the value is used
        as an account, partition, path or image.
    """
    why = """
        A placeholder is passed on literally. In a directive sbatch rejects it or asks for an
        account, partition or path that does not exist. In a command it is worse: bash reads
        `--account=<YOUR_ACCOUNT>` as an input redirection from a file named `YOUR_ACCOUNT` and
        an output redirection into the next word, so the job dies with "No such file or
        directory" or overwrites a file, after waiting in the queue.
    """
    fix_safety = "There is no automatic fix: only the user knows the value to fill in."
    examples = Examples(lambda: (
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
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --account=project_xxxxxxxx
                #SBATCH --nodes=1
                srun hostname
                """
            ),
            title="a run of x to overwrite",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -e
                IMAGE=/shared/images/<group>/pytorch.sqsh
                srun --container-image="$IMAGE" python train.py
                """
            ),
            contains="creates or truncates a file `/pytorch.sqsh`",
            title="a name glued into an assignment",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --job-name=your_project-sample_job-0
                #SBATCH --output=/scratch/logs/your_project-sample_job-0_%j.out
                #SBATCH --nodes=1
                srun --output /scratch/logs/step-your_project_%j.out hostname
                """
            ),
            title="placeholder words in generated names",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for span, text in placeholders.header_placeholders(script):
            yield self._report(script, span, text, directive=True)
        reported: List[Span] = []
        for span, text, redirect in placeholders.shell_placeholders(script):
            if any(other.contains(span) for other in reported):
                continue  # the NAME of a ``<NAME>`` already reported
            reported.append(span)
            yield self._report(script, span, text, directive=False, redirect=redirect)

    def _report(self, script, span: Span, text: str, directive: bool, redirect=False) -> Diagnostic:
        if isinstance(redirect, placeholders.GluedRedirection):
            glued = redirect
            target = (
                f"`>{glued.target}` as output, so it creates or truncates a file `{glued.target}`" if glued.target
                else "`>` as output into the next word, so it creates or truncates that file"
            )
            return self.report(
                script,
                span,
                f"`{text}` in the value of `{glued.variable}` is read as redirections, not text",
                label="read as redirections",
                help="fill in the value; quote it if the `<`/`>` are meant literally",
                notes=(
                    f"bash reads `<{glued.source}` as input from a file named `{glued.source}` and {target}",
                    f"`{glued.variable}` holds only `{glued.kept}`, and under `set -e` the job stops when the file "
                    f"`{glued.source}` does not exist",
                ),
            )
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
            f"unfilled template placeholder `{text}`",
            label="fill this in",
            notes=(consequence,),
        )


# -- SBL010 / SBL011: the log files ---------------------------------------------------------------
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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for directive, directory, template, command in logs.created_log_directories(script):
            yield self._finding(script, directive, directory, template, command)

    def _finding(self, script, directive: Directive, directory: str, template: str, command) -> Diagnostic:
        line = script.source.line_of(command.span.start)
        shown = script.text(command.span)
        message = f"the log directory `{directory}` is created by the job itself, on line {line}"
        notes = [
            f"Slurm opens the log before the script runs (`{shown}` comes too late): where the directory does not "
            "exist yet the job fails at launch (JobLaunchFailure, exit code 0:53) with no log at all"
        ]
        if any(token in template for token in ("{jobid}", "{arrayjob}", "{arraytask}")):
            notes.append("a directory named after the job cannot exist before it, so keep the job id in the file name")
            help_ = "write the logs into a fixed directory created before `sbatch`, e.g. `logs/%x_%j.out`"
        else:
            help_ = f"create it before `sbatch`: `mkdir -p {directory} && sbatch job.sh`"
        return self.report(
            script, directive.value_span, message, label="must exist at submission", help=help_, notes=notes
        )


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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        array = script.header.get(option_table.ARRAY) is not None
        for directive in logs.log_directives(script):
            value = directive.value or ""
            if value.lower() in ("/dev/null", "none") or option_table.has_expansion(value) or "\\" in value:
                continue
            if value.endswith("/") or directive.truncated_at is not None:
                continue
            codes = logs.unique_patterns(value)
            if "j" in codes or "J" in codes or ("A" in codes and (not array or "a" in codes)):
                continue
            yield self._finding(script, directive, value, codes, array)

    def _finding(self, script, directive: Directive, value: str, codes: set, array: bool) -> Diagnostic:
        label = f"--{directive.name}"
        appended = script.header.value(option_table.OPEN_MODE) in ("append", "a", "A")
        verb = "appends to" if appended else "overwrites"
        if array and "A" in codes:
            message = f"{label} `{value}` is the same file for every task of the array; add `%a`"
            notes = ("the tasks write over each other",)
        elif array:
            message = f"{label} `{value}` has no `%A`"
            notes = (f"every submission of the array {verb} the last logs",)
        else:
            message = f"{label} `{value}` has no `%j`"
            notes = (f"every run {verb} the log of the previous one",)
        insert_at, text = logs.pattern_insertion(value, codes, array)
        fix = None
        assert directive.value_span is not None
        offset = directive.source_offset_in_value(insert_at, before=text.startswith("%A_"))
        if offset is not None:
            fix = Fix.unsafe(f"add `{text.strip('_')}` to the file name", Edit.insert(offset, text))
        return self.report(script, directive.value_span, message, fix, label="not unique per job", notes=notes)


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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for directive in script.header.directives:
            at = directive.truncated_at
            if at is None:
                continue
            kept = directive.value if directive.value is not None else directive.option
            assert directive.comment_span is not None and directive.hash_span is not None
            written = script.text(directive.comment_span)
            message = f"the `#` in `{written}` starts a comment: sbatch reads \"{kept}\""
            notes = ()
            dropped = directive.ignored_words
            if dropped:
                shown = " ".join(dropped)
                notes = (f"sbatch ignores the rest of the line (`{shown}`)",)
            yield self.report(
                script,
                directive.hash_span,
                message,
                Fix.safe("escape the `#` as `\\#`", Edit.insert(at, "\\")),
                label="read as a comment",
                help="write `\\#`",
                notes=notes,
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
    examples = Examples(lambda: (
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
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        positions = script.header.dos_line_breaks
        if not positions:
            return
        first = positions[0]
        count = len(positions)
        lines = "1 line" if count == 1 else f"{count} lines"
        yield self.report(
            script,
            Span(first, first + 2),
            f"the script has DOS line breaks (\\r\\n) on {lines}",
            Fix.safe("convert every \\r\\n to \\n", *(Edit.delete(Span(p, p + 1)) for p in positions)),
            label="\\r\\n",
            notes=(
                "sbatch refuses it (\"Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line "
                "breaks (\\n).\")",
            ),
        )

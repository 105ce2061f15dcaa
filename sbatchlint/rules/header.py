"""SBL001–SBL004: is this a batch script sbatch reads the way its author thinks?"""
from __future__ import annotations


from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..model.kind import template_evidence
from ..registry import register
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Tuple


@register
class ShellSyntaxError(Rule):
    code = "SBL001"
    name = "shell-syntax-error"
    severity = Severity.ERROR
    summary = "The script is not valid bash; regions the parser could not read are not checked."
    what = """
        Reports every region of the script that the bash parser could not read. When `bash` is
        installed, `bash -n` is asked as well and its message is quoted; without it, a note names
        the line where the parser first failed when the region starts before it. A region the parser
        could not read is reported as not checked: none of the other rules looked inside it, so
        silence there does not mean the lines are correct. When `bash -n` accepts the script,
        the region is valid bash that this parser cannot read: that is SBL016's information,
        not an error of the script.
    """
    why = """
        sbatch accepts a script with a syntax error; bash only discovers it when the job starts,
        after it waited in the queue and allocated its nodes, and the job then fails at once or,
        worse, runs the lines before the error and skips the rest.
    """
    fix_safety = "There is no automatic fix: only the author knows what the broken line meant."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                if [ -n "$SLURM_JOB_ID" ]; then
                  srun hostname
                """
            ),
            title="an if without fi",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                if [ -n "$SLURM_JOB_ID" ]; then
                  srun hostname
                fi
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        regions: List[Span] = script.errors
        if not regions:
            return
        from ..model.bash import verdict  # only a script with parse errors

        accepted, complaint = verdict(script)
        if accepted:
            return  # valid bash this parser cannot read: SBL016
        source = script.source
        for region in regions:
            first, last = source.line_of(region.start), source.line_of(max(region.start, region.end - 1))
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            verb = "was" if first == last else "were"
            unchecked = f"{where} could not be parsed and {verb} not checked"
            if complaint:
                yield self.report(script, region, f"bash: {complaint}", label="not parsed", notes=(unchecked,))
            else:
                yield self.report(script, region, unchecked, label="not parsed", notes=failed_at(script, region))


@register
class MissingShebang(Rule):
    code = "SBL002"
    name = "missing-shebang"
    severity = Severity.ERROR
    summary = "Line 1 is not `#!…`: sbatch refuses the file."
    what = """
        Checks that the very first bytes of the script are `#!` followed by an interpreter, as
        sbatch requires. A UTF-8 byte-order mark before the `#!` counts as missing too: sbatch
        looks at the first two bytes.
    """
    why = """
        sbatch rejects such a file at submission with "This does not look like a batch script.
        The first line must start with #! followed by the path to an interpreter." Scripts written
        to be `source`d or run with `bash job.sh` often lack the line.
    """
    fix_safety = """
        Safe: inserting `#!/bin/bash` as line 1 (or removing the byte-order mark that hides an
        existing `#!`) is what sbatch needs and changes nothing else.
    """
    examples = Examples(lambda: (
        Bad(
            "#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nsrun hostname\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nsrun hostname\n",
        ),
        Bad(
            "\ufeff#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n",
            title="a byte-order mark before the shebang",
        ),
        Good("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n"),
        Good("#!/usr/bin/env bash\n#SBATCH --nodes=1\nsrun hostname\n"),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        header = script.header
        if header.has_shebang:
            return
        mark = header.byte_order_mark
        if mark is not None and header.shebang_after_mark:
            yield self.report(
                script,
                mark,
                "the file starts with a UTF-8 byte-order mark, so sbatch does not see the `#!` line",
                Fix.safe("remove the byte-order mark", Edit.delete(mark)),
            )
            return
        start = mark.end if mark is not None else 0
        end = script.source.line_span(1).end
        newline = script.source.preferred_newline()
        yield self.report(
            script,
            Span(start, max(end, start)),
            "line 1 is not a `#!` line: sbatch refuses the script (\"This does not look like a batch script\")",
            Fix.safe("insert `#!/bin/bash` as line 1", Edit(Span(0, start), "#!/bin/bash" + newline)),
            help="start the script with `#!/bin/bash`",
        )


@register
class DirectiveAfterCommand(Rule):
    code = "SBL003"
    name = "directive-after-command"
    severity = Severity.ERROR
    summary = "An `#SBATCH` line after the first command: sbatch silently ignores it."
    what = """
        Finds `#SBATCH` lines below the first command of the script. sbatch reads directives from
        the top of the file and stops at the first line that is neither blank nor a comment; any
        command ends the header, even `set -euo pipefail` or `module load`. Lines of a
        here-document are data, not directives of the script: a body the script submits
        (`sbatch <<EOF`, or a file written with `cat > job.sbatch <<EOF` and passed to `sbatch`)
        is checked as a batch script of its own, at its real lines; a body it only writes is
        not checked. In an unquoted body (`<<EOF`) the outer shell expands `$X` first, so
        `#SBATCH --nodes=$N` there is fine, and no fix is offered inside it.
    """
    why = """
        The ignored directive does not produce any warning: the job runs with the default time
        limit, node count or partition instead of the one written, which shows up as a job killed
        early, a single-node run of a multi-node job, or a job in the wrong queue.
    """
    fix_safety = """
        Unsafe: moving the line into the header makes sbatch apply an option it ignored so far,
        which changes what the job requests.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                set -euo pipefail
                #SBATCH --time=01:00:00
                srun hostname
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                #SBATCH --time=01:00:00
                set -euo pipefail
                srun hostname
                """
            ),
            unsafe=True,
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2

                # comments and blank lines do not end the header
                #SBATCH --time=01:00:00
                set -euo pipefail
                srun hostname
                """
            )
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -euo pipefail
                cat > sweep.sbatch <<EOF
                #!/bin/bash
                #SBATCH --nodes=${NODES}
                #SBATCH --time=01:00:00
                srun python sweep.py
                EOF
                sbatch sweep.sbatch
                """
            ),
            title="a job written by the script and submitted",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        header = script.header
        first = header.first_command_line
        if first is None:
            return
        source = script.source
        seen = set()
        for directive in header.directives:
            if directive.placement != "late" or directive.line in seen:
                continue
            seen.add(directive.line)
            line_span = source.line_span(directive.line, with_newline=True)
            text = header.line_text(directive.line)
            newline = source.line_ending_at(directive.line) or source.preferred_newline()
            if header.last_header_line:
                insert_at = source.line_span(header.last_header_line, with_newline=True).end
                where = f"after line {header.last_header_line}"
            else:
                insert_at = source.line_span(first).start
                where = f"before line {first}"
            fix = Fix.unsafe(
                f"move the line to the end of the header ({where})",
                Edit.insert(insert_at, text + newline),
                Edit.delete(line_span),
            )
            yield self.report(
                script,
                source.line_span(directive.line),
                f"`{text.strip()}` comes after the first command (line {first}): sbatch ignores it",
                fix,
                label="ignored by sbatch",
            )


@register
class MalformedDirective(Rule):
    code = "SBL004"
    name = "malformed-directive"
    severity = Severity.WARNING
    summary = "`#SBATCH` indented, spaced (`# SBATCH`) or lower-case: sbatch ignores it."
    what = """
        Finds comment lines that look like directives but that sbatch does not read as such:
        `#SBATCH` with whitespace before it, `# SBATCH` with a space after the `#`, and `#sbatch`
        in another case. A line that starts with `#SBATCH` in column 1 is a directive even with
        no blank after it: sbatch applies `#SBATCH--nodes=2`, and refuses `#SBATCHED …`
        ("Invalid directive found in batch script: ED", reported by SBL005). A usage comment is
        not a directive: a lower-case `sbatch` followed by a word that is no option nor an
        option's value (`#   sbatch --nodes=4 train.sh`, `# sbatch -p debug x.sh big`) shows how
        to submit the script and is left alone; `#sbatch --nodes=2` (options only) is reported.
    """
    why = """
        sbatch only reads lines that begin with exactly `#SBATCH` in the first column. Anything
        else is an ordinary comment, so the option is silently not applied.
    """
    fix_safety = """
        Removing the leading whitespace is safe: the author clearly wrote a directive. The other
        forms are unsafe: they may be a directive commented out on purpose, and fixing them makes
        sbatch apply an option it ignored so far.
    """
    examples = Examples(lambda: (
        Bad(
            "#!/bin/bash\n  #SBATCH --nodes=2\nsrun hostname\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n",
        ),
        Bad(
            "#!/bin/bash\n# SBATCH --time=00:30:00\nsrun hostname\n",
            fixed="#!/bin/bash\n#SBATCH --time=00:30:00\nsrun hostname\n",
            unsafe=True,
        ),
        Bad(
            "#!/bin/bash\n#sbatch --nodes=2\nsrun hostname\n",
            fixed="#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n",
            unsafe=True,
        ),
        Good("#!/bin/bash\n#SBATCH--nodes=2\nsrun hostname\n"),
        Good("#!/bin/bash\n##SBATCH --nodes=4  (disabled on purpose)\nsrun hostname\n"),
        Good(
            clean(
                """
                #!/bin/bash
                # Usage:
                #   sbatch train.sh
                #   sbatch --nodes=8 -p long train.sh large
                #SBATCH --nodes=2
                srun hostname
                """
            ),
            title="usage comments",
        ),
    ))
    DESCRIPTIONS = {
        "indented": "`#SBATCH` is indented: sbatch only reads directives that start in column 1",
        "spaced": "`# SBATCH` has a space after the `#`: sbatch reads it as a comment",
        "case": "directives must be written `#SBATCH` in upper case: sbatch reads this as a comment",
    }

    def check(self, script) -> Iterator[Diagnostic]:
        for item in script.header.malformed:
            description = self.DESCRIPTIONS[item.kind]
            fix = None
            if item.fixed_line is not None:
                edit = Edit(item.span, item.fixed_line)
                if item.kind == "indented":
                    fix = Fix.safe("remove the leading whitespace", edit)
                else:
                    fix = Fix.unsafe("rewrite it as an `#SBATCH` directive", edit)
            yield self.report(script, item.span, description, fix, label="ignored by sbatch")


@register
class TemplateFile(Rule):
    code = "SBL015"
    name = "template-file"
    severity = Severity.INFO
    summary = "The file is a template for another tool (Jinja, `{name}` fields): it is not checked as a job."
    what = """
        Recognises a file that another tool fills in before it becomes a job script: a Jinja tag
        (`{{ nodes }}`, `{% if … %}`) outside quotes, comments and here-documents, a `{name}`
        field in an `#SBATCH` line (Python's `str.format`), or a template file name (`.j2`,
        `.jinja`, `.tmpl`, `.tpl`, `.template`). It reports the file once, and no other rule
        checks it. A `$VAR` in a directive is not such evidence: sbatch does not expand it, so in
        a job script it is a real mistake (SBL006); a placeholder such as `<ACCOUNT>` in a job
        stays SBL009.
    """
    why = """
        A template is not what sbatch will read: its directives hold fields the generating tool
        replaces, so checking it as a job reports every field as an invalid value, an unknown
        option or a late directive. One finding says why the file was not checked instead.
    """
    fix_safety = "There is no fix: lint the script the tool generates."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes={nodes}
                #SBATCH --time={time_limit}
                srun python train.py
                """
            ),
            contains="template",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                {% for step in steps %}
                srun python {{ step }}.py
                {% endfor %}
                """
            ),
            title="Jinja tags",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=2
                docker_format='{{.State.Status}}'
                echo "${HOME}"
                srun python train.py --name "run-{epoch}"
                """
            ),
            title="braces in quotes are text",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        evidence = template_evidence(script)
        if evidence is None:
            return
        yield self.report(
            script,
            evidence.span,
            f"this file is a template for another tool ({evidence.what})",
            label="template",
            help="lint the script the tool generates from it",
            notes=("it is not checked as a job script",),
        )


@register
class RegionNotAnalysed(Rule):
    code = "SBL016"
    name = "region-not-analysed"
    severity = Severity.INFO
    summary = "Valid bash the parser cannot read: that region of the script was not checked."
    what = """
        Reports each region of a script that `bash -n` accepts but that this linter's parser
        could not read, so that no rule looked inside it. It is information about the linter's
        limits, not a mistake in the script; a script bash itself rejects is SBL001's. Without
        `bash` on the machine such regions are reported by SBL001. The parser often gives up
        several lines before the construct it cannot read (from the first command after the
        header, in a long script), and the region reported is all it gave up on; a note then
        names the line where it first failed, which holds the construct it cannot read. Only
        credentials are still looked for there, by reading the region as text (SBL401), so that
        they are reported and masked in the output.
    """
    why = """
        Silence inside a region nobody read does not mean the lines are correct: a late
        `#SBATCH`, a per-task variable in the wrong shell or a misplaced launcher there goes
        unreported. Knowing which lines were skipped tells the reader what to check by hand.
    """
    fix_safety = "There is nothing to fix in the script."
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                if [ $DATA/shard_$RANK.bin = "$EXPECTED" ]; then
                  srun hostname
                fi
                """
            ),
            title="a test word the parser cuts",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                time srun python train.py
                step=$((10#$SLURM_ARRAY_TASK_ID + 1))
                echo "$step"
                """
            ),
            title="forms the model reads",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        regions: List[Span] = script.errors
        if not regions:
            return
        from ..model.bash import verdict  # only a script with parse errors

        accepted, _ = verdict(script)
        if not accepted:
            return
        source = script.source
        for region in regions:
            first, last = source.line_of(region.start), source.line_of(max(region.start, region.end - 1))
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            verb = "was" if first == last else "were"
            message = f"bash accepts {where}, but {'it' if first == last else 'they'} could not be parsed here and {verb} not analysed"
            yield self.report(script, region, message, label="not analysed", notes=failed_at(script, region))


def failed_at(script, region: Span) -> Tuple[str, ...]:
    """A note naming the line where the parser first failed in a region, when the region
    starts lines before it: that line holds the construct to look at."""
    line = script.failure_line(region)
    if line is None:
        return ()
    return (f"the parser first failed on line {line}: what it could not read is there",)

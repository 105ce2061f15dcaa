"""SBL401–SBL403: credentials written into the script, expanded into command lines, or traced.

Detection lives in ``sbatchlint.secrets`` (with the model) and ``sbatchlint.redaction`` (text);
these rules only decide what to report. No message, label, help or fix description ever contains a secret's value: at most
its masked form (first 3 characters and ``…``) and the variable's name.
"""
from __future__ import annotations

from .. import shell  # (loaded with the secrets analysis; asked for at every check)
from ..diagnostics import Diagnostic, Edit, Fix, Severity
from ..lazyre import lazy
from ..registry import register
from ..redaction import mask
from ..secrets import (
    TaskString,
    expands_a_secret_variable,
    expansion_name,
    is_secret_variable,
    scan,
    task_strings,
    unevaluated_bytes,
)
from ..source import Span
from .base import Bad, Examples, Good, Rule, clean

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Set, Tuple

# Obviously fake values in the documentation's examples, in the real shapes.
FAKE_HF = "hf_" + "FakeD0csT0kenN0tReal" + "AbCdEfGh123456"
FAKE_WANDB = "0123456789abcdef" * 2 + "01234567"
FAKE_GITLAB = "glpat-" + "FakeD0csT0kenN0tReal"
FAKE_SLACK_HOOK = "T00FAKE00/B00FAKE00/" + "FakeD0csH00kN0tReal0000"

_WHERE = {
    "assignment": "assigned to {name}",
    "env": "assigned to {name}",
    "item": "given as {name}=…",
    "export": "passed as {name}=… in --export",
    "directive": "passed as {name}=… in #SBATCH --export",
    "option": "passed to --{name}",
    "wandb": "given to `wandb login`",
    "text": "in a here-document",
    "unparsed": "given as {name}=… in a region the parser could not read",
}


@register
class HardcodedSecret(Rule):
    code = "SBL401"
    name = "hardcoded-secret"
    severity = Severity.ERROR
    summary = "A literal credential (Hugging Face, GitHub, GitLab, Slack, W&B, AWS, `sk-` key, or a secret-named variable) in the script."
    what = """
        Finds credentials written into the script itself: Hugging Face tokens (`hf_…`), GitHub
        tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_…`), GitLab personal,
        project and group access tokens (`glpat-…`), CI job (`glcbt-…`), deploy (`gldt-…`) and
        runner (`glrt-…`) tokens, Slack tokens (`xoxb-`, `xoxp-`, `xoxa-`, `xoxs-`, `xoxe-…`)
        and incoming-webhook URLs (`https://hooks.slack.com/services/T…/B…/…`, whose path is
        the secret), AWS access keys (`AKIA…`, `ASIA…`), OpenAI/Anthropic-style `sk-…` keys
        wherever they appear, and any literal given to a secret-named variable (`*_TOKEN`,
        `*_API_KEY`, `*SECRET*`, `*PASSWORD*`: `WANDB_API_KEY`, `AWS_SECRET_ACCESS_KEY`, …) in
        an assignment, `export`, `declare -x`, a `NAME=… command` prefix, an `--export=NAME=…`
        list (on `srun`, `sbatch` or `#SBATCH`), a `--token VALUE` option, `wandb login KEY`, or
        inside a `bash -c` string.

        Placeholders are not reported: `hf_your_token_here`, `<YOUR_HF_TOKEN>`, `changeme`,
        `xxxx…`, `***`, empty values, and values the shell fills in (`$HF_TOKEN`,
        `${HF_TOKEN:?…}`, `$(cat ~/.hf_token)`). Neither are tokenizer entries such as
        `PAD_TOKEN="[PAD]"` or counts such as `MAX_TOKEN=512`. A credential on a commented-out
        line is not reported (nothing runs it), but like every secret the tool finds, its value
        is masked in all output.
    """
    why = """
        A batch script is shared, committed and copied around, and Slurm itself keeps a copy of
        it with the job (`scontrol write batch_script`, and the accounting database when it
        stores job scripts). Anyone who can read any of those copies holds the credential. The
        value also stays in the repository's history after it is removed: revoke it.
    """
    fix_safety = """
        Unsafe: the literal is replaced by `${NAME:?set NAME in the environment before sbatch}`,
        so the job now needs the variable in the environment it is submitted from (sbatch passes
        that environment to the job) and stops with that message when it is missing. Inside a
        `bash -c` string the reference is escaped so the task's shell reads it. In an
        `--export=…,NAME=VALUE` list the value is dropped: `NAME` alone passes it on from the
        environment. `wandb login KEY` becomes `wandb login`, which reads `WANDB_API_KEY` from
        the environment; the key is not put back on the command line, where `ps` would show it.
        A Slack webhook's path has no automatic fix: no conventional variable holds it alone.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                export HF_TOKEN={FAKE_HF}
                srun python download_weights.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                export HF_TOKEN=${HF_TOKEN:?set HF_TOKEN in the environment before sbatch}
                srun python download_weights.py
                """
            ),
            unsafe=True,
            contains="hf_…",
        ),
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                wandb login --relogin {FAKE_WANDB}
                srun python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                wandb login
                srun python train.py
                """
            ),
            unsafe=True,
            title="a W&B key given to wandb login",
        ),
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --export=ALL,WANDB_API_KEY={FAKE_WANDB}
                srun python train.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                #SBATCH --export=ALL,WANDB_API_KEY
                srun python train.py
                """
            ),
            unsafe=True,
            title="a key in #SBATCH --export",
        ),
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                srun bash -c "huggingface-cli download --token {FAKE_HF} org/model"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun bash -c "huggingface-cli download --token \\${HF_TOKEN:?set HF_TOKEN in the environment before sbatch} org/model"
                """
            ),
            unsafe=True,
            title="a token inside a bash -c string",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                DB_PASSWORD='s3cr3t-Passw0rd'
                srun python eval.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                DB_PASSWORD="${DB_PASSWORD:?set DB_PASSWORD in the environment before sbatch}"
                srun python eval.py
                """
            ),
            unsafe=True,
            title="a literal assigned to a secret-named variable",
        ),
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                git clone https://oauth2:{FAKE_GITLAB}@gitlab.com/org/data-tools.git
                srun python data-tools/prepare.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                git clone https://oauth2:"${GITLAB_TOKEN:?set GITLAB_TOKEN in the environment before sbatch}"@gitlab.com/org/data-tools.git
                srun python data-tools/prepare.py
                """
            ),
            unsafe=True,
            contains="GitLab access token",
            title="a GitLab token in a clone URL",
        ),
        Bad(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                srun python train.py
                curl -s -d '{{"text": "training done"}}' https://hooks.slack.com/services/{FAKE_SLACK_HOOK}
                """
            ),
            contains="Slack webhook URL",
            title="a Slack incoming webhook (no automatic fix)",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                export HF_TOKEN=${HF_TOKEN:?set HF_TOKEN in the environment before sbatch}
                export WANDB_API_KEY=$(cat ~/.config/wandb_key)
                srun python train.py
                """
            )
        ),
        Good(
            clean(
                f"""
                #!/bin/bash
                #SBATCH --nodes=1
                # export HF_TOKEN={FAKE_HF}
                PAD_TOKEN="[PAD]"
                MAX_TOKEN=4096
                srun python train.py --pad-token "$PAD_TOKEN"
                """
            ),
            title="a commented-out token, tokenizer entries",
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        for secret in scan(script):
            if not secret.live:
                continue
            where = _WHERE.get(secret.site, "")
            where = f" {where.format(name=secret.name)}" if where and secret.name else ""
            message = f"hardcoded {secret.kind} (`{mask(secret.value)}`){where}"
            fix = Fix.unsafe(secret.how, *secret.edits) if secret.edits else None
            env = secret.env or "the variable"
            yield self.report(
                script,
                secret.span,
                message,
                fix,
                label="credential",
                help=f"set {env} in the environment you submit from (sbatch passes it to the job), "
                "or read it from a file only you can read; then revoke this one",
                notes=("anyone who can read the script or the job's stored copy can use it",),
            )


# -- SBL402 ----------------------------------------------------------------------------------------

_LOG_DESTINATIONS = frozenset({"/dev/stdout", "/dev/stderr", "/dev/tty", "&1", "&2", "1", "2"})
_REDIRECTION_OPERATOR = lazy(r"^\d*[<>&|]+\s*")


_UNREAD = object()


def batch_sites(script, value) -> List[Tuple[Span, str, int]]:
    """Where the batch shell expanded a secret variable into ``value``: (site, name, value index)."""
    out: List[Tuple[Span, str, int]] = []
    seen: Set[Span] = set()
    # the secret variable each expansion site expands (or None): the pieces of a long string
    # share a few sites, each read once for the script
    secret_at = script.__dict__.get("_secret_expansion_sites")
    if secret_at is None:
        secret_at = script.__dict__["_secret_expansion_sites"] = {}
    for index, piece in enumerate(value.pieces):
        site: Optional[Span] = None
        name: Optional[str] = None
        if not piece.task:
            if not piece.known and piece.name and piece.span is not None and is_secret_variable(script, piece.name):
                text = script.data[piece.span.start : piece.span.end].decode("utf-8", "replace")
                if expansion_name(text) == piece.name:
                    site, name = piece.span, piece.name
            for via in piece.via if site is None else ():
                key = (via.start, via.end)
                candidate = secret_at.get(key, _UNREAD)
                if candidate is _UNREAD:
                    text = script.data[via.start : via.end].decode("utf-8", "replace")
                    candidate = expansion_name(text)
                    if candidate and not is_secret_variable(script, candidate):
                        candidate = None
                    secret_at[key] = candidate
                if candidate:
                    site, name = via, candidate
                    break
        if site is not None and name and site not in seen:
            seen.add(site)
            out.append((site, name, value.offsets[index]))  # where the piece starts in the value
    return out


def task_sites(script, value) -> List[Tuple[Span, str]]:
    """Secret variables the TASK's shell expands in a task-level word."""
    out = []
    for piece in value.pieces:
        if piece.task and not piece.known and piece.name and piece.span is not None and is_secret_variable(script, piece.name):
            out.append((piece.span, piece.name))
    return out


def _reaches_task(script, name: str, at: int, step) -> Tuple[bool, str]:
    """Whether the task's environment has ``name`` (so escaping it works), and why not."""
    values = script.values
    if values.defined(name) and not values.is_exported(name, at):
        return False, f"{name} is a plain shell variable of the batch script: export it first (srun passes only exported variables)"
    if step is not None:
        option = step.option("export")
        if option is not None:
            if not option.value_known:
                return False, "the step's --export list is not known"
            items = [item.split("=", 1)[0] for item in (option.value or "").split(",")]
            if "ALL" not in items and name not in items:
                return False, f"the step's --export={option.value} does not pass {name} to the tasks"
    return True, ""


def _statement_lines(script, node) -> Optional[Span]:
    """The whole lines of a statement that stands alone on them (to delete it), or None."""
    while node.parent is not None and node.parent.type in ("redirected_statement",):
        node = node.parent
    if node.parent is None or node.parent.type not in ("program", "compound_statement", "do_group", "if_statement",
                                                      "else_clause", "elif_clause", "case_item", "subshell"):
        return None
    source = script.source
    first = source.line_of(node.start_byte)
    last = source.line_of(max(node.start_byte, node.end_byte - 1))
    start = source.line_span(first).start
    end_line = source.line_span(last, with_newline=True)
    data = script.data
    if data[start : node.start_byte].strip() or data[node.end_byte : source.line_span(last).end].strip():
        return None
    return Span(start, end_line.end)


def _prints_to_log(node) -> bool:
    """An echo whose output reaches the job log (not a file, a pipe or a substitution)."""
    current = node
    while current is not None:
        parent = current.parent
        if parent is None:
            return True
        if parent.type == "pipeline":
            named = [c for c in parent.children if c.is_named]
            if named and named[-1] != current:
                return False
        if parent.type in ("command_substitution", "process_substitution"):
            return False
        if parent.type == "redirected_statement":
            for redirect in parent.children:
                if redirect.type == "file_redirect":
                    text = redirect.text.decode("utf-8", "replace") if redirect.text else ""
                    destination = _REDIRECTION_OPERATOR.sub("", text).strip()
                    if ">" in text and destination not in _LOG_DESTINATIONS:
                        return False
                elif redirect.type in ("heredoc_redirect", "herestring_redirect"):
                    continue
        if parent.type in ("program", "function_definition"):
            return True
        current = parent
    return True


@register
class SecretExpandedIntoCommand(Rule):
    code = "SBL402"
    name = "secret-expanded-into-command"
    severity = Severity.ERROR
    summary = "A secret variable expanded by the batch shell into a task command string, a step's command line or an echo."
    what = """
        Finds secret variables (`HF_TOKEN`, `GH_TOKEN`, `WANDB_API_KEY`, any `*_TOKEN`,
        `*_API_KEY`, `*SECRET*`, `*PASSWORD*`, or a variable holding a literal credential) whose
        value the batch shell writes into a command: unescaped in a string that a step runs with
        `bash -c` (directly, or through `CMD="…$HF_TOKEN…"` and `bash -c "$CMD"`), on an
        `srun` command line (`srun python fetch.py --token $HF_TOKEN`), or in an `echo`/`printf`
        whose output goes to the job log. Naming a variable does not count: `--container-env`
        and `--export=HF_TOKEN` pass the name, not the value, and `${#HF_TOKEN}` or
        `${HF_TOKEN:+set}` do not expand it. An `echo` into a file or a pipe
        (`echo "$KEY" | docker login --password-stdin`) is not reported.
    """
    why = """
        Expanded early, the value becomes part of the step's command line: srun's and every
        task shell's arguments show it in `ps` to anyone on the node, and it is printed into the
        job log whenever the command is (`set -x`, error messages that quote the command), while
        an `echo` writes it to the log directly. Escaped, the string carries only `$HF_TOKEN` and
        each task's shell reads the value from its own environment, which srun fills from the
        batch shell's exported variables. Best of all, the program reads the variable itself
        (the Hugging Face, W&B and GitHub tools all do) and the value is on no command line.
    """
    fix_safety = """
        In a `bash -c` string the fix is safe: `$HF_TOKEN` becomes `\\$HF_TOKEN`, which the
        task's shell expands to the same value, provided the variable reaches the task's
        environment. The fix is offered only then: when the variable comes from the submission
        environment or is exported, and the step's `--export` list (if any) passes it; otherwise
        the message says what to export first. Dropping an `echo` that prints a secret is
        unsafe (the line goes away). A secret on a step's direct command line has no automatic
        fix: the program has to read it from its environment instead.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                CMD="huggingface-cli download org/model --token $HF_TOKEN"
                srun bash -c "$CMD"
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                CMD="huggingface-cli download org/model --token \\$HF_TOKEN"
                srun bash -c "$CMD"
                """
            ),
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                echo "downloading with token $HF_TOKEN"
                srun python download_weights.py
                """
            ),
            fixed=clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun python download_weights.py
                """
            ),
            unsafe=True,
            title="an echo",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun python download_weights.py --token "$HF_TOKEN"
                """
            ),
            title="on the step's command line",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                HF_TOKEN=$(cat ~/.cache/hf_token)
                srun bash -c "huggingface-cli download org/model --token ${HF_TOKEN}"
                """
            ),
            contains="export it first",
            title="not exported: no fix until it is",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun --container-env=HF_TOKEN bash -c "huggingface-cli download org/model --token \\$HF_TOKEN"
                echo "HF token set: ${HF_TOKEN:+yes} (${#HF_TOKEN} characters)"
                echo "$WANDB_API_KEY" > "$HOME/.wandb_key"
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        if not _expands_a_secret(script):
            return  # every finding below is the expansion of a secret variable
        reported: Set[Span] = set()
        steps_by_string = {id(step.task_string): step for step in script.steps if step.task_string is not None}
        # 1. Task command strings (srun … bash -c, and bash -c in the batch shell).
        for task in task_strings(script):
            step = steps_by_string.get(id(task.value))
            for site, name, index in batch_sites(script, task.value):
                if site in reported:
                    continue
                reported.add(site)
                yield self._string_finding(script, task, step, site, name, index)
        # 2. A step's own command line and options.
        for step in script.steps:
            words = list(step.task_argv)
            if step.task_string is not None and step.shell_index is not None:
                words = words[: step.shell_index]
            for word in words:
                for site, name, _ in batch_sites(script, word.value):
                    if site in reported:
                        continue
                    reported.add(site)
                    yield self.report(
                        script,
                        site,
                        f"${name} is expanded onto the srun command line",
                        label="secret on the command line",
                        notes=("its value is in every task's arguments, visible in `ps` on each node",),
                        help=f"let the program read {name} from its environment (srun passes the exported variables to every task)",
                    )
            for option in step.options:
                for word in option.words:
                    for site, name, _ in batch_sites(script, word.value):
                        if site in reported:
                            continue
                        reported.add(site)
                        yield self._option_finding(script, step, option, site, name)
        # 3. echo / printf into the job log, in the batch shell or in a task string.
        commands = [(c, False) for c in script.commands] + [
            (c, True) for task in task_strings(script) for c in task.commands
        ]
        for command, in_task in commands:
            if command.program not in ("echo", "printf") or not _prints_to_log(command.node):
                continue
            if command.program == "printf" and any(w.text.startswith("-v") for w in command.args[:1]):
                continue  # printf -v NAME …: assigns, prints nothing
            found: List[Tuple[Span, str]] = []
            for word in command.args:
                sites = [(s, n) for s, n, _ in batch_sites(script, word.value)] + task_sites(script, word.value)
                # point at the expansion when it is written in the echo itself, else at the echoed word
                found += [(s if word.span.contains(s) else word.span, n) for s, n in sites]
            if not found:
                continue
            site, name = found[0]
            fix = None
            if not in_task and not command.in_string:
                lines = _statement_lines(script, command.node)
                if lines is not None:
                    fix = Fix.unsafe(f"remove the `{command.program}` that prints ${name}", Edit.delete(lines))
            yield self.report(
                script,
                site,
                f"`{command.program}` prints ${name} into the job log",
                fix,
                label="printed",
                notes=("anyone who can read the log has the secret",),
                help="print whether it is set instead: ${" + name + ":+set} or ${#" + name + "} characters",
            )

    def _option_finding(self, script, step, option, site: Span, name: str) -> Diagnostic:
        message = f"${name} is expanded onto the srun command line"
        fix = None
        data = script.data
        if option.name == "export":
            # ``--export=…,NAME=$NAME``: the name alone passes the same value, off the command line
            before = data[: site.start]
            after = data[site.end : site.end + 1]
            reaches, _why = _reaches_task(script, name, step.span.start, None)
            if before.endswith(("=" + name + "=").encode()) or before.endswith(("," + name + "=").encode()):
                if after in (b"", b",", b" ", b"\t", b"\n", b'"', b"'") and reaches:
                    fix = Fix.safe(f"pass {name} by name: srun takes it from the environment", Edit.delete(Span(site.start - 1, site.end)))
        return self.report(
            script,
            site,
            message,
            fix,
            label="secret on the command line",
            help=f"name it instead (`--export=ALL,{name}`): srun passes the exported variable to every task",
            notes=("its value is visible in `ps` on the node",),
        )

    def _string_finding(self, script, task: TaskString, step, site: Span, name: str, index: int) -> Diagnostic:
        message = f"${name} is expanded by the batch shell into the task's command string"
        notes = ["its value lands in the command line of every task and in the job log whenever the command is printed"]
        at = step.span.start if step is not None else site.start
        reaches, why_not = _reaches_task(script, name, at, step)
        quote = task.quote_at(index)
        node = script.root.descendant_for_byte_range(site.start, site.start)
        in_double_quotes = False
        while node is not None and node.type not in ("command", "variable_assignment", "program"):
            if node.type in ("string", "translated_string"):
                in_double_quotes = True
                break
            node = node.parent
        fix = None
        help_text = f"escape it (\\${name}) so each task reads {name} from its own environment"
        if not reaches:
            notes.append(why_not)
            help_text = f"then escape it (\\${name}) so each task reads {name} from its own environment"
        elif quote == "'":
            help_text = f"the task's shell sees it inside single quotes; pass it another way (for example as an exported {name})"
        elif in_double_quotes:
            fix = Fix.safe(f"escape it as `\\${name}`: each task reads {name} from its environment", Edit.insert(site.start, "\\"))
        return self.report(
            script, site, message, fix, label="expanded by the batch shell", help=help_text, notes=notes
        )


# -- SBL403 ----------------------------------------------------------------------------------------


def _xtrace_change(words: List[str]) -> Optional[bool]:
    """What ``set WORDS`` does to xtrace: True (on), False (off) or None (nothing)."""
    state: Optional[bool] = None
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-o", "+o") and i + 1 < len(words):
            if words[i + 1] == "xtrace":
                state = word == "-o"
            i += 2
            continue
        if word == "--":
            break
        if len(word) > 1 and word[0] in "-+" and word[1] != word[0] and "x" in word[1:]:
            state = word[0] == "-"
        i += 1
    return state


def _may_trace(command) -> bool:
    """Whether ``set …`` may change xtrace (``_xtrace_change`` is not None), answered from the
    command's bytes while its words are not evaluated yet: only a word with an ``x`` in it
    changes it, and without an expansion, a substitution or a glob each word's text comes from
    those bytes."""
    raw = unevaluated_bytes(command)
    if raw is None:
        return True
    return b"x" in raw or any(char in raw for char in (b"$", b"`", b"*", b"?", b"["))


def _secret_variable_possible(script) -> bool:
    """Whether some variable of the script may be a secret variable (``is_secret_variable``):
    a secret-looking name (``redaction.secret_name_kind``) ends in ``TOKEN`` or ``KEY`` or holds
    ``SECRET`` or ``PASSW``, in the script or a string a task's shell runs, where it is written
    (lowered: ``token`` or ``key`` then, where the name ends, no letter or digit); any other name
    is one only when it holds a live credential literal the scan found. (Asked by SBL402 and
    SBL403: kept.)"""
    kept = script.__dict__
    possible = kept.get("_secret_variable_possible")
    if possible is None:
        texts = [script.data] + [task.text for task in task_strings(script)]
        possible = kept["_secret_variable_possible"] = any(secret.live for secret in scan(script)) or any(
            _holds_secret_name_hint(text.lower()) for text in texts
        )
    return possible


def _holds_secret_name_hint(lowered: bytes) -> bool:
    if b"secret" in lowered or b"passw" in lowered:
        return True
    for hint in (b"token", b"key"):
        at = lowered.find(hint)
        while at >= 0:
            after = lowered[at + len(hint) : at + len(hint) + 1]
            if not after or not (after.isdigit() or after.islower()):
                return True  # where a name may end (``--tokenizer-model`` holds no such name)
            at = lowered.find(hint, at + 1)
    return False


def _expands_a_secret(script) -> bool:
    """``expands_a_secret_variable``, answered at once where no variable can be a secret one."""
    return _secret_variable_possible(script) and expands_a_secret_variable(script)


def _shebang_traces(script) -> bool:
    first = script.source.text(script.source.line_span(1)) if script.data.startswith(b"#!") else ""
    words = first[2:].split()
    return any(w.startswith("-") and not w.startswith("--") and "x" in w[1:] for w in words[1:])


@register
class XtraceWithSecrets(Rule):
    code = "SBL403"
    name = "xtrace-with-secrets"
    severity = Severity.WARNING
    summary = "`set -x` / `bash -x` is on while commands that use secret variables run: their values go to the job log."
    what = """
        Follows command tracing through the script: `#!/bin/bash -x`, `set -x`, `set -o xtrace`
        and combined flags such as `set -euxo pipefail` turn it on, `set +x` / `set +o xtrace`
        turn it off. While it is on, every command and assignment that expands a secret
        variable (`HF_TOKEN`, `WANDB_API_KEY`, any `*_TOKEN`, `*_API_KEY`, `*SECRET*`,
        `*PASSWORD*`, or a variable holding a literal credential) is reported once per variable
        and tracing region. The same holds inside a task string run by `bash -x -c` or one that
        calls `set -x` itself.
    """
    why = """
        bash prints each traced command after expansion, so `huggingface-cli login --token
        "$HF_TOKEN"` appears in the job log as `+ huggingface-cli login --token hf_…` with the
        whole token, and so does an assignment such as `export HF_TOKEN=$(cat ~/.hf_token)`.
        Job logs live on shared filesystems and are read by whoever debugs the job.
    """
    fix_safety = """
        There is no automatic fix: turning tracing off around the lines that use the secret
        (`set +x` … `set -x`) or dropping `-x` is the author's choice.
    """
    examples = Examples(lambda: (
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -euxo pipefail
                huggingface-cli login --token "$HF_TOKEN"
                srun python train.py
                """
            ),
            contains="HF_TOKEN",
        ),
        Bad(
            clean(
                """
                #!/bin/bash -x
                #SBATCH --nodes=1
                export WANDB_API_KEY=$(cat ~/.config/wandb_key)
                srun python train.py
                """
            ),
            title="traced from the shebang",
        ),
        Bad(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                srun bash -x -c "huggingface-cli login --token \\$HF_TOKEN && python train.py"
                """
            ),
            title="a task shell run with -x",
        ),
        Good(
            clean(
                """
                #!/bin/bash
                #SBATCH --nodes=1
                set -x
                set +x
                huggingface-cli login --token "$HF_TOKEN"
                set -x
                srun python train.py
                """
            )
        ),
    ))

    def check(self, script) -> Iterator[Diagnostic]:
        source = script.source
        # Batch shell: tracing events in source order.
        events: List[Tuple[int, bool, str]] = []
        if _shebang_traces(script):
            events.append((0, True, source.text(source.line_span(1)).strip()))
        for command in script.commands:
            if command.program == "set" and _may_trace(command) and all(w.known for w in command.args):
                change = _xtrace_change([w.text for w in command.args])
                if change is not None:
                    events.append((command.node.start_byte, change, _short(script, command.node)))
        events.sort(key=lambda e: e[0])

        def region(offset: int) -> Optional[Tuple[int, str]]:
            current = None
            for start, on, text in events:
                if start >= offset:
                    break
                current = (start, text) if on else None
            return current

        uses: List[Tuple[int, Span, str]] = []  # (offset, span to report, variable)
        # Without a tracing event that turns tracing on, nothing is traced in the batch shell: no
        # need to look for uses. Nor before the first such event (``region`` is None up to and
        # including its offset), nor for an expansion of a secret variable where none is written
        # (as for SBL402).
        first_on = next((start for start, on, _text in events if on), None)
        expands = first_on is not None and _expands_a_secret(script)
        kinds = ("simple_expansion", "expansion", "variable_assignment") if expands else ("variable_assignment",)
        # (without expansions to read, only an assignment to a secret variable is a use)
        look = first_on is not None and (expands or _secret_variable_possible(script))
        for node in script.nodes_of_type(*kinds) if look else ():
            if node.start_byte <= first_on:
                continue
            if expands and node.type in ("simple_expansion", "expansion"):
                name = expansion_name(script.data[node.start_byte : node.end_byte].decode("utf-8", "replace"))
                if not name or not is_secret_variable(script, name):
                    continue
                if any(a.type in ("heredoc_body", "comment") for a in shell.ancestors(node)):
                    continue
                uses.append((node.start_byte, shell.node_span(node, script.data), name))
            else:  # a variable_assignment: its name first, the value only of a secret one
                name_node = node.child_by_field_name("name")
                if name_node is None:
                    continue
                name = script.data[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
                if is_secret_variable(script, name) and node.child_by_field_name("value") is not None:
                    uses.append((node.start_byte, shell.node_span(node, script.data), name))
        for command in script.commands if expands else ():
            if command.node.start_byte <= first_on:  # (``expands`` implies a first event)
                continue
            raw = unevaluated_bytes(command)
            if raw is not None and b"$" not in raw:
                continue  # no word of it takes anything from a variable: its argv is left unevaluated
            for word in command.argv:
                for _site, name, _ in batch_sites(script, word.value):
                    uses.append((command.node.start_byte, word.span, name))
        seen: Set[Tuple[int, str]] = set()
        for offset, span, name in sorted(uses, key=lambda u: (u[0], u[1])):
            on = region(offset)
            if on is None or (on[0], name) in seen:
                continue
            seen.add((on[0], name))
            where = "the shebang" if on[0] == 0 and events and events[0][0] == 0 else f"line {source.line_of(on[0])}"
            yield self.report(
                script,
                span,
                f"bash prints this command with ${name}'s value into the job log",
                label="traced",
                notes=(f"tracing (`{on[1]}`, {where}) is on here",),
                help=f"turn tracing off around it (`set +x` … `set -x`)",
            )
        # Task shells: `bash -x -c STRING`, or `set -x` inside the string.
        for task in task_strings(script):
            yield from self._task(script, task)

    def _task(self, script, task: TaskString) -> Iterator[Diagnostic]:
        on = "x" in task.flags
        origin = "bash -x" if on else ""
        seen: Set[str] = set()
        for command in sorted(task.commands, key=lambda c: c.node.start_byte):
            if command.program == "set" and all(w.known for w in command.args):
                change = _xtrace_change([w.text for w in command.args])
                if change is not None:
                    on, origin = change, "set " + " ".join(w.text for w in command.args)
                    seen = set()
                continue
            if not on:
                continue
            found: List[Tuple[Span, str]] = []
            for word in command.argv:
                found += task_sites(script, word.value)
                found += [(s, n) for s, n, _ in batch_sites(script, word.value)]
            for span, name in found:
                if name in seen:
                    continue
                seen.add(name)
                yield self.report(
                    script,
                    span,
                    f"the task's shell prints this command with ${name}'s value into the job log",
                    label="traced",
                    notes=(f"it traces its commands (`{origin}`)",),
                    help="drop -x, or turn tracing off around the command that uses the secret",
                )


def _short(script, node) -> str:
    text = script.data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip()
    return text if len(text) <= 40 else text[:37] + "..."

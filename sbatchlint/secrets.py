"""Secrets: where credential values sit in a file, which of them are live, and redaction.

Two uses, one analysis:

- ``scan(script)`` (memoised on the script) finds every secret value with the model:
  literals assigned to secret-named variables (plain, ``export``, ``declare -x``, ``local``,
  ``NAME=… cmd`` prefixes, ``env NAME=…``), ``NAME=VALUE`` items in arguments (``--export=``,
  ``--container-env=``, ``-e NAME=…``, Hydra-style ``wandb.api_key=…``), secret-named options
  (``--token VALUE``, ``--hf-token=VALUE``), ``wandb login [--relogin] KEY``, the same inside
  ``bash -c`` strings, ``#SBATCH --export=NAME=VALUE``, and known credential shapes anywhere
  (Hugging Face, GitHub, GitLab, Slack tokens and webhook URLs, AWS access keys, ``sk-`` keys).
  A secret is ``live`` when bash or sbatch acts on it; one in an ordinary comment is not live
  (SBL401 does not report it) but is still a secret: commented-out credentials are still
  credentials, so their values are redacted too.
  Comments, heredoc bodies and regions the parser could not read are scanned as text.
- ``find(source)`` / ``values(source)`` give the report layer every span and value to hide;
  ``mask`` is the only form in which the tool prints one (first 3 characters and ``…``);
  ``redact`` hides known values (also a fragment of 8 characters or more, in case an output
  truncates one) and any credential shape in an arbitrary text.

Placeholders are not secrets: ``hf_your_token_here``, ``<YOUR_HF_TOKEN>``, ``changeme``,
``xxx…``, ``***``, empty values, and values the batch shell fills in (``$VAR``,
``${VAR:?…}``, ``$(cat file)``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from .diagnostics import Edit
from .source import Source, Span

if TYPE_CHECKING:  # pragma: no cover
    from .model.script import Script
    from .model.steps import Command
    from .model.values import Value

# -- credential shapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    kind: str
    pattern: str  # a regular expression; group "body" is the random part
    env: str  # the variable such a credential conventionally lives in
    classes: int  # how many of (upper, lower, digit) the body must mix to look random


_GITLAB_BODY = r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*"

SHAPES: Tuple[Shape, ...] = (
    Shape("GitHub fine-grained token", r"(?<![A-Za-z0-9_])github_pat_(?P<body>[A-Za-z0-9_]{40,})", "GH_TOKEN", 2),
    Shape("Hugging Face token", r"(?<![A-Za-z0-9_])hf_(?P<body>[A-Za-z0-9]{30,})", "HF_TOKEN", 2),
    Shape("GitHub token", r"(?<![A-Za-z0-9_])gh[pousr]_(?P<body>[A-Za-z0-9]{30,})", "GH_TOKEN", 2),
    Shape("AWS access key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)(?P<body>[A-Z0-9]{16})(?![A-Za-z0-9])", "AWS_ACCESS_KEY_ID", 1),
    Shape("Anthropic API key", r"(?<![A-Za-z0-9_\-])sk-ant-(?P<body>[A-Za-z0-9_\-]{20,})", "ANTHROPIC_API_KEY", 3),
    Shape("OpenAI-style API key", r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?P<body>[A-Za-z0-9_\-]{20,})", "OPENAI_API_KEY", 3),
    # GitLab: 20 URL-safe characters after the prefix; the newer "routable" tokens are longer and
    # carry ``.``-separated parts (a CI job token may be a JWT). An instance-wide prefix may come
    # before (``acme-glpat-…``): the match starts at the GitLab prefix.
    Shape("GitLab access token", r"(?<![A-Za-z0-9_])glpat-(?P<body>%s)" % _GITLAB_BODY, "GITLAB_TOKEN", 2),
    Shape("GitLab CI job token", r"(?<![A-Za-z0-9_])glcbt-(?P<body>%s)" % _GITLAB_BODY, "CI_JOB_TOKEN", 2),
    Shape("GitLab deploy token", r"(?<![A-Za-z0-9_])gldt-(?P<body>%s)" % _GITLAB_BODY, "GITLAB_DEPLOY_TOKEN", 2),
    Shape("GitLab runner token", r"(?<![A-Za-z0-9_])glrt-(?P<body>%s)" % _GITLAB_BODY, "GITLAB_RUNNER_TOKEN", 2),
    # Slack: bot, user, workspace, legacy and refresh tokens (and ``xoxe.xoxp-`` configuration
    # tokens); after the prefix a real one starts with a number (team, version) and a dash.
    Shape("Slack token", r"(?<![A-Za-z0-9_])(?:xoxe\.)?xox[bpase]-(?P<body>[0-9]+-[A-Za-z0-9\-]{8,})", "SLACK_TOKEN", 2),
    # A Slack incoming webhook: the path after the host is the secret (team, channel hook, key).
    # No conventional variable holds only the path, so there is no automatic fix.
    Shape(
        "Slack webhook URL",
        r"(?<=hooks\.slack\.com/services/)T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/(?P<body>[A-Za-z0-9]{16,})(?![A-Za-z0-9])",
        "",
        2,
    ),
)
# Literal text every match of a shape contains: a scan is skipped when none is there (the
# patterns start with a look-behind, so the regex engine itself cannot search for the literal).
_SHAPE_HINTS = {
    "GitHub fine-grained token": ("github_pat_",),
    "Hugging Face token": ("hf_",),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "AWS access key": ("AKIA", "ASIA"),
    "Anthropic API key": ("sk-ant-",),
    "OpenAI-style API key": ("sk-",),
    "GitLab access token": ("glpat-",),
    "GitLab CI job token": ("glcbt-",),
    "GitLab deploy token": ("gldt-",),
    "GitLab runner token": ("glrt-",),
    "Slack token": ("xox",),  # one test for xoxb-, xoxp-, xoxa-, xoxs-, xoxe-
    "Slack webhook URL": ("hooks.slack.com/services/",),
}
_SHAPE_TEXT = [(shape, re.compile(shape.pattern), _SHAPE_HINTS[shape.kind]) for shape in SHAPES]
# One pass answers "could any shape be in this text?" before the per-shape checks: nearly every
# value holds no hint at all, and one alternation costs less than a test per hint.
_ANY_HINT = re.compile(
    "|".join(re.escape(h) for h in sorted({h for hints in _SHAPE_HINTS.values() for h in hints}, key=len, reverse=True))
)
_SHAPE_BYTES = [
    (shape, re.compile(shape.pattern.encode("ascii")), tuple(h.encode("ascii") for h in _SHAPE_HINTS[shape.kind]))
    for shape in SHAPES
]

# Conventional names: the kind of credential a variable holds, for messages.
NAMED_KINDS = {
    "HF_TOKEN": "Hugging Face token",
    "HUGGING_FACE_HUB_TOKEN": "Hugging Face token",
    "HUGGINGFACE_TOKEN": "Hugging Face token",
    "HF_HUB_TOKEN": "Hugging Face token",
    "GH_TOKEN": "GitHub token",
    "GITHUB_TOKEN": "GitHub token",
    "WANDB_API_KEY": "W&B API key",
    "AWS_SECRET_ACCESS_KEY": "AWS secret access key",
    "AWS_SESSION_TOKEN": "AWS session token",
    "OPENAI_API_KEY": "OpenAI API key",
    "ANTHROPIC_API_KEY": "Anthropic API key",
    "NGC_API_KEY": "NGC API key",
    "GITLAB_TOKEN": "GitLab token",
    "GITLAB_PRIVATE_TOKEN": "GitLab token",
    "SLACK_TOKEN": "Slack token",
    "SLACK_BOT_TOKEN": "Slack token",
    "SLACK_USER_TOKEN": "Slack token",
}

# -- names -------------------------------------------------------------------------------------

_NOT_A_SECRET_SUFFIX = re.compile(
    r"_(?:FILE|FILES|PATH|DIR|DIRECTORY|FILENAME|NAME|ID|URL|URI|ENDPOINT|HOST|ENV|VAR|VARIABLE|TYPE|MODE|"
    r"LENGTH|LEN|SIZE|COUNT|NUM|LIMIT|FLAG|ARN|REF|HELPER|PROVIDER|STORE|CMD|COMMAND|ARG|ARGS|SOURCE|"
    r"METHOD|POLICY|FORMAT|HEADER|PREFIX|ROTATION|TTL|EXPIRY|EXPIRES|EXPIRATION)$"
)
_NOT_A_SECRET_PREFIX = re.compile(r"^(?:USE|ENABLE|DISABLE|NO|SKIP|REQUIRE|REQUIRES|HAS|IS|WITH|WITHOUT|NUM|MAX|MIN|N)_")
# Tokenizer vocabulary entries, not credentials: PAD_TOKEN, EOS_TOKEN, IMAGE_TOKEN … (but
# SLACK_BOT_TOKEN and SLACK_USER_TOKEN are Slack's own names for its credentials)
_TOKENIZER_TOKEN = re.compile(
    r"(?:^|_)(?<!SLACK_)(?:PAD|EOS|BOS|UNK|SEP|CLS|MASK|SPECIAL|IMAGE|IMG|AUDIO|VIDEO|START|END|STOP|BOT|EOT|EOD|"
    r"NEW|FIM|MIDDLE|SUFFIX|PREFIX|THINK|TOOL|SYSTEM|USER|ASSISTANT|CHAT|VISION|PLACEHOLDER|ADDITIONAL|"
    r"DECODER|ENCODER|MAX|MIN|NUM|N)_TOKEN$"
)


def normalize_name(name: str) -> str:
    """``--hf-token`` → ``HF_TOKEN``; ``wandb.api_key`` → ``WANDB_API_KEY``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()


@lru_cache(maxsize=4096)  # asked for every argument, option and variable name, many times
def secret_name_kind(name: str) -> Optional[str]:
    """"token", "key", "secret" or "password" for a secret-looking name, else None."""
    n = normalize_name(name)
    if not n or _NOT_A_SECRET_SUFFIX.search(n) or _NOT_A_SECRET_PREFIX.search(n):
        return None
    if n.endswith("TOKEN"):
        return None if _TOKENIZER_TOKEN.search(n) else "token"
    if re.search(r"(?:API_?KEY|ACCESS_KEY|PRIVATE_KEY|AUTH_KEY|SECRET_KEY)$", n):
        return "key"
    if "SECRET" in n:
        return "secret"
    if "PASSWORD" in n or "PASSWD" in n:
        return "password"
    return None


def is_secret_name(name: str) -> bool:
    return secret_name_kind(name) is not None


# -- values ------------------------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    """none null nil undefined unset empty default test testing secret secrets token tokens password passwd pass
    key apikey api_key api-key hidden masked redacted foo bar baz xyz abc abc123 string value true false yes no
    on off changeme change_me change-me dummy placeholder example sample todo fixme tbd na n/a""".split()
)
_PLACEHOLDER_PARTS = re.compile(
    r"your|change_?me|placeholder|redacted|example|dummy|replace_?(?:me|this|with)|insert_|enter_|put_your|"
    r"fill_?in|_here$|-here$|x{4,}|\*{3,}|\.{3}|…|<|>|\{\{|\}\}",
    re.IGNORECASE,
)
_KNOWN_PREFIX = re.compile(
    r"^(?:hf_|gh[pousr]_|github_pat_|sk-(?:proj-|ant-|svcacct-|admin-)?|gl(?:pat|cbt|dt|rt)-|(?:xoxe\.)?xox[bpase]-)"
)
_CREDENTIAL_CHARS = re.compile(r"^[A-Za-z0-9_\-.+/=:~@!%^&*]+$")
_VARIABLE_NAME_VALUE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def is_placeholder(value: str) -> bool:
    """A value written to be replaced, or one the shell fills in: never a secret."""
    v = value.strip().strip("\"'")
    if not v or v.startswith("$") or "${" in v or "$(" in v or "`" in v:
        return True
    if v.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_PARTS.search(v):
        return True
    body = _KNOWN_PREFIX.sub("", v)
    if not body or len(set(body.lower())) <= 2:
        return True
    if re.fullmatch(r"%[^%]+%|\[[^\]]*\]|\([^)]*\)", v):
        return True
    return False


def _classes(text: str) -> int:
    return sum(bool(re.search(pattern, text)) for pattern in ("[A-Z]", "[a-z]", "[0-9]"))


def _shape_ok(shape: Shape, match) -> bool:
    body = match.group("body")
    if isinstance(body, bytes):
        body = body.decode("ascii")
    whole = match.group(0)
    if isinstance(whole, bytes):
        whole = whole.decode("ascii")
    return _classes(body) >= shape.classes and not is_placeholder(whole)


def shape_of(text: str) -> Optional[Shape]:
    """The credential shape ``text`` is (entirely), or None."""
    if _ANY_HINT.search(text) is None:
        return None
    for shape, pattern, hints in _SHAPE_TEXT:
        if not any(hint in text for hint in hints):
            continue
        match = pattern.fullmatch(text)
        if match and _shape_ok(shape, match):
            return shape
    return None


def shapes_in(text: str) -> Iterator[Tuple[Shape, int, int]]:
    if _ANY_HINT.search(text) is None:
        return
    for shape, pattern, hints in _SHAPE_TEXT:
        if not any(hint in text for hint in hints):
            continue
        for match in pattern.finditer(text):
            if _shape_ok(shape, match):
                yield shape, match.start(), match.end()


def is_credential(value: str, name_kind: Optional[str]) -> bool:
    """Whether a literal assigned to a secret-named variable (or option) is a real credential."""
    if is_placeholder(value):
        return False
    if shape_of(value) is not None:
        return True
    v = value
    if v.startswith(("/", "~/", "./", "../")) or re.fullmatch(r"[+-]?\d+(?:\.\d+)?", v) and name_kind != "password":
        return False
    if name_kind in ("token", "key"):
        return len(v) >= 8 and bool(_CREDENTIAL_CHARS.match(v)) and not _VARIABLE_NAME_VALUE.match(v)
    return len(v) >= 4 and not any(ch.isspace() for ch in v)


def mask(value: str) -> str:
    """The only form in which a secret is printed: its first 3 characters and an ellipsis."""
    return value[:3] + "…"


# -- what scan() returns -------------------------------------------------------------------------


@dataclass(frozen=True)
class Secret:
    span: Span  # the source bytes of the value
    kind: str  # "Hugging Face token", "W&B API key", "secret", …
    name: str = ""  # the variable, option or item it is given to, when there is one
    value: str = ""  # the value as the shell sees it (may differ from the bytes: quotes, escapes)
    live: bool = True  # bash or sbatch acts on it (False: a comment)
    site: str = "token"  # assignment, env, item, option, export, wandb, directive, token, text, comment
    env: str = ""  # the environment variable a fix refers to
    edits: Tuple[Edit, ...] = ()  # the fix: the literal replaced by a reference to ``env``
    how: str = ""  # what the fix does, in words (never the value)
    in_task: bool = False  # inside a string run by the task's shell (``bash -c``)


# -- scanning with the model ---------------------------------------------------------------------


def reference(name: str) -> str:
    return "${%s:?set %s in the environment before sbatch}" % (name, name)


@dataclass
class TaskString:
    """A string some shell runs with ``-c``: an srun step's task command or a batch ``bash -c``."""

    value: "Value"
    commands: List["Command"]
    flags: str  # the shell's option letters (``-x`` traces)
    shell_word: Optional[Span] = None
    text: bytes = b""
    _tree: object = None

    def node_at(self, index: int):
        from . import shell

        if self._tree is None:
            self._tree = shell.parse(self.text)
        return self._tree.root_node.descendant_for_byte_range(index, index)  # type: ignore[attr-defined]

    def quote_at(self, index: int) -> str:
        """How the task's shell quotes value byte ``index``: '', '"' or "'"."""
        node = self.node_at(index)
        while node is not None:
            if node.type == "raw_string":
                return "'"
            if node.type in ("string", "translated_string"):
                return '"'
            if node.type in ("heredoc_body", "ansi_c_string"):
                return "'"
            node = node.parent
        return ""

    def index_of(self, span: Span, data: bytes = b"") -> Optional[int]:
        """The value byte where source span ``span`` (a literal written as part of the string's
        text) lands in the string. A literal that reaches the string as the whole value of a
        secret variable (``$HF_TOKEN``) is that variable's value, not text of the string."""
        position = 0
        for piece in self.value.pieces:
            length = len(piece.render().encode("utf-8"))
            if piece.known and piece.exact and piece.span is not None and piece.span.contains(span):
                through_secret = any(
                    is_secret_name(expansion_name(data[via.start : via.end].decode("utf-8", "replace")) or "")
                    for via in piece.via
                )
                if not through_secret:
                    return position + span.start - piece.span.start
            position += length
        return None


_EXPANSION = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))$", re.S)


@lru_cache(maxsize=4096)
def expansion_name(text: str) -> Optional[str]:
    """The variable whose VALUE ``$X``/``${X…}`` yields (None for ``${#X}``, ``${X:+…}``, …)."""
    match = _EXPANSION.match(text)
    if not match:
        return None
    if match.group("plain"):
        return match.group("plain")
    rest = match.group("rest") or ""
    if rest.startswith((":+", "+")):
        return None
    return match.group("braced")


def task_strings(script: "Script") -> List[TaskString]:
    return script.derived("secrets.task_strings", _task_strings)


def _task_strings(script: "Script") -> List[TaskString]:
    from .model.steps import SHELLS, parse_task_string
    import posixpath

    out: List[TaskString] = []
    step_commands = {id(step.command) for step in script.steps}
    for step in script.steps:
        if step.task_string is None:
            continue
        flags = ""
        shell_word = None
        if step.shell_index is not None:
            shell_word = step.task_argv[step.shell_index].span
            for word in step.task_argv[step.shell_index + 1 :]:
                if not word.known or not word.text.startswith("-") or word.text.startswith("--"):
                    break
                flags += word.text[1:]
        value = step.task_string
        out.append(TaskString(value, step.task_commands, flags, shell_word, value.text.encode("utf-8")))
    for command in script.commands:
        if id(command) in step_commands:
            continue
        if not command.may_run(SHELLS):
            continue  # runs no shell (its argv is left unevaluated)
        argv = command.argv
        begin = command.begin
        if begin >= len(argv) or not argv[begin].known or posixpath.basename(argv[begin].text) not in SHELLS:
            continue
        flags = ""
        j = begin + 1
        while j < len(argv) and argv[j].known and argv[j].text.startswith("-") and not argv[j].text.startswith("--"):
            flags += argv[j].text[1:]
            j += 1
            if "c" in argv[j - 1].text[1:]:
                break
        if "c" not in flags or j >= len(argv):
            continue
        value = argv[j].value
        try:
            commands = parse_task_string(script.values, value)
        except RecursionError:  # pragma: no cover - absurd nesting
            continue
        out.append(TaskString(value, commands, flags, argv[begin].span, value.text.encode("utf-8")))
    return out


@dataclass
class _Context:
    """How the bytes of a literal are quoted, for writing a reference in their place."""

    quote: str  # batch-level: '', '"', "'", "$'", "heredoc", "comment"
    word: Optional[Span]  # the whole quoted string around it
    assignment: bool  # the value of an assignment (no word splitting)
    task: Optional[TaskString]
    task_quote: str = ""


def _context(script: "Script", span: Span) -> _Context:
    node = script.root.descendant_for_byte_range(span.start, max(span.start, span.end - 1))
    quote = ""
    word = None
    assignment = False
    current = node
    while current is not None:
        kind = current.type
        if not quote:
            if kind == "raw_string":
                quote, word = "'", Span(current.start_byte, current.end_byte)
            elif kind in ("string", "translated_string"):
                quote, word = '"', Span(current.start_byte, current.end_byte)
            elif kind == "ansi_c_string":
                quote = "$'"
            elif kind == "heredoc_body":
                quote = "heredoc"
            elif kind == "comment":
                quote = "comment"
        if kind == "variable_assignment":
            assignment = True
        if kind in ("command", "declaration_command"):
            break
        current = current.parent
    task = None
    task_quote = ""
    for candidate in task_strings(script):
        index = candidate.index_of(span, script.data)
        if index is not None:
            task = candidate
            task_quote = candidate.quote_at(index)
            break
    return _Context(quote, word, assignment, task, task_quote)


def _replacement(script: "Script", span: Span, env: str) -> Tuple[Tuple[Edit, ...], str]:
    """Edits that put a reference to ``env`` in place of the literal at ``span`` (or none)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env or ""):
        return (), ""
    ctx = _context(script, span)
    ref = reference(env)
    how = f"read it from ${env} in the submission environment"
    if ctx.quote in ("$'", "heredoc", "comment"):
        return (), ""
    default = _same_variable_default(script, span, env)
    if default is not None and ctx.task is None:
        # ``${HF_TOKEN:-hf_…}``: the variable with a hardcoded fallback → the variable, required
        return (Edit(default, ref),), how
    if ctx.task is not None:
        if ctx.task_quote == "'":
            return (), ""
        if ctx.quote == '"':
            return (Edit(span, "\\" + ref),), how + " (the task's shell expands it)"
        if ctx.quote == "'":
            return (Edit(span, ref),), how + " (the task's shell expands it)"
        return (), ""
    if ctx.quote == '"':
        return (Edit(span, ref),), how
    if ctx.quote == "'":
        assert ctx.word is not None
        at_start = ctx.word.start + 1 == span.start
        at_end = ctx.word.end - 1 == span.end
        edit_span = Span(ctx.word.start if at_start else span.start, ctx.word.end if at_end else span.end)
        text = ("" if at_start else "'") + '"' + ref + '"' + ("" if at_end else "'")
        return (Edit(edit_span, text),), how
    # unquoted
    if ctx.assignment:
        return (Edit(span, ref),), how
    return (Edit(span, '"' + ref + '"'),), how


def _same_variable_default(script: "Script", span: Span, env: str) -> Optional[Span]:
    """The span of ``${ENV:-LITERAL}`` when the literal at ``span`` is exactly that default."""
    node = script.root.descendant_for_byte_range(span.start, max(span.start, span.end - 1))
    while node is not None and node.type not in ("expansion", "command", "program", "string"):
        node = node.parent
    if node is None or node.type != "expansion":
        return None
    data = script.data
    names = [c for c in node.children if c.type == "variable_name"]
    operators = [c for c in node.children if c.type in (":-", "-")]
    if not names or not operators or data[names[0].start_byte : names[0].end_byte].decode("utf-8", "replace") != env:
        return None
    if operators[0].end_byte != span.start or data[span.end : node.end_byte] != b"}":
        return None
    return Span(node.start_byte, node.end_byte)


def _literal(value: "Value", start: int, end: int) -> Optional[Tuple[str, Span, bool]]:
    """The literal text of value bytes [start, end), its source span, and whether the span is exactly it."""
    if end <= start:
        return None
    part = value.slice(start, end)
    pieces = [p for p in part.pieces if p.render()]
    if not pieces or not all(p.known and p.span is not None for p in pieces):
        return None
    spans = [p.span for p in pieces]
    whole = Span(min(s.start for s in spans), max(s.end for s in spans))  # type: ignore[union-attr]
    exact = all(p.exact for p in pieces) and all(a.span.end == b.span.start for a, b in zip(pieces, pieces[1:]))  # type: ignore[union-attr]
    exact = exact and len({p.quote for p in pieces}) == 1
    return part.text, whole, exact


def _kind(value: str, name: str) -> str:
    shape = shape_of(value)
    if shape is not None:
        return shape.kind
    normalized = normalize_name(name)
    if normalized in NAMED_KINDS:
        return NAMED_KINDS[normalized]
    return {"token": "token", "key": "API key", "secret": "secret", "password": "password"}.get(
        secret_name_kind(name) or "", "secret"
    )


def _env_for(name: str, value: str, own_variable: bool) -> str:
    """The environment variable a reference should name."""
    if own_variable and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    shape = shape_of(value)
    if shape is not None:
        return shape.env
    normalized = normalize_name(name)
    if normalized in ("TOKEN", "API_KEY", "KEY", "PASSWORD", "SECRET"):
        return ""
    return normalized if re.fullmatch(r"[A-Z_][A-Z0-9_]*", normalized) else ""


class _Collector:
    def __init__(self, script: "Script") -> None:
        self.script = script
        self.found: Dict[Span, Secret] = {}

    def add(self, secret: Secret) -> None:
        existing = self.found.get(secret.span)
        if existing is None or (not existing.edits and secret.edits):
            self.found[secret.span] = secret

    def named(self, value: "Value", start: int, end: int, name: str, site: str, own_variable: bool) -> None:
        """A literal given to a secret-named variable, item or option."""
        literal = _literal(value, start, end)
        if literal is None:
            return
        text, span, exact = literal
        if not is_credential(text, secret_name_kind(name)) and shape_of(text) is None:
            return
        env = _env_for(name, text, own_variable)
        edits: Tuple[Edit, ...] = ()
        how = ""
        if exact and env:
            edits, how = _replacement(self.script, span, env)
        self.add(Secret(span, _kind(text, name), name, text, True, site, env, edits, how,
                        _context(self.script, span).task is not None))

    def exported(self, value: "Value", name_start: int, start: int, end: int, name: str, option: str) -> None:
        """``--export=…,NAME=VALUE`` / ``--container-env=NAME=VALUE``: pass NAME from the environment instead."""
        literal = _literal(value, start, end)
        if literal is None:
            return
        text, span, exact = literal
        if not is_credential(text, secret_name_kind(name)) and shape_of(text) is None:
            return
        edits: Tuple[Edit, ...] = ()
        how = ""
        drop = _literal(value, start - 1, end)  # "=VALUE"
        if exact and drop is not None and drop[2]:
            edits = (Edit.delete(drop[1]),)
            how = f"pass {name} by name (`{option}=…,{name}`): it is taken from the environment"
        self.add(Secret(span, _kind(text, name), name, text, True, "export", name, edits, how))


_ITEM = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)=(?P<value>[^,]*)")
_EXPORT_OPTIONS = frozenset({"export", "container-env"})


_ITEM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*=")


def _scan_command(collector: _Collector, command: "Command") -> None:
    for env in command.env:
        if is_secret_name(env.name):
            text = env.value.text
            collector.named(env.value, 0, len(text.encode("utf-8")), env.name, "env", True)
    argv = command.argv
    program = ""
    for index, word in enumerate(argv):
        if not word.pieces:
            continue
        text = word.text
        if index == 0:
            program = text[text.rfind("/") + 1 :] if word.known else ""  # basename
        if text.startswith("-") and len(text) > 1:
            option, eq, rest = text.partition("=")
            name = option.lstrip("-")
            if eq:
                offset = len(option.encode("utf-8")) + 1
                if is_secret_name(name):
                    collector.named(word.value, offset, len(text.encode("utf-8")), name, "option", False)
                elif name in _EXPORT_OPTIONS or (program in ("docker", "podman", "enroot") and name in ("env", "e")):
                    _scan_items(collector, word.value, rest, offset, "--" + name)
                continue
            if is_secret_name(name) and index + 1 < len(argv):
                following = argv[index + 1]
                if not following.text.startswith("-"):
                    collector.named(following.value, 0, len(following.text.encode("utf-8")), name, "option", False)
            continue
        if index == 0 or "=" not in text:
            continue  # no NAME=VALUE item here
        match = _ITEM_NAME.match(text)
        if match and not any(ch.isspace() for ch in text):
            name = text[: match.end() - 1]
            if is_secret_name(name):
                collector.named(word.value, match.end(), len(text.encode("utf-8")), name, "item", False)
    # wandb login [--relogin] [--host URL] KEY
    begin = _unwrapped(command)
    if begin + 1 < len(argv) and argv[begin].known and argv[begin].text.rpartition("/")[2] == "wandb" and argv[begin + 1].text == "login":
        _scan_wandb_login(collector, argv, begin + 2)


def _unwrapped(command: "Command") -> int:
    argv = command.argv
    begin = command.begin
    if begin < len(argv) and argv[begin].known and argv[begin].text.endswith("srun"):
        return len(argv)  # a step: its task command is scanned on its own
    return begin


def _scan_wandb_login(collector: _Collector, argv, start: int) -> None:
    relogin: List = []
    i = start
    key = None
    while i < len(argv):
        word = argv[i]
        text = word.text
        if text in ("--host", "--base-url"):
            i += 2
            continue
        if text == "--relogin":
            relogin.append(word)
        elif not text.startswith("-") and key is None:
            key = word
        i += 1
    if key is None:
        return
    literal = _literal(key.value, 0, len(key.text.encode("utf-8")))
    if literal is None or is_placeholder(literal[0]):
        return
    text, span, exact = literal
    edits: List[Edit] = []
    how = ""
    source = collector.script.data
    if exact:
        for word in relogin + [key]:
            word_span = word.span
            if word is key:
                word_span = span
                ctx = _context(collector.script, span)
                if ctx.word is not None and ctx.word.start + 1 == span.start and ctx.word.end - 1 == span.end:
                    word_span = ctx.word  # the quotes go too
            start_offset = word_span.start
            while start_offset > 0 and source[start_offset - 1 : start_offset] in (b" ", b"\t"):
                start_offset -= 1
            edits.append(Edit.delete(Span(start_offset, word_span.end)))
        how = "drop the key: `wandb login` reads WANDB_API_KEY from the environment"
        if relogin:
            how += " (and drop --relogin, which would ignore it)"
    kind = shape_of(text).kind if shape_of(text) else "W&B API key"
    collector.add(Secret(span, kind, "WANDB_API_KEY", text, True, "wandb", "WANDB_API_KEY", tuple(edits), how))


def _scan_items(collector: _Collector, value: "Value", rest: str, offset: int, option: str) -> None:
    position = offset
    for item in rest.split(","):
        item_bytes = len(item.encode("utf-8"))
        match = _ITEM.fullmatch(item)
        if match and is_secret_name(match.group("name")):
            name = match.group("name")
            value_start = position + len(name.encode("utf-8")) + 1
            collector.exported(value, position, value_start, position + item_bytes, name, option)
        position += item_bytes + 1


def _scan_assignments(collector: _Collector, script: "Script", values) -> None:
    from . import shell

    for name, assignments in values.assignments.items():
        if not is_secret_name(name):
            continue
        for assignment in assignments:
            if assignment.kind not in ("assign", "append") or assignment.value_node is None:
                continue
            for alternative in values.evaluate(assignment.value_node):
                text = alternative.text
                if alternative.known:
                    collector.named(alternative, 0, len(text.encode("utf-8")), name, "assignment", True)
                    continue
            # ``${HF_TOKEN:-hf_…}`` and the like: a fallback literal the value may take
            for node in shell.walk(assignment.value_node):
                if node.type != "expansion":
                    continue
                operators = [c for c in node.children if c.type in (":-", "-", ":=", "=")]
                if not operators:
                    continue
                operands = [c for c in node.children if c.is_named and c.start_byte >= operators[0].end_byte]
                if len(operands) != 1:
                    continue
                for default in values.evaluate(operands[0]):
                    text = default.text
                    if default.known:
                        collector.named(default, 0, len(text.encode("utf-8")), name, "assignment", True)


def _scan_fallbacks(collector: _Collector, script: "Script") -> None:
    """``${HF_TOKEN:-hf_…}`` anywhere: a hardcoded fallback for a secret variable."""
    for node in script.nodes_of_type("expansion"):
        names = [c for c in node.children if c.type == "variable_name"]
        operators = [c for c in node.children if c.type in (":-", "-", ":=", "=")]
        if not names or not operators:
            continue
        name = script.data[names[0].start_byte : names[0].end_byte].decode("utf-8", "replace")
        if not is_secret_name(name):
            continue
        operands = [c for c in node.children if c.is_named and c.start_byte >= operators[0].end_byte]
        if len(operands) != 1:
            continue
        for default in script.values.evaluate(operands[0]):
            if default.known:
                collector.named(default, 0, len(default.text.encode("utf-8")), name, "assignment", True)


def _scan_task_assignments(collector: _Collector, task: TaskString) -> None:
    """``bash -c "export HF_TOKEN=…; …"``: assignments made by the task's shell."""
    from .model.steps import _remap, task_string_values

    inner = task_string_values(collector.script.values, task.text)  # shared with the steps' parse
    for name, assignments in inner.assignments.items():
        if not is_secret_name(name):
            continue
        for assignment in assignments:
            if assignment.kind != "assign" or assignment.value_node is None:
                continue
            alternatives = inner.evaluate(assignment.value_node)
            if not alternatives:
                continue
            value = _remap(alternatives[-1], task.value)
            text = value.text
            if value.known:
                collector.named(value, 0, len(text.encode("utf-8")), name, "assignment", True)


def scan(script: "Script") -> List[Secret]:
    """Every secret in the script, live or not, in source order (memoised)."""
    return script.derived("secrets.scan", _scan)


# What a name must contain for ``is_secret_name`` (TOKEN, …KEY, SECRET, PASSWORD/PASSWD), and the
# program ``_scan_command`` reads by name: a command holds nothing it looks for without one.
_COMMAND_HINTS = (b"token", b"key", b"secret", b"passw", b"wandb")


def mentions(hints: Tuple[bytes, ...], script: "Script") -> bool:
    """Whether one of ``hints`` (lowercase) occurs in the script or in a string a task's shell
    runs, case-insensitively: every character of a command word comes from one of them."""
    for text in [script.data] + [task.text for task in task_strings(script)]:
        lowered = text.lower()
        if any(hint in lowered for hint in hints):
            return True
    return False


def _scan(script: "Script") -> List[Secret]:
    collector = _Collector(script)
    data = script.data
    _scan_assignments(collector, script, script.values)
    _scan_fallbacks(collector, script)
    by_name = mentions(_COMMAND_HINTS, script)  # else no command has a secret-named part
    for command in script.commands if by_name else ():
        _scan_command(collector, command)
    for step in script.steps:
        for task_command in step.task_commands if by_name else ():
            _scan_command(collector, task_command)
        for option in step.options:
            if option.name in _EXPORT_OPTIONS and option.value and option.words:
                word = option.words[-1]
                text = word.text
                raw = text.encode("utf-8")
                offset = 0
                if len(option.words) == 1:
                    offset = len(text.partition("=")[0].encode("utf-8")) + 1
                _scan_items(collector, word.value, raw[offset:].decode("utf-8", "replace"), offset, "--" + option.name)
    for task in task_strings(script):
        if by_name and not any(c.step is not None for c in task.commands):
            for command in task.commands:
                _scan_command(collector, command)
        try:
            _scan_task_assignments(collector, task)
        except (RecursionError, ValueError):  # pragma: no cover
            pass
    _scan_directives(collector, script)

    # Text: comments (not live), heredoc bodies and unparsed regions (live, no fix).
    directive_lines = {d.line for d in script.header.directives}
    text_regions: List[Tuple[Span, bool, str]] = []
    for node in script.nodes_of_type("comment", "heredoc_body"):
        if node.type == "comment":
            line = script.source.line_of(node.start_byte)
            if line in directive_lines:
                continue
            text_regions.append((Span(node.start_byte, node.end_byte), False, "comment"))
        elif node.type == "heredoc_body":
            text_regions.append((Span(node.start_byte, node.end_byte), True, "text"))
    for region in script.errors:
        text_regions.append((region, True, "text"))
    for region, live, site in text_regions:
        for secret in _text_secrets(script.source, region, live, site):
            if not any(s.span.overlaps(secret.span) for s in collector.found.values()):
                collector.add(secret)

    # Known shapes anywhere else in the code.
    comments = [r for r, live, _ in text_regions if not live]
    for shape, pattern, hints in _SHAPE_BYTES:
        if not any(hint in data for hint in hints):
            continue
        for match in pattern.finditer(data):
            if not _shape_ok(shape, match):
                continue
            span = Span(match.start(), match.end())
            if any(s.span.contains(span) or s.span.overlaps(span) for s in collector.found.values()):
                continue
            if any(r.contains(span) for r in comments):
                continue
            value = match.group(0).decode("ascii")
            edits, how = _replacement(script, span, shape.env)
            ctx_task = _context(script, span).task is not None
            collector.add(Secret(span, shape.kind, "", value, True, "token", shape.env, edits, how, ctx_task))
    return sorted(collector.found.values(), key=lambda s: (s.span.start, s.span.end))


def _scan_directives(collector: _Collector, script: "Script") -> None:
    from .model.values import Piece, Value

    for directive in script.header.directives:
        if directive.value_span is None or directive.value is None:
            continue
        raw = script.data[directive.value_span.start : directive.value_span.end]
        if directive.name not in _EXPORT_OPTIONS or b"\\" in raw or b'"' in raw or b"'" in raw:
            continue
        text = raw.decode("utf-8", "replace")
        value = Value((Piece(text, directive.value_span),))
        position = 0
        for item in text.split(","):
            item_bytes = len(item.encode("utf-8"))
            match = _ITEM.fullmatch(item)
            if match and is_secret_name(match.group("name")):
                name = match.group("name")
                start = position + len(name.encode("utf-8")) + 1
                literal = _literal(value, start, position + item_bytes)
                if literal is not None and (is_credential(literal[0], secret_name_kind(name)) or shape_of(literal[0])):
                    drop = _literal(value, start - 1, position + item_bytes)
                    edits = (Edit.delete(drop[1]),) if drop is not None else ()
                    how = f"pass {name} by name: sbatch takes it from the submission environment"
                    collector.add(Secret(literal[1], _kind(literal[0], name), name, literal[0], True, "directive",
                                         name, edits, how))
            position += item_bytes + 1


_TEXT_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[\"'\]]*[ \t]*(?:=|:[ \t])[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'`;,)}\]]+)"
)
_TEXT_WANDB = re.compile(r"wandb[ \t]+login(?:[ \t]+--[A-Za-z-]+)*[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'-][^\s\"';]*)")
_TEXT_OPTION = re.compile(r"--(?P<name>[A-Za-z][A-Za-z0-9_\-]*)(?:=|[ \t]+)(?P<q>[\"']?)(?P<value>[^\s\"'`;,-][^\s\"'`;,]*)")


def _text_secrets(source: Source, region: Span, live: bool, site: str) -> Iterator[Secret]:
    text = source.data[region.start : region.end].decode("utf-8", "replace")
    if source.encoding != "utf-8":
        text = source.data[region.start : region.end].decode("latin-1")

    def span_of(start: int, end: int) -> Span:
        prefix = len(text[:start].encode(source.encoding if source.encoding == "utf-8" else "latin-1"))
        length = len(text[start:end].encode(source.encoding if source.encoding == "utf-8" else "latin-1"))
        return Span(region.start + prefix, region.start + prefix + length)

    for pattern in (_TEXT_ASSIGNMENT, _TEXT_OPTION):
        for match in pattern.finditer(text):
            name, value = match.group("name"), match.group("value")
            if is_secret_name(name) and (is_credential(value, secret_name_kind(name))):
                yield Secret(span_of(match.start("value"), match.end("value")), _kind(value, name), name, value, live, site)
    for match in _TEXT_WANDB.finditer(text):
        value = match.group("value")
        if not is_placeholder(value) and len(value) >= 8:
            yield Secret(span_of(match.start("value"), match.end("value")), "W&B API key", "WANDB_API_KEY", value, live, site)
    for shape, start, end in shapes_in(text):
        yield Secret(span_of(start, end), shape.kind, "", text[start:end], live, site)


def text_scan(source: Source) -> List[Secret]:
    """Secrets found by reading the whole file as text (Python files, or when the model fails)."""
    found: Dict[Span, Secret] = {}
    for secret in _text_secrets(source, Span(0, len(source.data)), True, "text"):
        if not any(other.overlaps(secret.span) for other in found):
            found[secret.span] = secret
    return sorted(found.values(), key=lambda s: s.span)


# -- secret variables (SBL402/SBL403) ------------------------------------------------------------


def secret_variables(script: "Script") -> Set[str]:
    """Variables of the script that hold a credential: secret-named ones, and any variable
    assigned a credential-shaped literal."""
    return script.derived("secrets.variables", _secret_variables)


def _secret_variables(script: "Script") -> Set[str]:
    names = {name for name in script.values.assignments if is_secret_name(name)}
    spans = {secret.span for secret in scan(script) if secret.live}
    for name, assignments in script.values.assignments.items():
        for assignment in assignments:
            node = assignment.value_node
            if node is None:
                continue
            start, end = node.start_byte, node.end_byte
            if node.type in ("string", "raw_string"):
                start, end = start + 1, end - 1
            if Span(start, end) in spans:  # the whole value is a credential
                names.add(name)
    return names


def is_secret_variable(script: "Script", name: Optional[str]) -> bool:
    return bool(name) and (is_secret_name(name) or name in secret_variables(script))  # type: ignore[arg-type]


# -- the report layer's API ----------------------------------------------------------------------


def find(source: Source) -> List[Secret]:
    """Every secret span in a file (live or in comments): what outputs must never show.

    Remembered on the source object: the report layer asks once per finding."""
    cached = getattr(source, "_secrets_found", None)
    if cached is not None and cached[0] is source.data:
        return list(cached[1])
    found = _find(source)
    try:
        source._secrets_found = (source.data, tuple(found))  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - a source type without attributes
        pass
    return found


def _find(source: Source) -> List[Secret]:
    if source.path.endswith(".py"):
        return text_scan(source)
    try:
        from .model.script import Script

        script = getattr(source, "_script", None)  # the model ``linter.build`` made of this source
        if script is None or script.source is not source or script.data is not source.data:
            script = Script(source)
            try:
                source._script = script  # type: ignore[attr-defined]  # ``linter.build`` may reuse it
            except AttributeError:  # pragma: no cover - a source type without attributes
                pass
        found = scan(script)
    except Exception:  # the model failed on a strange file: fall back to reading it as text
        return text_scan(source)
    extra = [s for s in text_scan(source) if not any(f.span.overlaps(s.span) for f in found)]
    return sorted(list(found) + extra, key=lambda s: s.span)


def values(source: Source) -> List[str]:
    """The secret values of a file, as written and as the shell sees them, for ``redact``."""
    out: List[str] = []
    for secret in find(source):
        for text in (source.text(secret.span), secret.value):
            if text and text not in out:
                out.append(text)
    return out


FRAGMENT = 8  # a run of this many characters of a secret is hidden too (a truncated value)


def redact(text: str, values: Sequence[str] = ()) -> str:
    """``text`` with every secret value (or fragment of one) and every credential shape masked."""
    if not text:
        return text
    secrets = sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)
    for value in secrets:
        if value in text:
            text = text.replace(value, mask(value))
    covered = bytearray(len(text))
    windows: Dict[int, Set[str]] = {}
    for value in secrets:
        body = _KNOWN_PREFIX.sub("", value)  # "github_pat_" alone is no secret
        size = min(FRAGMENT, len(body))
        if size >= 4:
            windows.setdefault(size, set()).update(body[i : i + size] for i in range(len(body) - size + 1))
    for size, fragments in windows.items():
        for i in range(len(text) - size + 1):
            if text[i : i + size] in fragments:
                covered[i : i + size] = b"\x01" * size
    for _shape, start, end in shapes_in(text):
        covered[start:end] = b"\x01" * (end - start)
    if not any(covered):
        return text
    out: List[str] = []
    i = 0
    while i < len(text):
        if not covered[i]:
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and covered[j]:
            j += 1
        out.append(mask(text[i:j]))
        i = j
    return "".join(out)


class RedactingStream:
    """A text stream that masks every secret it has been told about (and any credential shape)
    in what is written to it: the last line of defence for every output format."""

    def __init__(self, stream, values: Iterable[str] = ()) -> None:
        self._stream = stream
        self._values: List[str] = []
        self.remember(values)

    def remember(self, values: Iterable[str]) -> None:
        for value in values:
            if value not in self._values:
                self._values.append(value)

    def write(self, text: str) -> int:
        return self._stream.write(redact(text, self._values))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def redacting_excepthook(stream: RedactingStream):
    """A ``sys.excepthook`` that prints a crash's traceback with every secret ``stream`` knows masked."""

    def hook(kind, error, tb) -> None:
        import sys
        import traceback

        text = "".join(traceback.format_exception(kind, error, tb))
        sys.stderr.write(redact(text, stream._values))

    return hook

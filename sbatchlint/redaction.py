"""Redaction: what a credential looks like as text, and the masking every output goes through.

This module reads text only; it builds no model and imports no parser, so every reporter (the
output formats, the runner's error messages and diffs, the command line's streams and crash
hook) can use it. The analysis that finds secrets with the shell model lives in
``sbatchlint.secrets``; both share the knowledge here:

- credential shapes (Hugging Face, GitHub, GitLab, Slack tokens and webhook URLs, AWS access
  keys, ``sk-`` keys): ``shape_of``, ``shapes_in``;
- secret-looking names (``HF_TOKEN``, ``--hub-token``, ``wandb.api_key``) and what is a real value
  rather than a placeholder (``hf_your_token_here``, ``<YOUR_HF_TOKEN>``, ``changeme``, ``$VAR``):
  ``is_secret_name``, ``is_placeholder``, ``is_credential``;
- ``text_scan``: the secrets of a file read as plain text (Python files, comments, heredoc bodies,
  and the safety net used before, or instead of, the model);
- ``mask``, the only form in which the tool prints a secret (first 3 characters and ``…``);
  ``values`` turns found secrets into the strings to hide; ``redact`` hides them (also a
  fragment of 8 characters or more, in case an output truncates one) and any credential shape
  in an arbitrary text; ``RedactingStream`` and ``redacting_excepthook`` apply it to a stream
  and to a crash's traceback.
"""
from __future__ import annotations

from bisect import bisect_left

from .diagnostics import Edit
from .lazyclass import dataclass
from .source import Source, Span
from .lazyre import IGNORECASE, escape, lazy
from .stdlite import lru_cache  # (functools' own, without importing functools)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import re
    from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

# -- credential shapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    kind: str
    pattern: str  # a regular expression; group "body" is the random part
    env: str  # the variable such a credential conventionally lives in
    classes: int  # how many of (upper, lower, digit) the body must mix to look random


_GITLAB_BODY = r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*"

SHAPES: Tuple[Shape, ...] = (
    Shape("GitHub fine-grained token", r"github_pat_(?<![A-Za-z0-9_]github_pat_)(?P<body>[A-Za-z0-9_]{40,})", "GH_TOKEN", 2),
    Shape("Hugging Face token", r"hf_(?<![A-Za-z0-9_]hf_)(?P<body>[A-Za-z0-9]{30,})", "HF_TOKEN", 2),
    Shape("GitHub token", r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)(?P<body>[A-Za-z0-9]{30,})", "GH_TOKEN", 2),
    Shape("AWS access key", r"A(?:KIA|SIA)(?<![A-Za-z0-9]A[KS]IA)(?P<body>[A-Z0-9]{16})(?![A-Za-z0-9])", "AWS_ACCESS_KEY_ID", 1),
    Shape("Anthropic API key", r"sk-ant-(?<![A-Za-z0-9_\-]sk-ant-)(?P<body>[A-Za-z0-9_\-]{20,})", "ANTHROPIC_API_KEY", 3),
    Shape("OpenAI-style API key", r"sk-(?<![A-Za-z0-9_\-]sk-)(?!ant-)(?P<body>[A-Za-z0-9_\-]{20,})", "OPENAI_API_KEY", 3),
    # GitLab: 20 URL-safe characters after the prefix; the newer "routable" tokens are longer and
    # carry ``.``-separated parts (a CI job token may be a JWT). An instance-wide prefix may come
    # before (``acme-glpat-…``): the match starts at the GitLab prefix.
    Shape("GitLab access token", r"glpat-(?<![A-Za-z0-9_]glpat-)(?P<body>%s)" % _GITLAB_BODY, "GITLAB_TOKEN", 2),
    Shape("GitLab CI job token", r"glcbt-(?<![A-Za-z0-9_]glcbt-)(?P<body>%s)" % _GITLAB_BODY, "CI_JOB_TOKEN", 2),
    Shape("GitLab deploy token", r"gldt-(?<![A-Za-z0-9_]gldt-)(?P<body>%s)" % _GITLAB_BODY, "GITLAB_DEPLOY_TOKEN", 2),
    Shape("GitLab runner token", r"glrt-(?<![A-Za-z0-9_]glrt-)(?P<body>%s)" % _GITLAB_BODY, "GITLAB_RUNNER_TOKEN", 2),
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
# Each pattern starts with its literal prefix and looks behind it afterwards (``hf_(?<![…]hf_)``
# rather than ``(?<![…])hf_``: the same matches), so the regex engine jumps from one occurrence
# of the prefix to the next instead of trying the look-behind at every character.
# Literal text every match of a shape contains: a scan is skipped when none is there.
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
_SHAPE_TEXT = [(shape, lazy(shape.pattern), _SHAPE_HINTS[shape.kind]) for shape in SHAPES]
_SHAPE_HINT_BYTES = tuple(sorted({h.encode("ascii") for hints in _SHAPE_HINTS.values() for h in hints}))
# One pass answers "could any shape be in this text?" before the per-shape checks: nearly every
# value holds no hint at all, and one alternation costs less than a test per hint. Longest hint
# first; hints of one length in their own order, so that the pattern is the same in every process
# (two distinct hints of one length never both match at one place: their order changes nothing).
_HINTS_LONGEST_FIRST = sorted({h for hints in _SHAPE_HINTS.values() for h in hints}, key=lambda h: (-len(h), h))
_ANY_HINT = lazy("|".join(escape(h) for h in _HINTS_LONGEST_FIRST))
_ANY_HINT_BYTES = lazy(b"|".join(escape(h.encode("ascii")) for h in _HINTS_LONGEST_FIRST))

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

# A name's words are what ``normalize_name`` leaves between underscores. Sets of words, not
# patterns: compiling the alternations cost a cold run more than all its other name checks.
# The last word says what the value is, not that it is a secret: HF_TOKEN_PATH, WANDB_KEY_FILE.
_NOT_A_SECRET_LAST = frozenset(
    """FILE FILES PATH DIR DIRECTORY FILENAME NAME ID URL URI ENDPOINT HOST ENV VAR VARIABLE TYPE MODE
    LENGTH LEN SIZE COUNT NUM LIMIT FLAG ARN REF HELPER PROVIDER STORE CMD COMMAND ARG ARGS SOURCE
    METHOD POLICY FORMAT HEADER PREFIX ROTATION TTL EXPIRY EXPIRES EXPIRATION""".split()
)
# The first word makes it a switch or a count: USE_AUTH_TOKEN, MAX_TOKEN.
_NOT_A_SECRET_FIRST = frozenset("USE ENABLE DISABLE NO SKIP REQUIRE REQUIRES HAS IS WITH WITHOUT NUM MAX MIN N".split())
# Tokenizer vocabulary entries, not credentials: PAD_TOKEN, EOS_TOKEN, IMAGE_TOKEN … (but
# SLACK_BOT_TOKEN and SLACK_USER_TOKEN are Slack's own names for its credentials)
_TOKENIZER_WORDS = frozenset(
    """PAD EOS BOS UNK SEP CLS MASK SPECIAL IMAGE IMG AUDIO VIDEO START END STOP BOT EOT EOD NEW FIM MIDDLE
    SUFFIX PREFIX THINK TOOL SYSTEM USER ASSISTANT CHAT VISION PLACEHOLDER ADDITIONAL DECODER ENCODER MAX MIN
    NUM N""".split()
)
_KEY_ENDINGS = ("API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "AUTH_KEY", "SECRET_KEY")


_NOT_ALPHANUMERIC = lazy(r"[^A-Za-z0-9]+")


def normalize_name(name: str) -> str:
    """``--hf-token`` → ``HF_TOKEN``; ``wandb.api_key`` → ``WANDB_API_KEY``."""
    return _NOT_ALPHANUMERIC.sub("_", name).strip("_").upper()


# What a secret-looking name contains, lowercased (``TOKEN``, ``…KEY``, ``SECRET``,
# ``PASSWORD``/``PASSWD``): every name ``secret_name_kind`` accepts holds one, so a text without
# any holds no such name.
NAME_HINTS = (b"token", b"key", b"secret", b"passw")


@lru_cache(maxsize=4096)  # asked for every name=value in a file's text, comments included
def secret_name_kind(name: str) -> Optional[str]:
    """"token", "key", "secret" or "password" for a secret-looking name, else None."""
    n = normalize_name(name)
    if not n:
        return None
    words = n.split("_")
    if len(words) > 1 and (words[-1] in _NOT_A_SECRET_LAST or words[0] in _NOT_A_SECRET_FIRST):
        return None
    if n.endswith("TOKEN"):
        vocabulary = (len(words) > 1 and words[-1] == "TOKEN" and words[-2] in _TOKENIZER_WORDS
                      and not (len(words) > 2 and words[-3].endswith("SLACK")))
        return None if vocabulary else "token"
    if n.endswith(_KEY_ENDINGS):
        return "key"
    if "SECRET" in n:
        return "secret"
    if "PASSWORD" in n or "PASSWD" in n:
        return "password"
    return None


@lru_cache(maxsize=4096)  # asked for every argument, option and variable name, many times
def is_secret_name(name: str) -> bool:
    return secret_name_kind(name) is not None


# -- values ------------------------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    """none null nil undefined unset empty default test testing secret secrets token tokens password passwd pass
    key apikey api_key api-key hidden masked redacted foo bar baz xyz abc abc123 string value true false yes no
    on off changeme change_me change-me dummy placeholder example sample todo fixme tbd na n/a""".split()
)
_PLACEHOLDER_PARTS = lazy(
    r"your|change_?me|placeholder|redacted|example|dummy|replace_?(?:me|this|with)|insert_|enter_|put_your|"
    r"fill_?in|_here$|-here$|x{4,}|\*{3,}|\.{3}|…|<|>|\{\{|\}\}",
    IGNORECASE,
)
_KNOWN_PREFIX = lazy(
    r"^(?:hf_|gh[pousr]_|github_pat_|sk-(?:proj-|ant-|svcacct-|admin-)?|gl(?:pat|cbt|dt|rt)-|(?:xoxe\.)?xox[bpase]-)"
)
_CREDENTIAL_CHARS = lazy(r"^[A-Za-z0-9_\-.+/=:~@!%^&*]+$")
_VARIABLE_NAME_VALUE = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_TEMPLATE_VALUE = lazy(r"%[^%]+%|\[[^\]]*\]|\([^)]*\)")
_CHARACTER_CLASSES = (lazy("[A-Z]"), lazy("[a-z]"), lazy("[0-9]"))
_NUMBER = lazy(r"[+-]?\d+(?:\.\d+)?")


def is_placeholder(value: str) -> bool:
    """A value written to be replaced, or one the shell fills in: never a secret."""
    v = value.strip().strip("\"'")
    # ``\$WANDB_API_KEY`` (escaped for the task's shell, as SBL402's fix writes it) is a reference
    # too: the name of a variable, not its value
    if not v or v.lstrip("\\").startswith("$") or "${" in v or "$(" in v or "`" in v:
        return True
    if v.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_PARTS.search(v):
        return True
    body = _KNOWN_PREFIX.sub("", v)
    if not body or len(set(body.lower())) <= 2:
        return True
    if _TEMPLATE_VALUE.fullmatch(v):
        return True
    return False


def _classes(text: str) -> int:
    return sum(bool(pattern.search(text)) for pattern in _CHARACTER_CLASSES)


def shape_matches(shape: Shape, match) -> bool:
    """Whether a match of ``shape``'s pattern looks like a real credential (random enough, no placeholder)."""
    body = match.group("body")
    if isinstance(body, bytes):
        body = body.decode("ascii")
    whole = match.group(0)
    if isinstance(whole, bytes):
        whole = whole.decode("ascii")
    return _classes(body) >= shape.classes and not is_placeholder(whole)


@lru_cache(maxsize=None)
def byte_shapes() -> List[Tuple[Shape, "re.Pattern[bytes]", Tuple[bytes, ...]]]:
    """Each shape's pattern over bytes, and the literal bytes every match contains; a pattern is
    compiled when first used, which the hints make rare (14 compiles were a third of a cold
    run's regex work)."""
    return [
        (shape, lazy(shape.pattern.encode("ascii")), tuple(h.encode("ascii") for h in _SHAPE_HINTS[shape.kind]))
        for shape in SHAPES
    ]


def shape_of(text: str) -> Optional[Shape]:
    """The credential shape ``text`` is (entirely), or None."""
    if _ANY_HINT.search(text) is None:
        return None
    for shape, pattern, hints in _SHAPE_TEXT:
        if not any(hint in text for hint in hints):
            continue
        match = pattern.fullmatch(text)
        if match and shape_matches(shape, match):
            return shape
    return None


def shapes_in(text: str, hinted: Optional[bool] = None) -> Iterator[Tuple[Shape, int, int]]:
    """Every credential shape in ``text``. ``hinted``: whether the text holds the literal part of
    one (``shape_hints`` of the bytes it was decoded from, which hold the same ASCII), when the
    caller knows it already."""
    if hinted is None:
        hinted = _ANY_HINT.search(text) is not None
    if not hinted:
        return
    for shape, pattern, hints in _SHAPE_TEXT:
        if not any(hint in text for hint in hints):
            continue
        for match in pattern.finditer(text):
            if shape_matches(shape, match):
                yield shape, match.start(), match.end()


def is_credential(value: str, name_kind: Optional[str]) -> bool:
    """Whether a literal assigned to a secret-named variable (or option) is a real credential."""
    if is_placeholder(value):
        return False
    if shape_of(value) is not None:
        return True
    v = value
    if v.startswith(("/", "~/", "./", "../")) or _NUMBER.fullmatch(v) and name_kind != "password":
        return False
    if name_kind in ("token", "key"):
        return len(v) >= 8 and bool(_CREDENTIAL_CHARS.match(v)) and not _VARIABLE_NAME_VALUE.match(v)
    return len(v) >= 4 and not any(ch.isspace() for ch in v)


def mask(value: str) -> str:
    """The only form in which a secret is printed: its first 3 characters and an ellipsis."""
    return value[:3] + "…"


# -- a secret found in a file -------------------------------------------------------------------------


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


def kind_of(value: str, name: str) -> str:
    """What a secret is, for messages: its shape, or what its name says it holds."""
    shape = shape_of(value)
    if shape is not None:
        return shape.kind
    normalized = normalize_name(name)
    if normalized in NAMED_KINDS:
        return NAMED_KINDS[normalized]
    return {"token": "token", "key": "API key", "secret": "secret", "password": "password"}.get(
        secret_name_kind(name) or "", "secret"
    )


# -- reading a file as text -------------------------------------------------------------------------


# (?<![A-Za-z_]): not from inside a name whose start already failed to match (a scan would
# otherwise try every letter of every word again)
_TEXT_ASSIGNMENT = lazy(
    r"(?<![A-Za-z_])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)[\"'\]]*[ \t]*(?:=|:[ \t])[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'`;,)}\]]+)"
)
_TEXT_WANDB = lazy(r"wandb[ \t]+login(?:[ \t]+--[A-Za-z-]+)*[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'-][^\s\"';]*)")
_TEXT_OPTION = lazy(r"--(?P<name>[A-Za-z][A-Za-z0-9_\-]*)(?:=|[ \t]+)(?P<q>[\"']?)(?P<value>[^\s\"'`;,-][^\s\"'`;,]*)")


def _hint_lines(probe: bytes) -> List[Tuple[int, int]]:
    """(start, end) of each line of ``probe`` (a text as lowercase ASCII bytes, one byte per
    character) that holds a name hint, without its newline."""
    out: List[Tuple[int, int]] = []
    nexts = [probe.find(hint) for hint in NAME_HINTS]  # each hint's next place
    while True:
        found = [at for at in nexts if at >= 0]
        if not found:
            return out
        at = min(found)
        end = probe.find(b"\n", at)
        if end < 0:
            end = len(probe)
        out.append((probe.rfind(b"\n", 0, at) + 1, end))
        nexts = [place if place < 0 or place > end else probe.find(hint, end) for place, hint in zip(nexts, NAME_HINTS)]


def name_hints(chunk: bytes) -> bool:
    """Whether ``chunk`` holds a secret-looking name's hint or ``wandb``."""
    lowered = chunk.lower()
    return any(hint in lowered for hint in NAME_HINTS) or b"wandb" in chunk


_LAST_SHAPE_HINTS: list = [None, False]  # the bytes asked last and the answer: a whole file is asked twice


def shape_hints(chunk: bytes) -> bool:
    """Whether ``chunk`` holds the literal part of a credential shape."""
    if _LAST_SHAPE_HINTS[0] is chunk:
        return _LAST_SHAPE_HINTS[1]
    found = _ANY_HINT_BYTES.search(chunk) is not None
    _LAST_SHAPE_HINTS[:] = [chunk, found]
    return found


def text_hints(chunk: bytes) -> bool:
    """Whether ``chunk`` holds anything ``text_secrets`` looks for: a secret-looking name,
    ``wandb``, the literal part of a credential shape (all ASCII, which both decodings keep as
    it is). Most comments and many whole files hold none of them."""
    return name_hints(chunk) or shape_hints(chunk)


def text_secrets(source: Source, region: Span, live: bool, site: str) -> Iterator[Secret]:
    chunk = source.data[region.start : region.end]
    lowered = chunk.lower()
    named = any(hint in lowered for hint in NAME_HINTS)
    shaped = None
    if not named and b"wandb" not in chunk:
        shaped = shape_hints(chunk)
        if not shaped:
            return  # as text_hints
    text = chunk.decode("utf-8", "replace") if source.encoding == "utf-8" else chunk.decode("latin-1")

    def span_of(start: int, end: int) -> Span:
        prefix = len(text[:start].encode(source.encoding if source.encoding == "utf-8" else "latin-1"))
        length = len(text[start:end].encode(source.encoding if source.encoding == "utf-8" else "latin-1"))
        return Span(region.start + prefix, region.start + prefix + length)

    patterns = []
    if named and ("=" in text or ":" in text):
        patterns.append(_TEXT_ASSIGNMENT)
    if named and "--" in text:
        patterns.append(_TEXT_OPTION)
    # No match of either pattern crosses a line, and a line's matches are the same whether the
    # search starts at the text's start or at the line's: only the lines where a secret-looking
    # name can be (they hold a hint) are searched.
    lines: Sequence[Tuple[int, int]] = ()
    if patterns:  # where the hints are, by character: non-ASCII characters become "?"
        lines = _hint_lines(lowered if chunk.isascii() else text.encode("ascii", "replace").lower())
    for pattern in patterns:
        for start, end in lines:
            for match in pattern.finditer(text, start, end):
                name, value = match.group("name"), match.group("value")
                if is_secret_name(name) and (is_credential(value, secret_name_kind(name))):
                    yield Secret(span_of(match.start("value"), match.end("value")), kind_of(value, name), name, value, live, site)
    for match in _TEXT_WANDB.finditer(text) if "wandb" in text else ():
        value = match.group("value")
        if not is_placeholder(value) and len(value) >= 8:
            yield Secret(span_of(match.start("value"), match.end("value")), "W&B API key", "WANDB_API_KEY", value, live, site)
    if shaped is None:
        shaped = shape_hints(chunk)  # (the text holds the ASCII of the bytes it was decoded from)
    for shape, start, end in shapes_in(text, shaped):
        yield Secret(span_of(start, end), shape.kind, "", text[start:end], live, site)


def whole_text_secrets(source: Source) -> Tuple[Tuple[Secret, ...], List[Tuple[int, int]]]:
    """What ``text_secrets`` yields for the whole of ``source`` (in its order), and (start,
    place in that order) of each, sorted: kept on ``source`` for its bytes, since ``text_scan``
    and the secrets scan of every stretch bounded by lines (``within``) read them."""
    data = source.data
    kept = source.__dict__.get("_text_hits")
    if kept is not None and kept[0] is data and kept[1] == source.encoding:
        return kept[2], kept[3]
    hits = tuple(text_secrets(source, Span(0, len(data)), True, "text"))
    starts = sorted((secret.span.start, index) for index, secret in enumerate(hits))
    source.__dict__["_text_hits"] = (data, source.encoding, hits, starts)
    return hits, starts


def line_bounded(data: bytes, start: int, end: int) -> bool:
    """Whether only spaces and tabs stand between the start of the line and ``start``, and
    between ``end`` and the end of its line (``end`` right after a newline ends a line too).

    Every match the text scan makes lies within a line and starts with no space or tab, and its
    look-arounds see only what a space, a tab, a newline or nothing gives alike: the matches
    ``text_secrets`` makes in such a stretch are those the whole file's scan makes there, in
    the same order (``within``)."""
    if start:
        line_start = data.rfind(b"\n", 0, start) + 1
        if line_start != start and data[line_start:start].strip(b" \t"):
            return False
    if end < len(data) and data[end - 1 : end] != b"\n":
        line_end = data.find(b"\n", end)
        if line_end < 0:
            line_end = len(data)
        if line_end != end and data[end:line_end].strip(b" \t\r"):
            return False
    return True


def within(whole: Tuple[Tuple[Secret, ...], List[Tuple[int, int]]], region: Span, live: bool, site: str) -> List[Secret]:
    """``text_secrets(source, region, live, site)`` for a ``region`` bounded by lines
    (``line_bounded``), from ``whole_text_secrets(source)``."""
    hits, starts = whole
    start, end = region.start, region.end
    inside = []
    for at in range(bisect_left(starts, (start, -1)), len(starts)):
        hit_start, index = starts[at]
        if hit_start >= end:
            break
        if hits[index].span.end <= end:
            inside.append(index)
    inside.sort()
    return [Secret(hits[i].span, hits[i].kind, hits[i].name, hits[i].value, live, site) for i in inside]


def text_scan(source: Source) -> List[Secret]:
    """Secrets found by reading the whole file as text (Python files, or when the model fails).

    Kept on ``source`` for its bytes: a run asks it of the same file before and after building
    the model (``secrets.found_in``)."""
    data = source.data
    kept = source.__dict__.get("_text_scan")
    if kept is not None and kept[0] is data and kept[1] == source.encoding:
        return list(kept[2])
    found: Dict[Span, Secret] = {}
    for secret in whole_text_secrets(source)[0]:
        if not any(other.overlaps(secret.span) for other in found):
            found[secret.span] = secret
    result = sorted(found.values(), key=lambda s: s.span)
    source.__dict__["_text_scan"] = (data, source.encoding, tuple(result))
    return result


def values(source: Source, found: Iterable[Secret]) -> List[str]:
    """The values of secrets found in ``source``, as written and as the shell sees them: what
    ``redact`` hides from every output about that file."""
    out: List[str] = []
    for secret in found:
        for text in (source.text(secret.span), secret.value):
            if text and text not in out:
                out.append(text)
    return out


# -- hiding them ---------------------------------------------------------------------------------

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

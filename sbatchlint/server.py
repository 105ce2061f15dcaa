"""``sbatchlint server``: a language server over stdio (``pip install "sbatchlint[server]"``).

- Diagnostics when a document is opened, changed (after a pause in typing) and saved, with the
  settings the command line would use for that file (its closest configuration, the cluster
  profile).
- Positions in the encoding the client negotiated (UTF-16 unless it offers another); the linter's
  spans are byte offsets into the UTF-8 text, converted here.
- Code actions: each finding's fix (safe or unsafe, said in the title), "fix all safe" for the
  document, and a ``# sbatchlint: disable=CODE`` comment for the finding's line (``noqa.py``).
- Hover: an ``#SBATCH`` or srun option (``options.describe``), and a rule code in a suppression
  comment (the rule's page).
- Settings: ``initializationOptions``, ``workspace/didChangeConfiguration`` and, from a client
  that answers it, ``workspace/configuration`` (section ``sbatchlint``) take ``check``'s options (``config``, ``isolated``, ``select``, ``extendSelect``, ``ignore``, ``unsafeFixes``,
  ``slurmVersion``, ``shellcheck``) with the same meaning; one that is not understood is said in a
  ``window/showMessage`` line and left at its default.

pygls and lsprotocol are imported by this module only, and this module only by the ``server``
command.
"""
from __future__ import annotations

import asyncio
import os

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from . import __version__
from .diagnostics import Diagnostic, Severity
from .lazyclass import dataclass
from .source import Source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

DEBOUNCE = 0.3  # seconds of quiet after a change before the document is linted again
SOURCE = "sbatchlint"
FIX_ALL = "source.fixAll.sbatchlint"
SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
            Severity.INFO: types.DiagnosticSeverity.Information}


# -- positions ---------------------------------------------------------------------------------------
def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def to_position(source: Source, offset: int, encoding: str) -> types.Position:
    """The LSP position of byte ``offset`` of ``source`` (0-based line, column in ``encoding`` units)."""
    offset = max(0, min(offset, len(source.data)))
    line = source.line_of(offset)
    start = source.line_span(line).start
    prefix = source.data[start:offset].decode("utf-8", "replace")
    return types.Position(line=line - 1, character=_units(prefix, encoding))


def to_range(source: Source, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(start=to_position(source, start, encoding), end=to_position(source, end, encoding))


def to_offset(source: Source, position: types.Position, encoding: str) -> int:
    """The byte offset of an LSP position (a column past the line's end is its end)."""
    if position.line >= source.line_count:
        return len(source.data)
    span = source.line_span(position.line + 1)
    text = source.data[span.start:span.end].decode("utf-8", "replace")
    units = 0
    chars = 0
    for char in text:
        if units >= position.character:
            break
        units += _units(char, encoding)
        chars += 1
    return span.start + len(text[:chars].encode("utf-8"))


# -- linting -----------------------------------------------------------------------------------------
@dataclass
class Linted:
    version: Optional[int]
    result: object  # report.FileResult
    diagnostics: List[types.Diagnostic]
    findings: List[Tuple[Diagnostic, types.Diagnostic]]


def path_of(uri: str) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(uri) or uri


# -- settings from the editor ------------------------------------------------------------------------
@dataclass
class Settings:
    """What the editor asked for, with the meaning of ``check``'s options of the same names."""

    cli: object  # runner.CommandLine
    unsafe_fixes: bool = False  # "fix all" applies unsafe fixes too (as --unsafe-fixes does)


# setting (spelled without '-', '_' or case) -> the option of ``check`` it stands for
SETTING_NAMES = {
    "config": "config", "configuration": "config", "isolated": "isolated",
    "select": "select", "extendselect": "extend-select", "ignore": "ignore",
    "unsafefixes": "unsafe-fixes", "slurmversion": "slurm-version", "shellcheck": "shellcheck",
}


def _code_list(name: str, value) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name}: expected a list of rule codes or prefixes")
    out: List[str] = []
    for item in value:
        out.extend(part.strip() for part in item.split(",") if part.strip())
    return out


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected true or false")
    return value


def settings_from(raw, root: Optional[str]) -> Tuple[Settings, List[str]]:
    """The settings an editor sent (``initializationOptions``, or ``settings`` of
    ``workspace/didChangeConfiguration``, either bare or under an ``sbatchlint`` key), and a one-line
    complaint for each that was not understood (that one is left at its default). A relative
    ``config`` path is taken from the workspace root."""
    from . import shellcheck
    from .codes import CODES
    from .options import parse_slurm_version
    from .runner import CommandLine

    cli = CommandLine()
    settings = Settings(cli)
    problems: List[str] = []
    if isinstance(raw, dict) and isinstance(raw.get("sbatchlint"), dict):
        raw = raw["sbatchlint"]
    if raw is None:
        return settings, problems
    if not isinstance(raw, dict):
        return settings, ["settings: expected an object of sbatchlint settings"]
    for key, value in raw.items():
        name = SETTING_NAMES.get(str(key).replace("-", "").replace("_", "").lower())
        try:
            if name is None:
                raise ValueError(f"{key}: no such setting (known: config, isolated, select, extendSelect, ignore, "
                                 "unsafeFixes, slurmVersion, shellcheck)")
            if value is None:
                continue
            if name == "config":
                if not isinstance(value, str) or not value:
                    raise ValueError("config: expected the path of a configuration file")
                path = os.path.expanduser(value)
                if not os.path.isabs(path):
                    path = os.path.join(root or os.getcwd(), path)
                cli.config_path = path
            elif name == "isolated":
                cli.isolated = _flag(key, value)
            elif name in ("select", "extend-select", "ignore"):
                codes = _code_list(key, value)
                for pattern in codes:
                    if not (pattern.upper() in ("SC", "ALL") or shellcheck.is_code(pattern)
                            or any(code.startswith(pattern.upper()) for code in CODES)):
                        raise ValueError(f"{key}: unknown rule code or prefix: {pattern}")
                setattr(cli, name.replace("-", "_"), codes)
            elif name == "unsafe-fixes":
                settings.unsafe_fixes = _flag(key, value)
            elif name == "slurm-version":
                text = str(value)
                if text.strip().lower() != "auto" and parse_slurm_version(text) is None:
                    raise ValueError(f"{key}: expected a Slurm release such as 24.05, or auto, got {text!r}")
                cli.settings["slurm_version"] = text
            elif name == "shellcheck":
                if _flag(key, value):
                    cli.settings["shellcheck"] = True
        except ValueError as err:
            problems.append(str(err))
    return settings, problems


def resolver(settings: Optional[Settings] = None):
    """Settings resolution as ``check`` does it (read afresh: a configuration may have changed)."""
    from .codes import CODES
    from .runner import CommandLine, Resolver

    return Resolver(settings.cli if settings is not None else CommandLine(), list(CODES))


def options_for(path: str, settings: Optional[Settings] = None):
    """The options ``sbatchlint check PATH`` would use, with the editor's settings as its options."""
    return resolver(settings).options_for(path)


def lint_text(path: str, text: str, apply: bool = False, unsafe: bool = False, settings: Optional[Settings] = None):
    """Lint (or fix, with ``apply``) the editor's text of ``path`` as the command line would the file."""
    from .runner import Job, run_job

    options = options_for(path, settings)
    return run_job(Job("-", path, options, apply, unsafe, stdin_data=text.encode("utf-8")))


def to_lsp(result, d: Diagnostic, encoding: str) -> types.Diagnostic:
    from .report.links import terminal_url

    source = result.source
    message = result.redact(d.message)
    if d.help:
        message += "\nhelp: " + result.redact(d.help)
    for note in d.notes:
        message += "\nnote: " + result.redact(note)
    url = terminal_url(d.code)
    return types.Diagnostic(
        range=to_range(source, d.span.start, d.span.end, encoding),
        message=message,
        severity=SEVERITY[d.severity],
        code=d.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
    )


class SbatchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("sbatchlint", __version__)
        self.linted: Dict[str, Linted] = {}
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self.settings: Optional[Settings] = None  # None: as ``check`` with no options
        self.initialization_options = None

    def configure(self, raw) -> None:
        """Take the editor's settings; say in one line each what was not understood. A configuration
        file that cannot be read leaves the settings as they were."""
        from .config import ConfigError

        settings, problems = settings_from(raw, self.workspace.root_path if self._workspace_ready else None)
        try:
            resolver(settings)  # reads a named configuration file now, so that a bad one is said at once
        except ConfigError as err:
            problems.append(str(err))
            settings = self.settings
        for problem in problems:
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"sbatchlint: settings: {problem}"))
        self.settings = settings

    @property
    def _workspace_ready(self) -> bool:
        try:
            return self.workspace is not None
        except RuntimeError:
            return False

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def lint(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        path = path_of(uri)
        result = lint_text(path, document.source, settings=self.settings)
        findings = []
        if result.source is not None:
            # a finding in a file the script sources belongs to that file's own lines
            findings = [(d, to_lsp(result, d, self.encoding)) for d in result.diagnostics if d.path == result.path]
        diagnostics = [lsp for _, lsp in findings]
        if result.error:
            diagnostics.append(types.Diagnostic(
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                message=result.redact(result.error), severity=types.DiagnosticSeverity.Error, source=SOURCE))
        self.linted[uri] = Linted(document.version, result, diagnostics, findings)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version))

    def lint_later(self, uri: str) -> None:
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(DEBOUNCE, self._lint_pending, uri)

    def _lint_pending(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if uri in self.workspace.text_documents:
            self.lint(uri)

    def current(self, uri: str) -> Optional[Linted]:
        """The findings of the document as it is now (linted again if it changed since)."""
        document = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is None or linted.version != document.version or uri in self.pending:
            handle = self.pending.pop(uri, None)
            if handle is not None:
                handle.cancel()
            self.lint(uri)
            linted = self.linted.get(uri)
        return linted


server = SbatchlintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: SbatchlintServer, params: types.InitializeParams) -> None:
    ls.initialization_options = params.initialization_options
    ls.configure(params.initialization_options)


async def pull_settings(ls: SbatchlintServer) -> None:
    """Ask a client that answers ``workspace/configuration`` for its ``sbatchlint`` section (the
    pull model of VS Code's language client), take it, and lint the open documents again."""
    workspace = ls.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="sbatchlint")]))
    except Exception:  # a client that fails the request keeps the settings it gave before
        return
    if not answer or not answer[0]:
        return
    ls.configure(answer[0])
    for uri in list(ls.workspace.text_documents):
        ls.lint(uri)


@server.feature(types.INITIALIZED)
async def initialized(ls: SbatchlintServer, params: types.InitializedParams) -> None:
    if not ls.initialization_options:
        await pull_settings(ls)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: SbatchlintServer, params: types.DidChangeConfigurationParams) -> None:
    """New settings replace the editor's earlier ones, and every open document is linted again with
    them. Without settings in the notification, a client that answers ``workspace/configuration``
    is asked; otherwise nothing changes."""
    if not params.settings:
        await pull_settings(ls)
        return
    ls.configure(params.settings)
    for uri in list(ls.workspace.text_documents):
        ls.lint(uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: SbatchlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: SbatchlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.lint_later(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: SbatchlintServer, params: types.DidSaveTextDocumentParams) -> None:
    handle = ls.pending.pop(params.text_document.uri, None)
    if handle is not None:
        handle.cancel()
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: SbatchlintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    handle = ls.pending.pop(uri, None)
    if handle is not None:
        handle.cancel()
    ls.linted.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


# -- code actions ------------------------------------------------------------------------------------
def _text_edits(source: Source, edits, encoding: str) -> List[types.TextEdit]:
    return [types.TextEdit(range=to_range(source, e.span.start, e.span.end, encoding), new_text=e.text)
            for e in edits]


def _whole(source: Source, text: str, encoding: str) -> List[types.TextEdit]:
    return [types.TextEdit(range=to_range(source, 0, len(source.data), encoding), new_text=text)]


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
)
def code_action(ls: SbatchlintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    uri = params.text_document.uri
    linted = ls.current(uri)
    if linted is None or linted.result.source is None:
        return []
    result = linted.result
    source = result.source
    encoding = ls.encoding
    start = to_offset(source, params.range.start, encoding)
    end = to_offset(source, params.range.end, encoding)
    first, last = source.line_of(start), source.line_of(end)
    wanted = params.context.only
    actions: List[types.CodeAction] = []
    quick = not wanted or any(kind.startswith(types.CodeActionKind.QuickFix) for kind in wanted)
    if quick:
        model = None
        for d, lsp in linted.findings:
            if not (first <= source.line_of(d.span.start) <= last or d.span.start <= start <= d.span.end):
                continue
            if d.fix is not None and d.fix.edits:
                unsafe = d.fix.applicability.value == "unsafe"
                actions.append(types.CodeAction(
                    title=f"{d.code}: {result.redact(d.fix.description)}" + (" (unsafe fix)" if unsafe else ""),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp],
                    is_preferred=not unsafe,
                    edit=types.WorkspaceEdit(changes={uri: _text_edits(source, d.fix.edits, encoding)}),
                ))
            if model is None:
                from .linter import build

                model = build(source, options_for(source.path, ls.settings))
            from .noqa import suppression_edits

            actions.append(types.CodeAction(
                title=f"Disable {d.code} for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp],
                edit=types.WorkspaceEdit(changes={uri: _text_edits(source, suppression_edits(model, [d]), encoding)}),
            ))
    fix_all = not wanted or any(FIX_ALL.startswith(kind) for kind in wanted)
    applicable = ("safe", "unsafe") if ls.settings is not None and ls.settings.unsafe_fixes else ("safe",)
    if fix_all and any(d.fix is not None and d.fix.applicability.value in applicable for d, _ in linted.findings):
        document = ls.workspace.get_text_document(uri)
        unsafe = ls.settings is not None and ls.settings.unsafe_fixes
        fixed = lint_text(source.path, document.source, apply=True, unsafe=unsafe, settings=ls.settings)
        if fixed.fixed_data is not None and fixed.fixed_data != source.data:
            actions.append(types.CodeAction(
                title="sbatchlint: fix all safe and unsafe fixes" if unsafe else "sbatchlint: fix all safe fixes",
                kind=FIX_ALL,
                edit=types.WorkspaceEdit(changes={uri: _whole(source, fixed.fixed_data.decode("utf-8"), encoding)}),
            ))
    return actions


# -- hover -------------------------------------------------------------------------------------------
def hover_text(source: Source, offset: int, settings, editor: Optional[Settings] = None) -> Optional[Tuple[str, int, int]]:
    """Markdown about what is at ``offset`` (an option or a rule code), and its byte span."""
    if source.path.endswith(".py"):
        return None
    from . import options, suppressions
    from .linter import build
    from .model.slurm import target_version

    script = build(source, options_for(source.path, editor))
    for suppression in suppressions.find(source, script):
        for code in suppression.codes:
            if code.span.start <= offset <= code.span.end:
                return _rule_hover(code.code), code.span.start, code.span.end
    version = target_version(settings)
    for directive in script.header.directives:
        if directive.spec is not None and directive.span.start <= offset < max(directive.span.end, directive.option_span.end):
            return "\n\n".join(options.describe(directive.spec, "#SBATCH", version)), directive.span.start, directive.span.end
    for step in script.steps:
        for option in step.options:
            span = option.span
            if option.spec is not None and span.start <= offset < span.end:
                return "\n\n".join(options.describe(option.spec, "srun", version)), span.start, span.end
    return None


def _rule_hover(code: str) -> str:
    from . import registry
    from .docs import rule_page

    try:
        return rule_page(registry.get(code))
    except KeyError:
        return f"`{code}`: no sbatchlint rule has this code (see `sbatchlint rules`)."


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: SbatchlintServer, params: types.HoverParams) -> Optional[types.Hover]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    path = path_of(params.text_document.uri)
    try:
        source = Source.checked(document.source.encode("utf-8"), path)
    except Exception:  # a document the linter cannot read has nothing to say on hover
        return None
    offset = to_offset(source, params.position, ls.encoding)
    found = hover_text(source, offset, options_for(path, ls.settings).settings, ls.settings)
    if found is None:
        return None
    text, start, end = found
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                       range=to_range(source, start, end, ls.encoding))


def main() -> int:
    """Serve over stdio until the client says exit."""
    os.environ.setdefault("NO_COLOR", "1")
    server.start_io()
    return 0

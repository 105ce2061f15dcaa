"""``sbatchlint server`` end to end: a real LSP client (pytest-lsp) talks to the server over stdio."""
from __future__ import annotations

import asyncio
import os
import sys

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "sbatchlint", "server"],
    server_env={**os.environ, "PYTHONPATH": REPOSITORY},
)

# A late #SBATCH line (SBL003, unsafe fix) after a comment in Japanese: the column of a finding
# on the line after it must not depend on it, and a finding on its own line is counted in UTF-16.
JOB = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --time=00:10:00
# 学習ジョブ：ノード数を確認する
set -e
#SBATCH --partition=batch
echo "ジョブ開始" && srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 hostname  # sbatchlint: disable=SBL107
"""


async def start(client: LanguageClient, tmp_path, encodings=None):
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)),
    )
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=tmp_path.as_uri(), process_id=os.getpid()))
    return result


async def open_document(client: LanguageClient, path, text: str):
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


def by_code(client, uri):
    return {d.code: d for d in client.diagnostics[uri]}


@pytest.mark.asyncio
async def test_diagnostics_on_open_in_utf16_after_japanese_text(client: LanguageClient, tmp_path):
    result = await start(client, tmp_path)
    assert result.capabilities.position_encoding in (None, types.PositionEncodingKind.Utf16)
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    found = by_code(client, uri)
    late = found["SBL003"]
    assert late.range.start == types.Position(line=5, character=0)
    assert late.range.end == types.Position(line=5, character=len("#SBATCH --partition=batch"))
    assert late.severity == types.DiagnosticSeverity.Error and late.source == "sbatchlint"
    assert late.code_description is not None and late.code_description.href.endswith("rules/SBL003.md")
    # the unused suppression (SBL900) after Japanese text on its own line: counted in UTF-16 units
    unused = found["SBL900"]
    line = JOB.split("\n")[6]
    assert unused.range.start == types.Position(line=6, character=line.index("# sbatchlint"))
    assert line.index("# sbatchlint") < len(line[:line.index("# sbatchlint")].encode("utf-8"))


@pytest.mark.asyncio
async def test_positions_in_utf8_when_the_client_asks(client: LanguageClient, tmp_path):
    result = await start(client, tmp_path, encodings=[types.PositionEncodingKind.Utf8])
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    line = JOB.split("\n")[6]
    unused = by_code(client, uri)["SBL900"]
    assert unused.range.start.character == len(line[:line.index("# sbatchlint")].encode("utf-8"))


@pytest.mark.asyncio
async def test_change_is_linted_after_a_pause_and_save_at_once(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    assert "SBL003" in by_code(client, uri)
    fixed = JOB.replace("#SBATCH --partition=batch\n", "")
    for version, text in ((2, JOB + "# typing\n"), (3, fixed)):  # two quick edits: one lint, of the last
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "SBL003" not in by_code(client, uri)
    with pytest.raises(asyncio.TimeoutError):  # the first edit was never linted on its own
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 1.5)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "SBL003" not in by_code(client, uri)


@pytest.mark.asyncio
async def test_settings_come_from_the_files_configuration(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    (tmp_path / ".sbatchlint.toml").write_text('ignore = ["SBL003"]\n')
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    assert "SBL003" not in by_code(client, uri) and client.diagnostics[uri]


@pytest.mark.asyncio
async def test_code_actions_fix_disable_and_fix_all(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nset -e\n#SBATCH --partition=batch\nsrun hostname\n"
    uri = await open_document(client, tmp_path / "job.sh", text)
    late = by_code(client, uri)["SBL003"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=late.range,
        context=types.CodeActionContext(diagnostics=[late])))
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.title.startswith("SBL003:"))
    assert fix.title.endswith("(unsafe fix)") and not fix.is_preferred
    disable = next(a for a in actions if a.title == "Disable SBL003 for this line")
    [edit] = disable.edit.changes[uri]
    assert edit.new_text == "# sbatchlint: disable=SBL003\n" and edit.range.start == types.Position(line=4, character=0)
    moved = fix.edit.changes[uri]
    assert any("#SBATCH --partition=batch" in e.new_text for e in moved), titles


@pytest.mark.asyncio
async def test_fix_all_safe_fixes(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    # SBL013: DOS line endings, a safe fix
    text = "#!/bin/bash\r\n#SBATCH --nodes=1\r\n#SBATCH --time=00:10:00\r\nsrun hostname\r\n"
    uri = await open_document(client, tmp_path / "job.sh", text)
    safe = [d for d in client.diagnostics[uri]]
    assert safe
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"])))
    [fix_all] = actions
    assert fix_all.kind == "source.fixAll.sbatchlint"
    [edit] = fix_all.edit.changes[uri]
    assert "\r" not in edit.new_text


@pytest.mark.asyncio
async def test_hover_on_options_and_rule_codes(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = await open_document(client, tmp_path / "job.sh", JOB)

    async def hover(line, character):
        return await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))

    header = await hover(1, 12)  # #SBATCH --nodes=1
    assert "--nodes" in header.contents.value and "Number of nodes" in header.contents.value
    image = await hover(6, JOB.split("\n")[6].index("--container-image") + 3)
    assert "container image" in image.contents.value and "pyxis" in image.contents.value
    rule = await hover(6, JOB.split("\n")[6].index("SBL107") + 2)  # in the suppression comment
    assert rule.contents.value.startswith("# SBL107 ")
    assert await hover(4, 1) is None  # `set -e`: nothing to say


@pytest.mark.asyncio
async def test_hover_names_the_slurm_release_that_differs(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    (tmp_path / ".sbatchlint.toml").write_text('slurm-version = "23.02"\n')
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=8\n#SBATCH --time=00:10:00\nsrun hostname\n"
    uri = await open_document(client, tmp_path / "job.sh", text)
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=12)))
    assert "22.05 up to 23.11" in found.contents.value and "the release checked against" in found.contents.value


# -- settings from the editor: initializationOptions and workspace/didChangeConfiguration ------------
async def published(client: LanguageClient):
    """The next diagnostics the server publishes; a test that waits in vain fails after a minute."""
    return await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 60)


LATE = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=8\n#SBATCH --time=00:10:00\nset -e\n#SBATCH --partition=batch\nsrun hostname\n"


async def start_with(client: LanguageClient, tmp_path, options):
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri(), process_id=os.getpid(),
        initialization_options=options))


@pytest.mark.asyncio
async def test_initialization_options_select_and_ignore_as_the_command_line_does(client: LanguageClient, tmp_path):
    await start_with(client, tmp_path, {"ignore": ["SBL003"]})
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    assert "SBL003" not in by_code(client, uri) and "SBL900" in by_code(client, uri)


@pytest.mark.asyncio
async def test_initialization_options_under_an_sbatchlint_key_with_select(client: LanguageClient, tmp_path):
    await start_with(client, tmp_path, {"sbatchlint": {"select": "SBL003"}})
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    assert set(by_code(client, uri)) == {"SBL003"}


@pytest.mark.asyncio
async def test_config_path_is_taken_from_the_workspace_root(client: LanguageClient, tmp_path):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "strict.toml").write_text('ignore = ["SBL003"]\n')
    (tmp_path / ".sbatchlint.toml").write_text('ignore = ["SBL900"]\n')  # the file's own: not used
    await start_with(client, tmp_path, {"config": "ci/strict.toml"})
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    found = by_code(client, uri)
    assert "SBL003" not in found and "SBL900" in found


@pytest.mark.asyncio
async def test_slurm_version_setting_reaches_rules_and_hover(client: LanguageClient, tmp_path):
    await start_with(client, tmp_path, {"slurmVersion": "23.02"})
    uri = await open_document(client, tmp_path / "job.sh", LATE)
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=12)))
    assert "22.05 up to 23.11" in found.contents.value and "the release checked against" in found.contents.value
    assert "SBL109" in by_code(client, uri)  # the --cpus-per-task rule of releases 22.05 to 23.11
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"sbatchlint": {"slurm-version": "24.05"}}))
    await published(client)
    assert "SBL109" not in by_code(client, uri) and "SBL003" in by_code(client, uri)


@pytest.mark.asyncio
async def test_unsafe_fixes_setting_makes_fix_all_apply_them(client: LanguageClient, tmp_path):
    await start_with(client, tmp_path, {})
    uri = await open_document(client, tmp_path / "job.sh", LATE)
    assert by_code(client, uri)["SBL003"]  # its fix is unsafe, and the only fix here

    async def fix_all():
        return await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"])))

    assert not await fix_all()  # safe fixes only: nothing to offer
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"unsafeFixes": True}))
    await published(client)
    [action] = await fix_all()
    assert action.title == "sbatchlint: fix all safe and unsafe fixes"
    [edit] = action.edit.changes[uri]
    assert edit.new_text.index("#SBATCH --partition=batch") < edit.new_text.index("set -e")


@pytest.mark.asyncio
async def test_settings_that_are_not_understood_are_said_in_one_line(client: LanguageClient, tmp_path):
    await start_with(client, tmp_path, {"select": ["SBL999"], "slurmVersion": "soon", "colour": True,
                                        "ignore": ["SBL900"]})
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    messages = [m.message for m in client.messages]
    assert "sbatchlint: settings: select: unknown rule code or prefix: SBL999" in messages
    assert any(m.startswith("sbatchlint: settings: slurmVersion: expected a Slurm release") for m in messages)
    assert any(m.startswith("sbatchlint: settings: colour: no such setting") for m in messages)
    assert all("\n" not in m for m in messages)
    found = by_code(client, uri)  # the settings understood still apply; the others are left at their default
    assert "SBL900" not in found and "SBL003" in found
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"config": "missing.toml"}))
    # the server says what it could not use, then lints again: waiting for the second is enough
    # (waiting for each in turn could miss the second while the first is being handled)
    await published(client)
    assert client.messages[-1].message.startswith("sbatchlint: settings: ") and "missing.toml" in client.messages[-1].message
    assert "SBL900" not in by_code(client, uri)  # a configuration that cannot be read changes nothing


@pytest.mark.asyncio
async def test_disable_for_this_line_in_a_python_entry_point(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    text = 'import os\nimport sys\n\nif "WORLD_SIZE" not in os.environ \\\n        and "RANK" not in os.environ:\n    sys.exit(1)\n'
    path = tmp_path / "train.py"
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await published(client)
    guard = by_code(client, uri)["SBL501"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=guard.range,
        context=types.CodeActionContext(diagnostics=[guard])))
    disable = next(a for a in actions if a.title == "Disable SBL501 for this line")
    [edit] = disable.edit.changes[uri]  # the line ends with `\`: a comment line before it
    assert edit.new_text == "# sbatchlint: disable=SBL501\n" and edit.range.start == types.Position(line=3, character=0)


@pytest.mark.asyncio
async def test_the_readmes_vs_code_settings_are_understood(client: LanguageClient, tmp_path):
    import json
    import re

    with open(os.path.join(REPOSITORY, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    block = next(b for b in re.findall(r"```json\n(.*?)```", readme, re.S) if "glspc.server.command" in b)
    options = json.loads(block)["glspc.server.initializationOptions"]
    await start_with(client, tmp_path, options)
    text = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n#SBATCH --output=train.log\nsrun hostname\n"
    uri = await open_document(client, tmp_path / "job.sh", text)
    assert client.messages == []  # every setting understood
    assert "SBL011" not in by_code(client, uri)


@pytest.mark.asyncio
async def test_settings_are_asked_of_a_client_that_answers_workspace_configuration(client: LanguageClient, tmp_path):
    client.set_configuration({"ignore": ["SBL003"]}, section="sbatchlint")
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True)),
        root_uri=tmp_path.as_uri(), process_id=os.getpid()))
    uri = await open_document(client, tmp_path / "job.sh", JOB)
    # the server asks once the session is initialized, and lints the open document again with the answer
    deadline = asyncio.get_running_loop().time() + 60
    while "SBL003" in by_code(client, uri) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert "SBL003" not in by_code(client, uri) and "SBL900" in by_code(client, uri)
    # a change notification without settings: the server asks again
    client.set_configuration({"select": ["SBL003"]}, section="sbatchlint")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await published(client)
    assert set(by_code(client, uri)) == {"SBL003"}

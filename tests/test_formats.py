"""Every output format, checked against golden files (regenerate with SBATCHLINT_UPDATE_GOLDEN=1),
and SARIF validated against the official SARIF 2.1.0 schema (tests/data)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from sbatchlint.cli import main
from sbatchlint.report import FORMATS

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
SELECT = "SBL002,SBL003,SBL004"
EXTENSIONS = {"text": "txt", "concise": "txt", "json": "json", "sarif": "sarif", "github": "txt", "junit": "xml", "gitlab": "json"}


def render(fmt: str) -> str:
    cwd = os.getcwd()
    os.chdir(GOLDEN)
    try:
        result = CliRunner().invoke(main, ["--output-format", fmt, "--select", SELECT, "job.sh"], env={"NO_COLOR": "1"})
    finally:
        os.chdir(cwd)
    assert result.exit_code == 1, result.output
    return result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(fmt):
    path = os.path.join(GOLDEN, f"job.{fmt}.{EXTENSIONS[fmt]}")
    output = render(fmt)
    if os.environ.get("SBATCHLINT_UPDATE_GOLDEN") == "1":
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(output)
    with open(path, encoding="utf-8") as handle:
        assert output == handle.read()


def test_sarif_is_valid_against_the_official_schema():
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(HERE, "data", "sarif-schema-2.1.0.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    document = json.loads(render("sarif"))
    jsonschema.validate(document, schema)
    run = document["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["SBL002", "SBL003", "SBL004"]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {"SBL002", "SBL003", "SBL004"}
    assert run["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "#!/bin/bash\n"


def test_github_annotations_escape_properties():
    from sbatchlint.report import github

    assert github._escape_property("a,b:c%") == "a%2Cb%3Ac%25"
    assert github._escape_data("x\ny") == "x%0Ay"


def test_color_follows_environment(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text("#SBATCH --nodes=1\n")
    plain = CliRunner().invoke(main, [str(job)], env={"NO_COLOR": "1", "FORCE_COLOR": ""})
    forced = CliRunner().invoke(main, [str(job)], env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[" not in plain.output
    assert "\x1b[" in forced.output

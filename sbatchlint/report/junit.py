"""JUnit XML: one test case per file, failing with its findings."""
from __future__ import annotations

from xml.etree import ElementTree as ET

from . import explanation


def render(results, out, **_: object) -> None:
    suite = ET.Element("testsuite", name="sbatchlint")
    failures = errors = 0
    for result in results:
        case = ET.SubElement(suite, "testcase", classname="sbatchlint", name=result.path)
        if result.error:
            errors += 1
            ET.SubElement(case, "error", message=result.error)
            continue
        if not result.diagnostics:
            continue
        failures += 1
        lines = []
        for d in result.diagnostics:
            line, column = result.source.position(d.span.start)
            lines.append(f"{result.path}:{line}:{column}: {d.code} {result.redact(d.message)}")
            details = explanation(result, d)
            if details:
                lines.extend("    " + detail for detail in details.split("\n"))
        failure = ET.SubElement(
            case, "failure", message=f"{len(result.diagnostics)} finding{'s' * (len(result.diagnostics) != 1)}",
            type="sbatchlint",
        )
        failure.text = "\n".join(lines)
    suite.set("tests", str(len(results)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suite, encoding="unicode"))
    out.write("\n")

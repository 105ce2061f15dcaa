"""Shortcuts in building the model's base (header, values, commands, steps) give what the plain
reading gives.

Each test compares a fast path with the straightforward computation it replaces, over shapes
written for the purpose, and fails when the shortcut answers differently.
"""
from __future__ import annotations

import itertools
import random

import pytest

from sbatchlint.model import header as model_header
from sbatchlint.model.header import Header, parse_header
from sbatchlint.source import Source, Span


# -- the header: lines read from the line table, below the first command only from a '#' on ------
def _plain_header(source: Source, data_regions=(), table=None) -> Header:
    """sbatch's scan as the module docstring tells it: every line read in turn, each with its
    ``line_span``."""
    header = Header(source=source, table=table if table is not None else model_header.sbatch_options.SBATCH)
    in_header = True
    for number in range(1, source.line_count + 1):
        span = source.line_span(number)
        if any(region.start <= span.start < region.end for region in data_regions):
            continue
        raw = source.data[span.start : span.end]
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            span = Span(span.start + 3, span.end)
        magic = model_header.MAGIC
        if raw.startswith(magic) and (in_header or raw[len(magic) : len(magic) + 1] in (b"", b" ", b"\t", b"\r", b"-")):
            placement = "header" if in_header else "late"
            directives = model_header._directives(source, number, span, placement, header.table)
            if in_header:
                for directive in directives:
                    if directive.separator:
                        header.components += 1
                    directive.component = header.components
                header.last_header_line = number
            header.directives.extend(directives)
            header.lines[number] = directives
            continue
        stripped = raw.lstrip(b" \t")
        if stripped[:1] == b"#":
            malformed = model_header._malformed(source, number, span.start, span.end, raw)
            if malformed is not None:
                header.malformed.append(malformed)
                continue
        if not stripped.strip() or stripped.startswith(b"#"):
            continue
        if in_header:
            in_header = False
            header.first_command_line = number
    return header


def _header_fingerprint(header: Header) -> tuple:
    return (
        [(d.line, d.line_span, d.option, d.value, d.span, d.value_span, d.placement, d.component, d.text, d.glued,
          d.truncated_at, d.dropped, d.unclosed_quote, d.ignored_words) for d in header.directives],
        [(m.line, m.span, m.kind, m.text, m.fixed_line) for m in header.malformed],
        header.first_command_line, header.last_header_line, sorted(header.lines), header.components,
    )


# Lines in the shapes that make the scan turn: the header's own, comments, blank lines, commands,
# '#' inside a command line, late and malformed directives, line ends of every kind.
HEADER_LINES = [
    "#!/bin/bash", "#SBATCH --nodes=2", "#SBATCH -N 2 # two", "#SBATCH --job-name=a#b", "#SBATCH hetjob",
    "#SBATCH-N2", "#SBATCHED", "  #SBATCH --time=1:00", "# SBATCH --mem=1G", "#sbatch --gpus=1",
    "#   sbatch --nodes=4 train.sh", "# a comment", "", "   ", "\t", "echo '#SBATCH --nodes=9' # x",
    "srun hostname", "N=${#A[@]}", "cat <<EOF", "#SBATCH --partition=in-a-heredoc", "EOF",
    "x=1 # trailing", "#", "\r", "#SBATCH --account=a\r", "echo a\\", "#SBATCH --qos=b 'unclosed",
]


def _header_texts():
    rng = random.Random(19)
    for _ in range(300):
        lines = [rng.choice(HEADER_LINES) for _ in range(rng.randint(0, 12))]
        text = "\n".join(lines)
        if rng.random() < 0.7:
            text += "\n"
        if rng.random() < 0.1:
            text = "\ufeff" + text
        yield text


def test_the_header_scan_reads_every_shape_as_a_line_by_line_scan_does():
    for text in itertools.chain(_header_texts(), ["#SBATCH -N1", "\ufeff#SBATCH -N1\n", "echo\n#SBATCH -N1"]):
        source = Source(text.encode(), "job.sh")
        data = source.data
        regions = []
        start = data.find(b"<<EOF\n")
        if start >= 0:  # the here-document body, as the model passes it: data, not lines
            body = start + len(b"<<EOF\n")
            end = data.find(b"EOF", body)
            regions.append(Span(body, end if end >= 0 else len(data)))
        for given in ((), regions):
            assert _header_fingerprint(parse_header(source, given)) == _header_fingerprint(
                _plain_header(source, given)
            ), text

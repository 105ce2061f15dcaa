"""Deleting one shell word: the shared edit behind option removals (SBL111, SBL105, migration)."""
from __future__ import annotations

import pytest

from sbatchlint.diagnostics import Edit
from sbatchlint.source import Source, Span
from sbatchlint.fix import apply_edits


def delete(text: str, word: str) -> str:
    data = text.encode()
    start = data.index(word.encode())
    edit = Edit.delete_word(data, Span(start, start + len(word)))
    return apply_edits(Source(data), [edit]).decode()


@pytest.mark.parametrize(
    "text,word,expected",
    [
        ("srun -K --gpus-per-task=1 x\n", "--gpus-per-task=1", "srun -K x\n"),
        ("srun --gpus-per-task=1 x\n", "srun", "--gpus-per-task=1 x\n"),
        ("srun -K \\\n  --gpus-per-task=1 \\\n  x\n", "--gpus-per-task=1", "srun -K \\\n  x\n"),
        # the last continued line: deleting the whole line would join the next command
        ("srun -K \\\n--gpus-per-task=1\necho done\n", "--gpus-per-task=1", "srun -K \\\n\necho done\n"),
        ("srun -K \\\r\n  --x=1 \\\r\n  y\r\n", "--x=1", "srun -K \\\r\n  y\r\n"),
    ],
)
def test_word_deletion(text, word, expected):
    assert delete(text, word) == expected


def test_deleting_the_last_continued_word_keeps_the_next_command_apart():
    import subprocess

    fixed = delete("echo a \\\n--flag\necho b\n", "--flag")
    out = subprocess.run(["bash", "-c", fixed], capture_output=True, text=True).stdout
    assert out == "a\nb\n"

"""Rules answer early where they cannot report: each shortcut is checked on the shapes that sit
right at its edge (the finding must still be there, and only there)."""
from __future__ import annotations

import pytest

from sbatchlint.source import Source
from tests.lintutil import lint_text

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"


def lines(text: str, code: str, select=None):
    """The 1-based lines of ``code``'s findings in ``text``."""
    source = Source(text.encode(), "job.sh")
    return sorted(source.line_of(d.span.start) for d in lint_text(text, select or [code]) if d.code == code)


# -- SBL403: uses are looked for only after the first event that turns tracing on -----------------
XTRACE_SHAPES = [
    # (body after the header, lines of the findings)
    ("set -x\nexport HF_TOKEN=$(cat ~/.hf)\n", [6]),
    ("export HF_TOKEN=$(cat ~/.hf)\nset -x\nsrun python train.py\n", []),
    ("set -x; HF_TOKEN=$(cat ~/.hf)\n", [5]),
    ("set +x\nexport HF_TOKEN=$(cat ~/.hf)\n", []),
    ("set +x\nset -x\nexport WANDB_API_KEY=$(cat k)\n", [7]),
    ("set -x\nset +x\nexport WANDB_API_KEY=$(cat k)\nset -o xtrace\nexport HF_TOKEN=$(cat ~/.hf)\n", [9]),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x\nhuggingface-cli login --token "$HF_TOKEN"\n', [7]),
    ('HF_TOKEN=$(cat ~/.hf)\nhuggingface-cli login --token "$HF_TOKEN"\nset -x\nsrun python train.py\n', []),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x; echo "${HF_TOKEN:0:4}" >/dev/null\n', [6]),
    ('HF_TOKEN=$(cat ~/.hf)\nset -x\nAUTH="Bearer $HF_TOKEN"\n', [7]),  # an expansion outside any argv
    ('HF_TOKEN=$(cat ~/.hf)\nAUTH="Bearer $HF_TOKEN"\nset -x\n', []),
]


@pytest.mark.parametrize("body, expected", XTRACE_SHAPES)
def test_xtrace_uses_are_found_after_the_first_event_that_turns_it_on(body, expected):
    assert lines(HEADER + body, "SBL403") == expected


def test_xtrace_from_the_shebang_covers_the_whole_file():
    text = "#!/bin/bash -x\n#SBATCH --nodes=1\nexport HF_TOKEN=$(cat ~/.hf)\n"
    assert lines(text, "SBL403") == [3]

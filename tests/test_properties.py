"""Properties of every run, over generated and mutated job scripts (hypothesis, seeded): no
exception, spans and edits inside the file, a fix's edits change nothing outside them, fixes
idempotent, and ``bash -n`` still accepting what it accepted before the fixes (``mutation.py``
lists them). ``bench/fuzz.py`` runs the same checks for as long as asked."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutation
import scriptgen

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same examples on every run: a failure here is reproducible
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ops = st.lists(
    st.tuples(st.sampled_from(mutation.KINDS), st.integers(0, 1 << 20), st.integers(0, 1023)),
    max_size=4,
)


@SETTINGS
@given(seed=st.integers(0, 999), size=st.sampled_from([1, 2]), mutations=ops)
def test_a_mutated_generated_script_keeps_every_property(seed, size, mutations):
    data = mutation.apply(scriptgen.generate(seed, size=size).text.encode(), mutations)
    assert mutation.problems(data) == []


LINES = (
    "#!/bin/bash", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-node=8",
    "set -euo pipefail", 'CMD="torchrun --nproc_per_node=8 train.py"', 'CMD="$CMD --lr 1e-4"',
    "srun $CMD", 'srun bash -c "$CMD --rank $SLURM_PROCID"', "for i in 1 2; do", "done", "if [ -n \"$X\" ]; then",
    "else", "fi", "cat <<EOF > run.sh", "EOF", "srun --container-image=nvcr.io/nvidia/pytorch:24.05 \\",
    "  --container-mounts=/lustre:/lustre \\", "  python train.py", "export MASTER_ADDR=$(hostname)",
    'case "$MODE" in', "a) srun python a.py ;;", "esac",
)


@SETTINGS
@given(lines=st.lists(st.sampled_from(LINES + mutation.SNIPPETS), min_size=1, max_size=14))
def test_made_up_shapes_keep_every_property(lines):
    assert mutation.problems("\n".join(lines).encode() + b"\n") == []

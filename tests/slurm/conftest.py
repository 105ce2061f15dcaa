"""pytest wiring for the tests that need the local Slurm cluster.

The ``slurm`` fixture skips the test with one line ("Slurm cluster not running:
run tests/slurm/start-cluster.sh") when sinfo is missing or the nodes n1/n2
are not up. Set SBATCHLINT_REQUIRE_SLURM=1 (e.g. in CI after starting the
cluster) to make that a failure instead of a skip.

Every test collected under tests/slurm/ gets the ``slurm`` marker, so
``-m "not slurm"`` leaves them all out.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # import mode independent
    sys.path.insert(0, str(_HERE))

import slurm_cluster  # noqa: E402

_state = {}


def _problem():
    if "problem" not in _state:
        _state["problem"] = slurm_cluster.cluster_problem()
    return _state["problem"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        try:
            inside = Path(str(item.fspath)).resolve().is_relative_to(_HERE)
        except (AttributeError, ValueError):  # Python < 3.9 has no is_relative_to
            inside = str(Path(str(item.fspath)).resolve()).startswith(str(_HERE) + os.sep)
        if inside:
            item.add_marker(pytest.mark.slurm)


@pytest.fixture
def slurm(tmp_path):
    """A :class:`slurm_cluster.SlurmSession` whose jobs run in ``tmp_path``."""
    problem = _problem()
    if problem is not None:
        if os.environ.get("SBATCHLINT_REQUIRE_SLURM") == "1":
            pytest.fail(f"{slurm_cluster.SKIP_REASON} ({problem})", pytrace=False)
        pytest.skip(slurm_cluster.SKIP_REASON)
    session = slurm_cluster.SlurmSession(tmp_path)
    yield session
    session.close()

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


@pytest.fixture
def root() -> str:
    return ROOT


# The results cache stays off in the suite: a test that swaps a rule or the clock for a while
# would otherwise be answered from what an earlier test stored. tests/test_cache.py turns it on.
os.environ.setdefault("SBATCHLINT_NO_CACHE", "1")

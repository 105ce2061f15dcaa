"""The launched Python scripts (SBL5xx).

``module`` parses a ``.py`` file with libcst into the model the Python rules query; the analyses
(``launch_guard``, ``process_group``, ``artifacts``) and ``rewrite`` build on it. ``entry`` finds the
Python files an sbatch script launches and imports no libcst, so it can run on the shell path:
nothing in this package may import libcst at package import time.
"""

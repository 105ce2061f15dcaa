"""sbatchlint: a linter and auto-fixer for Slurm batch scripts."""

__version__ = "0.1.0"

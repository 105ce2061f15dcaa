"""The cluster a job will run on: its profile (:mod:`.profile`), how Slurm's commands print it
(:mod:`.parse`), and reading it on a login node (:mod:`.collect`, for ``sbatchlint profile`` only).

Importing this package imports nothing heavy: the linter reads profiles on every run that has one.
"""

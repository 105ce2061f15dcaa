"""The rules, one module per rule family.

Importing this package registers no rule: ``registry`` imports the modules a run needs (the
table in ``sbatchlint.codes`` says which module holds which code), or all of them. Adding a
rule family is adding a file here and its rows to that table. A module for Python files must
not import libcst at import time (only inside its checks), so shell-only runs never pay for it.
"""

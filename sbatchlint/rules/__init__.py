"""The rules, one module per rule family. Importing this package registers every rule.

Modules are discovered, so adding a rule family is adding a file. A module for Python files must
not import libcst at import time (only inside its checks), so shell-only runs never pay for it.
"""
import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "base" and not _module.startswith("_"):
        importlib.import_module(f"{__name__}.{_module}")

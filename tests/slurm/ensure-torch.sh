#!/usr/bin/env bash
# Make torch importable for the distributed demos in tests/slurm/.
#
# Installs torch==2.13.0 with pip if `import torch` fails. On this project's
# machines pip finds the CPU build of that version on local disk (pip's
# find-links), so nothing large is downloaded; elsewhere pip would fetch
# PyPI's torch 2.13.0, a CUDA build of several GB. Only pip knows that local
# wheel: uv and poetry would download a CUDA build.
#
# PYTHON selects the interpreter [python3]; it must be the one the tests run
# with (the jobs use the same interpreter, sys.executable).
set -euo pipefail

PY="${PYTHON:-python3}"
WANT=2.13.0

if "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "ensure-torch: torch $("$PY" -c 'import torch; print(torch.__version__)') already importable by $PY"
    exit 0
fi

echo "ensure-torch: installing torch==$WANT for $PY"
t0=$SECONDS
"$PY" -m pip install --quiet --root-user-action=ignore "torch==$WANT"
version="$("$PY" -c 'import torch; print(torch.__version__)')"
echo "ensure-torch: torch $version installed in $((SECONDS - t0)) s"
case "$version" in
    "$WANT"*) ;;
    *) echo "ensure-torch: WARNING: expected torch $WANT, got $version" >&2 ;;
esac
case "$version" in
    *+cpu) ;;
    *) echo "ensure-torch: note: not the CPU build ($version); the demos still use gloo on the CPU" >&2 ;;
esac

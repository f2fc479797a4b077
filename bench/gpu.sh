#!/usr/bin/env bash
# The GPU check: on a machine with a CUDA GPU, the bundled examples as written, migrated to
# `accelerator` and under `torchport run`, with their step times in one table; then
# bench/optim.py --device cuda and bench/runtime.py. Under 8 minutes. Without a CUDA device it
# says so in one line and exits 0.
#   bash bench/gpu.sh            (PYTHON=... to choose the interpreter; default: .venv's, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
if ! "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "bench/gpu.sh: no CUDA device here (torch.cuda.is_available() is False for $PYTHON): nothing to check"
  exit 0
fi
exec timeout 470 "$PYTHON" bench/gpu.py --budget 420

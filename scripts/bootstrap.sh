#!/usr/bin/env bash
# Make a fresh Debian/Ubuntu machine able to build the virtualenv: python3 with venv and pip.
# Runs apt-get only when something is missing, through sudo when not root.
set -euo pipefail
need=()
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q "${need[@]}" python3-pip
fi
python3 - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"Svoyak needs Python 3.11 or newer; this machine has {sys.version.split()[0]}")
PY

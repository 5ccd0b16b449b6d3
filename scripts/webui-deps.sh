#!/usr/bin/env bash
# What the web UI needs beyond the virtualenv, installed only when missing (idempotent):
#   node + npm  to build the front-end packages into webui/static/vendor (`make vendor`);
#   chromium    (Debian's) for the browser tests (`webui-deps.sh --browser`, from `make test`).
# No browser download: Playwright drives /usr/bin/chromium.
set -euo pipefail
need=()
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ "${1:-}" = "--browser" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "webui-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q "${need[@]}" >/dev/null

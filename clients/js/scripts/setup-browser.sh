#!/usr/bin/env bash
# Makes the browser tests (browser-test/) runnable: Debian's Chromium and playwright-core.
# Idempotent and silent when both are already there. Run as root (or with sudo) for apt-get.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ ! -x /usr/bin/chromium ]]; then
  echo "setup-browser: installing Debian's chromium" >&2
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  echo "setup-browser: npm ci in $here" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

#!/usr/bin/env bash
# Makes the browser tests (browser-test/) runnable: Debian's Chromium and playwright-core.
# Idempotent and silent when both are already there. apt-get needs root (or sudo).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chromium="${CHROMIUM:-/usr/bin/chromium}"

if [[ ! -x "$chromium" ]]; then
  if [[ -n "${CHROMIUM:-}" ]]; then
    echo "setup-browser: CHROMIUM=$CHROMIUM is not an executable" >&2
    exit 1
  fi
  echo "setup-browser: installing Debian's chromium" >&2
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "setup-browser: apt-get needs root: run as root, or install chromium (and fonts-dejavu-core) yourself" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

# npm ci where playwright-core is missing, or is not the version the lock file pins
wanted=$(node -p "require('$here/package-lock.json').packages['node_modules/playwright-core'].version")
have=$(node -p "try { require('$here/node_modules/playwright-core/package.json').version } catch { '' }")
if [[ "$have" != "$wanted" ]]; then
  echo "setup-browser: npm ci in $here (playwright-core ${have:-missing}, the lock pins $wanted)" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

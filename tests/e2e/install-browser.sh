#!/usr/bin/env bash
# The HTML report's browser tests drive the system's Chromium (never a downloaded browser).
# Install it when missing and we may (root with apt-get); otherwise those tests skip locally.
# In CI (CI=true) a missing browser is an error.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
elif [ "${CI:-}" = "true" ]; then
  echo "error: /usr/bin/chromium is missing and cannot be installed (not root)" >&2
  exit 1
else
  echo "note: /usr/bin/chromium not found; the browser tests will be skipped" >&2
fi

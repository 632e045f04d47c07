#!/usr/bin/env bash
# Schemathesis (PyPI), pinned, for tests/reliability_schema.rs: the live server checked
# against its own OpenAPI document with every check. Installed into a venv outside the
# checkout:
#   ${KHAELOR_SCHEMATHESIS_DIR:-$HOME/.cache/khaelor-perm/schemathesis}/bin/schemathesis
# Idempotent: returns at once when the pinned version is there. Needs python3 with venv
# and pip (installed from Debian when missing).
set -euo pipefail

VERSION=4.32.5
DIR="${KHAELOR_SCHEMATHESIS_DIR:-$HOME/.cache/khaelor-perm/schemathesis}"
stamp="$DIR/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "schemathesis==$VERSION" ] && [ -x "$DIR/bin/schemathesis" ]; then
  exit 0
fi

if ! command -v python3 >/dev/null 2>&1 || ! python3 -m venv --help >/dev/null 2>&1 \
  || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
  echo "schemathesis.sh: python3 with venv missing, installing it from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip >/dev/null
fi

echo "schemathesis.sh: installing schemathesis==$VERSION into $DIR"
rm -rf "$DIR"
python3 -m venv "$DIR"
"$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$VERSION"
"$DIR/bin/schemathesis" --version
echo "schemathesis==$VERSION" >"$stamp"

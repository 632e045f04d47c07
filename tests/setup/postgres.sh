#!/usr/bin/env bash
# PostgreSQL for the team-hub tests (tests/store_suite.rs, tests/replicas.rs): Debian's
# server binaries (initdb, postgres under /usr/lib/postgresql/*/bin) and the `postgres`
# system user the package creates, as which the tests start their own cluster in a
# temp directory (initdb refuses to run as root). The package's own cluster is not used.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && id postgres >/dev/null 2>&1; then
  exit 0
fi
echo "postgres.sh: installing postgresql from Debian"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null

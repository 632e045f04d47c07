#!/usr/bin/env bash
# Installs mdBook, which builds the book under docs/ (tests/docs.rs builds it and checks
# every internal link and anchor), at a pinned version from crates.io, into a cache
# directory outside the checkout:
#   ${KHAELOR_MDBOOK_DIR:-$HOME/.cache/khaelor-perm/mdbook}/bin/mdbook
# Built without the `serve` and `watch` features (a web server and a file watcher the
# test never uses), which keeps the build to about half the crates. Idempotent: when the
# pinned version is there a second run takes well under a second. A clean install took
# 11 min 9 s on 2 cores shared with five other builds, 184 s of CPU, so about 2 minutes
# on two idle cores (docs/src/contributing/book.md).
set -euo pipefail

DIR="${KHAELOR_MDBOOK_DIR:-$HOME/.cache/khaelor-perm/mdbook}"
MDBOOK_VERSION=0.5.4

stamp="$DIR/.installed"
want="mdbook@$MDBOOK_VERSION search"
if [ -x "$DIR/bin/mdbook" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "docs.sh: installing $want into $DIR"
mkdir -p "$DIR"
cargo install --locked --quiet --root "$DIR" --no-default-features --features search \
  mdbook --version "$MDBOOK_VERSION"
echo "$want" >"$stamp"
"$DIR/bin/mdbook" --version

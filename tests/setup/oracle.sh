#!/usr/bin/env bash
# The bash oracle (tests/oracle_*.rs, `khaelor-perm oracle`): bubblewrap for the sandbox,
# strace to record what bash executes and writes, setpriv (util-linux) to run the sandbox
# under an unprivileged uid, and the static evaluator's pure producers, which the strict
# check's sandbox layout holds besides bash (`oracle::sandbox::PRODUCERS`): cat, base64,
# base32, tr, head, tail, printf, echo (coreutils), sed, rev (util-linux), xxd.
# Idempotent: returns at once when everything is installed.
set -euo pipefail

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need bwrap bubblewrap
need strace strace
need setpriv util-linux
for p in cat base64 base32 tr head tail printf echo; do need "$p" coreutils; done
need sed sed
need rev util-linux
need xxd xxd
# The program oracle (`khaelor-perm oracle --programs`, tests/oracle_programs.rs) runs
# the real programs of the verified read-only table (`src/programs/readonly.rs`,
# `git_readonly.rs`). Debian names fd `fdfind` (fd-find); `fd` itself stays missing
# and the report lists it. Debian's `yq` is the Python jq wrapper.
for p in ls cat head tail wc nl tac cut sort uniq comm fold expand paste join base64 \
  md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum stat du df date seq \
  basename dirname realpath readlink id uname whoami; do need "$p" coreutils; done
need diff diffutils
need cmp diffutils
need find findutils
need grep grep
need which debianutils
need whereis util-linux
need column bsdextrautils
need tree tree
need rg ripgrep
need fdfind fd-find
need jq jq
need yq yq
need git git
need file file
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
# One package may be missing for several programs.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

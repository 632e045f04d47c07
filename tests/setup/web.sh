#!/usr/bin/env bash
# Installs the headless browser the web panel's tests drive (tests/panel_web.rs):
# Debian's chromium and chromium-driver (the WebDriver server the test talks to over
# HTTP), plus fonts so the screenshot shows text. Idempotent: installs only what is
# missing.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
[ -d /usr/share/fonts/truetype/dejavu ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  echo "web.sh: installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "web.sh: $(chromium --version 2>/dev/null | head -1), $(chromedriver --version | head -1)"

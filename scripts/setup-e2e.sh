#!/usr/bin/env bash
# Installs what the end-to-end tests need: headless Chromium (apt) and code-server
# (npm, into a cache folder outside the repo). It works without internet access beyond
# the npm registry and Debian's packages: nothing may download its own binary, so every
# install step runs with --ignore-scripts and the native modules are rebuilt from source.
# Idempotent: a finished install leaves a marker and is skipped next time.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
CACHE_DIR="${DDBENCH_E2E_CACHE:-$HOME/.cache/ddbench-e2e}"
INSTALL_DIR="$CACHE_DIR/code-server-$CODE_SERVER_VERSION"
MARKER="$INSTALL_DIR/.ddbench-installed"
# The recipe's packages, plus the compilers its native rebuilds assume.
APT_PACKAGES=(libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep chromium g++ make python3)

log() { printf 'setup-e2e: %s\n' "$*"; }

missing_apt_packages() {
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || printf '%s\n' "$pkg"
  done
}

install_apt_packages() {
  local missing
  mapfile -t missing < <(missing_apt_packages)
  if [ "${#missing[@]}" -eq 0 ]; then
    log "system packages present"
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    log "missing system packages: ${missing[*]}"
    log "install them as root: apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
  log "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_code_server() {
  if [ -f "$MARKER" ] && [ -x "$INSTALL_DIR/node_modules/.bin/code-server" ]; then
    log "code-server $CODE_SERVER_VERSION already installed in $INSTALL_DIR"
    return
  fi
  log "installing code-server $CODE_SERVER_VERSION into $INSTALL_DIR"
  rm -rf "$INSTALL_DIR"
  mkdir -p "$INSTALL_DIR"
  cd "$INSTALL_DIR"
  printf '{ "name": "ddbench-e2e-code-server", "private": true }\n' > package.json
  npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" --ignore-scripts

  cd node_modules/code-server/lib/vscode
  npm install --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts
  # @vscode/ripgrep's postinstall downloads a binary; use the system's rg instead.
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm_config_yes=true npm rebuild --loglevel=error node-pty @vscode/spdlog kerberos native-watchdog @parcel/watcher @vscode/deviceid
  # code-server loads modules from node_modules.asar, which only exists in packaged builds.
  ln -sfn node_modules node_modules.asar
  (cd extensions && npm install --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts)

  cd "$INSTALL_DIR"
  npm rebuild --loglevel=error argon2
  touch "$MARKER"
  log "code-server installed"
}

install_apt_packages
install_code_server
log "ready: $INSTALL_DIR/node_modules/.bin/code-server and /usr/bin/chromium"

#!/usr/bin/env bash
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# Installs what is missing (Debian packages, the project's PyPI packages in
# .venv), then configures and builds dyncc in build/. Idempotent: a second
# run installs nothing and rebuilds only what changed.
#
#   scripts/setup.sh            # full build (compiler + run-time)
#   DYNCC_BUILD_DIR=... scripts/setup.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DYNCC_BUILD_DIR:-$ROOT/build}"
JOBS="${DYNCC_JOBS:-2}"

log() { echo "[setup] $*" >&2; }

APT_PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  libclang-rt-22-dev
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  cmake ninja-build ccache libgtest-dev
  python3 python3-venv python3-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Project-local virtual environment with the PyPI packages.
VENV="$ROOT/.venv"
REQ="$ROOT/python/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  /usr/bin/python3 -m venv "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  log "installing PyPI packages from python/requirements.txt"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi

# Configure once; ninja re-runs CMake itself when a CMakeLists.txt changes.
if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD"
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DDYNCC_PYTHON="$VENV/bin/python" \
    "${launcher[@]}" >/dev/null
fi
log "building ($JOBS jobs)"
ninja -C "$BUILD" -j "$JOBS" | { if [ -t 1 ]; then cat; else tail -n 1; fi; }

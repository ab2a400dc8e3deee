#!/usr/bin/env bash
# Installs what fdstencil needs to build and test, from Debian 12 packages by name. Idempotent:
# packages already present are not touched, so a second run does nothing and needs no root.
# The CUDA toolkit is optional (nvcc enables the CUDA backend) and is not installed here.
set -euo pipefail

packages=(
  build-essential   # g++ with OpenMP (libgomp)
  cmake             # >= 3.25 (Debian 12 ships 3.25.1)
  ninja-build
  libgtest-dev      # GoogleTest
  libcli11-dev      # CLI11: the command line
  nlohmann-json3-dev  # results files, parameters
  python3           # bench/ scripts
  python3-numpy     # bench/plot.py, .npy examples
  python3-matplotlib  # bench/plot.py
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Prepares libsegyio, the SEG-Y tests' second reader (fdstencil itself needs none since issue 34),
# for a machine that has no network and no segyio (the GPU machine): downloads
# Debian 12's libsegyio-dev and libsegyio1 and unpacks them into build-deps/segyio (git-ignored),
# which bench/run.py's build hands CMake through CMAKE_PREFIX_PATH. Run it here, where apt works;
# the device call then carries build-deps/segyio. Needs apt-get and dpkg-deb, not root.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build-deps/segyio
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libsegyio-dev libsegyio1)
rm -rf "$dest"
mkdir -p "$dest"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$dest"; done
echo "fetch-segyio: $(ls "$tmp") unpacked into $dest"

#!/usr/bin/env bash
# Checks the install (scripts/test.sh calls it): builds the library layers and the tool with a
# configure preset (cpu by default: no CUDA, quick), installs them into a fresh temporary prefix,
# then configures, builds and runs examples/consumer against that prefix through
# find_package(fdstencil), and runs the installed tool. Fails on any error.
#   scripts/check-install.sh            the cpu preset (build-cpu/)
#   scripts/check-install.sh default    the default preset (build/, CUDA when nvcc is found)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-cpu}"
# nvcc is often installed outside PATH; let the default preset's AUTO detection (and the
# package's find_dependency(CUDAToolkit)) see it.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
start=$SECONDS

# Run a step quietly, its output kept in a log that is shown when it fails.
step() {
  local name="$1"
  shift
  echo "check-install: $name"
  if ! "$@" >"$work/step.log" 2>&1; then
    cat "$work/step.log" >&2
    echo "check-install: FAILED: $name" >&2
    exit 1
  fi
}

step "configure (preset $preset)" cmake --preset "$preset"
build_dir="$(sed -n 's/^-- Build files have been written to: //p' "$work/step.log")"
[ -n "$build_dir" ] || { echo "check-install: no build directory in the configure output" >&2; exit 1; }
# Only what install needs: the layers (fdstencil pulls in the ones beneath it) and the tool.
step "build the library and the tool in $build_dir" \
  cmake --build --preset "$preset" -j "$(nproc)" --target fdstencil fdstencil_cli
step "install into $prefix" cmake --install "$build_dir" --prefix "$prefix"
for f in include/fdstencil/plan.hpp include/fdstencil/version.hpp lib/libfdstencil.a \
         lib/cmake/fdstencil/fdstencilConfig.cmake lib/cmake/fdstencil/fdstencilConfigVersion.cmake \
         lib/cmake/fdstencil/fdstencilTargets.cmake bin/fdstencil; do
  [ -e "$prefix/$f" ] || { echo "check-install: not installed: $f" >&2; exit 1; }
done

consumer="$work/consumer-build"
# No package registry, so the package can only come from the prefix; warnings are errors, so
# the public headers must compile cleanly in the consumer's -Wall -Wextra -Wpedantic.
step "configure examples/consumer against the prefix" \
  cmake -S examples/consumer -B "$consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
found="$(sed -n 's/^fdstencil_DIR:PATH=//p' "$consumer/CMakeCache.txt")"
[ "$found" = "$prefix/lib/cmake/fdstencil" ] || { echo "check-install: the consumer found fdstencil at '$found', not in the prefix" >&2; exit 1; }
step "build examples/consumer" cmake --build "$consumer"

echo "check-install: run the consumer"
"$consumer/fdstencil_consumer"
echo "check-install: run the installed tool: $prefix/bin/fdstencil --version"
"$prefix/bin/fdstencil" --version
echo "check-install: ok (preset $preset, $((SECONDS - start)) s)"

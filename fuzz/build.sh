#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the file readers (fuzz/*.cpp) with clang, ASan and UBSan into
# build-fuzz/ (CMake option FDSTENCIL_FUZZ, CPU only), and the seed writer fuzz_seeds. Extra
# arguments go to the configure step. fuzz/run.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
# FUZZ_CXX: another clang++ than the one on PATH.
cxx=${FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ] || ! command -v "$cxx" >/dev/null; then
  echo "fuzz/build.sh: ${cxx:-clang++} not found: install the Debian packages clang and libclang-rt-14-dev" >&2
  exit 1
fi
# libFuzzer ships in compiler-rt, which Debian packages apart from clang.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$probe/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>"$probe/log"; then
  echo "fuzz/build.sh: $cxx cannot link libFuzzer with ASan and UBSan ($(head -n1 "$probe/log")):" \
    "install the Debian packages clang and libclang-rt-14-dev" >&2
  exit 1
fi
cc=${cxx/clang++/clang}
CC=$cc CXX=$cxx cmake -S . -B build-fuzz -G Ninja -DFDSTENCIL_FUZZ=ON -DFDSTENCIL_CUDA=OFF -DFDSTENCIL_PYTHON=OFF \
  -DFDSTENCIL_MPI=OFF -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" "$@" >/dev/null
cmake --build build-fuzz -j "${FUZZ_BUILD_JOBS:-$(nproc)}" \
  --target fuzz_npy fuzz_segy fuzz_survey fuzz_checkpoint fuzz_seeds
echo "fuzz/build.sh: build-fuzz/fuzz/fuzz_{npy,segy,survey,checkpoint} built"

#!/usr/bin/env bash
# Makes sure what fdstencil needs to build and test is there, and installs from Debian 12 packages
# only what is really missing. It looks for the tools and headers themselves (a C++20 compiler with
# OpenMP, CMake >= 3.25, Ninja, GoogleTest, CLI11, nlohmann-json, Python 3), not for package
# names, so a CMake or a compiler installed outside dpkg counts. NumPy and Matplotlib (the bench
# plots and their tests), libsegyio (the SEG-Y tests' second reader), Python's segyio (the SEG-Y tests'
# other side), OpenMPI (runs split across ranks) and clang-format (the format check) are
# optional: installed when missing if apt
# can, else a warning, and the tests that need them report skipped (the MPI tests are not
# built). Idempotent: when everything is found it exits 0 without apt and without root. When a
# requirement is missing and apt-get is absent or fails (no network), it exits non-zero naming
# what is missing and the package that would provide it. The CUDA toolkit is optional (nvcc
# enables the CUDA backend) and is not installed here, nor are clang and libclang-rt-14-dev, which
# only the fuzzers need (fuzz/build.sh): a line says whether they are there.
set -euo pipefail

min_cmake=3.25

say() { echo "install-deps: $*"; }

# The requirements not met: parallel arrays of a description and the Debian package providing it.
missing_what=()
missing_pkg=()
miss() { missing_what+=("$1"); missing_pkg+=("$2"); say "$1: MISSING (Debian package $2)"; }
# The optional ones: wanted, installed when apt can, never a failure.
optional_what=()
optional_pkg=()
miss_optional() { optional_what+=("$1"); optional_pkg+=("$2"); say "$1: missing, optional (Debian package $2)"; }

# version_ge A B: is dotted version A >= B?
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# Directories that may hold a CMake package config, each with how deep to look (a prefix holds
# lib/<arch>/cmake/<name>/<name>Config.cmake), and include directories, in search order.
cmake_config_dirs() {
  local d
  for d in /usr/lib/*/cmake /usr/local/lib/cmake /usr/lib/cmake /usr/local/lib*/cmake; do
    [ -d "$d" ] && echo "2 $d"
  done
  for d in /usr/share /usr/local/share; do [ -d "$d" ] && echo "3 $d"; done
  # CMAKE_PREFIX_PATH may be separated by ':' (environment) or ';' (CMake list).
  local IFS=':;'
  for d in ${CMAKE_PREFIX_PATH:-}; do
    [ -n "$d" ] && [ -d "$d" ] && echo "5 $d"
  done
  return 0
}
include_dirs() {
  local d
  for d in /usr/include /usr/local/include; do [ -d "$d" ] && echo "$d"; done
  local IFS=':;'
  for d in ${CMAKE_PREFIX_PATH:-}; do
    [ -n "$d" ] && [ -d "$d/include" ] && echo "$d/include"
  done
  return 0
}

# find_config NAME...: the first CMake config file with one of these names, or nothing.
find_config() {
  local depth d f names=() n
  for n in "$@"; do names+=(-name "$n" -o); done
  unset 'names[${#names[@]}-1]'
  while read -r depth d; do
    f=$(find "$d" -maxdepth "$depth" \( "${names[@]}" \) -print -quit 2>/dev/null || true)
    [ -n "$f" ] && { echo "$f"; return 0; }
  done < <(cmake_config_dirs)
  return 0
}

# find_header REL: the first include directory's REL (e.g. gtest/gtest.h), or nothing.
find_header() {
  local d
  while read -r d; do
    [ -f "$d/$1" ] && { echo "$d/$1"; return 0; }
  done < <(include_dirs)
  return 0
}

# find_lib NAME...: the first library file of these names in the usual library directories or
# under CMAKE_PREFIX_PATH, or nothing.
find_lib() {
  local d n dirs=(/usr/lib/*-linux-gnu /usr/lib /usr/local/lib /usr/lib64)
  local IFS=':;'
  for d in ${CMAKE_PREFIX_PATH:-}; do [ -n "$d" ] && dirs+=("$d"/lib/*-linux-gnu "$d/lib"); done
  unset IFS
  for d in "${dirs[@]}"; do
    for n in "$@"; do [ -e "$d/$n" ] && { echo "$d/$n"; return 0; }; done
  done
  return 0
}

# --- the checks: each prints one line and records what is missing -------------------------------

check_compiler() {
  # CMake takes $CXX when set (it may carry flags), else c++, else g++.
  local cxx=() c
  if [ -n "${CXX:-}" ]; then read -r -a cxx <<<"$CXX"; fi
  if [ ${#cxx[@]} -eq 0 ] || ! command -v "${cxx[0]}" >/dev/null 2>&1; then
    cxx=()
    for c in c++ g++; do
      if command -v "$c" >/dev/null 2>&1; then cxx=("$(command -v "$c")"); break; fi
    done
  fi
  if [ ${#cxx[@]} -eq 0 ]; then miss "C++ compiler (g++ or c++ on PATH)" g++; return 0; fi
  local tmp rc=0
  tmp=$(mktemp -d)
  cat >"$tmp/probe.cpp" <<'EOF'
#include <omp.h>
#include <span>
#include <version>
int main() { return omp_get_max_threads() > 0 ? 0 : 1; }
EOF
  "${cxx[@]}" -std=c++20 -fopenmp "$tmp/probe.cpp" -o "$tmp/probe" >"$tmp/log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    say "C++ compiler ${cxx[*]} ($("${cxx[@]}" -dumpfullversion -dumpversion 2>/dev/null | head -n1)) with -std=c++20 -fopenmp: ok"
  else
    miss "C++ compiler with -std=c++20 -fopenmp (${cxx[*]} fails: $(grep -m1 -i error "$tmp/log" || head -n1 "$tmp/log"))" g++
  fi
  rm -rf "$tmp"
}

check_cmake() {
  local cm ver
  if ! cm=$(command -v cmake 2>/dev/null); then miss "cmake >= $min_cmake on PATH" cmake; return 0; fi
  ver=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p' | head -n1)
  if [ -z "$ver" ]; then
    miss "cmake >= $min_cmake ($cm prints no version)" cmake
  elif version_ge "$ver" "$min_cmake"; then
    say "cmake $ver at $cm: ok"
  else
    miss "cmake >= $min_cmake ($cm is $ver, too old)" cmake
  fi
}

check_ninja() {
  local nj
  if nj=$(command -v ninja 2>/dev/null); then
    say "ninja $(ninja --version 2>/dev/null || echo '?') at $nj: ok"
  else
    miss "ninja on PATH" ninja-build
  fi
}

# check_package WHAT PACKAGE HEADER CONFIG...: found when the header or one of the configs is.
check_package() {
  local what=$1 pkg=$2 header=$3 f
  shift 3
  f=$(find_config "$@")
  [ -z "$f" ] && f=$(find_header "$header")
  if [ -n "$f" ]; then say "$what at $f: ok"; else miss "$what ($header or $1)" "$pkg"; fi
}

# The interpreter CMake's tests run with is the first of these that has NumPy and Matplotlib
# (tests/CMakeLists.txt does the same search), else /usr/bin/python3, else python3 on PATH.
python_candidates() {
  local c
  c=$(command -v python3 2>/dev/null) && echo "$c"
  [ -x /usr/bin/python3 ] && echo /usr/bin/python3
  return 0
}

check_python() {
  local py="" c
  while read -r c; do
    if "$c" -c 'import numpy, matplotlib' 2>/dev/null; then py=$c; break; fi
  done < <(python_candidates)
  if [ -n "$py" ]; then
    say "python3 at $py ($("$py" -c 'import sys, numpy, matplotlib; print(sys.version.split()[0], "with NumPy", numpy.__version__, "and Matplotlib", matplotlib.__version__)')): ok"
    check_python_segyio "$py"
    return 0
  fi
  if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3
  elif py=$(command -v python3 2>/dev/null); then :
  else py=""; fi
  if [ -z "$py" ]; then
    miss "python3" python3
    miss_optional "NumPy for python3" python3-numpy
    miss_optional "Matplotlib for python3" python3-matplotlib
    miss_optional "segyio for python3" python3-segyio
    return 0
  fi
  say "python3 at $py ($("$py" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo '?')): ok"
  local mod pkg ver
  for mod in numpy:python3-numpy matplotlib:python3-matplotlib; do
    pkg=${mod#*:}; mod=${mod%%:*}
    if ver=$("$py" -c "import $mod; print($mod.__version__)" 2>/dev/null); then
      say "python3 module $mod $ver: ok"
    else
      miss_optional "python3 module $mod (for $py; the bench plots)" "$pkg"
    fi
  done
  check_python_segyio "$py"
}

# The SEG-Y tests read the tool's files with Python's segyio, through the tests' interpreter.
check_python_segyio() {
  local ver
  if ver=$("$1" -c 'import segyio; print(getattr(segyio, "__version__", "?"))' 2>/dev/null); then
    say "python3 module segyio $ver: ok"
  else
    miss_optional "python3 module segyio (for $1; the SEG-Y tests)" python3-segyio
  fi
}

# The Python package's module (python/, issue 36) is built against a Python with its headers, and
# made in a virtual environment from Debian's Python (check_python_package): it needs the headers
# (python3-dev) and venv (python3-venv). Optional.
check_python_build() {
  local py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3 2>/dev/null) || return 0
  if [ -f "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)/Python.h" ]; then
    say "Python headers for $py: ok"
  else
    miss_optional "Python headers for $py (the Python module)" python3-dev
  fi
  if "$py" -c 'import ensurepip, venv' 2>/dev/null; then say "venv for $py: ok"
  else miss_optional "venv for $py (the Python module's build environment)" python3-venv; fi
}

check_segyio() {  # optional: without it the SEG-Y tests that check files with it report skipped
  local h l
  h=$(find_header segyio/segy.h)
  l=$(find_lib libsegyio.a libsegyio.so)
  if [ -n "$h" ] && [ -n "$l" ]; then
    say "libsegyio at $l with $h: ok (the SEG-Y tests' second reader)"
  else
    miss_optional "libsegyio (segyio/segy.h and the library; the SEG-Y tests' second reader)" libsegyio-dev
  fi
}

check_mpi() {  # optional: without it the build leaves the MPI runs out, and their tests
  local cxx run
  cxx=$(command -v mpicxx 2>/dev/null || true)
  run=$(command -v mpiexec 2>/dev/null || true)
  if [ -n "$cxx" ] && [ -n "$run" ]; then
    say "MPI: $cxx and $run: ok (runs split along z across ranks)"
  else
    [ -n "$cxx" ] || miss_optional "OpenMPI's mpicxx and headers (runs split across ranks)" libopenmpi-dev
    [ -n "$run" ] || miss_optional "OpenMPI's mpiexec (the MPI tests)" openmpi-bin
  fi
}

check_clang_format() {  # optional: without it the format check (tests/scripts/check-format.sh) skips
  local cf
  if cf=$(command -v clang-format 2>/dev/null); then
    say "clang-format at $cf ($("$cf" --version | grep -o 'version [0-9.]*')): ok (the format check)"
  else
    miss_optional "clang-format (the format check of the C++ and CUDA sources)" clang-format
  fi
}

check_cuda() {  # informational only: the CUDA toolkit is optional and never installed here
  local nv
  if nv=$(command -v nvcc 2>/dev/null) || { [ -x /usr/local/cuda/bin/nvcc ] && nv=/usr/local/cuda/bin/nvcc; }; then
    say "nvcc at $nv: the CUDA backend will be built (optional)"
  else
    say "nvcc not found: CPU-only build (optional; the CUDA toolkit is not installed by this script)"
  fi
}

check_fuzz() {  # informational only: clang and libFuzzer are the fuzzers' (fuzz/build.sh), never installed here
  local rt=/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a
  if command -v clang++ >/dev/null 2>&1 && compgen -G "$rt" >/dev/null; then
    say "clang++ with libFuzzer: fuzz/build.sh can build the fuzzers (optional)"
  else
    say "clang++ with libFuzzer not found: optional, for fuzz/build.sh only" \
      "(Debian packages clang and libclang-rt-14-dev; not installed by this script)"
  fi
}

check_all() {
  missing_what=()
  missing_pkg=()
  optional_what=()
  optional_pkg=()
  check_compiler
  check_cmake
  check_ninja
  check_package GoogleTest libgtest-dev gtest/gtest.h GTestConfig.cmake gtest-config.cmake
  check_package CLI11 libcli11-dev CLI/CLI.hpp CLI11Config.cmake cli11-config.cmake
  check_package nlohmann-json nlohmann-json3-dev nlohmann/json.hpp nlohmann_jsonConfig.cmake \
    nlohmann_json-config.cmake
  check_python
  check_python_build
  check_segyio
  check_mpi
  check_clang_format
}

# "what (package)" for everything missing, one per line.
missing_report() {
  local i
  for i in "${!missing_what[@]}"; do echo "  - ${missing_what[$i]}  (Debian package ${missing_pkg[$i]})"; done
}

fail() {
  echo "install-deps: $1. Missing:" >&2
  missing_report >&2
  exit 1
}

# Without the optional ones: a warning, and on.
warn_optional() {
  local i
  echo "install-deps: warning: $1; going on without:" >&2
  for i in "${!optional_what[@]}"; do echo "  - ${optional_what[$i]}  (Debian package ${optional_pkg[$i]})" >&2; done
  echo "install-deps: the bench plots and SEG-Y need them (their tests report skipped); without MPI its tests are not built" >&2
}

# A failure if a requirement is missing, else a warning about the optional ones.
cannot_install() {
  [ ${#missing_what[@]} -eq 0 ] || fail "$1"
  warn_optional "$1"
  exit 0
}

# The Python package's build tools, which Debian 12 does not package (nanobind, scikit-build-core;
# pytest for its tests beside them): a Python that has them already (the GPU machine's), else a
# virtual environment build-deps/python made from Debian's Python, seeing its NumPy
# (--system-site-packages), into which pip installs them from PyPI. CMake takes the first Python
# that has nanobind (CMakeLists.txt). Optional: without them (no network) the module is not built
# and its tests report skipped.
check_python_package() {
  local root venv py base
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv=$root/build-deps/python
  for py in "$venv/bin/python" $(python_candidates); do
    if [ -x "$py" ] && "$py" -c 'import nanobind, numpy, pytest' 2>/dev/null; then
      say "Python package build: $py has nanobind, NumPy and pytest: ok"
      return 0
    fi
  done
  if [ -x /usr/bin/python3 ]; then base=/usr/bin/python3; else base=$(command -v python3) || return 0; fi
  # A venv made without python3-venv has a python but no pip: made again (--clear) once it can be.
  if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1 &&
    ! "$base" -m venv --clear --system-site-packages "$venv" >/dev/null 2>&1; then
    say "warning: cannot make a virtual environment with $base (Debian package python3-venv): the Python module is not built"
    return 0
  fi
  if ! "$venv/bin/python" -m pip install -q nanobind scikit-build-core pytest >/dev/null 2>&1; then
    say "warning: pip could not install nanobind, scikit-build-core and pytest into $venv (no network?): the Python module is not built, its tests report skipped"
    return 0
  fi
  say "Python package build: nanobind, scikit-build-core and pytest installed into $venv"
}

main() {
  # A subshell, since install_packages ends with exit; a failure there ends the script (set -e).
  (install_packages "$@")
  check_python_package
}

install_packages() {
  check_all
  check_cuda
  check_fuzz
  if [ ${#missing_what[@]} -eq 0 ] && [ ${#optional_what[@]} -eq 0 ]; then
    say "everything found, nothing to install"
    exit 0
  fi

  local packages=() p
  for p in "${missing_pkg[@]}" "${optional_pkg[@]}"; do
    [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p")
  done
  command -v apt-get >/dev/null 2>&1 || cannot_install "apt-get is not available to install ${packages[*]}"
  local sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || cannot_install "need root or sudo to install ${packages[*]}"
    sudo_cmd=(sudo)
  fi
  say "installing ${packages[*]}"
  # Through env: sudo resets the environment.
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    || cannot_install "apt-get update failed (no network?), cannot install ${packages[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${packages[@]}" \
    || cannot_install "apt-get install ${packages[*]} failed"

  # The packages may not have been enough (e.g. an older cmake earlier on PATH): look again.
  say "checking again after the install"
  check_all
  [ ${#missing_what[@]} -eq 0 ] || fail "installed ${packages[*]}, but requirements are still not met"
  [ ${#optional_what[@]} -eq 0 ] || warn_optional "installed ${packages[*]}, but optional modules are still missing"
  say "everything found"
}

# Run when executed; sourcing the file only defines the checks (for testing them one by one).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi

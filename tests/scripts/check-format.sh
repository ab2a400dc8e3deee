#!/usr/bin/env bash
# Every C++ and CUDA source of the repository is as clang-format writes it with the repository's
# .clang-format (issue 32): `clang-format --dry-run -Werror` names each file and line that is not.
# The tree was formatted with clang-format 14 (Debian 12's); another major version formats some
# constructs differently, so there, and without clang-format, the check reports skipped (exit 77).
# Fix a file with `clang-format -i FILE`.
set -uo pipefail
cd "$(dirname "$0")/../.."
want=14
cf=$(command -v "clang-format-$want" 2>/dev/null || command -v clang-format 2>/dev/null) ||
  { echo "skipped: no clang-format (Debian package clang-format)"; exit 77; }
major=$("$cf" --version | grep -o 'version [0-9]*' | grep -o '[0-9]*$')
[ "$major" = "$want" ] || { echo "skipped: $cf is version $major, the tree is formatted by $want"; exit 77; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.hpp.in')
else
  mapfile -t files < <(find src include apps tests examples -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.hpp.in' \))
fi
[ "${#files[@]}" -gt 50 ] || { echo "too few sources found (${#files[@]}): is the root right?"; exit 1; }
"$cf" --dry-run -Werror "${files[@]}" || { echo "not formatted: run clang-format -i on the files above"; exit 1; }
echo "format: ${#files[@]} files as $cf writes them"

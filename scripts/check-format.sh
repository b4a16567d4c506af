#!/usr/bin/env bash
# Checks that every C++ file of the project is laid out as .clang-format says (exit 1 and
# the files and lines that are not, otherwise 0); `--fix` rewrites them in place instead.
# Needs clang-format 14 (Debian 12's clang-format-14, installed by scripts/install-deps.sh):
# other versions lay some constructs out differently, so with another one the check is
# skipped (exit 77, ctest's SKIP_RETURN_CODE) rather than failed.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "check-format: unknown argument '$1' (expected nothing or --fix)" >&2; exit 2 ;;
esac

fmt=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null 2>&1; then fmt=$candidate; break; fi
done
if [[ -z $fmt ]]; then
  echo "check-format: clang-format not found; bash scripts/install-deps.sh installs clang-format-14" >&2
  exit 1
fi
version=$("$fmt" --version | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p')
if [[ $version != 14 ]]; then
  echo "check-format: $fmt is version ${version:-unknown}; the layout is defined by clang-format 14: skipped" >&2
  exit 77
fi

# The project's C++ files: tracked and new ones (not ignored) in a checkout, all of them otherwise.
dirs=(src tests bench fuzz python)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${dirs[@]}" |
                       grep -E '\.(cc|h)$' | while read -r f; do [[ -f $f ]] && echo "$f"; done)
else
  mapfile -t files < <(find "${dirs[@]}" -name '*.cc' -o -name '*.h' | sort)
fi
if [[ ${#files[@]} -eq 0 ]]; then
  echo "check-format: no C++ files found under ${dirs[*]}" >&2
  exit 1
fi

if [[ $fix -eq 1 ]]; then
  "$fmt" -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
if ! "$fmt" --dry-run --Werror "${files[@]}" 2>/tmp/check-format.$$; then
  # One line a file: how many places differ, and the first line that does.
  grep -E '^[^ ].*: error:' /tmp/check-format.$$ | awk -F: '
    !($1 in first) { first[$1] = $2; order[++n] = $1 }
    { count[$1]++ }
    END { for (i = 1; i <= n; i++) printf "%s: %d places, the first at line %s\n", order[i], count[order[i]], first[order[i]] }' >&2
  rm -f /tmp/check-format.$$
  echo "check-format: the files above are not laid out as .clang-format says; bash scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files laid out as .clang-format says"

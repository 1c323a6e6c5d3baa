#!/usr/bin/env bash
# Writes .fusebench-commit (git-ignored) with HEAD, the dirty flag, the commit time and a digest of
# the tracked files' contents (then their paths, one per line), for trees copied to a machine without
# .git, or with an older repository than the files (the report's tool.git_commit then names the
# commit sent, not "unknown" or the older HEAD). The build recomputes the digest over those paths
# (cmake/build_info.cmake) and reports the tree dirty when it differs: a stamp left from an earlier
# commit cannot label files it was not made from.
# Run it before sending the working tree to a GPU machine. FUSEBENCH_STAMP_OUT: write the stamp
# there instead (the tests do).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dirty=false
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=true
paths=$(git ls-files | LC_ALL=C sort)
digest=$(while IFS= read -r p; do
  if [ -f "$p" ]; then printf '%s:%s\n' "$p" "$(sha256sum "$p" | cut -d' ' -f1)"; fi  # as build_info.cmake
done <<< "$paths" | sha256sum | cut -d' ' -f1)
{
  printf '%s\n%s\n%s\n%s\n' "$(git rev-parse HEAD)" "$dirty" "$(git log -1 --format=%ct)" "$digest"
  printf '%s\n' "$paths"
} > "${FUSEBENCH_STAMP_OUT:-.fusebench-commit}"

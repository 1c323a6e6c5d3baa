#!/usr/bin/env bash
# Writes .fusebench-commit (git-ignored) with HEAD, the dirty flag and the commit time, for trees copied to a
# machine without .git, or with an older repository than the files (the report's tool.git_commit then
# names the commit sent, not "unknown" or the older HEAD).
# Run it before sending the working tree to a GPU machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dirty=false
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=true
printf '%s\n%s\n%s\n' "$(git rev-parse HEAD)" "$dirty" "$(git log -1 --format=%ct)" > .fusebench-commit

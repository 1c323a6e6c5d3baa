#!/usr/bin/env bash
# Writes .fusebench-commit (git-ignored) with HEAD and the dirty flag, for trees copied to a
# machine without .git (the report's tool.git_commit then names the commit instead of "unknown").
# Run it before sending the working tree to a GPU machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dirty=false
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=true
printf '%s\n%s\n' "$(git rev-parse HEAD)" "$dirty" > .fusebench-commit

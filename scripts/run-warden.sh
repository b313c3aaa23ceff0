#!/usr/bin/env bash
# Runs the installed warden with the action's `args`, passed in WARDEN_ARGS (never spliced into a
# script). They are split into words as a shell splits a command line, over every line, with
# '…', "…" and \ quoting (so `--reason "key leaked"` is one argument), and nothing else: no
# variables, no globs, no command substitution (xargs does the splitting, which expands nothing).
# An unbalanced quote is refused.
#
# The Action's own inputs are never split: `--verify-release` runs
# `warden verify --release "$WARDEN_VERIFY_TAG" --repo "$WARDEN_REPOSITORY"` (a tag holding a
# quote, a backslash, white space or a control character is refused), and `--audit-sarif` runs
# `warden audit --format sarif --output "$WARDEN_SARIF"`.
#
#   WARDEN_ARGS  the arguments
#   WARDEN_BIN   the binary (default: $RUNNER_TEMP/warden-bin/warden, where the installer puts it)
set -euo pipefail
bin=${WARDEN_BIN:-${RUNNER_TEMP:?}/warden-bin/warden}
case "${1:-}" in
  --verify-release)
    tag=${WARDEN_VERIFY_TAG:-}
    if [ -z "$tag" ] || [[ "$tag" =~ [\'\"\\\`[:space:][:cntrl:]] ]]; then
      echo "run-warden: verify-release: give a release tag, one word without quotes, backslashes or spaces" >&2
      exit 2
    fi
    exec "$bin" verify --release "$tag" --repo "${WARDEN_REPOSITORY:?}"
    ;;
  --audit-sarif)
    exec "$bin" audit --format sarif --output "${WARDEN_SARIF:?}"
    ;;
esac
words=$(mktemp)
if ! printf '%s\n' "${WARDEN_ARGS:-}" | xargs -r printf '%s\0' > "$words" 2>/dev/null; then
  rm -f "$words"
  echo "run-warden: args: an unbalanced quote (quote with '…' or \"…\", or escape with \\)" >&2
  exit 2
fi
args=()
mapfile -d '' args < "$words"
rm -f "$words"
exec "$bin" "${args[@]}"

#!/usr/bin/env bash
# Runs the installed warden with the action's `args`, passed in WARDEN_ARGS (never spliced into a
# script). They are split on whitespace — spaces, tabs and new lines, so a multi-line block is
# read whole — and never globbed. Quotes are not interpreted: args holding a quote or a backslash
# are refused rather than split in a way the caller did not mean.
#
#   WARDEN_ARGS  the arguments
#   WARDEN_BIN   the binary (default: $RUNNER_TEMP/warden-bin/warden, where the installer puts it)
set -euo pipefail
bin=${WARDEN_BIN:-${RUNNER_TEMP:?}/warden-bin/warden}
case "${WARDEN_ARGS:-}" in
  *[\"\'\\\`]*)
    echo "run-warden: args are split on whitespace and quotes are not understood: give each argument as one word, without quotes or backslashes" >&2
    exit 2 ;;
esac
args=()
read -r -d '' -a args <<< "${WARDEN_ARGS:-}" || true
exec "$bin" "${args[@]}"

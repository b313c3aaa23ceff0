#!/usr/bin/env bash
# compare-outputs.sh OLD_WARDEN NEW_WARDEN: runs the same ~260 warden commands (every --help, every
# workflow fixture in every format, the audit from a snapshot with --fix-plan, hive check for every
# registry x run x format, diff, history, every known-issues command, sign/verify round trips and
# tampering, bad input, check) with both binaries in identical sandboxes, and prints what differs.
# For refactors that must not change output: build the old binary from a clone of the base commit.
set -uo pipefail
OLD=$(realpath "$1"); NEW=$(realpath "$2")
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/compare-outputs.XXXX)
trap 'rm -rf "$WORK"' EXIT
# One key pair for both runs, so signatures and key ids are the same.
"$OLD" keygen --unencrypted --public-key "$WORK/demo.pub" --secret-key "$WORK/demo.key" >/dev/null

battery() {
  local bin=$1 out=$2
  mkdir -p "$out"
  local sb; sb=$(mktemp -d "$WORK/sandbox.XXXX")
  cp -r "$REPO/tests/fixtures" "$sb/fx"
  cp -r "$REPO/keys" "$REPO/known_issues" "$REPO/docs" "$REPO/.github" "$sb/" 2>/dev/null
  cd "$sb" || exit 2
  export SOURCE_DATE_EPOCH=1764460800 NO_COLOR=1
  unset GH_TOKEN GITHUB_TOKEN GITHUB_ACTIONS GITHUB_STEP_SUMMARY
  local n=0
  run() {
    n=$((n + 1))
    local f; f=$(printf "%s/%03d" "$out" $n)
    echo "\$ $*" >"$f"
    "$bin" "$@" >>"$f" 2>"$f.err"
    echo "exit $?" >>"$f"
    sed -i "s#$sb#SANDBOX#g" "$f" "$f.err"
  }
  run --help
  for c in sign verify keygen check audit "audit snapshot" hive "hive check" "hive diff" \
    "hive history" known-issues "known-issues lint" "known-issues render" \
    "known-issues exclusions" "known-issues summary" "known-issues update" completions man; do
    # shellcheck disable=SC2086
    run $c --help
  done
  for d in fx/workflows/*/; do
    for f in text json sarif markdown; do run audit --offline --root "$d" --format $f; done
  done
  for d in fx/workflow-corpus/*/; do run audit --offline --root "$d" --format json; done
  for f in text json sarif markdown; do
    run audit --repo lambdaclass/ethrex --root fx/workflows/ethrex-release \
      --snapshot fx/github-snapshot --fix-plan --format $f
  done
  for r in fx/hive/registry-*; do
    for d in fx/hive/*/; do
      for f in text json markdown junit; do run hive check "$d" --registry "$r" --format $f; done
    done
  done
  local runs=(fx/hive/withdrawals-pass fx/hive/withdrawals-fail)
  for f in text json markdown; do run hive diff "${runs[@]}" --format $f; done
  for f in text json markdown; do
    run hive history "${runs[@]}" --registry fx/hive/registry-current --format $f
  done
  run known-issues update --registry fx/hive/registry-current --from-results "${runs[@]}"
  run known-issues lint --root fx/ethrex
  run known-issues render --root fx/ethrex --check
  for f in bash lines json reth-yaml; do run known-issues exclusions --root fx/ethrex --format $f; done
  run known-issues summary --root fx/ethrex
  run known-issues summary --root fx/ethrex --format text
  run check --root fx/ethrex
  run check
  for f in fx/bad/*; do run verify "$f"; done
  mkdir -p rel/dist keys2 && cp "$WORK/demo.pub" keys2/
  echo linux >rel/dist/app-linux && echo mac >rel/dist/app-mac
  local commit=3470838ef50e566f292860fb1d8aee4937d11849
  run sign rel/dist --secret-key "$WORK/demo.key" --tag v1.0.0 --repo o/r --commit $commit
  run verify rel/dist --keys-dir keys2 --expect-tag v1.0.0 --expect-repo o/r --expect-commit $commit
  run verify rel/dist --keys-dir keys2 --expect-tag v2 --format json
  run verify rel/dist --keys-dir keys2 --expect-commit ffffffffffffffffffffffffffffffffffffffff
  run verify rel/dist --keys-dir keys2 --expect-repo x/y
  run verify rel/dist/app-linux --keys-dir keys2
  echo tampered >rel/dist/app-mac
  run verify rel/dist --keys-dir keys2
  run sign rel/dist --secret-key "$WORK/demo.key" --dry-run --force
  run check --root rel
  cd "$REPO" || exit 2
  echo "$n commands" >&2
}

battery "$OLD" "$WORK/old"
battery "$NEW" "$WORK/new"
if diff -r "$WORK/old" "$WORK/new"; then
  echo "no difference" >&2
fi

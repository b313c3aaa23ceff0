#!/usr/bin/env bash
# Benchmark (not a test): `warden audit --offline` on a generated repository of 50 workflows
# (6 jobs each, half of them signing with GPG_PRIVATE_KEY outside an environment; 12,800 lines).
#
#   benches/audit_offline.sh
#
# Prints the best wall time of RUNS runs and the peak RSS (WARDEN=path times another build), for
# the audit and for `--fix --dry-run` on the same files.
# Goal (issue 12): under 0.1 s and 20 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
command -v /usr/bin/time >/dev/null || { echo "bench: GNU time is required" >&2; exit 2; }
cargo build --release --locked -q
WARDEN=${WARDEN:-$PWD/target/release/warden}
WORK=$PWD/target/bench-audit
rm -rf "$WORK"
mkdir -p "$WORK/.github/workflows"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/.github/workflows" <<'PY'
import sys
out = sys.argv[1]
pin = "b4ffde65f46336ab88eb53be808477a3936bae11"
for w in range(50):
    lines = [f"name: w{w}", "on:", "  push:", "    tags: ['v*']", "permissions:", "  contents: read", "jobs:"]
    for j in range(6):
        lines += [f"  job{j}:", "    runs-on: ubuntu-latest"] + (["    environment: release"] if j % 2 else []) + ["    steps:"]
        for s in range(5):
            lines += [f"      - uses: actions/checkout@{pin}", f"      - name: step {s}", "        run: |",
                      "          echo building", "          make -j4 all", "        env:",
                      "          TOKEN: ${{ secrets.GITHUB_TOKEN }}"]
        lines += ["      - run: echo \"$K\" | gpg --import && gpg --detach-sign dist/x", "        env:",
                  "          K: ${{ secrets.GPG_PRIVATE_KEY }}"]
    open(f"{out}/w{w}.yml", "w").write("\n".join(lines) + "\n")
PY
best="" rss=0
for _ in $(seq 1 "$RUNS"); do
  /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$WARDEN" audit --offline --root "$WORK" >/dev/null || true
  read -r t r < <(tail -1 "$WORK/time.txt")
  if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  [ "$r" -gt "$rss" ] && rss=$r
done
echo "warden audit --offline, 50 workflows ($(cat "$WORK"/.github/workflows/*.yml | wc -l) lines): ${best} s, peak RSS $((rss / 1024)) MiB"
# The remedy on the same files: 150 jobs get `environment:` (the diff is printed, nothing written).
best="" rss=0
for _ in $(seq 1 "$RUNS"); do
  /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$WARDEN" audit --offline --root "$WORK" --fix --dry-run >/dev/null || true
  read -r t r < <(tail -1 "$WORK/time.txt")
  if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  [ "$r" -gt "$rss" ] && rss=$r
done
echo "warden audit --offline --fix --dry-run, the same 50 workflows: ${best} s, peak RSS $((rss / 1024)) MiB"

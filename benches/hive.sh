#!/usr/bin/env bash
# Benchmark (not a test): `warden hive check` against a python3 checker of the same
# classification (json.load, the shape of reth's parse.py) and jq, on generated hive suite files.
#
#   benches/hive.sh                 # 100k and 400k cases (about 60 and 240 MB)
#   CASES="20000" benches/hive.sh   # quicker
#   benches/hive.sh history         # `hive history` over 30 runs of 100k cases (see history below)
#
# Prints wall time (best of RUNS) and peak RSS of each checker, and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${CASES:-"100000 400000"}
RUNS=${RUNS:-3}
command -v python3 >/dev/null && [ -x /usr/bin/time ] || { echo "bench: needs python3 and GNU time" >&2; exit 2; }
cargo build --release --locked -q
WARDEN=$PWD/target/release/warden
WORK=$PWD/target/bench-hive
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# The python checker: same outcome classes as warden for exact-name exclusions.
cat > "$WORK/check.py" <<'PY'
import json, os, sys
results, listed_file = sys.argv[1], sys.argv[2]
listed = set(l.strip() for l in open(listed_file) if l.strip())
counts = {}
for f in sorted(os.listdir(results)):
    if not f.endswith(".json") or f in ("hive.json", "errorReport.json", "containerErrorReport.json"):
        continue
    suite = json.load(open(os.path.join(results, f)))
    for case in suite["testCases"].values():
        name, ok = case["name"], case["summaryResult"].get("pass") is True
        base = name.rsplit(" (", 1)[0]
        if case.get("multiTestContext") or base == "client launch":
            continue
        if base in listed:
            outcome = "unexpected-pass" if ok else "expected-fail"
        else:
            outcome = "pass" if ok else "regression"
        counts[outcome] = counts.get(outcome, 0) + 1
print(json.dumps(counts, sort_keys=True))
PY

# The generator both benchmarks use: EEST-style names, clientInfo and failure-log offsets.
#   gen.py check DIR CASES                       one run, 1 % failing, half of those listed
#   gen.py history DIR CASES RUNS FAILING_AMONG  RUNS runs (see history_bench)
cat > "$WORK/gen.py" <<'PY'
import json, os, random, sys

FORKS = ["Prague", "Cancun", "Shanghai", "Osaka"]

def name(i):
    fork = FORKS[i % 4]
    return f"tests/{fork.lower()}/eip7702_set_code_tx/test_set_code_txs.py::test_set_code_to_self_destruct[fork_{fork}-blockchain_test_engine_from_state_test-case_{i:06d}]-ethrex"

def write_suite(path, n, failing, version="9.0.0"):
    """A suite file of n cases; failing(i) says which fail."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('{"id":0,"name":"eels/consume-engine","description":"Consume engine test fixtures","clientVersions":{"ethrex":"%s"},"testCases":{' % version)
        log = 0
        for i in range(1, n + 1):
            begin = log; log += 180
            case = {"name": name(i) + " (ethrex)", "description": f"Test that a set-code transaction to self destructs correctly (variant {i}).",
                    "start": "2026-08-01T10:00:00.123456789Z", "end": "2026-08-01T10:00:01.987654321Z",
                    "summaryResult": {"pass": not failing(i), "log": {"begin": begin, "end": log}},
                    "clientInfo": {"c0ffee42": {"id": "c0ffee42", "ip": "172.17.0.3", "name": "ethrex", "instantiatedAt": "2026-08-01T10:00:00Z", "logFile": "ethrex/client-c0ffee42.log"}}}
            f.write(("," if i > 1 else "") + json.dumps(str(i)) + ":" + json.dumps(case, separators=(",", ":")))
        f.write('},"simLog":"1780000000-simulator-c0ffee.log","testDetailsLog":"details/1780000000-c0ffee-1.log"}')

def write_registry(out, listed, flaky=()):
    os.makedirs(out + "/known_issues", exist_ok=True)
    with open(out + "/known_issues/registry.toml", "w") as f:
        f.write('clients = ["ethrex"]\n')
    with open(out + "/known_issues/bench.toml", "w") as f:
        f.write('title = "bench"\nwhy = "generated"\nremoval = "never"\n')
        for t in listed:
            f.write(f'\n[[exclude]]\nsuite = "eels/consume-engine"\ntest = {json.dumps(t)}\n')
        for t in flaky:
            f.write(f'\n[[exclude]]\nsuite = "eels/consume-engine"\ntest = {json.dumps(t)}\nexpect = "flaky"\n')

SUITE = "1780000000-0123456789abcdef0123456789abcdef.json"
mode, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "check":
    write_suite(f"{out}/results/{SUITE}", n, lambda i: i % 100 == 0)
    listed = [name(i) for i in range(200, n + 1, 200)]
    write_registry(out, listed)
    # jq and python get the names with the client suffix stripped, as the registry lists them
    open(out + "/listed.txt", "w").write("\n".join(listed) + "\n")
else:
    runs, among = int(sys.argv[4]), int(sys.argv[5])
    for r in range(runs):
        rng = random.Random(r)
        def failing(i):
            fail = i % 100 == 0 and (i % 1000 != 0 or rng.random() < 0.5)
            return i <= among and (fail or (r == runs - 1 and i % 10000 == 50))
        # The client changes at run 12 and hive at run 20, as the verdicts' onsets read them.
        write_suite(f"{out}/runs/{r + 1:03d}/{SUITE}", n, failing, "9.0.0" if r < 11 else "9.1.0")
        with open(f"{out}/runs/{r + 1:03d}/hive.json", "w") as h:
            h.write(json.dumps({"sourceCommit": ("a" if r < 19 else "b") * 40}))
    write_registry(out, [name(i) for i in range(200, among + 1, 200) if i % 1000 != 0],
                   [name(i) for i in range(1000, among + 1, 1000)])
PY

best() { # best-of-RUNS wall seconds and the max RSS (KiB) of "$@"
  local best="" rss=0
  for _ in $(seq 1 "$RUNS"); do
    local out t r
    /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$@" >/dev/null 2>&1 || true
    out=$(tail -1 "$WORK/time.txt")
    t=${out% *}; r=${out#* }
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
    [ "$r" -gt "$rss" ] && rss=$r
  done
  echo "$best $rss"
}

# `warden hive history` over HISTORY_RUNS runs of HISTORY_CASES cases each: 1 % failing, a tenth
# of those flaky (each fails in a run with probability 1/2), 10 new failures in the last run.
# Against a python3 implementation of the same classification (json.load of every run, a mark per
# case and run); then again with the same failures and twice the passing cases, to show that
# memory does not follow the passing cases.
history_bench() {
  local runs=${HISTORY_RUNS:-30} cases=${HISTORY_CASES:-100000}
  cat > "$WORK/history.py" <<'PY'
import json, os, sys
dirs = sys.argv[1:]
n = len(dirs)
marks = {}
for r, d in enumerate(dirs):
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json") or f in ("hive.json", "errorReport.json", "containerErrorReport.json"):
            continue
        suite = json.load(open(os.path.join(d, f)))
        for case in suite["testCases"].values():
            name = case["name"]
            if case.get("multiTestContext") or name.rsplit(" (", 1)[0] == "client launch":
                continue
            m = marks.setdefault((suite["name"], name), ["absent"] * n)
            m[r] = "pass" if case["summaryResult"].get("pass") is True else "fail"
counts = {}
for m in marks.values():
    fails, passes = m.count("fail"), m.count("pass")
    if fails == 0:
        continue
    if m[-1] == "absent": c = "gone"
    elif n > 1 and m[-1] == "fail" and fails == 1: c = "new"
    elif passes == 0: c = "persistent"
    elif all(x == "pass" for x in m[-2:]): c = "fixed"
    else: c = "flaky"
    counts[c] = counts.get(c, 0) + 1
print(json.dumps(counts, sort_keys=True))
PY
  for n in "$cases" $((cases * 2)); do
    local d="$WORK/history-$n"
    python3 "$WORK/gen.py" history "$d" "$n" "$runs" "$cases"
    local size; size=$(du -sm "$d/runs" | cut -f1)
    cat "$d"/runs/*/*.json > /dev/null
    read -r tw rw < <(best "$WARDEN" hive history "$d"/runs/* --registry "$d/known_issues")
    local line="history: $runs runs of $n cases ($size MB): warden ${tw} s / $((rw / 1024)) MiB"
    if [ "$n" = "$cases" ]; then
      read -r tp rp < <(RUNS=1 best python3 "$WORK/history.py" "$d"/runs/*)
      line="$line, python json.load ${tp} s / $((rp / 1024)) MiB, ratio $(awk -v a="$tp" -v b="$tw" 'BEGIN{printf "%.1f", a/b}')×"
      echo "$line"
      "$WARDEN" hive history "$d"/runs/* --registry "$d/known_issues" --format json \
        | python3 -c 'import json,sys,collections; t=json.load(sys.stdin)["tests"]; print("  warden counts:", json.dumps(dict(sorted(collections.Counter(x["class"] for x in t if x["class"] != "stale").items()))))'
      echo "  python counts: $(python3 "$WORK/history.py" "$d"/runs/*)"
    else
      echo "$line (the same failures, twice the passing cases)"
    fi
    rm -rf "$d"
  done
}

if [ "${1:-}" = history ]; then
  history_bench
  exit 0
fi

for n in $CASES; do
  d="$WORK/$n"; python3 "$WORK/gen.py" check "$d" "$n"
  size=$(du -m "$d/results"/*.json | cut -f1)
  cat "$d/results"/*.json > /dev/null
  read -r tw rw < <(best "$WARDEN" hive check "$d/results" --registry "$d/known_issues" --allow-missing)
  read -r tp rp < <(best python3 "$WORK/check.py" "$d/results" "$d/listed.txt")
  line="$n cases ($size MB): warden ${tw} s / $((rw / 1024)) MiB, python json.load ${tp} s / $((rp / 1024)) MiB"
  line="$line, ratio $(awk -v a="$tp" -v b="$tw" 'BEGIN{printf "%.1f", a/b}')×"
  if command -v jq >/dev/null; then
    read -r tj rj < <(best jq -c '[.testCases[] | .summaryResult.pass] | group_by(.) | map(length)' "$d/results"/*.json)
    line="$line, jq ${tj} s / $((rj / 1024)) MiB"
  fi
  echo "$line"
  # Same classification: compare the counts.
  "$WARDEN" hive check "$d/results" --registry "$d/known_issues" --allow-missing --format json \
    | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print("  warden counts:", json.dumps({k:v for k,v in sorted(c.items())}))' || true
  echo "  python counts: $(python3 "$WORK/check.py" "$d/results" "$d/listed.txt")"
  rm -rf "$d" || true
done

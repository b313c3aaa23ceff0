#!/usr/bin/env bash
# Benchmark (not a test): `warden verify --release` against downloading the same assets with
# parallel curl and then `minisign -V` + `sha256sum -c`, from a local server that plays the GitHub
# API and its storage host with 20 ms added to every request.
#
#   benches/verify_release.sh                 # 8 × 256 MiB
#   SIZE_MIB=64 benches/verify_release.sh     # quicker
#   BIND=0 benches/verify_release.sh          # a signature without a run: no provenance reads
#   BIND=0 WARDEN=../old/target/release/warden benches/verify_release.sh   # another build
#   RATE_MIBPS=100 benches/verify_release.sh  # each download paced at 100 MiB/s, like a network link
#
# Unpaced, the local server (python) and the hashing share this machine's cores, so the ratio to
# the download measures the hashing, not the overlap; RATE_MIBPS measures the overlap.
#
# Prints wall times (best of RUNS) and warden's peak RSS. Needs python3, curl, minisign,
# sha256sum and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${SIZE_MIB:-256}
COUNT=${COUNT:-8}
RUNS=${RUNS:-3}
for tool in python3 curl minisign sha256sum /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 2; }
done
# WARDEN=/path/to/warden compares another build in the same conditions (it must sign too).
if [ -z "${WARDEN:-}" ]; then
  cargo build --release --locked -q
  WARDEN=$PWD/target/release/warden
fi
WORK=$PWD/target/bench-release
rm -rf "$WORK"; mkdir -p "$WORK/dist" "$WORK/keys"
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
cd "$WORK"
for i in $(seq 1 "$COUNT"); do head -c "${SIZE_MIB}M" /dev/urandom > "dist/artifact-$i.bin"; done
minisign -G -W -p keys/k.pub -s k.key >/dev/null
COMMIT=3470838ef50e566f292860fb1d8aee4937d11849
# Signed as the release job signs: the run bound (issue 26), so verification checks it too.
# BIND=0 signs without it, to measure what the provenance checks cost.
if [ "${BIND:-1}" = 1 ]; then
  GITHUB_ACTIONS=true GITHUB_RUN_ID=555 GITHUB_RUN_ATTEMPT=1 \
    GITHUB_WORKFLOW_REF=o/r/.github/workflows/release.yml@refs/tags/v1 \
    "$WARDEN" sign dist --secret-key k.key --tag v1 --repo o/r --commit "$COMMIT" --environment release >/dev/null
else
  "$WARDEN" sign dist --secret-key k.key --tag v1 --repo o/r --commit "$COMMIT" >/dev/null
fi
cat dist/* > /dev/null
python3 - "$WORK/dist" "$COMMIT" "${RATE_MIBPS:-0}" > port.txt <<'PY' &
import hashlib, http.server, json, os, shutil, socketserver, sys, time, threading
dist, commit, rate = sys.argv[1], sys.argv[2], float(sys.argv[3]) * (1 << 20)
names = sorted(os.listdir(dist))
def sha(n):
    h = hashlib.sha256()
    with open(os.path.join(dist, n), "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""): h.update(b)
    return h.hexdigest()
digests = {n: sha(n) for n in names}
iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
now = time.time()
REQUESTS = []
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def send_json(self, v):
        b = json.dumps(v).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self):
        time.sleep(0.02)
        p = self.path.split("?")[0]
        REQUESTS.append(p)
        if p == "/requests":
            return self.send_json(REQUESTS)
        if p == "/repos/o/r/actions/runs/555/attempts/1":
            return self.send_json({"id": 555, "run_attempt": 1, "path": ".github/workflows/release.yml",
                "head_sha": commit, "head_repository": {"full_name": "o/r"}, "event": "push",
                "head_branch": "v1", "run_started_at": iso(now - 3600), "updated_at": iso(now + 3600)})
        if p == "/repos/o/r/deployments":
            return self.send_json([{"id": 9, "environment": "release", "sha": commit}])
        if p == "/repos/o/r/deployments/9/statuses":
            return self.send_json([{"state": "success", "log_url": "https://github.com/o/r/actions/runs/555/job/1"}])
        if p == "/repos/o/r/releases/tags/v1":
            return self.send_json({"id": 7, "draft": False, "prerelease": False, "immutable": True})
        if p == "/repos/o/r/releases/7/assets":
            return self.send_json([{"id": i, "name": n, "size": os.path.getsize(os.path.join(dist, n)),
                "digest": "sha256:" + digests[n], "uploader": {"login": "github-actions[bot]"},
                "created_at": iso(now - 60), "updated_at": iso(now - 60)} for i, n in enumerate(names)])
        if p == "/repos/o/r/commits/v1":
            return self.send_json({"sha": commit})
        if p.startswith("/repos/o/r/releases/assets/"):
            i = int(p.rsplit("/", 1)[1])
            self.send_response(302); self.send_header("location", f"http://127.0.0.1:{PORT}/blob/{names[i]}")
            self.send_header("content-length", "0"); self.end_headers(); return
        if p.startswith("/blob/"):
            f = os.path.join(dist, p[len("/blob/"):])
            self.send_response(200); self.send_header("content-length", str(os.path.getsize(f))); self.end_headers()
            with open(f, "rb") as fh:
                if not rate:
                    shutil.copyfileobj(fh, self.wfile, 1 << 20); return
                start, sent = time.time(), 0
                for b in iter(lambda: fh.read(1 << 20), b""):
                    self.wfile.write(b); sent += len(b)
                    ahead = start + sent / rate - time.time()
                    if ahead > 0: time.sleep(ahead)
            return
        self.send_response(404); self.send_header("content-length", "0"); self.end_headers()
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
srv = S(("127.0.0.1", 0), H); PORT = srv.server_address[1]
print(PORT, flush=True); srv.serve_forever()
PY
SERVER=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
PORT=$(cat port.txt); BASE=http://127.0.0.1:$PORT

best() { local best=""; for _ in $(seq 1 "$RUNS"); do rm -rf got; local s e t; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); t=$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}'); if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN{exit !(t<b)}'; then best=$t; fi; done; printf '%.2f' "$best"; }
curl_all() { mkdir -p got; for n in $(ls dist); do echo "url = \"$BASE/blob/$n\""; echo "output = \"got/$n\""; done | curl -s --parallel --parallel-max 4 -K -; }
curl_then_verify() { curl_all && (cd got && for f in artifact-*.bin; do minisign -Vqm "$f" -p ../keys/k.pub || return 1; done && sha256sum -c --quiet SHA256SUMS); }
warden_release() { "$WARDEN" verify --release v1 --repo o/r --keys-dir keys --api-url "$BASE" --out got; }
# The release must verify (its run included), and the provenance reads are counted.
reqs() { curl -s "$BASE/requests" | python3 -c 'import json,sys; print(sum(1 for p in json.load(sys.stdin) if "/actions/" in p or "/deployments" in p))'; }
before=$(reqs); rm -rf got
warden_release >/dev/null 2>&1 || { warden_release; echo "bench: warden verify --release failed" >&2; exit 1; }
prov=$(( $(reqs) - before ))
t_curl=$(best curl_all)
t_pair=$(best curl_then_verify)
t_w=$(best warden_release)
rm -rf got; rss=$(/usr/bin/time -f '%M' "$WARDEN" verify --release v1 --repo o/r --keys-dir keys --api-url "$BASE" --out got 2>&1 >/dev/null | tail -1)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
cat <<REPORT
verify --release: $COUNT × $SIZE_MIB MiB, 20 ms per request, $( [ "${RATE_MIBPS:-0}" = 0 ] && echo "unpaced" || echo "${RATE_MIBPS} MiB/s per download"), best of $RUNS, $(nproc) cores
  parallel curl download alone            ${t_curl} s
  curl, then minisign -V + sha256sum -c   ${t_pair} s
  warden verify --release                 ${t_w} s   ($(ratio "$t_w" "$t_curl")× the download, $(ratio "$t_pair" "$t_w")× faster than download-then-verify), peak RSS $((rss / 1024)) MiB
  provenance reads (run, deployments)     ${prov} requests
REPORT

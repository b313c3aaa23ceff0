#!/usr/bin/env bash
# Benchmark (not a test): warden against minisign + sha256sum on the same files, in one run.
#
#   benches/release.sh            # 8 × 256 MiB artifacts + one 4 GiB file, under target/bench
#   SIZE_MIB=64 BIG_GIB=1 benches/release.sh   # a quicker run
#
# Prints wall times (best of RUNS, warm page cache), the ratios, and warden's peak RSS on the big
# file. Needs minisign, sha256sum, b2sum and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${SIZE_MIB:-256}
COUNT=${COUNT:-8}
BIG_GIB=${BIG_GIB:-4}
RUNS=${RUNS:-3}
for tool in minisign sha256sum b2sum /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 2; }
done

cargo build --release --locked -q
WARDEN=$PWD/target/release/warden
WORK=$PWD/target/bench
rm -rf "$WORK"
mkdir -p "$WORK/dist" "$WORK/big"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

echo "creating $COUNT × $SIZE_MIB MiB random artifacts and one $BIG_GIB GiB file…" >&2
for i in $(seq 1 "$COUNT"); do head -c "${SIZE_MIB}M" /dev/urandom > "dist/artifact-$i.bin"; done
head -c "${BIG_GIB}G" /dev/urandom > big/big.bin
minisign -G -W -p k.pub -s k.key >/dev/null
cat dist/* big/big.bin > /dev/null   # warm the page cache

clean() { rm -f dist/*.minisig dist/SHA256SUMS dist/SHA256SUMS.minisig; }

# best wall-clock seconds of RUNS runs of "$@" (after `clean` when asked)
best() {
  local pre=$1; shift
  local best=""
  for _ in $(seq 1 "$RUNS"); do
    [ "$pre" = clean ] && clean
    local s e t
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    t=$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')
    if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
  done
  printf '%.2f' "$best"
}

minisign_sign_pair() {
  (cd dist && minisign -S -s ../k.key -m artifact-*.bin && sha256sum artifact-*.bin > SHA256SUMS)
}
warden_sign() { "$WARDEN" sign dist --secret-key k.key --force; }
minisign_verify_pair() {
  (cd dist && for f in artifact-*.bin; do minisign -Vqm "$f" -p ../k.pub || return 1; done && sha256sum -c --quiet SHA256SUMS)
}
warden_verify() { "$WARDEN" verify dist --public-key k.pub; }
b2sum_all() { b2sum dist/artifact-*.bin; }
sha256sum_all() { sha256sum dist/artifact-*.bin; }

total_mb=$(awk -v c="$COUNT" -v s="$SIZE_MIB" 'BEGIN { print c * s * 1.048576 }')
t_ms=$(best clean minisign_sign_pair)
t_ws=$(best clean warden_sign)
clean; warden_sign >/dev/null
t_mv=$(best keep minisign_verify_pair)
t_wv=$(best keep warden_verify)
t_b2=$(best keep b2sum_all)
t_sha=$(best keep sha256sum_all)
rss_kb=$(/usr/bin/time -v "$WARDEN" sign big --no-checksums --force --secret-key k.key 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}')
t_big=$(best keep "$WARDEN" sign big --no-checksums --force --secret-key k.key)
big_pair() { (cd big && minisign -S -s ../k.key -m big.bin && sha256sum big.bin > SHA256SUMS); }
t_big_pair=$(best keep big_pair)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
mbs() { awk -v m="$total_mb" -v t="$1" 'BEGIN { printf "%.0f", m / t }'; }
cat <<REPORT
release-warden benchmark: $COUNT × $SIZE_MIB MiB artifacts, best of $RUNS, $(nproc) cores
  minisign -S (all files) + sha256sum > SHA256SUMS   ${t_ms} s
  warden sign dist/                                  ${t_ws} s   ($(mbs "$t_ws") MB/s)   ratio $(ratio "$t_ms" "$t_ws")×
  minisign -V (per file) + sha256sum -c              ${t_mv} s
  warden verify dist/                                ${t_wv} s   ($(mbs "$t_wv") MB/s)   ratio $(ratio "$t_mv" "$t_wv")×
  reference: b2sum ${t_b2} s, sha256sum ${t_sha} s on the same files
  one $BIG_GIB GiB file: minisign -S + sha256sum ${t_big_pair} s, warden sign ${t_big} s (ratio $(ratio "$t_big_pair" "$t_big")×), warden peak RSS $((rss_kb / 1024)) MiB (${rss_kb} KiB)
REPORT

#!/usr/bin/env bash
# Installs a released warden for this machine and verifies it before it ever runs: the binary's
# minisign signature must verify against the public key of the action's own checkout (which the
# caller pinned by commit SHA), and its trusted comment must name this file and this tag.
#
#   WARDEN_VERSION       the release tag to install (required), e.g. v0.2.0
#   WARDEN_PUBLIC_KEY    the trusted public key (default: keys/minisign.pub next to this script)
#   WARDEN_BIN_DIR       where to put `warden` (default: ./warden-bin); added to GITHUB_PATH
#   WARDEN_REPO          owner/name of the releases (default: release-warden/release-warden)
#   WARDEN_DOWNLOAD_URL  the download host (default: https://github.com; tests use a local one):
#                        HTTPS, or HTTP to the loopback address only; no user name or password
#
# Downloads are bounded (curl --max-filesize, --max-time); legacy (non-prehashed) signatures
# are refused (minisign -V -H), and the verified file must be an executable for this machine.
#
# The bootstrap verifier is the `minisign` CLI: the distribution's package (installed with
# apt-get when missing and possible). Nothing downloaded runs before it verifies.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
version=${WARDEN_VERSION:?set WARDEN_VERSION to the release tag to install}
key=${WARDEN_PUBLIC_KEY:-$here/keys/minisign.pub}
bin_dir=${WARDEN_BIN_DIR:-$PWD/warden-bin}
repo=${WARDEN_REPO:-release-warden/release-warden}
url=${WARDEN_DOWNLOAD_URL:-https://github.com}

case "$version" in
  *[!A-Za-z0-9._-]*|"") echo "install-warden: not a release tag: $version" >&2; exit 2 ;;
esac
# The URL parsed, not prefix-matched: `http://localhost:x@evil.example/` is evil.example.
refuse_url() { echo "install-warden: refusing the download URL $url: $1" >&2; exit 2; }
case "$url" in
  https://*) scheme=https; rest=${url#https://} ;;
  http://*) scheme=http; rest=${url#http://} ;;
  *) refuse_url "not HTTPS" ;;
esac
authority=${rest%%/*}
case "$authority" in
  *@*) refuse_url "a user name or password in it" ;;
  ""|*[!A-Za-z0-9.:-]*) refuse_url "not a host name" ;;
esac
host=${authority%:*}
if [ "$scheme" = http ] && [ "$host" != 127.0.0.1 ] && [ "$host" != localhost ]; then
  refuse_url "not HTTPS (plain HTTP only to the loopback address)"
fi
url=${url%/}
# ELF e_machine of each platform's binary: 0x3e x86-64, 0xb7 AArch64 (little-endian).
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=linux-x86_64; machine="3e 00" ;;
  Linux/aarch64|Linux/arm64) platform=linux-aarch64; machine="b7 00" ;;
  *) echo "install-warden: no release binary for $(uname -s)/$(uname -m)" >&2; exit 2 ;;
esac

if ! command -v minisign >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq minisign >/dev/null
  fi
fi
command -v minisign >/dev/null 2>&1 || {
  echo "install-warden: minisign is needed to verify warden before it runs (apt-get install minisign)" >&2
  exit 2
}

asset="warden-$version-$platform"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 256 MiB and 10 minutes at most for the binary (a trickling or endless body stops there), 64 KiB
# and a minute for its signature.
curl -fsSL --proto '=https,http' --max-redirs 5 --max-filesize 268435456 --max-time 600 \
  -o "$tmp/$asset" "$url/$repo/releases/download/$version/$asset"
curl -fsSL --proto '=https,http' --max-redirs 5 --max-filesize 65536 --max-time 60 \
  -o "$tmp/$asset.minisig" "$url/$repo/releases/download/$version/$asset.minisig"
# The signature (prehashed only: -H), then its binding: this file name and this tag, in the
# signed trusted comment.
comment=$(minisign -V -H -m "$tmp/$asset" -p "$key" -x "$tmp/$asset.minisig" | sed -n 's/^Trusted comment: //p')
printf '%s\n' "$comment" | tr '\t' '\n' | grep -qxF "file:$asset" || {
  echo "install-warden: the signature is not for $asset" >&2; exit 1; }
printf '%s\n' "$comment" | tr '\t' '\n' | grep -qxF "tag:$version" || {
  echo "install-warden: the signature is not for tag $version" >&2; exit 1; }

# Not by a revoked key: a revocation beside the trusted key (keys/revoked/ of the action's
# checkout), or on the repository's default branch (the newest word: revocations only remove
# trust). A statement found there is checked against the key; one that does not verify stops
# the install too, and so does a revocation folder that cannot be read.
key_id=$(sed -n 2p "$key" | base64 -d 2>/dev/null | od -An -tx1 -j2 -N8 | tr -d ' \n' \
  | fold -w2 | tac | tr -d '\n' | tr 'a-f' 'A-F')
revoked() { # $1: the statement, $2: its signature; says why when the key is revoked
  if minisign -V -H -q -m "$1" -x "$2" -p "$key" >/dev/null 2>&1; then
    echo "install-warden: key $key_id is revoked ($(sed -n 's/^reason = //p' "$1")): not installing" >&2
  else
    echo "install-warden: a revocation of key $key_id that does not verify: not installing" >&2
  fi
  exit 1
}
local_revoked="$(dirname "$key")/revoked/$key_id.toml"
if [ -e "$local_revoked" ]; then revoked "$local_revoked" "$local_revoked.minisig"; fi
code=$(curl -sS --proto '=https,http' -L --max-redirs 5 --max-filesize 16384 --max-time 60 \
  -o "$tmp/revoked.toml" -w '%{http_code}' "$url/$repo/raw/HEAD/keys/revoked/$key_id.toml" || echo 000)
case "$code" in
  404) ;;
  200)
    curl -fsSL --proto '=https,http' --max-redirs 5 --max-filesize 16384 --max-time 60 \
      -o "$tmp/revoked.toml.minisig" "$url/$repo/raw/HEAD/keys/revoked/$key_id.toml.minisig" \
      || : > "$tmp/revoked.toml.minisig"
    revoked "$tmp/revoked.toml" "$tmp/revoked.toml.minisig" ;;
  *) echo "install-warden: cannot read $url/$repo/raw/HEAD/keys/revoked/ (HTTP $code): not installing" >&2; exit 1 ;;
esac

# Signed is not enough to run it: it must be a 64-bit little-endian ELF for this machine.
# shellcheck disable=SC2046 # the 20 header bytes, one field each
set -- $(od -An -tx1 -N20 "$tmp/$asset")
if [ "$#" != 20 ] || [ "$1 $2 $3 $4 $5 $6" != "7f 45 4c 46 02 01" ] || [ "${19} ${20}" != "$machine" ]; then
  echo "install-warden: $asset is not a $platform executable" >&2; exit 1
fi

mkdir -p "$bin_dir"
install -m 0755 "$tmp/$asset" "$bin_dir/warden"
if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin_dir" >> "$GITHUB_PATH"; fi
echo "install-warden: installed warden $version ($platform), verified against $key"

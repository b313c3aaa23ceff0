#!/usr/bin/env bash
# Installs a released warden for this machine and verifies it before it ever runs: the binary's
# minisign signature must verify against the public key of the action's own checkout (which the
# caller pinned by commit SHA), and its trusted comment must name this file and this tag.
#
#   WARDEN_VERSION       the release tag to install (required), e.g. v0.2.0
#   WARDEN_PUBLIC_KEY    the trusted public key (default: keys/minisign.pub next to this script)
#   WARDEN_BIN_DIR       where to put `warden` (default: ./warden-bin); added to GITHUB_PATH
#   WARDEN_REPO          owner/name of the releases (default: release-warden/release-warden)
#   WARDEN_DOWNLOAD_URL  the download host (default: https://github.com; tests use a local one)
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
case "$url" in
  https://*|http://127.0.0.1:*|http://localhost:*) ;;
  *) echo "install-warden: refusing a download URL that is not HTTPS: $url" >&2; exit 2 ;;
esac
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=linux-x86_64 ;;
  Linux/aarch64|Linux/arm64) platform=linux-aarch64 ;;
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
for f in "$asset" "$asset.minisig"; do
  curl -fsSL --max-filesize 268435456 -o "$tmp/$f" "$url/$repo/releases/download/$version/$f"
done
# The signature, then its binding: this file name and this tag, in the signed trusted comment.
comment=$(minisign -V -m "$tmp/$asset" -p "$key" -x "$tmp/$asset.minisig" | sed -n 's/^Trusted comment: //p')
printf '%s\n' "$comment" | tr '\t' '\n' | grep -qxF "file:$asset" || {
  echo "install-warden: the signature is not for $asset" >&2; exit 1; }
printf '%s\n' "$comment" | tr '\t' '\n' | grep -qxF "tag:$version" || {
  echo "install-warden: the signature is not for tag $version" >&2; exit 1; }

mkdir -p "$bin_dir"
install -m 0755 "$tmp/$asset" "$bin_dir/warden"
if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin_dir" >> "$GITHUB_PATH"; fi
echo "install-warden: installed warden $version ($platform), verified against $key"

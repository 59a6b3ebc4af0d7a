#!/usr/bin/env bash
# Install what example_bots/go needs to build, from Debian packages only (the Go module proxy is
# not reachable from the project's machines): Go, protoc and its Go plugins, and the gRPC and
# protobuf libraries, whose sources land in /usr/share/gocode (build.sh builds in GOPATH mode).
# Then build the example bot. Cheap when everything is there already. Runs as root.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
      golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "setup-go: must run as root to install ${missing[*]}" >&2; exit 1; }
    echo "setup-go: installing ${missing[*]} (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l NEEDRESTART_SUSPEND=1
    apt-get update -q </dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi
bash example_bots/go/build.sh

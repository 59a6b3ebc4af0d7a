#!/bin/sh
# Build ./take5-go-bot, a statically linked binary, from proto/take5/v1/bot.proto and main.go with
# Debian's Go packages only (no module proxy, no network): scripts/setup-go.sh installs golang-go,
# protobuf-compiler, protoc-gen-go, protoc-gen-go-grpc and the gRPC/protobuf libraries, whose
# sources Debian puts in /usr/share/gocode; the build runs in GOPATH mode on top of them.
#   example_bots/go/build.sh            # PROTO_DIR (default: the repository's proto/) to override
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto_dir=${PROTO_DIR:-$here/../../proto}
for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing: run scripts/setup-go.sh" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/take5-go.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/take5arena/gobot"
# go_package in bot.proto is "take5arena/take5/v1": the generated code lands in the GOPATH there.
protoc -I "$proto_dir" --go_out="$work/src" --go-grpc_out="$work/src" "$proto_dir/take5/v1/bot.proto"
cp "$here/main.go" "$work/src/take5arena/gobot/main.go"
cd "$work/src/take5arena/gobot"
GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOFLAGS= GOPROXY=off CGO_ENABLED=0 \
    go build -trimpath -ldflags='-s -w' -o "$here/take5-go-bot.tmp" .
mv "$here/take5-go-bot.tmp" "$here/take5-go-bot"
echo "build.sh: built $here/take5-go-bot" >&2

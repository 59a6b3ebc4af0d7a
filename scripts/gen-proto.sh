#!/usr/bin/env bash
# Regenerate the Python gRPC code from the protocol (proto/take5/v1/bot.proto) and refresh the copy
# the Node.js example bot ships with. The generated files are committed; tests/test_protocol.py fails
# when they are stale. Needs grpcio-tools (pip install "take5-arena[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m grpc_tools.protoc -Iproto --python_out=sdk --pyi_out=sdk --grpc_python_out=sdk proto/take5/v1/bot.proto
mkdir -p example_bots/node/proto/take5/v1
cp proto/take5/v1/bot.proto example_bots/node/proto/take5/v1/bot.proto
echo "generated sdk/take5/v1/bot_pb2.py, bot_pb2.pyi, bot_pb2_grpc.py; copied the .proto to example_bots/node/proto"

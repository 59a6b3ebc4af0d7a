#!/usr/bin/env bash
# Regenerate the Python gRPC code from the protocols and refresh the copy the Node.js example bot
# ships with. The generated files are committed; tests/test_protocol.py and
# tests/test_arena_service.py fail when they are stale. Needs grpcio-tools (pip install "take5-arena[test]").
#
# * proto/take5/v1/bot.proto (the bot protocol) -> sdk/take5/v1/bot_pb2*.py (the SDK's package)
# * proto/take5/arena/v1/arena.proto (the arena service) -> take5_arena/service/api/arena_pb2*.py, generated under
#   the import path take5_arena/service/api so that it never shadows the SDK's `take5` package.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m grpc_tools.protoc -Iproto --python_out=sdk --pyi_out=sdk --grpc_python_out=sdk proto/take5/v1/bot.proto
mkdir -p example_bots/node/proto/take5/v1
cp proto/take5/v1/bot.proto example_bots/node/proto/take5/v1/bot.proto
echo "generated sdk/take5/v1/bot_pb2.py, bot_pb2.pyi, bot_pb2_grpc.py; copied the .proto to example_bots/node/proto"
mkdir -p take5_arena/service/api
python3 -m grpc_tools.protoc -Itake5_arena/service/api=proto/take5/arena/v1 --python_out=. --pyi_out=. --grpc_python_out=. \
    proto/take5/arena/v1/arena.proto
echo "generated take5_arena/service/api/arena_pb2.py, arena_pb2.pyi, arena_pb2_grpc.py"

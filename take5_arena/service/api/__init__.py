"""Generated gRPC code of the arena service (proto/take5/arena/v1/arena.proto).

Do not edit: scripts/gen-proto.sh writes ``arena_pb2.py``, ``arena_pb2.pyi`` and ``arena_pb2_grpc.py``
from the .proto, which is the documented contract.
"""

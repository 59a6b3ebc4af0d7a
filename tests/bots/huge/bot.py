"""Answers PickCard with a 2 MB message (a valid PickCardResponse padded with an unknown field)."""

import os
import signal
import threading
from concurrent import futures

import grpc

from take5.v1 import bot_pb2

PAD = 2 * 1024 * 1024


def pick(request, context):
    view = bot_pb2.PickCardRequest.FromString(request).view
    card = bot_pb2.PickCardResponse(card=min(view.hand)).SerializeToString()
    # field 15, length-delimited: ignored by a decoder, but 2 MB on the wire
    size = PAD
    varint = bytearray()
    while size > 0x7F:
        varint.append((size & 0x7F) | 0x80)
        size >>= 7
    varint.append(size)
    return card + b"\x7a" + bytes(varint) + b"x" * PAD


handler = grpc.method_handlers_generic_handler(
    "take5.v1.Bot", {"PickCard": grpc.unary_unary_rpc_method_handler(pick)}
)
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((handler,))
server.add_insecure_port(os.environ["TAKE5_LISTEN"])
server.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
while not stop.wait(0.5):
    pass
server.stop(0)

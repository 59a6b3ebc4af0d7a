"""Answers PickCard and ChooseRow with bytes that do not decode as protobuf."""

import os
import signal
import threading
from concurrent import futures

import grpc

GARBAGE = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"  # a varint longer than 64 bits


def answer(request, context):
    return GARBAGE


handler = grpc.method_handlers_generic_handler(
    "take5.v1.Bot",
    {
        "PickCard": grpc.unary_unary_rpc_method_handler(answer),
        "ChooseRow": grpc.unary_unary_rpc_method_handler(answer),
    },
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

"""Claims protocol 2.0 in its handshake: the referee must refuse it before any game."""

import os
import signal
import threading
from concurrent import futures

import grpc

from take5.v1 import bot_pb2, bot_pb2_grpc


class Old(bot_pb2_grpc.BotServicer):
    def Handshake(self, request, context):
        return bot_pb2.HandshakeResponse(name="oldproto", version="9.9", protocol_version="2.0")

    def PickCard(self, request, context):
        return bot_pb2.PickCardResponse(card=min(request.view.hand))

    def ChooseRow(self, request, context):
        return bot_pb2.ChooseRowResponse(row=0)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
bot_pb2_grpc.add_BotServicer_to_server(Old(), server)
server.add_insecure_port(os.environ["TAKE5_LISTEN"])
server.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
while not stop.wait(0.5):
    pass
server.stop(0)

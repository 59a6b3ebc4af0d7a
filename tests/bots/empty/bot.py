"""Answers with valid but empty messages: no card, no row."""

import os
import signal
import threading
from concurrent import futures

import grpc

from take5.v1 import bot_pb2, bot_pb2_grpc


class Empty(bot_pb2_grpc.BotServicer):
    def PickCard(self, request, context):
        return bot_pb2.PickCardResponse()

    def ChooseRow(self, request, context):
        return bot_pb2.ChooseRowResponse()


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
bot_pb2_grpc.add_BotServicer_to_server(Empty(), server)
server.add_insecure_port(os.environ["TAKE5_LISTEN"])
server.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
while not stop.wait(0.5):
    pass
server.stop(0)

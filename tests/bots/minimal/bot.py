"""Written from the .proto with plain grpcio, implementing only the two required calls."""

import os
import signal
import threading
from concurrent import futures

import grpc

from take5.v1 import bot_pb2, bot_pb2_grpc


class Minimal(bot_pb2_grpc.BotServicer):
    # Handshake and GameOver are inherited: they answer UNIMPLEMENTED.
    def PickCard(self, request, context):
        view = request.view
        cards = view.pool if view.phase == bot_pb2.PHASE_DRAFT else view.hand
        return bot_pb2.PickCardResponse(card=max(cards))

    def ChooseRow(self, request, context):
        return bot_pb2.ChooseRowResponse(row=0)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
bot_pb2_grpc.add_BotServicer_to_server(Minimal(), server)
server.add_insecure_port(os.environ["TAKE5_LISTEN"])
server.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
while not stop.wait(0.5):
    pass
server.stop(0)

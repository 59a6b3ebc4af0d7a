"""A bot of protocol 1.0, before time banks and clocks: its messages are generated from the 1.0
bot.proto (bot_pb2.py here, not the SDK's), so the fields added since are unknown to it.

It says "1.0" in its handshake, plays its lowest card within the time_limit_ms it is given, and
leaves in TAKE5_TEST_SEEN (if set) one line per request: the call, time_limit_ms, and the numbers
of the fields it does not know (the referee's newer ones: proto3 keeps them as unknown fields),
so a test can see that it was given them and played on all the same.
"""

import os
import signal
import threading
from concurrent import futures

import bot_pb2
import bot_pb2_grpc
import grpc
from google.protobuf.unknown_fields import UnknownFieldSet


def _note(call, request):
    seen = os.environ.get("TAKE5_TEST_SEEN")
    if not seen:
        return
    unknown = sorted(field.field_number for field in UnknownFieldSet(request))
    with open(seen, "a") as file:
        file.write(f"{call} {request.time_limit_ms} {unknown}\n")


class Old(bot_pb2_grpc.BotServicer):
    def Handshake(self, request, context):
        _note("Handshake", request)
        return bot_pb2.HandshakeResponse(name="protocol10", version="1", protocol_version="1.0")

    def PickCard(self, request, context):
        _note("PickCard", request)
        view = request.view
        cards = view.pool if view.phase == bot_pb2.PHASE_DRAFT else view.hand
        return bot_pb2.PickCardResponse(card=min(cards))

    def ChooseRow(self, request, context):
        _note("ChooseRow", request)
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

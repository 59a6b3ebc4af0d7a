"""The protocol (proto/take5/v1/bot.proto): generated code is fresh, every field is documented, and
views survive the round trip through the messages unchanged."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

from take5 import Game, Phase, RandomPlayer, Settings
from take5.convert import (
    PROTOCOL_VERSION,
    GameOver,
    choose_row_request,
    game_over_from_request,
    game_over_request,
    parse_version,
    pick_card_request,
    pick_card_requests,
    view_from_request,
)
from take5.v1 import bot_pb2 as pb

PROTO = ROOT / "proto" / "take5" / "v1" / "bot.proto"
GENERATED = ROOT / "sdk" / "take5" / "v1"
NODE_COPY = ROOT / "example_bots" / "node" / "proto" / "take5" / "v1" / "bot.proto"

grpc_tools = pytest.importorskip(
    "grpc_tools", reason="grpcio-tools is needed to compile the .proto (pip install grpcio-tools)"
)


def protoc(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", *args, str(PROTO)],
        check=True,
        capture_output=True,
    )


def test_generated_code_matches_the_proto(tmp_path: Path) -> None:
    """The descriptor compiled into bot_pb2.py is the one the .proto gives now (else:
    scripts/gen-proto.sh)."""
    out = tmp_path / "bot.desc"
    protoc(f"--descriptor_set_out={out}")
    fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    committed = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(committed)
    for message in fresh.message_type:  # protoc adds derived JSON names to descriptor sets only
        for field in message.field:
            field.ClearField("json_name")
    assert committed == fresh, (
        "sdk/take5/v1/bot_pb2.py is stale: run scripts/gen-proto.sh and commit"
    )


def test_generated_files_are_what_protoc_writes(tmp_path: Path) -> None:
    """Byte for byte. The test extra pins grpcio-tools to the version that generated the committed
    files, so a mismatch is a failure (install `.[test]`, or regenerate with scripts/gen-proto.sh).
    """
    protoc(f"--python_out={tmp_path}", f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}")
    header = re.search(r"Protobuf Python Version: (\S+)", (GENERATED / "bot_pb2.py").read_text())
    fresh_header = re.search(
        r"Protobuf Python Version: (\S+)", (tmp_path / "take5/v1/bot_pb2.py").read_text()
    )
    if header is None or fresh_header is None or header.group(1) != fresh_header.group(1):
        pytest.fail(
            "the installed grpcio-tools writes protobuf "
            f"{fresh_header and fresh_header.group(1)}, the committed files "
            f"{header and header.group(1)}: pip install -e '.[test]' (pinned), or run "
            "scripts/gen-proto.sh and commit"
        )
    for name in ("bot_pb2.py", "bot_pb2.pyi", "bot_pb2_grpc.py"):
        assert (tmp_path / "take5" / "v1" / name).read_text() == (GENERATED / name).read_text(), (
            f"sdk/take5/v1/{name} is stale: run scripts/gen-proto.sh and commit"
        )


def test_node_bot_ships_the_same_proto() -> None:
    assert NODE_COPY.read_bytes() == PROTO.read_bytes(), (
        "run scripts/gen-proto.sh to refresh the Node bot's copy"
    )


_DECLARATION = re.compile(
    r"^\s*(?:(?:optional|repeated)\s+)?[A-Za-z_][\w.]*\s+\w+\s*=\s*\d+\s*;"  # a field
    r"|^\s*[A-Z][A-Z0-9_]*\s*=\s*\d+\s*;"  # an enum value
    r"|^\s*rpc\s"  # a method
    r"|^\s*(?:message|enum|service)\s"  # a type
)


def test_every_declaration_is_documented() -> None:
    """A bot in another language is written from the .proto alone: each declaration has a
    comment."""
    lines = PROTO.read_text().splitlines()
    undocumented = []
    for number, line in enumerate(lines):
        if not _DECLARATION.match(line):
            continue
        above = lines[number - 1].strip() if number else ""
        if not above.startswith("//") or above.startswith("// ----"):
            undocumented.append(f"line {number + 1}: {line.strip()}")
    assert undocumented == []


def test_protocol_version() -> None:
    assert PROTOCOL_VERSION == "1.1"
    assert parse_version("1.3") == (1, 3)
    assert parse_version("") == (1, 0)
    assert parse_version("2") == (2, 0)


def views_of_a_game(players: int, variant: str, seed: int):
    """Every view the engine gives during a game of random players."""
    game = Game(Settings(players=players, variant=variant), seed)
    bots = [RandomPlayer(seed * 10 + i) for i in range(players)]
    while not game.is_over:
        phase = game.phase
        yield [game.view(s) for s in game.waiting_for]
        if phase is Phase.PLAY:
            game.play([bots[s].pick_card(game.view(s)) for s in range(players)])
        elif phase is Phase.DRAFT:
            s = game.drafter
            game.draft(bots[s].draft_card(game.view(s)))
        else:
            s = game.waiting_for[0]
            game.choose_row(bots[s].choose_row(game.view(s)))


@settings(max_examples=12, deadline=None)
@given(
    variant=st.sampled_from(["standard", "professional"]),
    players=st.integers(min_value=2, max_value=6),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_views_survive_the_wire(variant: str, players: int, seed: int) -> None:
    """Every field the engine shows a seat (docs/rules.md 8) reaches the bot unchanged."""
    for views in views_of_a_game(players, variant, seed):
        if views[0].phase is Phase.PLAY:
            encoded = pick_card_requests(views, "g-1", 0.25)
            for view, raw in zip(views, encoded):
                request = pb.PickCardRequest.FromString(raw)
                assert request.game_id == "g-1" and request.time_limit_ms == 250
                assert view_from_request(request) == view
                assert request == pick_card_request(view, "g-1", 0.25)
        for view in views:
            if view.phase is Phase.CHOOSE_ROW:
                raw = choose_row_request(view, "g-1", 1.0).SerializeToString()
                request = pb.ChooseRowRequest.FromString(raw)
                assert request.card == view.card
                assert [(p.seat, p.card) for p in request.revealed] == list(view.revealed)
            else:
                raw = pick_card_request(view, "g-1", 1.0).SerializeToString()
                request = pb.PickCardRequest.FromString(raw)
            assert view_from_request(request) == view


def test_hidden_information_stays_hidden() -> None:
    """Standard game: a request carries the seat's own hand and no other (docs/rules.md 8)."""
    game = Game(Settings(players=4), 3)
    view = game.view(2)
    request = pick_card_request(view, "g", 1.0)
    assert list(request.view.hand) == list(game.hands[2])
    assert len(request.view.hands) == 0
    carried = set(request.view.hand) | {c for r in request.view.rows for c in r.cards}
    for other in (0, 1, 3):
        assert not carried & set(game.hands[other])


def test_game_over_round_trip() -> None:
    over = GameOver("m-g1", 1, Settings(players=3), (10, 5, 70), (2, 1, 3), (2,), 4, 1)
    back = game_over_from_request(
        pb.GameOverRequest.FromString(game_over_request(over, 1).SerializeToString())
    )
    assert back == over
    assert back.place == 1 and back.won and back.score == 5


def test_missing_answer_fields_are_detectable() -> None:
    """`optional` answer fields: an empty answer is a fault, not silently card 0 or row 0."""
    assert not pb.PickCardResponse().HasField("card")
    assert pb.ChooseRowResponse.FromString(
        pb.ChooseRowResponse(row=0).SerializeToString()
    ).HasField("row")

"""Golden files: what must never change without a new record version (docs/record-format.md).

- tests/golden/splitmix64.json: generator outputs for a few seeds (seed 0 and 1234567 are the
  published SplitMix64 reference values), numbers drawn below n, and shuffles;
- tests/golden/deals.json: the decks of the first two rounds of a few seeds, and round 1 as dealt
  to the seats for some player counts and rotations;
- tests/golden/records/*.json: one committed record per variant and end rule (and a forfeit, a
  game cut off in the middle, a rotated ten-player game). They must verify forever, and the engine
  must still write them byte for byte from the same seeds.

A change to the shuffle, the deal or the engine breaks these tests, instead of silently making every
stored record stop verifying. Regenerate only with a new record version:
``python3 tests/test_golden.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from take5 import Game, RandomPlayer, Settings, play_game
from take5.audit import SplitMix64 as AuditSplitMix64
from take5.audit import audit_record
from take5.game import Fault, Phase
from take5.record import load_record, replay_record, verify_record
from take5.shuffle import SplitMix64

GOLDEN = Path(__file__).resolve().parent / "golden"
SEEDS = [0, 1, 7, 1234567, 2**63 - 1, 2**64 - 1, -1]


def splitmix_vectors() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for seed in SEEDS:
        rng = SplitMix64(seed)
        outputs = [rng.next_u64() for _ in range(6)]
        below = [rng.below(n) for n in (1, 2, 3, 10, 104, 2**63 + 1)]
        shuffle = rng.shuffled(list(range(10)))
        out[str(seed)] = {
            "next_u64": outputs,
            "below(1,2,3,10,104,2**63+1)": below,
            "shuffled(0..9)": shuffle,
        }
    return out


def deal_vectors() -> dict[str, Any]:
    decks = {}
    for seed in SEEDS:
        rng = SplitMix64(seed)
        decks[str(seed)] = [rng.shuffled(list(range(1, 105))) for _ in range(2)]
    tables = []
    for seed, players, rotation in [(0, 2, 0), (7, 4, 1), (42, 10, 9), (2**64 - 1, 5, 3)]:
        game = Game(Settings(players=players), seed, rotation=rotation)
        first = game.round_log[0]
        tables.append(
            {
                "seed": seed,
                "players": players,
                "rotation": rotation,
                "hands": first["hands"],
                "rows": first["rows"],
            }
        )
    return {"decks (rounds 1 and 2)": decks, "round 1": tables}


def _cut(game: Game, turns: int) -> None:
    players = [RandomPlayer(90 + i) for i in range(game.settings.players)]
    for _ in range(turns):
        game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        while game.phase is Phase.CHOOSE_ROW:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))


def golden_records() -> dict[str, dict[str, Any]]:
    """The committed records, made again from their seeds."""
    specs = {
        "standard-at-or-above": (Settings(4, "standard", 66, "at-or-above"), 101, 0),
        "standard-above": (Settings(3, "standard", 30, "above"), 102, 2),
        "professional-at-or-above": (Settings(4, "professional", 30, "at-or-above"), 103, 1),
        "professional-above": (Settings(2, "professional", 20, "above"), 104, 1),
        "standard-10-players": (Settings(10, "standard", 25, "at-or-above"), 105, 7),
    }
    records = {}
    for name, (settings, seed, rotation) in specs.items():
        players = [RandomPlayer(seed * 10 + i) for i in range(settings.players)]
        game = play_game(players, settings, seed, rotation=rotation)
        seats = [
            {"name": f"random-{i + 1}", "version": "1", "author": "take5 arena"}
            for i in range(settings.players)
        ]
        records[name] = game.record(game_id=name, seats=seats)
    # A seat that crashed in round 2 and forfeited: the default moves played on for it.
    game = Game(Settings(3, "standard", 40), 106)
    _cut(game, 13)
    game.faults.append(Fault(1, game.round, game.turn, "crash", "the bot exited with status 1"))
    game.forfeit(1)
    _cut(game, 7)
    players = [RandomPlayer(5 + i) for i in range(3)]
    while not game.is_over:
        game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        while game.phase is Phase.CHOOSE_ROW:
            game.choose_row(0)
    records["forfeit"] = game.record(
        game_id="forfeit", seats=[{"name": n} for n in ("a", "b", "c")]
    )
    # A game cut off half-way through round 2 (complete: false).
    game = Game(Settings(4, "standard", 66), 107)
    _cut(game, 15)
    records["cut-off"] = game.record(
        game_id="cut-off", seats=[{"name": n} for n in ("a", "b", "c", "d")]
    )
    return records


def _text(doc: Any) -> str:
    return json.dumps(doc, indent=1) + "\n"


def test_splitmix64_reference_values():
    # Published SplitMix64 outputs (the reference C implementation): seed 0, and seed 1234567.
    assert SplitMix64(0).next_u64() == 0xE220A8397B1DCDAF
    rng = SplitMix64(1234567)
    assert [rng.next_u64() for _ in range(5)] == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def test_splitmix64_golden():
    golden = json.loads((GOLDEN / "splitmix64.json").read_text())
    assert golden == json.loads(json.dumps(splitmix_vectors()))
    for seed, vectors in golden.items():  # the independent checker's generator agrees
        rng = AuditSplitMix64(int(seed))
        assert [rng.next() for _ in range(6)] == vectors["next_u64"]


def test_deals_golden():
    golden = json.loads((GOLDEN / "deals.json").read_text())
    assert golden == json.loads(json.dumps(deal_vectors()))
    for seed, decks in golden["decks (rounds 1 and 2)"].items():
        rng = AuditSplitMix64(int(seed))
        assert [rng.shuffle(range(1, 105)) for _ in range(2)] == decks


RECORDS = sorted(p.stem for p in (GOLDEN / "records").glob("*.json"))


def test_every_variant_and_end_rule_is_pinned():
    kinds = {
        (
            load_record(GOLDEN / "records" / f"{name}.json")["settings"]["variant"],
            load_record(GOLDEN / "records" / f"{name}.json")["settings"]["end_rule"],
        )
        for name in RECORDS
    }
    assert kinds == {(v, e) for v in ("standard", "professional") for e in ("at-or-above", "above")}
    assert {"forfeit", "cut-off"} <= set(RECORDS)


@pytest.mark.parametrize("name", RECORDS)
def test_golden_record_verifies(name):
    doc = load_record(GOLDEN / "records" / f"{name}.json")
    assert replay_record(doc) is None
    assert audit_record(doc) is None
    assert verify_record(doc) is None


@pytest.mark.parametrize("name", RECORDS)
def test_engine_still_writes_the_golden_record(name):
    path = GOLDEN / "records" / f"{name}.json"
    assert _text(golden_records()[name]) == path.read_text(), (
        f"the engine no longer writes {path.name}"
    )


def write() -> None:
    (GOLDEN / "records").mkdir(parents=True, exist_ok=True)
    (GOLDEN / "splitmix64.json").write_text(_text(splitmix_vectors()))
    (GOLDEN / "deals.json").write_text(_text(deal_vectors()))
    for name, doc in golden_records().items():
        (GOLDEN / "records" / f"{name}.json").write_text(_text(doc))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(
            "usage: python3 tests/test_golden.py --write   (only together with a new record "
            "version)"
        )
    write()

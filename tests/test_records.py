"""Records: play, write, verify; tampering and malformed files are caught."""

from __future__ import annotations

import copy
import json

import pytest

from take5 import RandomPlayer, Settings, play_game
from take5.record import MalformedRecord, load_record, verify_record


def record_of(players=4, seed=7, variant="standard", **kw):
    settings = Settings(players=players, variant=variant, **kw)
    game = play_game([RandomPlayer(seed * 10 + i) for i in range(players)], settings, seed)
    return json.loads(json.dumps(game.record(game_id="g1")))


@pytest.mark.parametrize(
    "variant,players",
    [("standard", 2), ("standard", 4), ("standard", 10), ("professional", 3), ("professional", 6)],
)
def test_played_records_verify_clean(variant, players):
    assert verify_record(record_of(players, variant=variant)) is None


def test_record_holds_what_the_format_promises():
    doc = record_of(4, variant="professional")
    assert doc["format"] == "take5-record" and doc["version"] == 1
    assert set(doc) >= {"settings", "seed", "rotation", "seats", "rounds", "result", "faults"}
    rnd = doc["rounds"][0]
    assert len(rnd["draft"]["picks"]) == 40
    assert set(rnd) >= {"hands", "rows", "turns", "points", "scores"}
    assert doc["faults"] == [[], [], [], []]


def test_changed_card_is_caught_at_its_turn():
    doc = record_of()
    bad = copy.deepcopy(doc)
    turn = bad["rounds"][1]["turns"][4]
    seat, _card = turn["plays"][2]
    other = next(c for c in range(1, 105) if c not in bad["rounds"][1]["hands"][seat])
    turn["plays"][2][1] = other
    divergence = verify_record(bad)
    assert divergence is not None
    assert (divergence.round, divergence.turn, divergence.card) == (2, 5, other)


def test_swapped_card_from_own_hand_is_caught_at_its_turn():
    doc = record_of(seed=3)
    bad = copy.deepcopy(doc)
    # Swap the cards seat 0 played in turns 1 and 2 of round 1: both legal, but the turns change.
    t1, t2 = bad["rounds"][0]["turns"][0], bad["rounds"][0]["turns"][1]
    t1["plays"][0][1], t2["plays"][0][1] = t2["plays"][0][1], t1["plays"][0][1]
    divergence = verify_record(bad)
    assert divergence is not None and divergence.round == 1 and divergence.turn == 1


def test_changed_score_is_caught():
    bad = record_of()
    bad["rounds"][0]["scores"][2] += 1
    divergence = verify_record(bad)
    assert divergence.round == 1 and "scores" in divergence.what
    assert divergence.expected[2] + 1 == divergence.recorded[2]


def test_changed_final_standing_is_caught():
    bad = record_of()
    bad["result"]["places"] = list(reversed(bad["result"]["places"]))
    assert "places" in verify_record(bad).what


def test_changed_seed_is_caught():
    bad = record_of()
    bad["seed"] += 1
    assert "hand at the start" in verify_record(bad).what


def test_malformed_records_get_clear_errors(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(MalformedRecord, match="not JSON"):
        load_record(path)
    path.write_text(json.dumps({"format": "take5-record", "version": 99}))
    with pytest.raises(MalformedRecord, match="version 99"):
        load_record(path)
    doc = record_of()
    del doc["rounds"][0]["turns"][0]["plays"]
    with pytest.raises(MalformedRecord, match="round 1, turn 1: no 'plays'"):
        verify_record(doc)
    doc = record_of()
    doc["settings"]["players"] = 42
    with pytest.raises(MalformedRecord, match="settings: players must be from 2 to 10, not 42"):
        verify_record(doc)


def test_cli_play_writes_a_record_that_verifies(tmp_path, referee_cli):
    path = tmp_path / "game.json"
    result = referee_cli(["play", "--players", "4", "--seed", "7", "--record", str(path)])
    assert result.exit_code == 0, result.output
    assert (
        "Round 1" in result.output
        and "Final standing" in result.output
        and "takes row" in result.output
    )
    result = referee_cli(["verify", str(path)])
    assert result.exit_code == 0 and "ok" in result.output


def test_cli_play_professional_and_threshold(tmp_path, referee_cli):
    result = referee_cli(["play", "-n", "3", "--variant", "professional", "--threshold", "10"])
    assert result.exit_code == 0, result.output
    assert "open draft" in result.output


def test_cli_play_rejects_bad_settings(referee_cli):
    result = referee_cli(["play", "--players", "11"])
    assert result.exit_code == 2 and "2 to 10 players" in result.output


def test_cli_verify_exit_codes(tmp_path, referee_cli):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record_of()))
    bad_doc = record_of()
    bad_doc["rounds"][0]["points"][0] += 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_doc))
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\x00\x01")
    assert referee_cli(["verify", str(good)]).exit_code == 0
    result = referee_cli(["verify", str(good), str(bad), str(junk)])
    assert result.exit_code == 1
    assert "INVALID: round 1" in result.output and "MALFORMED" in result.output
    assert "Traceback" not in result.output
    assert referee_cli(["verify", str(tmp_path)]).exit_code == 1  # a folder of records


def test_cli_verify_checks_a_tournament_store(tmp_path, referee_cli):
    from pathlib import Path

    bots = Path(__file__).resolve().parent.parent / "example_bots"
    tournament = tmp_path / "t"
    for name in ("random", "lowest"):
        result = referee_cli(
            [
                "submit",
                str(bots / name),
                "--name",
                name,
                "-t",
                str(tournament),
                "--sandbox",
                "local",
            ],
        )
        assert result.exit_code == 0, result.output
    result = referee_cli(
        [
            "tournament",
            "run",
            "-t",
            str(tournament),
            "--players",
            "2",
            "--games",
            "2",
            "--sandbox",
            "local",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    result = referee_cli(["verify", "--tournament", str(tournament)])
    assert result.exit_code == 0, result.output
    assert "2 of 2 records valid" in result.output
    # Swap the two seats' names in one stored record: consistent on its own, but not what was
    # seated.
    import sqlite3

    db = sqlite3.connect(tournament / "tournament.sqlite")
    game_id, text = db.execute(
        "SELECT game_id, record FROM results ORDER BY seq LIMIT 1"
    ).fetchone()
    doc = json.loads(text)
    doc["seats"][0]["name"], doc["seats"][1]["name"] = (
        doc["seats"][1]["name"],
        doc["seats"][0]["name"],
    )
    db.execute("UPDATE results SET record = ? WHERE game_id = ?", (json.dumps(doc), game_id))
    db.execute(
        "INSERT INTO results(game_id, record, finished_at) SELECT game_id || 'x', ?, finished_at "
        "FROM results WHERE game_id = ?",
        ("[" * 50_000 + "]" * 50_000, game_id),
    )
    db.commit()
    db.close()
    result = referee_cli(["verify", "--tournament", str(tournament)])
    assert result.exit_code == 1, result.output
    assert f"{game_id}: INVALID: seat 0: the record says name" in result.output
    assert "nested too deeply" in result.output and "1 of 3 records valid" in result.output


def test_a_game_without_its_record_plays_the_same_and_refuses_to_give_one():
    from take5 import Take5Error

    settings = Settings(players=5, variant="professional", threshold=30)
    kept = play_game([RandomPlayer(i) for i in range(5)], settings, 9)
    bare = play_game([RandomPlayer(i) for i in range(5)], settings, 9, keep_record=False)
    assert bare.scores == kept.scores and bare.round == kept.round and bare.is_over
    with pytest.raises(Take5Error, match="without its record"):
        bare.record()


def test_cli_verify_a_damaged_store_is_the_hosts_fault(tmp_path, referee_cli):
    """A file that is not a database where the store should be: one line and exit 4 (the host's
    fault, docs/organisers/command-line.md), the way back named (restore the last backup)."""
    (tmp_path / "tournament.sqlite").write_text("not a database")
    result = referee_cli(["verify", "--tournament", str(tmp_path)])
    assert result.exit_code == 4, result.output
    assert "referee restore" in result.output and len(result.output.strip().splitlines()) == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)


FLOOD_BOT = """\
import sys
from take5 import Bot, run


class Flood(Bot):
    name = "flood"

    def pick_card(self, view):
        sys.stderr.write(("y" * 100 + "\\n") * 100)  # 10 KB a turn, every turn
        sys.stderr.flush()
        return min(view.hand)


if __name__ == "__main__":
    run(Flood())
"""


def test_match_records_keep_a_bounded_total_of_a_flooding_bots_output(tmp_path):
    """`referee match --records`: a bot that writes 10 KB every turn keeps at most its output
    budget in the records of all the games together, the last kept text says it was cut, and the
    records stay valid."""
    from support import EXAMPLES, referee

    bot = tmp_path / "flood"
    bot.mkdir()
    (bot / "bot.py").write_text(FLOOD_BOT)
    records = tmp_path / "rec"
    budget = 30_000
    done = referee(
        "match",
        str(bot),
        str(EXAMPLES / "random"),
        "--games",
        "3",
        "--records",
        str(records),
        "--output-budget",
        str(budget),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    kept, marks = 0, 0
    for path in sorted(records.glob("*.json")):
        record = json.loads(path.read_text())
        verify_record(record)
        for rnd in record["rounds"]:
            for turn in rnd["turns"]:
                for _seat, text in turn.get("logs", []):
                    kept += len(text.encode("utf-8"))
                    marks += "output budget of this match is spent" in text
    assert budget - 2_000 < kept <= budget and marks == 1, (kept, marks)

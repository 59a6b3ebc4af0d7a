"""Edits a hostile organiser or a careless user could make to a record, and inputs that must not
crash.

Each edit must be caught by `referee verify`, by the independent checker alone (take5.audit), with a
message naming where: round, turn, seat. Each bad input gets a one-line reason and the documented
exit code (0 ok, 1 a record is invalid, 2 bad usage), never a traceback.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from take5 import Game, RandomPlayer, Settings, play_game
from take5.audit import audit_record
from take5.game import Fault
from take5.record import MalformedRecord, replay_record, verify_record


def record_of(players=4, seed=7, variant="standard", forfeit=None, **kw):
    game = play_game(
        [RandomPlayer(seed * 10 + i) for i in range(players)],
        Settings(players=players, variant=variant, **kw),
        seed,
    )
    if forfeit is not None:
        game.faults.append(Fault(forfeit, 1, 3, "crash", "the bot exited with status 1"))
        game.forfeit(forfeit)
    seats = [
        {"name": f"bot{i}", "version": "1.0", "author": "someone", "digest": f"sha256:{i:064x}"}
        for i in range(players)
    ]
    return json.loads(json.dumps(game.record(game_id="g1", seats=seats)))


def both(doc):
    """The engine replay and the independent checker, each alone: (replay, audit)."""
    return replay_record(doc), audit_record(doc)


def test_clean_records_pass_both_checkers():
    for doc in (record_of(), record_of(3, variant="professional"), record_of(forfeit=2)):
        assert both(doc) == (None, None)


def test_finished_game_marked_incomplete():
    doc = record_of()
    doc["complete"] = False
    replay, audit = both(doc)
    assert audit is not None and "complete: false" in str(audit)
    assert audit.round == len(doc["rounds"])
    assert replay is not None and str(audit).startswith(f"round {len(doc['rounds'])}")


def test_incomplete_record_of_an_unfinished_game_is_valid():
    game = Game(Settings(players=3), 5)
    players = [RandomPlayer(i) for i in range(3)]
    for _ in range(14):  # one round and four turns
        game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        while game.waiting_for and game.phase.value == "choose-row":
            game.choose_row(0)
    doc = json.loads(json.dumps(game.record()))
    assert doc["complete"] is False
    assert both(doc) == (None, None)
    doc["complete"] = True
    with pytest.raises(MalformedRecord, match="round 2: no 'points'"):
        audit_record(doc)


def test_forfeit_without_a_fault_is_caught_by_the_checker_alone():
    doc = record_of()
    winner = doc["result"]["standing"][0][0]
    doc["result"]["forfeited"] = [winner]
    # Re-rank so the result is consistent with the forfeit: only the missing fault is wrong.
    others = [s for s in range(4) if s != winner]
    scores = doc["result"]["scores"]
    keys = {s: (s == winner, scores[s]) for s in range(4)}
    doc["result"]["places"] = [1 + sum(1 for o in range(4) if keys[o] < keys[s]) for s in range(4)]
    groups: dict[int, list[int]] = {}
    for s in range(4):
        groups.setdefault(doc["result"]["places"][s], []).append(s)
    doc["result"]["standing"] = [groups[p] for p in sorted(groups)]
    assert others
    replay, audit = both(doc)
    assert replay is None  # the engine takes forfeits on trust
    assert audit is not None and audit.seat == winner
    assert f"seat {winner}: the seat forfeited, but no fault is recorded" in str(audit)
    assert "INVALID" in str(_judge(doc))


def test_a_crash_without_a_forfeit_is_caught():
    doc = record_of(forfeit=1)
    doc["result"]["forfeited"] = []
    audit = audit_record(doc)
    assert audit is not None and audit.seat == 1 and (audit.round, audit.turn) == (1, 3)
    assert "round 1, turn 3, seat 1: a crash fault forfeits" in str(audit)


def test_deleted_seat_entry():
    doc = record_of()
    del doc["seats"][2]
    with pytest.raises(
        MalformedRecord, match="seats: the seats of a 4-player game must hold 4 entries, not 3"
    ):
        audit_record(doc)
    with pytest.raises(MalformedRecord):
        verify_record(doc)


def test_swapped_seat_names_are_caught_against_the_tournament_store(tmp_path):
    from take5_arena.referee.store.verify import seat_binding

    doc = record_of(2)
    seated = [
        {"name": "bot0", "entrant": "bot0@1", "version": 1},
        {"name": "bot1", "entrant": "bot1@1", "version": 1},
    ]
    for seat, want in enumerate(seated):
        doc["seats"][seat].update(want)
    assert seat_binding(doc, seated) is None
    doc["seats"][0]["name"], doc["seats"][1]["name"] = (
        doc["seats"][1]["name"],
        doc["seats"][0]["name"],
    )
    assert (
        seat_binding(doc, seated)
        == 'seat 0: the record says name "bot1", the schedule seated "bot0"'
    )
    doc["seats"][0]["name"], doc["seats"][1]["name"] = (
        doc["seats"][1]["name"],
        doc["seats"][0]["name"],
    )
    doc["seats"][0], doc["seats"][1] = doc["seats"][1], doc["seats"][0]  # whole entries swapped
    assert seat_binding(doc, seated).startswith('seat 0: the record says name "bot1"')


def test_seats_name_what_played_them():
    seat = record_of()["seats"][1]
    assert set(seat) >= {"name", "version", "author"}


def test_professional_record_relabelled_standard_names_the_place():
    doc = record_of(3, variant="professional")
    doc["settings"]["variant"] = "standard"
    with pytest.raises(
        MalformedRecord, match=r"^round 1: the round has a draft, but the game is standard"
    ):
        verify_record(doc)
    doc = record_of(3)
    doc["settings"]["variant"] = "professional"
    with pytest.raises(MalformedRecord, match=r"^round 1: the round has no draft"):
        verify_record(doc)


@pytest.mark.parametrize("value", [23.0, True, "23", None, [23]])
def test_card_of_the_wrong_type_names_the_place(value):
    doc = record_of()
    doc["rounds"][1]["turns"][3]["plays"][2][1] = value
    with pytest.raises(
        MalformedRecord, match=r"^round 2, turn 4: the card of a play must be a whole number"
    ):
        verify_record(doc)


def test_seat_true_and_huge_rotation_are_refused():
    doc = record_of()
    doc["rounds"][0]["turns"][0]["plays"][1][0] = True
    with pytest.raises(
        MalformedRecord,
        match="round 1, turn 1: the seat of a play must be a whole number, not true",
    ):
        verify_record(doc)
    doc = record_of()
    doc["rotation"] = 10**30
    with pytest.raises(MalformedRecord, match="the rotation must be from 0 to 3"):
        verify_record(doc)
    doc = record_of()
    doc["rotation"] = 4
    with pytest.raises(MalformedRecord, match="rotation"):
        verify_record(doc)


def test_changed_play_is_caught_by_the_checker_alone_with_its_seat():
    doc = record_of()
    turn = doc["rounds"][1]["turns"][4]
    other = next(c for c in range(1, 105) if c not in doc["rounds"][1]["hands"][2])
    turn["plays"][2][1] = other
    audit = audit_record(doc)
    assert (audit.round, audit.turn, audit.seat, audit.card) == (2, 5, 2, other)
    assert str(audit).startswith(
        f"round 2, turn 5, seat 2, card {other}: the seat does not hold this card"
    )


def test_changed_take_row_and_score_are_caught_by_the_checker_alone():
    doc = record_of(seed=11)
    rnd, t, take = next(
        (r, t, take)
        for r in doc["rounds"]
        for t in r["turns"]
        for take in t["takes"]
        if take["reason"] == "low-card"
    )
    bad = copy.deepcopy(doc)
    index = doc["rounds"].index(rnd)
    bad_take = next(
        tk
        for tk in bad["rounds"][index]["turns"][t["turn"] - 1]["takes"]
        if tk["card"] == take["card"]
    )
    bad_take["row"] = (take["row"] + 1) % 4
    assert audit_record(bad).round == rnd["round"] and audit_record(bad).turn == t["turn"]
    bad = copy.deepcopy(doc)
    bad["rounds"][0]["points"][1] += 1
    assert "points" in audit_record(bad).what and audit_record(bad).seat == 1
    bad = copy.deepcopy(doc)
    bad["result"]["scores"][3] -= 1
    assert audit_record(bad).what == "final scores" and audit_record(bad).seat == 3


def test_dropped_and_extra_rounds_are_caught_by_the_checker_alone():
    doc = record_of()
    bad = copy.deepcopy(doc)
    bad["rounds"].pop()
    assert "ends before" in audit_record(bad).what
    bad = copy.deepcopy(doc)
    bad["rounds"].append(copy.deepcopy(bad["rounds"][-1]))
    assert "after the game ended" in audit_record(bad).what


def test_deal_and_draft_edits_are_caught_by_the_checker_alone():
    doc = record_of()
    bad = copy.deepcopy(doc)
    bad["seed"] += 1
    assert audit_record(bad).what == "hand at the start of play" and audit_record(bad).seat == 0
    doc = record_of(3, variant="professional")
    bad = copy.deepcopy(doc)
    picks = bad["rounds"][0]["draft"]["picks"]
    picks[0][1], picks[1][1] = picks[1][1], picks[0][1]
    assert audit_record(bad).what == "hand at the start of play"
    bad = copy.deepcopy(doc)
    picks = bad["rounds"][0]["draft"]["picks"]
    picks[0][0] = (picks[0][0] + 1) % 3
    assert audit_record(bad).what == "drafting seat" and audit_record(bad).turn == 0


def _judge(doc):
    from take5.record import judge

    return judge(doc)


# -- inputs through the command line ------------------------------------------------------------


def run_cli(*args, cwd=None):
    env = dict(os.environ)
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def test_deeply_nested_json_does_not_stop_a_folder_run(tmp_path):
    (tmp_path / "a_deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "b_seed.json").write_text(
        '{"format": "take5-record", "version": 1, "seed": ' + "7" * 5000 + "}"
    )
    (tmp_path / "c_good.json").write_text(json.dumps(record_of()))
    result = run_cli("verify", str(tmp_path))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert "a_deep.json: MALFORMED: " in out and "nested too deeply" in out
    assert "b_seed.json: MALFORMED: " in out
    assert "c_good.json: ok" in out and "1 of 3 records valid" in out
    assert all(len(line) < 400 for line in out.splitlines())


def test_cli_verify_messages_for_each_edit(tmp_path, referee_cli):
    edits = {
        "incomplete": lambda d: d.__setitem__("complete", False),
        "seat_deleted": lambda d: d["seats"].pop(),
        "float_card": lambda d: d["rounds"][0]["turns"][0]["plays"][0].__setitem__(1, 23.0),
        "seat_true": lambda d: d["rounds"][0]["turns"][0]["plays"][1].__setitem__(0, True),
        "rotation": lambda d: d.__setitem__("rotation", 10**30),
    }
    for name, edit in edits.items():
        doc = record_of()
        edit(doc)
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    result = referee_cli(["verify", str(tmp_path)])
    assert (result.exit_code == 1 and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    lines = dict(line.split(": ", 1) for line in result.output.splitlines() if ": " in line)
    assert lines[str(tmp_path / "incomplete.json")].startswith("INVALID: round")
    assert "MALFORMED: seats:" in lines[str(tmp_path / "seat_deleted.json")]
    assert "MALFORMED: round 1, turn 1:" in lines[str(tmp_path / "float_card.json")]
    assert "MALFORMED: round 1, turn 1:" in lines[str(tmp_path / "seat_true.json")]
    assert "rotation" in lines[str(tmp_path / "rotation.json")]
    assert "0 of 5 records valid" in result.output


@pytest.mark.parametrize(
    "args,message",
    [
        (["--threshold", "1000000000"], "is not in the range 1<=x<=1000"),
        (["--threshold", "0"], "is not in the range 1<=x<=1000"),
        (["--seed", "9" * 5000], "is not a 64-bit whole number"),
        (["--seed", str(2**64)], "is not a 64-bit whole number"),
        (["--seed", str(-(2**63) - 1)], "is not a 64-bit whole number"),
        (["--seed", "--5"], "is not a 64-bit whole number"),
    ],
)
def test_cli_play_refuses_bad_values(args, message, referee_cli):
    result = referee_cli(["play", *args])
    assert result.exit_code == 2 and message in result.output
    assert len(result.output) < 1000


def test_cli_play_checks_the_record_path_before_playing(tmp_path, referee_cli):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for path, message in [
        (blocker / "sub" / "game.json", "is not a folder"),
        (Path("/proc/take5-test/game.json"), "cannot"),
        (Path("/proc/game.json"), "cannot write the record"),
        (tmp_path, "directory"),
    ]:
        result = referee_cli(["play", "--record", str(path)])
        assert result.exit_code == 2, (path, result.output)
        assert message in result.output and "Round 1" not in result.output  # refused before playing
        assert "Traceback" not in result.output


def test_cli_play_keeps_an_existing_record_until_the_new_one_is_written(tmp_path, referee_cli):
    path = tmp_path / "game.json"
    path.write_text("old")
    result = referee_cli(["play", "-q", "--record", str(path)])
    assert result.exit_code == 0
    assert json.loads(path.read_text())["format"] == "take5-record"
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary file left


def test_threshold_and_rounds_are_bounded():
    from take5 import MAX_ROUNDS, MAX_THRESHOLD, InvalidSettings, audit, rules
    from take5 import game as engine_module

    # The checker restates the documents on purpose; the engine must say the same.
    assert (audit.MAX_THRESHOLD, audit.MAX_ROUNDS) == (MAX_THRESHOLD, MAX_ROUNDS)
    assert (audit.MIN_SEED, audit.MAX_SEED) == (rules.MIN_SEED, rules.MAX_SEED)
    assert (audit.FORMAT, audit.VERSION) == (
        engine_module.RECORD_FORMAT,
        engine_module.RECORD_VERSION,
    )
    assert {v.value: top for v, top in engine_module.MAX_PLAYERS.items()} == audit.MAX_PLAYERS
    assert [audit.heads(c) for c in range(1, 105)] == list(rules.BULL_HEADS[1:])
    with pytest.raises(InvalidSettings, match="from 1 to 1000"):
        Settings(threshold=MAX_THRESHOLD + 1)
    with pytest.raises(InvalidSettings):
        Settings(threshold=True)
    # The hard cap on rounds: a game stops after MAX_ROUNDS rounds whatever the scores.
    import take5.game as engine

    original = engine.MAX_ROUNDS
    engine.MAX_ROUNDS = audit.MAX_ROUNDS = 2
    try:
        game = play_game(
            [RandomPlayer(i) for i in range(2)], Settings(players=2, threshold=MAX_THRESHOLD), 1
        )
        doc = json.loads(json.dumps(game.record()))
        assert both(doc) == (None, None)  # both checkers apply the cap
    finally:
        engine.MAX_ROUNDS = audit.MAX_ROUNDS = original
    assert game.is_over and game.round == 2 and max(game.scores) < MAX_THRESHOLD
    assert "ends before" in audit_record(doc).what  # without the cap, the game would go on


def test_the_independent_checker_shares_no_code_with_the_engine():
    import ast

    import take5.audit

    tree = ast.parse(Path(take5.audit.__file__).read_text())
    imported = [
        (node.module, [a.name for a in node.names])
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    ]
    imported += [
        (a.name, []) for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
    ]
    ours = ("take5", "rules", "game", "shuffle", "record")
    take5_imports = [(m, names) for m, names in imported if m and m.startswith(ours)]
    assert take5_imports == [("rules", ["Take5Error"])]  # the error base class, nothing else


def test_turn_logs_are_ignored_whatever_they_hold():
    doc = record_of()
    doc["rounds"][0]["turns"][0]["logs"] = [[0, "thinking..."], [1, "\x1b[31mred"]]
    doc["rounds"][1]["turns"][2]["logs"] = {"not": ["the", "documented", "shape"]}
    assert both(doc) == (None, None)


def test_cli_verify_names_missing_files_and_skips_folders_named_json(tmp_path, referee_cli):
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "good.json").write_text(json.dumps(record_of()))
    result = referee_cli(["verify", str(tmp_path), str(tmp_path / "missing.json")])
    # bad input, as for every command (docs/organisers/command-line.md)
    assert result.exit_code == 2
    assert "missing.json' does not exist" in result.output
    result = referee_cli(["verify", str(tmp_path)])
    assert result.exit_code == 0
    assert "folder.json" not in result.output and "1 of 1 records valid" in result.output


def test_cli_verify_shows_control_characters_in_file_names_escaped(tmp_path, referee_cli):
    (tmp_path / "evil\x1b[2Jname.json").write_text("{}")
    result = referee_cli(["verify", str(tmp_path)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "evil\\x1b[2Jname.json: MALFORMED" in result.output


@pytest.mark.parametrize("seed", [-1, -(2**63), 2**64 - 1])
def test_cli_play_takes_every_seed_a_record_may_hold(tmp_path, referee_cli, seed):
    """A record's seed may be negative (docs/record-format.md): --seed takes it, and the game it
    plays is the record's (verify replays it)."""
    path = tmp_path / "game.json"
    result = referee_cli(["play", "--seed", str(seed), "--record", str(path), "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text())["seed"] == seed
    assert referee_cli(["verify", str(path)]).exit_code == 0

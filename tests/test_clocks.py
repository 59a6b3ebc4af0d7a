"""Time controls and clocks (docs/faults.md, "Time controls and clocks"): banks, increments and
caps, what a bot is told about its time, old bots that ignore it, and the CPU clock against the
wall clock for bots that sleep or spin.

No assertion here depends on how fast the host is: the bank tests run in memory with the CPU time
of each call given (`in_memory(costs=...)`), and the process tests use bots whose outcome is the
same at any load (a sleep of 1.2 s is over a 0.5 s wall-clock limit and costs no CPU time; a bot
that spins without end goes over any limit).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT, TEST_BOTS

from take5 import Bot, View
from take5.bots import LowestBot
from take5.clock import Bank, ClockKind, TimeControl, TimeControlError
from take5.record import load_record, verify_record
from take5_arena.referee.match import CallLimits, Match, MatchConfig, in_memory
from take5_arena.referee.match.faults import FaultKind


def costing(seconds: float):
    """A call cost: each PickCard of the bot is said to use `seconds` of CPU time (its other calls
    none)."""
    return lambda method, game_id: seconds if method == "PickCard" else 0.0


def play_in_memory(bots, costs, calls: CallLimits, games: int = 1):
    refs, launcher = in_memory(bots, costs=costs)
    with Match(refs, MatchConfig(games=games, calls=calls), launcher=launcher) as match:
        return match.play()


# -- the arithmetic -------------------------------------------------------------------------------


def test_time_control_text_and_bank_arithmetic() -> None:
    control = TimeControl.parse("30+0.5")
    assert (control.bank, control.increment, control.cap) == (30.0, 0.5, None)
    assert control.spec == "30+0.5"
    bank = Bank(control)
    assert (bank.available_ms, bank.limit_ms) == (30_500, 30_500)
    assert bank.charge(10_000) == 20_500  # what a decision leaves stays
    assert bank.charge(0) == 21_000
    assert bank.over(21_501) and not bank.over(21_500)
    assert bank.charge(99_999) == 0  # never below 0


def test_a_cap_bounds_each_decision_and_what_the_bank_keeps() -> None:
    bank = TimeControl(2.0, 0.5, cap=1.0).start()
    assert bank.limit_ms == 1000  # 2.5 s available, 1 s cap
    assert bank.charge(0) == 2000  # saving more than the first bank buys nothing with a cap
    fixed = TimeControl.per_decision(1.0)
    assert fixed.fixed and fixed.start().limit_ms == 1000
    assert fixed.start().charge(200) == 0  # nothing carries over


@pytest.mark.parametrize("text", ["", "+1", "30+", "a+1", "-1+1", "1+1+1", "0+0", "1e3"])
def test_a_time_control_that_cannot_be_is_refused(text: str) -> None:
    with pytest.raises(TimeControlError):
        TimeControl.parse(text)


# -- banks in a match (in memory, with given CPU costs) -------------------------------------------


def test_a_bank_that_runs_out_is_a_timeout_fault_naming_the_clock() -> None:
    """1 s a game, no increment, 0.3 s a decision: the fourth decision overdraws (a timeout fault
    saying the bank ran out, on which clock); the next ones are not even asked; the record keeps
    each decision's time and bank, and its checker replays them."""
    calls = CallLimits(time_control=TimeControl(1.0), max_faults=2)
    result = play_in_memory([LowestBot(), LowestBot()], [costing(0.3), costing(0.0)], calls)
    game = result.games[0]
    first, second = game.faults[0]
    assert first["kind"] == second["kind"] == FaultKind.TIMEOUT
    assert (first["round"], first["turn"]) == (1, 4)
    assert first["detail"] == (
        "PickCard ran out of its time bank: it used more than the 0.1 s left "
        "(cpu clock, time control 1+0)"
    )
    assert "the time bank is empty" in second["detail"] and "(cpu clock)" in second["detail"]
    assert game.forfeited == (0,) and game.faults[1] == ()
    doc = game.document
    assert doc is not None and verify_record(doc) is None
    assert doc["time_control"] == {
        "clock": "cpu",
        "bank_ms": 1000,
        "increment_ms": 0,
        "cap_ms": None,
        "wall_factor": 10,
        "ponder": "charge",
    }
    assert [s["clock"] for s in doc["seats"]] == ["cpu", "cpu"]
    turns = doc["rounds"][0]["turns"]
    picks = [entry for t in turns[:4] for entry in t["clock"] if entry[0] == 0 and entry[1]]
    assert picks == [[0, 300, 700], [0, 300, 400], [0, 300, 100], [0, 300, 0]]


def test_an_increment_refills_the_bank_and_a_cap_is_its_own_fault() -> None:
    calls = CallLimits(time_control=TimeControl(1.0, 0.3, cap=0.2), max_faults=1)
    result = play_in_memory([LowestBot(), LowestBot()], [costing(0.25), costing(0.1)], calls)
    game = result.games[0]
    (fault,) = game.faults[0]
    assert fault["detail"] == (
        "PickCard used more than the 0.2 s cap of a decision (cpu clock, time control 1+0.3)"
    )
    assert game.faults[1] == ()  # 0.1 s of a 0.3 s increment, every decision
    doc = game.document
    assert doc is not None and verify_record(doc) is None


def test_a_record_whose_banks_were_edited_does_not_verify() -> None:
    calls = CallLimits(time_control=TimeControl(5.0, 0.5))
    result = play_in_memory([LowestBot(), LowestBot()], [costing(0.2), None], calls)
    doc = result.games[0].document
    assert doc is not None and verify_record(doc) is None
    edited = copy.deepcopy(doc)
    edited["rounds"][0]["turns"][1]["clock"][0][2] += 1000  # a bank that grew from nowhere
    divergence = verify_record(edited)
    assert divergence is not None and "bank" in str(divergence)
    overdrawn = copy.deepcopy(doc)
    entry = overdrawn["rounds"][0]["turns"][0]["clock"][0]
    entry[1], entry[2] = 9000, 0  # over the limit, and no timeout fault recorded
    divergence = verify_record(overdrawn)
    assert divergence is not None and "timeout fault" in str(divergence)


class Told(Bot):
    """Keeps what the SDK tells it about each decision's time."""

    name = "told"

    def __init__(self) -> None:
        self.seen: list[tuple[ClockKind, float, float, float]] = []

    def pick_card(self, view: View) -> int:
        context = self.context
        assert context is not None
        self.seen.append((context.clock, context.bank, context.time_limit, self.time_left()))
        return min(view.hand)


def test_a_bot_is_told_its_bank_and_this_calls_limit() -> None:
    told = Told()
    calls = CallLimits(time_control=TimeControl(5.0, 0.5, cap=2.0))
    play_in_memory([told, LowestBot()], [costing(1.0), None], calls)
    clock, bank, limit, left = told.seen[0]
    assert (clock, bank, limit) == (ClockKind.CPU, 5.5, 2.0)
    assert 0 < left <= 2.0
    # 1 s a pick from a 5 s bank with 0.5 s increments: it shrinks by 0.5 s each time (until a
    # row choice, which costs nothing here, adds an increment).
    assert [round(seen[1], 3) for seen in told.seen[:3]] == [5.5, 5.0, 4.5]
    told.context = None
    assert told.time_left() == float("inf")  # outside a call


# -- real processes: the SDK's runtime, an old bot, sleeping and spinning --------------------------


def referee(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    from support import referee_env

    return subprocess.run(
        [sys.executable, "-m", "take5_arena", "match", *args],
        capture_output=True,
        text=True,
        env=referee_env(**(env or {})),
        timeout=180,
        cwd=ROOT,
    )


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_the_sdk_runtime_tells_a_bot_its_time(tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    run = referee(
        str(TEST_BOTS / "timeaware"),
        str(EXAMPLES / "lowest"),
        "--time-control",
        "5+0.5",
        "--time-cap",
        "2",
        "--records",
        str(tmp_path / "records"),
        env={"TAKE5_TEST_SEEN": str(seen)},
    )
    assert run.returncode == 0, run.stderr
    notes = [json.loads(line) for line in lines_of(seen)]
    first = notes[0]
    assert (first["clock"], first["bank"], first["limit"]) == ("cpu", 5.5, 2.0)
    assert 0 < first["left"] <= 2.0
    assert first["wall"] == 20.0  # the CPU clock's wall-clock cap: 10 times the limit
    assert all(note["limit"] <= 2.0 and note["bank"] <= 5.5 for note in notes)
    (record,) = sorted((tmp_path / "records").glob("*.json"))
    assert verify_record(load_record(record)) is None


def test_an_old_protocol_bot_still_plays(tmp_path: Path) -> None:
    """A bot generated from protocol 1.0's bot.proto gets the new `clock` fields as unknown fields
    (4 in PickCard, 6 in ChooseRow) and plays a clean match on time_limit_ms alone."""
    seen = tmp_path / "seen.txt"
    run = referee(
        str(TEST_BOTS / "protocol_1_0"),
        str(EXAMPLES / "lowest"),
        "--time-control",
        "10+1",
        "--json",
        env={"TAKE5_TEST_SEEN": str(seen)},
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["bots"][0]["protocol_version"] == "1.0"
    handshake, *notes = lines_of(seen)
    assert handshake.startswith("Handshake ") and handshake.endswith(" [4]")  # the time control
    assert notes and all(line.split(" ", 2)[2] in ("[4]", "[6]") for line in notes), notes
    assert {line.split()[0] for line in notes} <= {"PickCard", "ChooseRow"}
    assert int(notes[0].split()[1]) == 11_000  # time_limit_ms: the bank, its increment included


def sleeper_spinner(clock: str, tmp_path: Path) -> dict:
    records = tmp_path / f"records-{clock}"
    run = referee(
        str(TEST_BOTS / "sleeper"),
        str(TEST_BOTS / "spinner"),
        str(EXAMPLES / "lowest"),
        "--timeout",
        "0.5",
        "--clock",
        clock,
        "--wall-factor",
        "40",
        "--max-faults",
        "1",
        "--threshold",
        "10",
        "--records",
        str(records),
    )
    assert run.returncode == 1, run.stderr
    (record,) = sorted(records.glob("*.json"))
    doc = load_record(record)
    assert verify_record(doc) is None
    return doc


@pytest.fixture(scope="module")
def on_the_cpu_clock(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The sleeper, the spinner and lowest's match on the CPU clock, played once for the module:
    two tests read the same record (each match is a referee process, seconds on a loaded host)."""
    return sleeper_spinner("cpu", tmp_path_factory.mktemp("clocks"))


def test_a_sleeping_bot_is_on_time_on_the_cpu_clock_and_a_spinning_one_is_not(
    on_the_cpu_clock: dict,
) -> None:
    doc = on_the_cpu_clock
    sleeper, spinner, lowest = doc["faults"]
    assert sleeper == [] and lowest == []
    (fault,) = spinner
    assert (fault["kind"], fault["round"], fault["turn"]) == ("timeout", 1, 2)
    assert "(cpu clock" in fault["detail"]
    assert [seat["clock"] for seat in doc["seats"]] == ["cpu", "cpu", "cpu"]


def test_on_the_wall_clock_both_are_late(tmp_path: Path) -> None:
    doc = sleeper_spinner("wall", tmp_path)
    sleeper, spinner, _ = doc["faults"]  # lowest may be late too on a busy host: not asserted
    assert [(f["kind"], f["turn"]) for f in sleeper] == [("timeout", 1)]
    assert sleeper[0]["detail"] == "no answer to PickCard within 0.5 s (wall clock)"
    assert [(f["kind"], f["turn"]) for f in spinner] == [("timeout", 2)]
    assert [seat["clock"] for seat in doc["seats"]] == ["wall", "wall", "wall"]


# -- what came before: stores and records from before time controls -------------------------------

OLD_STORE = ROOT / "tests" / "data" / "tournament-v2"
"""A tournament directory made by main before time controls (its settings have a ``timeout`` and
no ``clock``; its records no ``time_control``)."""


def test_an_old_store_reads_as_the_wall_clock_it_ran_on(tmp_path: Path) -> None:
    import shutil

    from support import referee as run_referee

    from take5_arena.referee.store import Store
    from take5_arena.referee.tournament import TournamentSettings

    old = tmp_path / "old"
    shutil.copytree(OLD_STORE, old)
    with Store(old, readonly=True) as store:
        saved = store.settings.get()
        assert "timeout" in saved and "clock" not in saved  # the old format, as it was
        assert TournamentSettings.from_json(saved).calls.clock is ClockKind.WALL
    status = run_referee("tournament", "status", "-t", str(old))
    assert status.returncode == 0, status.stderr
    assert "1 s per decision, wall clock" in " ".join(status.stdout.split())


def test_the_replay_shows_each_decisions_time_and_bank(tmp_path: Path) -> None:
    from support import referee as run_referee

    records = tmp_path / "records"
    run = referee(
        str(EXAMPLES / "lowest"),
        str(EXAMPLES / "random"),
        "--time-control",
        "5+0.5",
        "--threshold",
        "20",
        "--records",
        str(records),
    )
    assert run.returncode == 0, run.stderr
    doc = load_record(records / "s0-g1.json")
    shown = run_referee("replay", str(records / "s0-g1.json"), "--all")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "Time: 5+0.5 (a 5 s bank, +0.5 s per decision), cpu clock" in text
    seat, used, after = doc["rounds"][0]["turns"][0]["clock"][0]
    name = doc["seats"][seat]["name"]
    assert f"Time: {name} {used} ms (bank {after / 1000:.2f} s)" in text
    # a record from before time controls replays as before, without times
    old = run_referee(
        "replay", str(ROOT / "tests" / "golden" / "records" / "forfeit.json"), "--all"
    )
    assert old.returncode == 0, old.stderr
    assert "Time:" not in old.stdout and "Result" in old.stdout


# -- the harness tells the same story ------------------------------------------------------------


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    from support import referee_env

    return subprocess.run(
        [sys.executable, "-m", "take5.harness_entry", *args],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=180,
        cwd=ROOT,
    )


def test_the_harness_stops_at_the_timeout_the_referee_counts(on_the_cpu_clock: dict) -> None:
    """The spinner never answers in round 1, turn 2: the referee faults it there on the CPU
    clock, and the harness stops there with the same words and exit code 1 (it used to play on
    and exit 0 with a warning)."""
    run = harness(str(TEST_BOTS / "spinner"), "--timeout", "0.5", "--wall-factor", "40")
    assert run.returncode == 1, run.stdout + run.stderr
    detail = "pick_card used more than its 0.5 s of CPU time (cpu clock)"
    assert f"harness-g1, round 1, turn 2: timeout: {detail}" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""
    (fault,) = on_the_cpu_clock["faults"][1]
    assert (fault["round"], fault["turn"]) == (1, 2)
    assert fault["detail"] == detail.replace("pick_card", "PickCard")


def test_the_harness_applies_banks_caps_and_both_clocks() -> None:
    spinner, sleeper = str(TEST_BOTS / "spinner"), str(TEST_BOTS / "sleeper")
    bank = harness(spinner, "--time-control", "1+0", "--wall-factor", "40", "--games", "1")
    assert bank.returncode == 1
    assert "pick_card ran out of its time bank: it used more than the " in bank.stderr
    assert "(cpu clock, time control 1+0)" in bank.stderr
    cap = harness(spinner, "--time-control", "30+1", "--time-cap", "0.5", "--wall-factor", "40")
    assert cap.returncode == 1
    assert "pick_card used more than the 0.5 s cap of a decision (cpu clock" in cap.stderr
    # the sleeper sleeps 1.2 s once a game: late on the wall clock, on time on the CPU clock
    wall = harness(sleeper, "--timeout", "0.5", "--clock", "wall", "--games", "1")
    assert wall.returncode == 1
    assert "round 1, turn 1: timeout: no answer to pick_card within 0.5 s (wall clock)" in (
        wall.stderr
    )
    cpu = harness(sleeper, "--timeout", "0.5", "--wall-factor", "40", "--games", "2", "--json")
    assert cpu.returncode == 0, cpu.stderr
    doc = json.loads(cpu.stdout)
    assert (doc["clock"], doc["time_control"]) == ("cpu", "0.5 s per decision")
    both = harness(sleeper, "--timeout", "1", "--time-control", "5+1")
    assert both.returncode == 2 and "not both" in both.stderr


CHATTY = """import logging, os, sys
from take5 import Bot, run

logging.basicConfig(level=logging.INFO)  # a handler bound to the real stderr, made at import


class Chatty(Bot):
    name = "chatty"

    def pick_card(self, view):
        print("thinking about", min(view.hand))
        print("\\x1b[2Jcleared?", file=sys.stderr)
        os.write(2, b"straight to fd 2\\n")
        logging.info("logged on turn %d", view.turn)
        return min(view.hand)


if __name__ == "__main__":
    run(Chatty())
"""


def test_the_harness_keeps_the_bots_output_per_game(tmp_path: Path) -> None:
    folder = tmp_path / "chatty"
    folder.mkdir()
    (folder / "bot.py").write_text(CHATTY)
    run = harness(str(folder), "--games", "3", "--against", "random", "random")
    assert run.returncode == 0, run.stderr
    assert "thinking" not in run.stdout + run.stderr and "\x1b" not in run.stdout + run.stderr
    (note,) = run.stderr.splitlines()  # one line instead of hundreds
    assert note.startswith("take5-harness: the bots printed chatty ") and "--logs DIR" in note
    assert "random, random#2" in run.stdout  # two seats of one opponent, two labels
    logs = tmp_path / "logs"
    kept = harness(str(folder), "--games", "3", "--logs", str(logs), "--quiet")
    assert kept.returncode == 0 and kept.stderr == ""
    files = sorted(p.name for p in logs.iterdir())
    assert files == [f"harness-g{g}-0-chatty.log" for g in (1, 2, 3)]
    text = (logs / "harness-g1-0-chatty.log").read_text()
    assert "--- round 1, turn 1 (play)\n" in text
    for line in ("thinking about", "straight to fd 2", "INFO:root:logged on turn 1"):
        assert line in text
    assert "\x1b" not in text and "\\x1b[2Jcleared?" in text  # kept inert


def test_the_harness_shows_a_faulty_bots_last_output(tmp_path: Path) -> None:
    folder = tmp_path / "chatty_spinner"
    folder.mkdir()
    (folder / "bot.py").write_text(
        CHATTY.replace(
            "        return min(view.hand)",
            "        while view.turn == 2:\n            pass\n        return min(view.hand)",
        )
    )
    run = harness(str(folder), "--timeout", "0.5", "--wall-factor", "40", "--games", "1")
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert "round 1, turn 2: timeout: pick_card used more than its 0.5 s" in lines[0]
    assert lines[1] == "take5-harness: its last output in that game:"
    assert any("logged on turn 2" in line for line in lines[2:]) and "\x1b" not in run.stderr


def test_play_against_times_every_seat_and_labels_each() -> None:
    from take5 import play_against
    from take5.bots import RandomBot
    from take5.harness import OutOfTime

    result = play_against(RandomBot(), ["random", "random", "random"], games=2)
    assert result.names == ("random", "random#2", "random#3", "random#4")
    assert result.clock is ClockKind.CPU and len(result.logs) == 2

    class Spin(LowestBot):
        name = "spin"

        def pick_card(self, view: View) -> int:
            while view.turn == 3:
                pass
            return super().pick_card(view)

    with pytest.raises(OutOfTime, match=r"spin: harness-g1, round 1, turn 3: timeout: ") as caught:
        play_against(
            LowestBot(), [Spin()], games=1, time_control="0.3+0.1", clock="cpu", wall_factor=100
        )
    assert caught.value.seat == 1 and "(cpu clock, time control 0.3+0.1)" in str(caught.value)


# -- thinking between decisions (--ponder) ---------------------------------------------------------


def ponder_used(rule: str, tmp_path: Path) -> int:
    """Milliseconds charged to the ponderer's decisions in a game against the dawdler under
    ``--ponder rule`` (its record verifies and says the rule)."""
    records = tmp_path / f"records-{rule}"
    run = referee(
        str(TEST_BOTS / "ponderer"),
        str(TEST_BOTS / "dawdler"),
        "--time-control",
        "60+0",
        "--clock",
        "cpu",
        "--ponder",
        rule,
        "--threshold",
        "10",
        "--records",
        str(records),
    )
    assert run.returncode == 0, run.stderr
    (record,) = sorted(records.glob("*.json"))
    doc = load_record(record)
    assert verify_record(doc) is None  # the bank arithmetic holds either way
    assert doc["time_control"]["ponder"] == rule
    return sum(
        ms
        for rnd in doc["rounds"]
        for turn in rnd["turns"]
        for seat, ms, _ in turn.get("clock", [])
        if seat == 0
    )


def test_ponder_charge_takes_the_cpu_between_decisions_from_the_bank(tmp_path: Path) -> None:
    """0.3 s of thinking after its first answer, charged to the decisions after it (on a loaded
    host it spreads over several of them; the game lasts long enough for all of it)."""
    assert ponder_used("charge", tmp_path) >= 0.9 * 300


def test_ponder_allow_leaves_the_cpu_between_decisions_free(tmp_path: Path) -> None:
    """Only from request to answer: milliseconds, whatever its thread does in between."""
    assert ponder_used("allow", tmp_path) < 0.5 * 300

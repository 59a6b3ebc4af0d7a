"""`referee match` with real bot processes over real Unix sockets (docs/faults.md).

Every test runs the referee as a user would (`python -m take5_arena match ...`) or through
`take5_arena.referee.match.run_match`, with the hostile bots of tests/bots, and checks the
documented outcome: the fault kind in the record, the forfeit, the exit code, and that no bot
process outlives the match.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT, TEST_BOTS

from take5.record import load_record, verify_record, without_times


def bot(name: str) -> str:
    return str(TEST_BOTS / name)


def example(name: str) -> str:
    return str(EXAMPLES / name)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment holds the marker (the bots a test started)."""
    found = []
    needle = f"TAKE5_TEST_MARKER={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if needle in environ.split(b"\0") and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def wait_gone(marker: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        left = processes_with(marker)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


class Run:
    """One `referee match` run: exit code, output, JSON and records."""

    def __init__(
        self, proc: subprocess.CompletedProcess[str], records: Path | None, marker: str
    ) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.records = records
        self.marker = marker

    @property
    def doc(self) -> dict:
        return json.loads(self.out)

    def record_files(self) -> list[Path]:
        assert self.records is not None
        return sorted(self.records.glob("*.json"))


def referee(
    *args: str, tmp_path: Path | None = None, timeout: float = 90, records: bool = True
) -> Run:
    marker = uuid.uuid4().hex
    env = dict(os.environ, TAKE5_TEST_MARKER=marker)
    argv = [sys.executable, "-m", "take5_arena", "match", *args]
    folder = None
    if records and tmp_path is not None:
        folder = tmp_path / f"records-{marker[:8]}"
        argv += ["--records", str(folder)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
    run = Run(proc, folder, marker)
    assert wait_gone(marker) == [], f"bot processes outlived the match:\n{run.err}"
    return run


def faults_of(record: dict, seat: int) -> list[dict]:
    return record["faults"][seat]


def kinds(record: dict, seat: int) -> list[str]:
    return [f["kind"] for f in faults_of(record, seat)]


# -- the hostile table ---------------------------------------------------------------------------

HOSTILE = [
    "hang",
    "crash_mid",
    "garbage",
    "badcard",
    "badrow",
    "late",
    "huge",
    "minimal",
    "error",
    "empty",
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Ten misbehaving bots at one table, two games (the second restarts the crashed bot), on the
    wall clock: `late` sleeps past its limit (on the CPU clock sleeping costs nothing: see the
    clock tests below)."""
    tmp = tmp_path_factory.mktemp("hostile")
    return referee(
        *[bot(b) for b in HOSTILE],
        "--games",
        "2",
        "--timeout",
        "0.8",
        "--clock",
        "wall",
        "--threshold",
        "20",
        "--json",
        tmp_path=tmp,
    )


def seat(name: str) -> int:
    return HOSTILE.index(name)


def test_hostile_match_completes_with_faults(hostile: Run) -> None:
    assert hostile.code == 1, hostile.err  # 1: every game played, some bot faulted
    doc = hostile.doc
    assert doc["games_played"] == 2 and doc["exit_code"] == 1
    files = hostile.record_files()
    assert [f.name for f in files] == ["s0-g1.json", "s0-g2.json"]
    for path in files:
        record = load_record(path)
        assert record["complete"] is True
        assert verify_record(record) is None, path


@pytest.mark.parametrize(
    "name, kind, forfeits",
    [
        ("hang", "timeout", True),
        ("crash_mid", "crash", True),
        ("garbage", "protocol", True),
        ("empty", "protocol", True),
        ("badcard", "illegal-card", True),
        ("huge", "resource", True),
        ("late", "timeout", False),
        ("error", "error", False),
    ],
)
def test_hostile_bot_outcome(hostile: Run, name: str, kind: str, forfeits: bool) -> None:
    for path in hostile.record_files():
        record = load_record(path)
        s = seat(name)
        assert kind in kinds(record, s), (name, record["faults"][s])
        assert set(kinds(record, s)) == {kind}, (name, record["faults"][s])
        assert (s in record["result"]["forfeited"]) is forfeits, (name, record["faults"][s])
        if forfeits:
            # ranked below every seat that did not forfeit
            place = record["result"]["places"][s]
            others = [
                p
                for i, p in enumerate(record["result"]["places"])
                if i not in record["result"]["forfeited"]
            ]
            assert place > max(others)


def test_fault_details_say_what_happened(hostile: Run) -> None:
    record = load_record(hostile.record_files()[0])
    first = {
        name: faults_of(record, seat(name))[0]
        for name in ("hang", "crash_mid", "badcard", "error", "huge", "late")
    }
    assert first["hang"]["detail"] == "no answer to PickCard within 0.8 s (wall clock)"
    assert first["crash_mid"] == {
        "round": 1,
        "turn": 3,
        "kind": "crash",
        "detail": "the bot exited with status 3",
    }
    assert "is not in the hand" in first["badcard"]["detail"]
    assert "ValueError: bug in my evaluation function" in first["error"]["detail"]
    assert first["error"]["turn"] == 1
    assert "larger than" in first["huge"]["detail"]
    assert (first["late"]["round"], first["late"]["turn"]) == (1, 2)


def test_default_moves_are_played(hostile: Run) -> None:
    """A faulted PickCard plays the seat's lowest card; a forfeited seat keeps playing its
    lowest."""
    record = load_record(hostile.record_files()[0])
    rnd = record["rounds"][0]
    hands = [list(h) for h in rnd["hands"]]
    for turn in rnd["turns"]:
        for s, card in turn["plays"]:
            if HOSTILE[s] in ("hang", "garbage", "badcard", "huge", "empty", "crash_mid"):
                assert card == min(hands[s]), (HOSTILE[s], turn["turn"])
            hands[s].remove(card)


def test_late_bot_plays_on_after_its_timeout(hostile: Run) -> None:
    record = load_record(hostile.record_files()[0])
    rnd = record["rounds"][0]
    s = seat("late")
    hand = list(rnd["hands"][s])
    for turn in rnd["turns"]:
        card = dict(turn["plays"])[s]
        expected = min(hand) if turn["turn"] == 2 else max(hand)  # default move only when late
        assert card == expected, turn["turn"]
        hand.remove(card)


def test_illegal_row_gets_the_cheapest_row(hostile: Run) -> None:
    """After an invalid row the referee takes the row with the fewest bull heads for the bot."""
    from take5.rules import cheapest_row, place_card, target_row

    s = seat("badrow")
    checked = 0
    for path in hostile.record_files():
        record = load_record(path)
        for fault in faults_of(record, s):
            assert fault["detail"] == "row 7 does not exist (rows are 0..3)"
        for rnd in record["rounds"]:
            rows = tuple(tuple(r) for r in rnd["rows"])
            for turn in rnd["turns"]:
                takes = {take["card"]: take for take in turn["takes"]}
                for seat_, card in sorted(turn["plays"], key=lambda p: p[1]):
                    chosen = None
                    if target_row(rows, card) is None:
                        chosen = takes[card]["row"]
                        if seat_ == s:
                            assert chosen == cheapest_row(rows)
                            checked += 1
                    rows = place_card(rows, card, chosen).rows
                assert [list(r) for r in rows] == turn["rows"]
    assert checked >= 1


def test_minimal_bot_without_optional_calls_plays(hostile: Run) -> None:
    doc = hostile.doc
    minimal = next(b for b in doc["bots"] if b["name"] == "minimal")
    assert minimal.get("handshake") is False
    for path in hostile.record_files():
        record = load_record(path)
        assert faults_of(record, seat("minimal")) == []
        assert seat("minimal") not in record["result"]["forfeited"]


def test_crashed_bot_is_restarted_for_the_next_game(hostile: Run) -> None:
    second = load_record(hostile.record_files()[1])
    # it played turns 1 and 2 of game 2 itself before crashing again at turn 3
    assert faults_of(second, seat("crash_mid"))[0]["turn"] == 3
    assert "restarting crash_mid" in hostile.err


FLAKY_RESTART = """\
import os, sys
from pathlib import Path
from take5 import Bot, run

COUNT = Path({count!r})
starts = int(COUNT.read_text()) + 1 if COUNT.exists() else 1
COUNT.write_text(str(starts))
if starts == 2:
    sys.exit(4)  # the first restart fails, as a start can on a busy host


class FlakyRestart(Bot):
    name = "flaky_restart"

    def pick_card(self, view):
        if starts == 1 and view.round == 1 and view.turn == 3:
            os._exit(3)
        return min(view.hand)


if __name__ == "__main__":
    run(FlakyRestart())
"""


def test_a_failed_restart_is_tried_once_more(tmp_path: Path) -> None:
    folder = tmp_path / "flaky_restart"
    folder.mkdir()
    (folder / "bot.py").write_text(FLAKY_RESTART.format(count=str(tmp_path / "starts")))
    run = referee(str(folder), example("lowest"), "--games", "2", tmp_path=tmp_path)
    first, second = (load_record(path) for path in run.record_files())
    mine = [s["name"] for s in first["seats"]].index("flaky_restart")
    assert kinds(first, mine)[0] == "crash"
    # the restart for game 2 failed once; the second try plays the whole game
    mine = [s["name"] for s in second["seats"]].index("flaky_restart")
    assert faults_of(second, mine) == [], run.err
    assert "trying once more" in run.err
    assert (tmp_path / "starts").read_text() == "3"


def test_json_summary_for_scripts(hostile: Run) -> None:
    doc = hostile.doc
    assert doc["format"] == "take5-match"
    names = [s["name"] for s in doc["standings"]]
    assert sorted(names) == sorted(HOSTILE)
    hang = next(s for s in doc["standings"] if s["name"] == "hang")
    assert hang["faults"] == {"timeout": 6} and hang["forfeits"] == 2
    assert "hang" in doc["logs"] or "crash_mid" in doc["logs"]


# -- bots that never get to play -----------------------------------------------------------------


def test_rejected_bots_exit_code_3(tmp_path: Path) -> None:
    run = referee(
        bot("crash_start"),
        bot("slowstart"),
        bot("oldproto"),
        example("lowest"),
        # slowstart never serves (and sleeps: no CPU time), so the match waits out the start's
        # wall-clock cap: generous, because on a loaded host oldproto (importing grpc) must still
        # be judged on its handshake, not its speed.
        "--games",
        "2",
        "--start-timeout",
        "20",
        "--start-wall",
        "20",
        "--timeout",
        "0.5",
        tmp_path=tmp_path,
    )
    assert run.code == 3, run.err
    assert "Rejected before play" in run.out
    assert "incompatible: the bot speaks protocol '2.0'" in run.out
    assert "crash_start: cannot start, missing weights.bin" in run.out  # its output, for the author
    for path in run.record_files():
        record = load_record(path)
        assert verify_record(record) is None
        assert record["result"]["forfeited"] == [0, 1, 2]
        assert [kinds(record, s) for s in range(3)] == [["crash"], ["timeout"], ["incompatible"]]
        assert record["result"]["places"][3] == 1


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    run = referee(example("random"), str(tmp_path / "nope"), records=False)
    assert run.code == 2 and "no such bot" in run.err
    run = referee(example("random"), records=False)
    assert run.code == 2 and "2 to 10 bots" in run.err
    run = referee(*[example("random")] * 7, "--variant", "professional", records=False)
    assert run.code == 2 and "professional game is for 2 to 6 players" in run.err
    (tmp_path / "empty").mkdir()
    run = referee(example("random"), str(tmp_path / "empty"), records=False)
    assert run.code == 2 and "neither bot.py" in run.err


# -- clean matches -------------------------------------------------------------------------------


def test_clean_match_exit_0_and_summary(tmp_path: Path) -> None:
    run = referee(
        example("random"),
        example("lowest"),
        example("heuristic"),
        "--games",
        "3",
        tmp_path=tmp_path,
    )
    assert run.code == 0, run.err
    assert "Match s0: 3 bots, 3 of 3 games" in run.out
    assert "heuristic" in run.out and "Faults" not in run.out
    assert len(run.record_files()) == 3
    out = subprocess.run(
        [sys.executable, "-m", "take5_arena", "verify", str(run.records)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout
    assert "3 of 3 records valid" in out.stdout


def test_same_seed_same_records(tmp_path: Path) -> None:
    """Deterministic bots (faulty ones included) give identical records for the same seed, but
    for the decision times they measured (take5.record.without_times)."""
    bots = [example("random"), example("heuristic"), bot("badrow"), bot("error")]
    first = referee(*bots, "--games", "2", "--seed", "11", tmp_path=tmp_path)
    second = referee(*bots, "--games", "2", "--seed", "11", tmp_path=tmp_path)
    assert first.code == second.code == 1
    a, b = first.record_files(), second.record_files()
    assert [p.name for p in a] == [p.name for p in b] == ["s11-g1.json", "s11-g2.json"]
    for x, y in zip(a, b):
        rx, ry = load_record(x), load_record(y)
        assert json.dumps(without_times(rx)) == json.dumps(without_times(ry))
        assert verify_record(rx) is None
        assert any("clock" in t for t in rx["rounds"][0]["turns"])  # the times are there
    # duplicate deals: game 2 is seed 11 again, rotated by one seat
    g1, g2 = load_record(a[0]), load_record(a[1])
    assert (g1["seed"], g1["rotation"], g2["seed"], g2["rotation"]) == (11, 0, 11, 1)
    assert g2["rounds"][0]["hands"][1] == g1["rounds"][0]["hands"][0]


def test_professional_variant_drafts_through_pick_card(tmp_path: Path) -> None:
    run = referee(
        example("heuristic"),
        example("random"),
        bot("minimal"),
        "--variant",
        "professional",
        "--games",
        "1",
        tmp_path=tmp_path,
    )
    assert run.code == 0, run.err
    record = load_record(run.record_files()[0])
    assert record["rounds"][0]["draft"]["picks"]
    assert verify_record(record) is None


def test_bot_given_by_address(tmp_path: Path) -> None:
    """A bot someone else runs: the referee connects to it and leaves it running."""
    socket_path = tmp_path / "ext.sock"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "sdk"))
    server = subprocess.Popen(
        [sys.executable, example("lowest") + "/bot.py", "--listen", f"unix:{socket_path}"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        run = referee(f"unix:{socket_path}", example("random"), "--games", "1", tmp_path=tmp_path)
        assert run.code == 0, run.err
        record = load_record(run.record_files()[0])
        assert record["seats"][0]["name"] == "lowest"
        assert record["seats"][0]["bot"] == f"unix:{socket_path}"
        assert server.poll() is None  # not ours to stop
    finally:
        server.terminate()
        assert server.wait(5) == 0


def test_refused_connection_rejects_an_address_bot(tmp_path: Path) -> None:
    run = referee(
        f"unix:{tmp_path / 'nobody.sock'}",
        example("random"),
        "--start-timeout",
        "1",
        tmp_path=tmp_path,
    )
    assert run.code == 3, run.err
    record = load_record(run.record_files()[0])
    assert kinds(record, 0) == ["connection"]
    assert "nothing accepted a connection" in faults_of(record, 0)[0]["detail"]


def test_address_bot_lost_mid_game_is_a_connection_fault(tmp_path: Path) -> None:
    """A bot the referee did not start cannot crash in its eyes: it becomes unreachable."""
    socket_path = tmp_path / "crash.sock"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "sdk"))
    server = subprocess.Popen(
        [sys.executable, bot("crash_mid") + "/bot.py", "--listen", f"unix:{socket_path}"], env=env
    )
    try:
        deadline = time.monotonic() + 10
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        run = referee(
            f"unix:{socket_path}", example("random"), "--timeout", "0.5", tmp_path=tmp_path
        )
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(5)
    assert run.code == 1, run.err
    record = load_record(run.record_files()[0])
    assert kinds(record, 0) == ["connection"] * 3
    assert (
        faults_of(record, 0)[0]["turn"] == 3
    )  # then the next calls (a ChooseRow maybe) until the forfeit
    assert record["result"]["forfeited"] == [0]
    assert verify_record(record) is None


# -- interruption --------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_every_bot(tmp_path: Path, sig: signal.Signals) -> None:
    marker = uuid.uuid4().hex
    waiting = tmp_path / "waiting"
    waiting.mkdir()
    env = dict(os.environ, TAKE5_TEST_MARKER=marker, TAKE5_TEST_WAITING=str(waiting))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            bot("hang"),
            bot("hang"),
            example("random"),
            "--games",
            "5",
            "--timeout",
            "30",
            "--records",
            str(tmp_path / "rec"),
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(waiting.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until both hanging bots are inside their first PickCard
        assert len(list(waiting.iterdir())) == 2, "the hanging bots never got their first PickCard"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "(interrupted)" in out
    assert wait_gone(marker) == []


def test_run_match_api_stops_bots_on_error(tmp_path: Path) -> None:
    """The library API cleans up too, whatever ends the match."""
    from take5_arena.referee.match import CallLimits, Match, MatchConfig

    marker = uuid.uuid4().hex
    os.environ["TAKE5_TEST_MARKER"] = marker
    try:
        config = MatchConfig(games=3, calls=CallLimits(timeout=0.5, start_timeout=5))
        with (
            pytest.raises(RuntimeError),
            Match([example("random"), example("lowest")], config) as match,
        ):
            assert len(processes_with(marker)) == 2
            match.play_game(0)
            raise RuntimeError("the caller failed")
        assert wait_gone(marker) == []
    finally:
        del os.environ["TAKE5_TEST_MARKER"]


def test_sigkill_of_the_referee_leaves_no_bot_folders(tmp_path: Path) -> None:
    """Killed with SIGKILL, the referee cannot clean up; its reaper removes the bots' folders."""
    scratch = Path(
        tempfile.mkdtemp(prefix="t5k-")
    )  # short: a Unix socket path has at most 107 bytes
    waiting = tmp_path / "waiting"
    waiting.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch), TAKE5_TEST_WAITING=str(waiting))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            bot("hang"),
            example("random"),
            "--timeout",
            "30",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(waiting.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(scratch.glob("take5-bot-*")), "the bots' folders were not where the test looks"
        proc.kill()
        proc.wait(15)
        deadline = time.monotonic() + 30
        while list(scratch.glob("take5-bot-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not list(scratch.glob("take5-bot-*")), list(scratch.rglob("*"))
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.25, 0.5, "started"])
def test_ctrl_c_at_any_moment_prints_no_traceback(tmp_path: Path, delay: float | str) -> None:
    """Ctrl-C while the command loads, while bots start, or while a game waits: exit 130, no
    traceback from the project's code. (A signal that lands while the interpreter itself is still
    starting, before any of our code runs, is Python's to report; the test tolerates that one only.)
    """
    waiting = tmp_path / "waiting"
    waiting.mkdir()
    env = dict(os.environ, TAKE5_TEST_WAITING=str(waiting))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            bot("hang"),
            example("random"),
            "--timeout",
            "30",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if delay == "started":
            deadline = time.monotonic() + 60
            while not list(waiting.iterdir()) and time.monotonic() < deadline:
                time.sleep(0.05)
        else:
            time.sleep(
                float(delay)
            )  # not a timing assertion: only where in its start the signal lands
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    project_frames = [
        line
        for line in err.splitlines()
        if line.strip().startswith("File")
        and any(p in line for p in ("/arena/", "/referee/", "/take5/"))
    ]
    assert not project_frames, err
    # Before the interpreter runs our first line the signal is Python's: it dies of it (-2), or
    # reports a fatal error when the signal lands in its own start-up (site), with exit code 1.
    pythons_own = proc.returncode == -signal.SIGINT or (
        proc.returncode == 1 and "Fatal Python error" in err
    )
    assert proc.returncode == 130 or pythons_own, (proc.returncode, err)
    if delay == "started":
        assert proc.returncode == 130 and "Traceback" not in err, err


def test_ctrl_c_reaches_a_command_started_with_sigint_ignored(tmp_path: Path) -> None:
    """A script's background jobs (and CI runners' commands) start with SIGINT ignored; a SIGINT
    sent to `referee` must still stop it, cleanly."""
    waiting = tmp_path / "waiting"
    waiting.mkdir()
    env = dict(os.environ, TAKE5_TEST_WAITING=str(waiting))
    proc = subprocess.Popen(
        [
            "sh",
            "-c",
            'trap "" INT; exec "$@"',
            "sh",
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            bot("hang"),
            example("random"),
            "--timeout",
            "30",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(waiting.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted" in err


def test_the_record_is_final_when_the_match_writes_it(tmp_path: Path) -> None:
    """The seats as the caller names them and the deal are in the record the match writes (the
    file, the observer's, the summary's): nobody rewrites a record after the match."""
    from take5.bots import LowestBot, RandomBot
    from take5.record import DealRecord, GameRecord
    from take5_arena.referee.match import Match, MatchConfig, in_memory
    from take5_arena.referee.match.config import SeatIdentity

    deal: DealRecord = {"season": 2, "commitment": "c0", "id": "t1"}
    seats = (SeatIdentity("ann", "ann@3", 3, owner="alice"), SeatIdentity("bo", "bo@1", 1))
    config = MatchConfig(games=2, records=tmp_path, game_ids=("x", "y"), seats=seats, deal=deal)
    seen: list[GameRecord] = []
    refs, launcher = in_memory([LowestBot(), RandomBot(1)])
    with Match(refs, config, launcher=launcher, observer=seen.append) as match:
        summary = match.play_game(1)
    on_disk = json.loads((tmp_path / "y.json").read_text())
    for record in (summary.document, on_disk, seen[0]):
        assert record is not None and record["game_id"] == "y" and record["deal"] == deal
        assert [s["name"] for s in record["seats"]] == ["ann", "bo"]
        assert [s["entrant"] for s in record["seats"]] == ["ann@3", "bo@1"]
        assert [s["bot_name"] for s in record["seats"]] == ["lowest", "random"]
        assert record["seats"][0]["owner"] == "alice" and "owner" not in record["seats"][1]
    assert verify_record(on_disk) is None
    assert list(on_disk["seats"][0])[-3:] == ["bot_name", "entrant", "owner"]
    with pytest.raises(ValueError, match="seat identities"):
        Match(refs, MatchConfig(seats=seats[:1]), launcher=launcher)

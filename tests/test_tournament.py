"""Tournaments end to end: submit, run, resume after SIGKILL, bot faults, infrastructure failures,
executors (threads, dask), and the same in Docker (marked `docker`).

Without a Docker engine the docker tests skip with the reason, except with CI set, where they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import EXAMPLES, ROOT, unavailable

from take5 import RandomPlayer, Settings, play_game
from take5.record import verify_record
from take5_arena.cli.main import main as cli
from take5_arena.referee.kinds import SandboxKind
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import (
    GameOutcome,
    SubmitRefusedError,
    TableSpec,
    TournamentSettings,
    run_table,
    run_tournament,
    submit,
)
from take5_arena.standings import store_standings as standings

CRASHER = ROOT / "tests" / "bots" / "crash_mid"  # exits on round 1, turn 3 of every game


# -- helpers ---------------------------------------------------------------------------------------


def recorded(directory: Path) -> int:
    db = sqlite3.connect(f"file:{directory / 'tournament.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


def check_complete(directory: Path) -> Store:
    """Every game of the current schedule recorded exactly once, every record valid."""
    store = Store(directory)
    sid = store.schedules.current()["schedule_id"]
    scheduled = [g.game_id for g in store.schedules.games(sid)]
    assert len(scheduled) == len(set(scheduled))
    ids = [game_id for game_id, _ in store.records.all()]
    assert len(ids) == len(set(ids)), "a game was recorded twice"
    assert set(scheduled) <= set(ids), (
        f"{len(set(scheduled) - set(ids))} scheduled games not recorded"
    )
    for gid, record in store.records.all(sid):
        assert record["game_id"] == gid
        assert verify_record(record) is None, gid
    assert all(g.status == "done" for g in store.schedules.games(sid))
    return store


def referee_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "take5_arena", *args]


@pytest.fixture(scope="module")
def local_entrants(tmp_path_factory) -> Path:
    """A tournament directory with random, lowest and heuristic submitted (local sandbox)."""
    directory = tmp_path_factory.mktemp("tournaments") / "base"
    for name in ("random", "lowest", "heuristic"):
        done = submit(directory, EXAMPLES / name, name, sandbox="local")
        assert done.created and done.version.version == 1
    return directory


@pytest.fixture
def tdir(local_entrants, tmp_path) -> Path:
    target = tmp_path / "t"
    shutil.copytree(local_entrants, target)
    return target


# -- submit ----------------------------------------------------------------------------------------


def test_submit_records_versions(tdir):
    with Store(tdir) as store:
        assert [v.key for v in store.versions.current()] == ["heuristic@1", "lowest@1", "random@1"]
        v = store.versions.current()[0]
        assert len(v.source_hash) == 64 and "smoke" in v.validation
    # The same sources again: the same version; other sources under the same name: version 2.
    again = submit(tdir, EXAMPLES / "lowest", "lowest", sandbox="local")
    assert not again.created and again.version.version == 1
    other = submit(tdir, EXAMPLES / "random", "lowest", sandbox="local")
    assert other.created and other.version.version == 2


def test_submit_refuses_a_crashing_bot_with_its_stderr(tdir):
    with pytest.raises(SubmitRefusedError) as refused:
        submit(tdir, CRASHER, "crasher", sandbox="local")
    assert "crash" in refused.value.reason
    assert "segfault (simulated)" in refused.value.stderr
    result = CliRunner().invoke(
        cli, ["submit", str(CRASHER), "--name", "crasher", "-t", str(tdir), "--sandbox", "local"]
    )
    assert result.exit_code == 3  # refused: as with --server, and as match's rejected bot
    assert "REFUSED crasher" in result.output and "segfault (simulated)" in result.output
    with Store(tdir) as store:
        assert "crasher" not in {v.name for v in store.versions.all()}


# -- running ---------------------------------------------------------------------------------------


def test_local_tournament_end_to_end(tdir):
    report = run_tournament(
        tdir, {"players": 3, "games": 6, "sandbox": "local", "concurrency": 2, "executor": "local"}
    )  # threads: games reach the store one by one
    assert report.exit_code == 0 and report.played == 6 and report.total == 6
    store = check_complete(tdir)
    table = standings(store, bootstrap=20)
    assert {r.entrant for r in table.rows} == {"random", "lowest", "heuristic"}
    assert all(r.games == 6 for r in table.rows)
    record = store.records.get(
        store.schedules.games(store.schedules.current()["schedule_id"])[0].game_id
    )
    assert {s["entrant"] for s in record["seats"]} == {"random@1", "lowest@1", "heuristic@1"}
    store.close()
    # Again: nothing left to play.
    again = run_tournament(tdir, {})
    assert again.played == 0 and again.done_before == 6
    status = CliRunner().invoke(cli, ["tournament", "status", "-t", str(tdir), "--bootstrap", "10"])
    assert status.exit_code == 0, status.output
    assert "6 of 6 games recorded" in status.output and "finished" in status.output
    assert "heuristic" in status.output


def test_dry_run_prints_the_schedule_and_plays_nothing(tdir):
    result = CliRunner().invoke(
        cli,
        [
            "tournament",
            "run",
            "-t",
            str(tdir),
            "-n",
            "2",
            "-g",
            "12",
            "--dry-run",
            "--sandbox",
            "local",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "every 2-subset of the 3 entrants plays 2 times" in result.output
    assert result.output.count("table ") == 6
    assert recorded(tdir) == 0


def test_resume_after_sigkill(tdir):
    """Kill a real run with SIGKILL once some games are stored; the same command finishes the
    tournament: every scheduled game stored exactly once, every record valid."""
    args = referee_cmd(
        "tournament",
        "run",
        "-t",
        str(tdir),
        "-n",
        "2",
        "-g",
        "12",
        "--sandbox",
        "local",
        "-j",
        "1",
        "--no-progress",
    )
    proc = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while recorded(tdir) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, proc.stdout.read().decode()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    killed_at = recorded(tdir)
    assert 2 <= killed_at < 12
    status = CliRunner().invoke(cli, ["tournament", "status", "-t", str(tdir), "--bootstrap", "0"])
    assert "stopped (the referee was killed)" in status.output, status.output
    done = subprocess.run(args, check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{killed_at} recorded before" in done.stdout
    store = check_complete(tdir)
    assert store.results.recorded_count() == 12
    store.close()
    third = subprocess.run(args, check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert third.returncode == 0 and "0 played now" in third.stdout


def test_a_bot_that_crashes_in_every_game(tdir):
    """Its faults are its own (crash, forfeit, ranked last); every game still completes."""
    with Store(tdir) as store:
        store.versions.add("crasher", source_hash="x", bot_dir=str(CRASHER), kind="python")
    report = run_tournament(tdir, {"players": 2, "games": 8, "sandbox": "local", "concurrency": 2})
    assert report.exit_code == 0 and not report.infra
    store = check_complete(tdir)
    crasher_games = 0
    for _gid, record in store.records.all():
        seats = [s["entrant"] for s in record["seats"]]
        if "crasher@1" in seats:
            crasher_games += 1
            seat = seats.index("crasher@1")
            assert [f["kind"] for f in record["faults"][seat]][:1] == ["crash"]
            assert seat in record["result"]["forfeited"]
            assert record["result"]["places"][seat] == 2
            other = 1 - seat
            assert not record["faults"][other]
    assert crasher_games >= 4
    rows = {r.entrant: r for r in standings(store, bootstrap=0).rows}
    assert rows["crasher"].rank == 4 and dict(rows["crasher"].faults)["crash"] == crasher_games
    store.close()


# -- infrastructure failures (a runner standing in for the match layer) ----------------------------

FLAKY: dict[str, int] = {}


def fake_runner(spec: TableSpec, on_game=None) -> list[GameOutcome]:
    """Plays the table in-process with random players; fails as FLAKY says (per table index)."""
    mode = FLAKY.get(str(spec.table))
    if mode is not None and FLAKY.get(f"{spec.table}-left", 1) > 0:
        FLAKY[f"{spec.table}-left"] = FLAKY.get(f"{spec.table}-left", 1) - 1
        if mode == 1:
            raise RuntimeError("the executor lost its worker")
        out = []
        for i, (gid, _rotation) in enumerate(spec.games):
            if i == 0 and mode == 2:  # one game ends, then the engine goes away
                out.append(_fake_game(spec, gid, _rotation))
            else:
                out.append(
                    GameOutcome(
                        gid, infra_kind="engine-unavailable", infra_detail="no engine (test)"
                    )
                )
            if on_game:
                on_game(out[-1])
        return out
    out = []
    for gid, rotation in spec.games:
        out.append(_fake_game(spec, gid, rotation))
        if on_game:
            on_game(out[-1])
    return out


def _fake_game(spec: TableSpec, gid: str, rotation: int) -> GameOutcome:
    n = len(spec.seats)
    players = [RandomPlayer(spec.deal_seed % 1000 + i) for i in range(n)]
    game = play_game(players, spec.settings.game, spec.deal_seed, rotation=rotation)
    record = game.record(
        game_id=gid, seats=[{"name": s.name, "entrant": s.key} for s in spec.seats]
    )
    return GameOutcome(gid, record, seconds=0.0)


def test_infrastructure_failures_are_retried_and_rate_no_one(tdir):
    FLAKY.clear()
    FLAKY.update(
        {"0": 2, "1": 1, "2": 0}
    )  # table 0: one game then engine gone; 1: runner raises; 2: all fail
    report = run_tournament(
        tdir,
        {"players": 3, "games": 9, "sandbox": "local", "concurrency": 2, "executor": "local"},
        runner=fake_runner,
        retry_delay=0.01,
    )
    assert report.exit_code == 0 and report.played == 9
    kinds = sorted(kind for _, kind, _ in report.infra)
    assert kinds.count("engine-unavailable") == 2 + 3 and kinds.count("executor") == 3
    store = check_complete(tdir)
    assert len(store.results.infra_failures()) == 8
    rows = standings(store, bootstrap=0).rows
    assert all(r.games == 9 and not r.faults for r in rows)  # nobody's loss, nobody's fault
    store.close()


def test_a_lasting_infrastructure_failure_leaves_games_for_the_next_run(tdir):
    FLAKY.clear()
    FLAKY.update({"1": 0, "1-left": 99})
    report = run_tournament(
        tdir,
        {"players": 3, "games": 9, "sandbox": "local", "retries": 2, "executor": "local"},
        runner=fake_runner,
        retry_delay=0.01,
    )
    assert report.unplayed == 3 and report.exit_code == 1
    assert sum(1 for _, kind, _ in report.infra if kind == "engine-unavailable") == 3 * 3
    assert recorded(tdir) == 6
    FLAKY.clear()
    again = run_tournament(tdir, {}, runner=fake_runner)
    assert again.played == 3 and again.exit_code == 0
    check_complete(tdir).close()


def test_a_new_version_keeps_the_old_games(tdir):
    FLAKY.clear()
    run_tournament(
        tdir,
        {"players": 3, "games": 3, "sandbox": "local", "executor": "local"},
        runner=fake_runner,
    )
    submit(tdir, EXAMPLES / "random", "lowest", sandbox="local")  # lowest v2 (other sources)
    report = run_tournament(tdir, {}, runner=fake_runner)
    assert report.played == 3 and report.done_before == 0  # a new schedule, new games
    with Store(tdir) as store:
        assert store.results.recorded_count() == 6
        labels = {r.entrant for r in standings(store, bootstrap=0).rows}
        assert labels == {"random", "heuristic", "lowest", "lowest@v1"}


def test_run_table_reports_a_missing_bot_as_infrastructure(tmp_path):
    """The referee's own trouble (here: a bot folder gone since submission) rates no one."""
    from take5_arena.referee.tournament import SeatSpec

    seats = (
        SeatSpec("a@1", "a", 1, 1, str(EXAMPLES / "random")),
        SeatSpec("b@1", "b", 1, 2, str(tmp_path / "gone")),
    )
    spec = TableSpec(
        0,
        5,
        seats,
        (("g0", 0), ("g1", 1)),
        TournamentSettings(game=Settings(players=2), sandbox=SandboxKind.LOCAL),
    )
    out = run_table(spec)
    assert [o.game_id for o in out] == ["g0", "g1"]
    assert all(o.record is None and o.infra_kind == "referee-error" for o in out)


# -- executors -------------------------------------------------------------------------------------


def test_dask_local_cluster_executor(tdir):
    pytest.importorskip("distributed")
    report = run_tournament(
        tdir,
        {"players": 2, "games": 6, "sandbox": "local", "executor": "dask:local", "concurrency": 2},
    )
    assert report.exit_code == 0 and report.played == 6
    check_complete(tdir).close()


def test_an_unreachable_scheduler_is_the_hosts_failure_exit_4(tdir):
    """A Dask scheduler that does not answer ends the run as an unreachable store or arena does:
    one line and exit 4 (docs/organisers/command-line.md), not a usage error."""
    pytest.importorskip("distributed")
    with socket.socket() as held:  # a port nobody serves
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
    args = ["tournament", "run", "-t", str(tdir), "--sandbox", "local", "--players", "2"]
    result = CliRunner().invoke(cli, [*args, "--executor", f"dask:tcp://127.0.0.1:{port}"])
    assert result.exit_code == 4, result.output
    assert "cannot reach the dask scheduler" in result.output and "Usage" not in result.output


def test_process_executor(tdir):
    report = run_tournament(
        tdir,
        {"players": 3, "games": 3, "sandbox": "local", "executor": "process", "concurrency": 1},
    )
    assert report.exit_code == 0 and report.played == 3
    check_complete(tdir).close()


# -- Docker ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def engine():
    from docker_images import image_exists

    from take5_arena.referee.defaults import BASE_IMAGE
    from take5_arena.referee.sandbox import engine as sandbox_engine
    from take5_arena.referee.sandbox.errors import EngineUnavailableError

    reason = None
    try:
        if not image_exists(BASE_IMAGE, sandbox_engine.client()):
            reason = f"base image {BASE_IMAGE} is missing (run scripts/setup-docker.sh)"
    except EngineUnavailableError as exc:
        reason = f"no Docker engine answers: {exc}"
    if reason:
        unavailable(reason)
    return True


@pytest.fixture(scope="module")
def docker_entrants(engine, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("docker-tournaments") / "base"
    for name in ("random", "lowest"):
        submit(directory, EXAMPLES / name, name, sandbox="docker")
    with Store(directory) as store:
        assert all(v.image_id for v in store.versions.all())
    return directory


@pytest.fixture
def ddir(docker_entrants, tmp_path) -> Path:
    target = tmp_path / "d"
    shutil.copytree(docker_entrants, target)
    return target


def _containers_of(pid: int) -> list[str]:
    from take5_arena.referee.sandbox.reaper import owner_label

    out = subprocess.run(
        [
            "docker",
            "ps",
            "-aq",
            "--filter",
            "label=take5.arena=1",
            "--filter",
            f"label=take5.owner={owner_label(pid)}",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.split()


@pytest.mark.docker
def test_docker_tournament_resumes_after_sigkill(ddir):
    with Store(ddir) as store:
        store.versions.add("crasher", source_hash="x", bot_dir=str(CRASHER), kind="python")
    args = referee_cmd(
        "tournament",
        "run",
        "-t",
        str(ddir),
        "-n",
        "2",
        "-g",
        "12",
        "--sandbox",
        "docker",
        "-j",
        "1",
        "--no-progress",
    )
    proc = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while recorded(ddir) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None, proc.stdout.read().decode()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    done = subprocess.run(args, check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    store = check_complete(ddir)
    assert store.results.recorded_count() == 12
    for _gid, record in store.records.all():
        seats = [s["entrant"] for s in record["seats"]]
        if "crasher@1" in seats:
            assert record["faults"][seats.index("crasher@1")][0]["kind"] == "crash"
    store.close()
    # The killed referee's reaper removes its containers.
    deadline = time.monotonic() + 30
    while _containers_of(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _containers_of(proc.pid)


CHATTY = """
import sys
from take5 import Bot, run


class Chatty(Bot):
    name, version, author = "chatty", "1", "t"

    def pick_card(self, view):
        print(f"chatty at {view.round}.{view.turn}", file=sys.stderr, flush=True)
        if view.round == 1 and view.turn == 2:
            raise ValueError("chatty gives up")
        return min(view.hand)


if __name__ == "__main__":
    run(Chatty())
"""


@pytest.mark.docker
def test_docker_tournament_keeps_each_bots_own_output(ddir, tmp_path):
    """The store's bot_output accounting and the records' turn logs are filled by Docker games as
    by local ones; the faults an author reads (MyBotFaults, the web's faults page) carry the
    bot's stderr up to the fault's turn."""
    from take5_arena.service.messages import log_tail

    bot = tmp_path / "chatty"
    bot.mkdir()
    (bot / "bot.py").write_text(CHATTY)
    with Store(ddir) as store:  # as the crasher above: its faults would refuse it at submit
        store.versions.add("chatty", source_hash="chatty", bot_dir=str(bot), kind="python")
    args = ["tournament", "run", "-t", str(ddir), "-n", "2", "-g", "6", "-j", "1"]
    done = subprocess.run(
        referee_cmd(*args, "--sandbox", "docker", "--no-progress"),
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with check_complete(ddir) as store:
        chatty = next(v.id for v in store.versions.all() if v.name == "chatty")
        played = 0
        for _gid, record in store.records.all():
            seats = [s["name"] for s in record["seats"]]
            if "chatty" not in seats:
                continue
            played += 1
            seat = seats.index("chatty")
            fault = record["faults"][seat][0]
            assert "chatty gives up" in fault["detail"]
            lines = log_tail(record, seat, fault).splitlines()
            assert lines[:2] == ["chatty at 1.1", "chatty at 1.2"], lines
            assert "ValueError: chatty gives up" in lines  # the SDK's traceback, on stderr
        usage = store.results.output_usage()[chatty]
    assert played and usage["kept_games"] == played and usage["kept_bytes"] > 0


class DockerProxy:
    """A Unix-socket forwarder to the real engine: closing it makes the engine vanish for a referee
    whose DOCKER_HOST points here (the engine itself, and other users of it, are left alone)."""

    def __init__(self, path: Path, target: str = "/var/run/docker.sock"):
        self.path, self.target = path, target
        self.conns: list[socket.socket] = []
        self.server: socket.socket | None = None

    def start(self) -> DockerProxy:
        self.server = socket.socket(socket.AF_UNIX)
        if self.path.exists():
            self.path.unlink()
        self.server.bind(str(self.path))
        self.server.listen(64)
        threading.Thread(target=self._accept, args=(self.server,), daemon=True).start()
        return self

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        self.conns.clear()
        if self.path.exists():
            self.path.unlink()


@pytest.mark.docker
def test_docker_engine_disappearing_mid_tournament(ddir, tmp_path):
    """Games while the engine is gone are infrastructure failures: retried, reported, never a bot's
    loss; once the engine is back, the same command plays them."""
    sock = Path("/tmp") / f"t5proxy-{os.getpid()}.sock"
    proxy = DockerProxy(sock).start()
    env = {**os.environ, "DOCKER_HOST": f"unix://{sock}"}
    args = referee_cmd(
        "tournament",
        "run",
        "-t",
        str(ddir),
        "-n",
        "2",
        "-g",
        "16",
        "--sandbox",
        "docker",
        "-j",
        "1",
        "--retries",
        "1",
        "--no-progress",
    )
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while recorded(ddir) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        proxy.stop()  # the engine disappears
        out, _ = proc.communicate(timeout=240)
    finally:
        proxy.stop()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out
    assert "infrastructure failures" in out and "engine-unavailable" in out, out
    store = Store(ddir)
    gone_at = store.results.recorded_count()
    assert 2 <= gone_at < 16
    assert store.results.infra_failures()
    for _gid, record in store.records.all():  # no game recorded while the engine was gone
        assert not any(
            f["kind"] in ("crash", "timeout", "connection")
            for seat in record["faults"]
            for f in seat
        )
    store.close()
    proxy = DockerProxy(sock).start()  # the engine is back
    try:
        done = subprocess.run(
            args, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        proxy.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    check_complete(ddir).close()

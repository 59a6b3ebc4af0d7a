"""The SDK a bot author sees: `from take5 import Bot, run`, the runtime over a real socket, the
harness."""

from __future__ import annotations

import ast
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT

import take5
from take5 import Bot, CallContext, GameOver, Settings, View, play_against, serve
from take5.convert import choose_row_request, pick_card_request
from take5.game import Game, Phase
from take5.harness import HarnessError, load_bot
from take5.harness import main as harness_main
from take5_arena.referee.match.remote import CallFailedError, RemoteBot

OURS = ("random", "lowest", "heuristic")


def test_public_names() -> None:
    for name in (
        "Bot",
        "run",
        "serve",
        "CallContext",
        "GameOver",
        "View",
        "Settings",
        "play_against",
        "load_bot",
        "bull_heads",
        "penalty",
        "target_row",
        "place_card",
        "place_cards",
        "cheapest_row",
        "cost_of_card",
        "unseen_cards",
        "IllegalMove",
        "CardNotInHand",
        "InvalidRow",
        "PROTOCOL_VERSION",
    ):
        assert hasattr(take5, name), name
    assert "Bot" in dir(take5)


def test_engine_import_does_not_load_grpc() -> None:
    code = "import sys, take5; take5.Game(); print('grpc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _take5_imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("take5"):
            modules.add(node.module)
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.startswith("take5"))
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, (path, "relative import")  # written as a user would
    return modules


def test_bundled_bots_use_only_the_public_sdk() -> None:
    """Written as a user would: the standard library, numpy and `from take5 import ...` (and the
    simulators take5.sim and take5.batch)."""
    for path in (ROOT / "sdk" / "take5" / "bots").glob("[!_]*.py"):
        assert _take5_imports(path) <= {"take5", "take5.sim", "take5.batch", "take5.bots"}, path


def test_example_bots_serve_the_bundled_bots() -> None:
    """The example folders are what the referee runs; their strategy is the SDK's, not a copy."""
    from take5.bots import BUILTIN

    for name in OURS:
        assert _take5_imports(EXAMPLES / name / "bot.py") == {"take5", "take5.bots"}, name
        assert type(load_bot(EXAMPLES / name)) is BUILTIN[name]


# -- the runtime over a real Unix socket -----------------------------------------------------------


class Recorder(Bot):
    name = "recorder"
    version = "2.1"
    author = "tests"

    def __init__(self) -> None:
        self.seen: list[tuple[str, View | GameOver, float]] = []

    def pick_card(self, view: View) -> int:
        self.seen.append(("pick", view, self.time_left()))
        assert isinstance(self.context, CallContext)
        return max(view.hand)

    def choose_row(self, view: View) -> int:
        self.seen.append(("row", view, self.time_left()))
        return 3

    def draft_card(self, view: View) -> int:
        self.seen.append(("draft", view, self.time_left()))
        return max(view.pool)

    def game_over(self, result: GameOver) -> None:
        self.seen.append(("over", result, self.time_left()))


@pytest.fixture
def served(tmp_path: Path):
    servers = []

    def start(bot: Bot) -> RemoteBot:
        address = f"unix:{tmp_path / f'bot{len(servers)}.sock'}"
        server = serve(bot, address)
        servers.append(server)
        remote = RemoteBot(address)
        remote.wait_ready(5)
        servers.append(remote)
        return remote

    yield start
    for item in servers:
        if isinstance(item, RemoteBot):
            item.close()
        else:
            item.stop(0.1)


def test_a_connection_is_never_shared_with_another_bots_address(tmp_path: Path) -> None:
    """The Docker launcher connects to a bot through a pinned descriptor, ``unix:/proc/self/fd/N``,
    and N is reused once a pin is closed: the same address names another bot's socket later. gRPC
    shares connections between channels whose address and settings are equal (its global
    subchannel pool), so a channel to the second bot reached the first one while any channel to
    it was open. Each RemoteBot has connections of its own."""

    class Named(Recorder):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    servers = [serve(Named(n), f"unix:{tmp_path / n}.sock") for n in ("alpha", "bravo")]
    remotes: list[RemoteBot] = []
    pin = os.open(tmp_path / "alpha.sock", os.O_PATH)
    try:
        first = RemoteBot(f"unix:/proc/self/fd/{pin}")
        remotes.append(first)
        first.wait_ready(5)
        assert first.handshake(1.0).name == "alpha"
        other = os.open(tmp_path / "bravo.sock", os.O_PATH)
        os.dup2(other, pin)  # the number now names bravo's socket, as a reused pin would
        os.close(other)
        second = RemoteBot(f"unix:/proc/self/fd/{pin}")
        remotes.append(second)
        second.wait_ready(5)
        assert second.handshake(1.0).name == "bravo"
    finally:
        os.close(pin)
        for remote in remotes:
            remote.close()
        for server in servers:
            server.stop(0.1)


def a_choose_row_view() -> View:
    game = Game(Settings(players=4), 0)
    while game.phase is not Phase.CHOOSE_ROW:
        game.play([min(game.view(s).hand) for s in range(4)])
    return game.view(game.waiting_for[0])


def test_runtime_answers_every_call(served) -> None:
    bot = Recorder()
    remote = served(bot)
    info = remote.handshake(1.0)
    assert (info.name, info.version, info.author, info.protocol_version) == (
        "recorder",
        "2.1",
        "tests",
        "1.1",
    )
    assert info.sdk.startswith("take5-python")

    game = Game(Settings(players=4), 5)
    view = game.view(1)
    request = pick_card_request(view, "g-7", 0.8).SerializeToString()
    assert remote.card_from(remote.pick_card_future(request, 0.8), 0.8) == max(view.hand)
    kind, seen, left = bot.seen[-1]
    assert kind == "pick" and seen == view
    assert 0 < left <= 0.8

    row_view = a_choose_row_view()
    assert remote.choose_row(choose_row_request(row_view, "g-7", 0.8).SerializeToString(), 0.8) == 3
    assert bot.seen[-1][1] == row_view

    draft = Game(Settings(players=3, variant="professional"), 0)
    draft_view = draft.view(draft.drafter)
    request = pick_card_request(draft_view, "g-8", 0.8).SerializeToString()
    assert remote.card_from(remote.pick_card_future(request, 0.8), 0.8) == max(draft_view.pool)
    assert bot.seen[-1][0] == "draft"

    from take5.convert import game_over_request

    over = GameOver("g-8", 1, Settings(players=3), (3, 1, 2), (3, 1, 2), (), 2, 0)
    remote.game_over_future(game_over_request(over, 0.5).SerializeToString(), 0.5).result()
    assert bot.seen[-1][:2] == ("over", over)
    assert bot.context is None  # only set during a call


class Buggy(Bot):
    def pick_card(self, view: View) -> int:
        raise KeyError("oops")

    def choose_row(self, view: View):  # type: ignore[override]
        return "row two"


def test_an_exception_in_the_bot_is_an_error_status_not_a_hang(served) -> None:
    remote = served(Buggy())
    view = Game(Settings(players=4), 1).view(0)
    with pytest.raises(CallFailedError) as failed:
        remote.card_from(
            remote.pick_card_future(pick_card_request(view, "g", 5).SerializeToString(), 5), 5
        )
    assert (
        failed.value.kind == "error"
    )  # a hang would have been a "timeout", after the 5 s deadline
    assert "the bot raised KeyError: 'oops'" in failed.value.detail
    with pytest.raises(CallFailedError) as failed:
        remote.choose_row(choose_row_request(a_choose_row_view(), "g", 5).SerializeToString(), 5)
    assert failed.value.kind == "error"
    assert "choose_row returned 'row two', a str, not an int" in failed.value.detail


def test_a_bot_without_handshake_fields_still_names_itself(served) -> None:
    class Plain(Bot):
        def pick_card(self, view: View) -> int:
            return view.hand[0]

    info = served(Plain()).handshake(1.0)
    assert info.name == "" and info.protocol_version == "1.1"


def test_default_methods() -> None:
    class Only(Bot):
        def pick_card(self, view: View) -> int:
            return view.hand[0]

    view = a_choose_row_view()
    assert Only().choose_row(view) == take5.cheapest_row(view.rows)
    game = Game(Settings(players=2, variant="professional"), 0)
    assert (
        Only().draft_card(game.view(game.drafter)) == 11
    )  # cards 1..24: 11 and 22 have 5 bull heads
    with pytest.raises(NotImplementedError):
        Bot().pick_card(view)


# -- run(): the process a referee starts --------------------------------------------------------

SERVE = """
import sys, time
from take5 import Bot, run
class Slow(Bot):
    name = "slow"
    def pick_card(self, view):
        if len(view.hand) == 10:
            time.sleep(3600)  # stuck: SIGTERM must still end the process
        return view.hand[0]
run(Slow())
"""


def start_bot(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    script = tmp_path / "bot.py"
    script.write_text(SERVE)
    full_env = dict(os.environ, PYTHONPATH=str(ROOT / "sdk"), **(env or {}))
    full_env.pop("TAKE5_LISTEN", None)
    full_env.update(env or {})
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        env=full_env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def wait_socket(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 10
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_run_serves_and_stops_on_sigterm(tmp_path: Path, how: str) -> None:
    sock = tmp_path / "s.sock"
    if how == "flag":
        proc = start_bot(tmp_path, "--listen", f"unix:{sock}")
    else:
        proc = start_bot(tmp_path, env={"TAKE5_LISTEN": f"unix:{sock}"})
    wait_socket(sock, proc)
    remote = RemoteBot(f"unix:{sock}")
    try:
        remote.wait_ready(5)
        assert remote.handshake(2).name == "slow"
        # a call stuck inside the bot
        view = Game(Settings(players=4), 1).view(0)
        future = remote.pick_card_future(pick_card_request(view, "g", 0.3).SerializeToString(), 0.3)
        with pytest.raises(CallFailedError) as failed:
            remote.card_from(future, 0.3)
        assert failed.value.kind == "timeout"
    finally:
        remote.close()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=5)
    assert proc.returncode == 0
    assert "serving on unix:" in err and "stopped" in err  # logs go to stderr
    assert not sock.exists()


def test_run_over_tcp(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = start_bot(tmp_path, "--listen", f"127.0.0.1:{port}")
    remote = RemoteBot(f"127.0.0.1:{port}")
    try:
        remote.wait_ready(10, proc.poll)
        assert remote.handshake(2).name == "slow"
    finally:
        remote.close()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=5)
    assert proc.returncode == 0


def test_run_without_an_address_says_how(tmp_path: Path) -> None:
    proc = start_bot(tmp_path)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 2
    assert "TAKE5_LISTEN" in err and "--listen" in err and "take5-harness" in err


# -- the harness ----------------------------------------------------------------------------------


def test_play_against_the_example_bots() -> None:
    result = play_against(str(EXAMPLES / "heuristic"), games=8, seed=3)
    assert result.names == ("heuristic", "random", "lowest", "heuristic#2")
    assert len(result.scores) == 8
    assert result.bot.mean_place < 2.5  # the heuristic beats random and lowest
    assert "heuristic vs random, lowest, heuristic#2: 8 games" in result.summary()


def test_play_against_with_bot_objects_and_hooks() -> None:
    bot = Recorder()
    result = play_against(
        bot, opponents=["lowest", Recorder], games=3, variant="professional", time_limit=5
    )
    overs = [item for kind, item, _ in bot.seen if kind == "over"]
    assert len(overs) == 3 and all(isinstance(o, GameOver) and o.seat == 0 for o in overs)
    assert {kind for kind, _, _ in bot.seen} >= {"draft", "pick", "over"}
    assert all(0 < left <= 5 for kind, _, left in bot.seen if kind != "over")
    assert result.settings.variant.value == "professional"


def test_harness_stops_at_an_illegal_answer() -> None:
    class Cheat(Bot):
        def pick_card(self, view: View) -> int:
            return 105

    with pytest.raises(
        HarnessError, match=r"Cheat: harness-g1, round 1, turn 1: pick_card returned 105"
    ):
        play_against(Cheat(), games=1)


def test_load_bot(tmp_path: Path) -> None:
    bot = load_bot(EXAMPLES / "lowest")
    assert type(bot).__name__ == "LowestBot" and bot.name == "lowest"
    two = tmp_path / "two.py"
    two.write_text("from take5 import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n")
    with pytest.raises(HarnessError, match="exactly one"):
        load_bot(two)
    with pytest.raises(HarnessError, match="no bot file"):
        load_bot(tmp_path / "missing.py")
    with pytest.raises(HarnessError, match="unknown opponent 'nobody'"):
        play_against(bot, opponents=["nobody"])


def test_harness_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        harness_main([str(EXAMPLES / "random" / "bot.py"), "--games", "2", "--against", "lowest"])
        == 0
    )
    assert "random vs lowest: 2 games" in capsys.readouterr().out
    assert harness_main([str(EXAMPLES / "lowest"), "--games", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["names"][0] == "lowest" and len(doc["scores"]) == 2


def test_harness_console_script() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5.harness",
            str(EXAMPLES / "lowest"),
            "--games",
            "1",
            "--against",
            "random",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "lowest vs random" in out.stdout


def test_answer_problem_names_the_mistake() -> None:
    """One text for the runtime, the referee's fault detail and the harness."""
    from take5.bot import answer_problem

    hand = (3, 11, 40)
    assert answer_problem("pick_card", 11, hand) is None
    assert (
        answer_problem("pick_card", "11", hand)
        == "pick_card returned '11', a str, not an int: return 11, not '11'"
    )
    assert (
        answer_problem("pick_card", None, hand)
        == "pick_card returned None: did you forget `return`?"
    )
    assert (
        answer_problem("pick_card", 12, hand)
        == "pick_card returned 12, which is not in your hand [3, 11, 40]"
    )
    assert (
        answer_problem("draft_card", 12, hand)
        == "draft_card returned 12, which is not in the pool [3, 11, 40]"
    )
    assert answer_problem("pick_card", True, hand) == "pick_card returned True, a bool, not an int"
    assert answer_problem("choose_row", 4, range(4)) == (
        "choose_row returned 4, not a row number 0..3 (rows are numbered from 0)"
    )
    assert answer_problem("pick_card", [11], hand) == "pick_card returned [11], a list, not an int"

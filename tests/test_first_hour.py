"""A bot author's first hour, done literally: the README's steps in a fresh venv, and the usual
slips.

Every mistake here is one a newcomer makes (a forgotten run(), a syntax error, an exception, "11"
instead of 11, a forgotten return, a wrong View field, Ctrl-C). Each must get a message that says
what to change, showing the bot's own lines and none of the harness's, and the same words from the
harness, the SDK's runtime and the referee.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest
from support import ROOT, in_ci

import take5
from take5.harness import BotLoadError, BotRaised, HarnessError, load_bot

README = ROOT / "README.md"
CI = in_ci()


def readme_bot() -> str:
    """The bot of the README's "Write a bot" section, as a newcomer would copy it."""
    text = README.read_text()
    section = text[text.index("## Write a bot") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]


def write(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(source)
    return folder


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5.harness_entry", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def referee_match(*bots: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", "match", *bots, "--threshold", "10"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


# -- the README, literally, in a fresh venv --------------------------------------------------------

NETWORK = re.compile(
    r"(NewConnectionError|Temporary failure in name resolution|Network is unreachable|"
    r"No matching distribution found for (grpcio|protobuf|setuptools))",
    re.IGNORECASE,
)


@pytest.mark.slow
def test_readme_first_steps_in_a_fresh_venv(tmp_path: Path) -> None:
    """`python3 -m venv`, `pip install './sdk[bot]'`, the README's bot, `take5-harness mybot --games
    20`."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    where = tmp_path / "venv"
    try:
        venv.create(where, with_pip=True)
    except (subprocess.CalledProcessError, OSError) as error:  # Debian without python3-venv
        if CI:
            raise
        pytest.skip(f"cannot create a venv with pip here: {error}")
    bin_dir = where / "bin"
    # `pip install ./sdk` from a copy: building the wheel writes build/ and *.egg-info next to it
    sdk = tmp_path / "sdk"
    shutil.copytree(
        ROOT / "sdk", sdk, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    )
    install = subprocess.run(
        [str(bin_dir / "pip"), "install", "--quiet", "./sdk[bot]"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    if install.returncode != 0 and NETWORK.search(install.stderr) and not CI:
        pytest.skip(
            f"no package index to install grpcio/protobuf from: {install.stderr.strip()[-300:]}"
        )
    assert install.returncode == 0, install.stderr
    write(tmp_path, "mybot", readme_bot())
    run = subprocess.run(
        [str(bin_dir / "take5-harness"), "mybot", "--games", "20"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "mybot vs random, lowest, heuristic: 20 games" in run.stdout
    # the venv's own take5, not this checkout's
    code = (
        "import sys, take5; sys.path.insert(0, 'mybot'); from bot import MyBot; "
        "print(take5.__file__); print(take5.play_against(MyBot(), games=4).summary())"
    )
    py = subprocess.run(
        [str(bin_dir / "python"), "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert py.returncode == 0, py.stderr
    assert str(where) in py.stdout.splitlines()[0]
    assert "mybot vs random, lowest, heuristic: 4 games" in py.stdout


def test_the_readme_bot_plays_here(tmp_path: Path) -> None:
    """The same steps in this environment, in a second: the README's bot through the harness."""
    write(tmp_path, "mybot", readme_bot())
    run = harness("mybot", "--games", "4", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "mybot vs random, lowest, heuristic: 4 games" in run.stdout and run.stderr == ""


def test_bundled_opponents_need_no_checkout() -> None:
    from take5.bots import BUILTIN

    assert set(BUILTIN) == {"random", "lowest", "heuristic", "search"}
    for name, cls in BUILTIN.items():
        assert Path(sys.modules[cls.__module__].__file__).is_relative_to(
            Path(take5.__file__).parent
        )
        result = take5.play_against(cls, ["random", "lowest"], games=3)
        assert result.names[0] == name and len(result.scores) == 3
    with pytest.raises(
        HarnessError, match="one of the bundled bots: random, lowest, heuristic, search"
    ):
        take5.play_against(BUILTIN["lowest"](), ["nobody"])


def test_the_search_bot_beats_the_heuristic() -> None:
    from take5.bots import HeuristicBot, SearchBot

    result = take5.play_against(
        SearchBot(rollouts=128), [HeuristicBot(), "random", "lowest"], games=8, seed=5
    )
    assert (
        result.bot.mean_place < result.stats[1].mean_place
    )  # deterministic: a fixed number of rollouts


# -- the usual slips -------------------------------------------------------------------------------

HEAD = "from take5 import Bot, run\n\nclass MyBot(Bot):\n    name = 'mybot'\n\n"
TAIL = "\nif __name__ == '__main__':\n    run(MyBot())\n"


def test_forgetting_run_is_caught_by_the_harness_and_the_referee(tmp_path: Path) -> None:
    folder = write(
        tmp_path,
        "norun",
        "from take5 import Bot\n\nclass MyBot(Bot):\n    def pick_card(self, view):\n"
        "        return min(view.hand)\n",
    )
    run = harness(str(folder), "--games", "2")
    assert run.returncode == 1
    assert (
        "never calls run(...)" in run.stderr
        and "run(MyBot())" in run.stderr
        and "Traceback" not in run.stderr
    )
    assert "2 games" in run.stdout  # the games were still played and shown
    match = referee_match(str(folder), str(ROOT / "example_bots" / "lowest"))
    assert match.returncode == 3
    assert (
        "the bot exited with status 0 before it served — did you call run(MyBot())?" in match.stdout
    )


def test_a_syntax_error_shows_the_line_not_the_harness(tmp_path: Path) -> None:
    folder = write(
        tmp_path, "broken", HEAD + "    def pick_card(self, view)\n        return 1\n" + TAIL
    )
    run = harness(str(folder))
    assert run.returncode == 1
    assert f"{folder / 'bot.py'} has a syntax error" in run.stderr
    assert (
        "line 6" in run.stderr and "SyntaxError: expected ':'" in run.stderr and "^" in run.stderr
    )
    assert (
        "Traceback" not in run.stderr
        and "importlib" not in run.stderr
        and "harness.py" not in run.stderr
    )


def test_an_exception_in_pick_card_shows_only_the_bots_frames(tmp_path: Path) -> None:
    source = (
        HEAD
        + "    def pick_card(self, view):\n        return helper(view)\n\n\n"
        + "def helper(view):\n    return view.hand[0] // (view.turn - 1)\n"
        + TAIL
    )
    folder = write(tmp_path, "raises", source)
    run = harness(str(folder))
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert (
        lines[0]
        == "take5-harness: mybot: harness-g1, round 1, turn 1: pick_card raised ZeroDivisionError"
    )
    frames = [line for line in lines if line.strip().startswith("File ")]
    assert len(frames) == 2 and all(str(folder / "bot.py") in f for f in frames)
    assert "harness.py" not in run.stderr and lines[-1].startswith("ZeroDivisionError")
    with pytest.raises(BotRaised) as raised:
        take5.play_against(load_bot(folder))
    assert "harness.py" not in raised.value.traceback and "helper" in raised.value.traceback


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "return str(min(view.hand))",
            "pick_card returned '{c}', a str, not an int: return {c}, not '{c}'",
        ),
        ("x = min(view.hand)", "pick_card returned None: did you forget `return`?"),
        (
            "return float(min(view.hand))",
            "pick_card returned {c}.0, a float, not an int: return {c}, not {c}.0",
        ),
        ("return 105", "pick_card returned 105, which is not in your hand ["),
    ],
)
def test_wrong_answers_get_one_message_everywhere(tmp_path: Path, body: str, message: str) -> None:
    folder = write(
        tmp_path, "wrong", HEAD + f"    def pick_card(self, view):\n        {body}\n" + TAIL
    )
    card = min(take5.Game(take5.Settings(players=4), 0).view(0).hand)
    expected = message.format(c=card)
    run = harness(str(folder))
    assert run.returncode == 1
    assert f"mybot: harness-g1, round 1, turn 1: {expected}" in run.stderr
    # the referee's fault detail and the bot's own log say the same
    match = referee_match(str(folder), str(ROOT / "example_bots" / "lowest"))
    assert match.returncode == 1
    if "not in your hand" in expected:
        assert (
            "pick_card returned 105, which is not in your hand [" in match.stdout
        )  # the bot's log
    else:
        assert (
            "PickCard: INTERNAL: "
            f"{message.format(c=min(take5.Game(take5.Settings(players=2), 0).view(0).hand))}"
            in match.stdout
        )
    assert "not a whole number" not in match.stdout + run.stderr


def test_a_wrong_view_field_lists_the_right_ones(tmp_path: Path) -> None:
    folder = write(
        tmp_path,
        "attr",
        HEAD + "    def pick_card(self, view):\n        return min(view.cards)\n" + TAIL,
    )
    run = harness(str(folder))
    assert run.returncode == 1
    assert "AttributeError: 'View' object has no attribute 'cards'" in run.stderr
    assert (
        "hint: a View has seat, settings, phase, round, turn, hand, rows" in run.stderr
        and "unseen()" in run.stderr
    )


def test_a_missing_file_and_a_class_less_file(tmp_path: Path) -> None:
    run = harness(str(tmp_path / "nothing"))
    assert run.returncode == 1 and "no bot file at" in run.stderr and "Traceback" not in run.stderr
    folder = write(tmp_path, "empty", "print('hello')\n")
    with pytest.raises(BotLoadError, match=r"found: none\); write `class MyBot\(Bot\):`"):
        load_bot(folder)
    usage = harness(str(folder), "--games", "0")
    assert usage.returncode == 2 and "must be at least 1" in usage.stderr


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_ends_the_harness_without_a_traceback(tmp_path: Path, inherited: str) -> None:
    """Also when the harness was started with SIGINT ignored, as a script's background jobs are."""
    playing = tmp_path / "playing"
    source = (
        "import time\n" + HEAD + "    def pick_card(self, view):\n"
        f"        open({str(playing)!r}, 'a').close()\n        time.sleep(0.2)\n    "
        "    return min(view.hand)\n" + TAIL
    )
    folder = write(tmp_path, "slow", source)
    prefix = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"] if inherited == "ignored" else []
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", "take5.harness_entry", str(folder), "--games", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not playing.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert playing.exists(), "the bot never played"  # it is playing (its output is kept)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err and "KeyboardInterrupt" not in err


def test_ctrl_c_while_the_harness_loads() -> None:
    """A Ctrl-C while the harness imports grpc (the slow part of its start) ends it quietly too."""
    code = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'grpc':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from take5.harness_entry import main\n"
        "sys.exit(main())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, "mybot"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 130 and run.stderr == "take5-harness: interrupted\n"

"""Smoke games at submit cannot be told from a tournament's: a bot that behaves only while it is
being checked is refused (docs/security.md, "Smoke games").

Each hostile bot keys on something that told the old smoke games apart (two players, the random bot
as the only opponent, two games per process, always seat 0); the smoke games now look like a table
of the tournament, so each is caught misbehaving.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import EXAMPLES

from take5_arena.referee import defaults

BOTS = {
    # plays a card it does not hold once the table has the tournament's size
    "tablesize": """
    def pick_card(self, view):
        if len(view.scores) == TABLE:
            return 105
        return min(view.hand)
""",
    # behaves for two games per process (what the old smoke played), then misbehaves
    # behaves at the default table size and threshold, misbehaves at this tournament's (3, 30)
    "tablesize3": """
    def pick_card(self, view):
        return 105 if len(view.scores) == 3 else min(view.hand)
""",
    "threshold30": """
    def pick_card(self, view):
        return 105 if view.settings.threshold == 30 else min(view.hand)
""",
    # thinks 0.6 s of CPU a move: within the default second, beyond this tournament's 0.3 s
    "slow": """
    def pick_card(self, view):
        import time
        start = time.process_time()
        while time.process_time() - start < 0.6:
            pass
        return min(view.hand)
""",
    "thirdgame": """
    games = 0

    def game_over(self, result):
        self.games += 1

    def pick_card(self, view):
        return 105 if self.games >= 2 else min(view.hand)
""",
}


def _bot(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    body = BOTS[name]
    (folder / "bot.py").write_text(
        "from take5 import Bot, run\n\n"
        f"TABLE = {defaults.PLAYERS}\n\n\n"
        f"class Hostile(Bot):\n    name = {name!r}\n{body}\n\n"
        "if __name__ == '__main__':\n    run(Hostile())\n"
    )
    return folder


@pytest.mark.parametrize("name", ["tablesize", "thirdgame"])
def test_a_bot_that_behaves_only_while_checked_is_refused(tmp_path, referee_cli, name):
    result = referee_cli(
        ["submit", str(_bot(tmp_path, name)), "--name", name, "-t", str(tmp_path / "t")]
        + ["--sandbox", "local"]
    )
    assert result.exit_code != 0, result.output
    assert "in a smoke game" in result.output and "Traceback" not in result.output


def test_smoke_games_are_a_table_of_the_tournaments_size(tmp_path, referee_cli, example_bots):
    result = referee_cli(
        ["submit", str(example_bots / "lowest"), "--name", "lowest", "-t", str(tmp_path / "t")]
        + ["--sandbox", "local"]
    )
    assert result.exit_code == 0, result.output
    k = defaults.PLAYERS
    assert f"{k} smoke games without a fault (tables of {k})" in result.output


@pytest.fixture(scope="module")
def shaped(tmp_path_factory) -> Path:
    """A tournament whose stored settings are not the defaults: tables of 3, the game ending at
    30 points, 0.3 s a move (what `tournament run` saved)."""
    directory = tmp_path_factory.mktemp("shaped") / "t"
    from click.testing import CliRunner

    from take5_arena.cli.main import main

    for bot in ("lowest", "random", "heuristic"):
        result = CliRunner().invoke(
            main,
            ["submit", str(EXAMPLES / bot), "--name", bot, "-t", str(directory)]
            + ["--sandbox", "local"],
        )
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        main,
        ["tournament", "run", "-t", str(directory), "--players", "3", "--threshold", "30"]
        + ["--timeout", "0.3", "--games", "3", "--sandbox", "local", "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    # the three were smoke-tested at the default shape, before the run set this one: it says so
    assert "note: 3 entrants were smoke-tested at another shape" in result.output
    return directory


@pytest.mark.parametrize("name", ["tablesize3", "threshold30", "slow"])
def test_smoke_games_take_the_tournaments_stored_settings(tmp_path, shaped, referee_cli, name):
    """A later submission's smoke games are played with the settings the tournament stored (table
    size, threshold, time limit), not the defaults: a bot that misbehaves only there is refused."""
    directory = tmp_path / "t"
    shutil.copytree(shaped, directory)
    result = referee_cli(
        ["submit", str(_bot(tmp_path, name)), "--name", name, "-t", str(directory)]
        + ["--sandbox", "local"]
    )
    assert result.exit_code == 3, result.output  # a bot rejected, as `match` and `--server` say
    assert "in a smoke game" in result.output and "Traceback" not in result.output
    assert "timeout" in result.output if name == "slow" else "illegal" in result.output.lower()


def test_a_resubmitted_entrant_is_tested_at_the_runs_shape(tmp_path, shaped, referee_cli):
    directory = tmp_path / "t"
    shutil.copytree(shaped, directory)
    for bot in ("lowest", "random", "heuristic"):
        result = referee_cli(
            ["submit", str(EXAMPLES / bot), "--name", bot, "-t", str(directory)]
            + ["--sandbox", "local"]
        )
        assert result.exit_code == 0 and "tables of 3" in result.output, result.output
    result = referee_cli(
        ["tournament", "run", "-t", str(directory), "--games", "6", "--sandbox", "local"]
        + ["--no-progress"]
    )
    assert result.exit_code == 0 and "smoke-tested at another" not in result.output, result.output


def test_the_same_bot_passes_the_default_shape(tmp_path, referee_cli):
    """The control: at the default table size the table-size bot plays clean."""
    result = referee_cli(
        ["submit", str(_bot(tmp_path, "tablesize3")), "--name", "t3", "-t", str(tmp_path / "t")]
        + ["--sandbox", "local"]
    )
    assert result.exit_code == 0, result.output

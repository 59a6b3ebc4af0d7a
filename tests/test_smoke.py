"""Smoke games at submit cannot be told from a tournament's: a bot that behaves only while it is
being checked is refused (docs/security.md, "Smoke games").

Each hostile bot keys on something that told the old smoke games apart (two players, the random bot
as the only opponent, two games per process, always seat 0); the smoke games now look like a table
of the tournament, so each is caught misbehaving.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize("name", sorted(BOTS))
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

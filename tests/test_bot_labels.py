"""Messages name a bot as its reader knows it: a tournament's or an arena's entrant (``name@N``)
or a submitted bot's name, never the referee's own folder for it (the artifact cache's
``<digest>/bot``, which read "bot bot (/.../artifacts/<digest>/bot) rejected")."""

from __future__ import annotations

import dataclasses
import logging

from support import EXAMPLES

from take5_arena.referee.match.botref import parse_bot
from take5_arena.referee.match.config import MatchConfig
from take5_arena.referee.match.play import Match


def test_a_bot_rejected_before_play_is_named_by_its_label(tmp_path, caplog):
    folder = tmp_path / "artifacts" / "ab12cd" / "bot"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text("import sys\nsys.exit(3)\n")
    ref = dataclasses.replace(parse_bot(str(folder)), label="alow@2")
    assert ref.described == "alow@2"
    caplog.set_level(logging.ERROR)
    with Match([ref, str(EXAMPLES / "lowest")], MatchConfig(games=1)) as match:
        match.play_game(0)
    assert [r.bot for r in match.rejections] == [ref.text]
    said = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert said and said[0].startswith("bot alow@2 was rejected before play"), said
    assert not any(str(tmp_path) in line or "bot bot" in line for line in said), said


def test_without_a_label_the_argument_says_which_bot():
    ref = parse_bot(str(EXAMPLES / "lowest"))
    assert ref.described == f"lowest ({ref.text})"

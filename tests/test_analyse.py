"""`referee analyse RECORD` (take5_arena/cli/analyse.py): each card a seat played beside the card
the SDK's search would have played, and the costliest decision named.

The blunderer plays the search's card at every turn but one, where it plays the card the search
rates worst (a turn where that costs at least 3 bull heads more): the analysis, with other random
deals, must name exactly that turn. Records that do not follow the rules, or are not records, and
hostile seat names are refused or shown inert, with the documented exit codes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from support import ROOT, referee_env

from take5 import Settings, View, play_game
from take5.analysis import analyse, expected_penalties
from take5.bots import HeuristicBot, LowestBot


class Blunderer:
    """The search's card at every turn, but the worst one at the first turn where it costs 3."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(7)
        self.blunder: tuple[int, int] | None = None

    def pick_card(self, view: View) -> int:
        expected = expected_penalties(view, 600, self.rng)
        best = min(expected, key=lambda c: (expected[c], c))
        worst = max(expected, key=lambda c: (expected[c], c))
        if self.blunder is None and expected[worst] - expected[best] >= 3:
            self.blunder = (view.round, view.turn)
            return worst
        return best

    def choose_row(self, view: View) -> int:
        return LowestBot().choose_row(view)

    def draft_card(self, view: View) -> int:
        return min(view.pool)


@pytest.fixture(scope="module")
def blundered():
    player = Blunderer()
    game = play_game([player, HeuristicBot(), LowestBot()], Settings(players=3), seed=11)
    assert player.blunder is not None
    record = game.record()
    for seat, name in zip(record["seats"], ("blunderer", "heuristic", "lowest")):
        seat["name"] = name  # as a referee's record names them (the rules ignore names)
    return record, player.blunder


def test_the_costliest_decision_is_the_blunder(blundered):
    record, blunder = blundered
    decisions = analyse(record, [0], deals=600, seed=3)  # other deals than the player's
    assert len(decisions) == sum(len(r["turns"]) for r in record["rounds"])
    worst = max(decisions, key=lambda d: d.cost)
    assert (worst.round, worst.turn) == blunder
    assert worst.cost >= 2
    assert all(d.cost >= 0 and d.expected[d.best] == min(d.expected.values()) for d in decisions)
    others = [d.cost for d in decisions if (d.round, d.turn) != blunder]
    assert max(others) < worst.cost / 2


def test_the_command_names_it(blundered, tmp_path):
    record, blunder = blundered
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    text = _referee("analyse", str(path), "--seat", "0", "--deals", "600", "--seed", "3")
    assert text.returncode == 0, text.stderr
    assert f"costliest decision: round {blunder[0]}, turn {blunder[1]}: played" in text.stdout
    doc = json.loads(_referee("analyse", str(path), "--bot", "heuristic", "--json").stdout)
    (seat,) = doc["seats"]
    assert seat["seat"] == 1 and seat["name"] == "heuristic" and seat["costliest"] is not None


def test_bad_records_and_hostile_names(blundered, tmp_path):
    record, _ = blundered
    tampered = json.loads(json.dumps(record))
    plays = tampered["rounds"][0]["turns"][0]["plays"]
    plays[0][1], plays[1][1] = plays[1][1], plays[0][1]  # seat 0 plays a card it does not hold
    (tmp_path / "t.json").write_text(json.dumps(tampered))
    done = _referee("analyse", str(tmp_path / "t.json"))
    assert done.returncode == 1 and "does not follow the rules" in done.stderr
    (tmp_path / "x.json").write_text("not a record")
    done = _referee("analyse", str(tmp_path / "x.json"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = _referee("analyse", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    hostile = json.loads(json.dumps(record))
    hostile["seats"][2]["name"] = "evil\x1b]52;c;AAAA\x07\x1b[2J"
    (tmp_path / "h.json").write_text(json.dumps(hostile))
    done = _referee("analyse", str(tmp_path / "h.json"), "--seat", "2", "--deals", "20")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    done = _referee("analyse", str(tmp_path / "h.json"), "--bot", "nobody")
    assert done.returncode == 2 and "\x1b" not in done.stderr


def _referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=referee_env(),
        timeout=300,
        check=False,
    )

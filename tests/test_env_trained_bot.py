"""The trained example bot (example_bots/trained): its features agree with the heuristic's
arithmetic, it plays legally through the harness and better than random, and it plays a real
Docker match without a fault: its folder needs nothing but the SDK and numpy, which the arena's
Python image carries."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import docker.errors
import numpy as np
import pytest
from support import EXAMPLES, ROOT, referee_env, unavailable

from take5 import Game, Phase, RandomPlayer, Settings, play_against
from take5.bots import HeuristicBot
from take5.encode import encode
from take5.harness import load_bot

BOT = EXAMPLES / "trained"
sys.path.insert(0, str(BOT))

from policy import FEATURES, card_features, hand_cards  # noqa: E402


def test_the_features_hold_the_heuristics_expected_penalty():
    """cost now + fill risk is HeuristicBot.expected_penalty, for every card of every view."""
    heuristic = HeuristicBot()
    checked = 0
    for seed in range(8):
        game = Game(Settings(players=3 + seed % 5), seed)
        players = [RandomPlayer(seed * 10 + i) for i in range(game.settings.players)]
        while not game.is_over:
            if game.phase is Phase.PLAY:
                view = game.view(seed % game.settings.players)
                obs = encode(view)[None]
                cards = hand_cards(obs)
                assert cards[0][cards[0] > 0].tolist() == list(view.hand)
                feats = card_features(obs, cards)[0]
                unseen = view.unseen()
                for slot, card in enumerate(view.hand):
                    mine = 10 * (
                        feats[slot, FEATURES.index("cost now")]
                        + feats[slot, FEATURES.index("fill risk")]
                    )
                    assert mine == pytest.approx(
                        heuristic.expected_penalty(view, card, unseen), abs=1e-4
                    )
                    checked += 1
                game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
            else:
                seat = game.waiting_for[0]
                game.choose_row(players[seat].choose_row(game.view(seat)))
    assert checked > 500


def test_it_plays_through_the_harness_and_beats_random():
    bot = load_bot(BOT / "bot.py")
    result = play_against(bot, ["random", "random", "random"], games=40, seed=3)
    assert result.bot.wins > 40 * 0.4  # a quarter is a random bot's share; it does far better
    for players in (2, 7, 10):  # one set of weights for every table size
        play_against(load_bot(BOT / "bot.py"), ["random"] * (players - 1), games=1, seed=players)


def test_its_folder_asks_for_no_extra_wheels():
    lines = [line.strip() for line in (BOT / "requirements.txt").read_text().splitlines()]
    assert all(not line or line.startswith("#") for line in lines)
    with np.load(BOT / "weights.npz") as saved:
        assert set(saved) == {"w1", "b1", "w2"} and saved["w1"].shape[0] == len(FEATURES)


# -- in Docker -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_image() -> str:
    """The Python base image (scripts/setup-docker.sh's TAKE5_PYTHON_IMAGE, else the referee's
    default), which must carry numpy: an image built before the SDK needed it is rebuilt by the
    script."""
    from docker_images import client_with_base_images

    from take5_arena.referee import defaults

    image = os.environ.get("TAKE5_PYTHON_IMAGE", defaults.BASE_IMAGE)
    client = client_with_base_images()
    try:
        labels = client.images.get(image).attrs["Config"]["Labels"] or {}
    except docker.errors.ImageNotFound:
        unavailable(f"base image {image} is missing: run scripts/setup-docker.sh")
    if "numpy" not in labels.get("take5.runtime", "").split(","):
        unavailable(
            f"base image {image} has no numpy (take5.runtime={labels.get('take5.runtime')!r}):"
            " rebuild it with scripts/setup-docker.sh"
        )
    return image


@pytest.mark.docker
def test_it_plays_a_docker_match_without_a_fault(python_image, tmp_path):
    argv = ["match", "--sandbox", "docker", "--base-image", python_image, str(BOT)]
    argv += [str(EXAMPLES / "random"), str(EXAMPLES / "heuristic"), "--games", "2", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "take5_arena", *argv, "--records", str(tmp_path / "records")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=referee_env(TAKE5_RUN_PREFIX=f"pytest-trained-{secrets.token_hex(3)}"),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["games_played"] == 2 and doc["exit_code"] == 0
    assert all(not faults for game in doc["games"] for faults in game["faults"])
    logs = list((tmp_path / "records" / "logs").glob("bot*-trained.log"))
    assert logs and "Traceback" not in logs[0].read_text(errors="replace")

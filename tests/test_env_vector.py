"""The encoder (take5.encode) and the batch environment (take5.vector): one observation size for
every table, the same vectors from a view and from a batch, no pettingzoo or gymnasium needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from take5 import Game, Phase, Settings, Variant
from take5.batch import Batch, EpsilonGreedy
from take5.encode import (
    ACTIONS,
    HAND,
    OBSERVATION_SIZE,
    OTHERS,
    SEATS,
    TOTALS,
    action_mask,
    action_masks,
    encode,
    encode_batch,
)
from take5.rules import cheapest_row
from take5.vector import VectorEnv

SDK = Path(__file__).resolve().parent.parent / "sdk"


@pytest.mark.parametrize(
    "variant,players", [("standard", 2), ("standard", 4), ("standard", 10), ("professional", 3)]
)
def test_the_batch_encoder_is_the_view_encoder(variant, players):
    """Every seat of every game, every turn: encode_batch == encode(view) and the masks agree."""
    settings = Settings(players=players, variant=Variant(variant), threshold=50)
    rng = np.random.default_rng(players)
    batch = Batch.deal(settings, range(12), rng=rng)
    games = [Game(settings, s) for s in range(12)]
    checked = 0
    while True:
        for i, game in enumerate(games):
            if game.phase is Phase.DRAFT:
                for card in batch.picks[i]:
                    game.draft(int(card))
        if batch.over.all():
            break
        observations, masks = encode_batch(batch), action_masks(batch)
        for i, game in enumerate(games):
            if game.is_over:
                continue
            for seat in range(players):
                view = game.view(seat)
                assert np.array_equal(encode(view), observations[i, seat])
                assert np.array_equal(action_mask(view), masks[i, seat])
                checked += 1
        active = batch.active
        batch.play_turn(EpsilonGreedy(0.5, rng))
        for i in np.flatnonzero(active):
            games[i].play([int(c) for c in batch.played[i]])
            while games[i].phase is Phase.CHOOSE_ROW:
                games[i].choose_row(cheapest_row(games[i].rows))
        batch.end_round(rng)
    assert checked > 1000


def test_what_the_vector_says():
    game = Game(Settings(players=3, threshold=50), 4)
    game.play([game.hands[s][0] for s in range(3)])
    while game.phase is Phase.CHOOSE_ROW:
        game.choose_row(0)
    view = game.view(1)
    obs = encode(view)
    assert obs.shape == (OBSERVATION_SIZE,) and obs.dtype == np.float32
    assert sorted(np.flatnonzero(obs[HAND]) + 1) == list(view.hand)
    assert sorted(np.flatnonzero(obs[OTHERS]) + 1) == list(view.unseen())
    assert obs[SEATS].tolist() == [1.0] * 3 + [0.0] * 7
    totals = [view.scores[s] + view.round_points[s] for s in (1, 2, 0)]  # own seat first
    assert obs[TOTALS][:3].tolist() == pytest.approx([min(1.0, t / 50) for t in totals])
    assert action_mask(view).sum() == len(view.hand) and action_mask(view).shape == (ACTIONS,)


def test_the_encoder_needs_neither_pettingzoo_nor_gymnasium():
    """A bot image has numpy but no pettingzoo: encoding and the batch environment still work, and
    take5.env says what it needs."""
    code = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pettingzoo", "gymnasium"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
from take5 import Game, Settings
from take5.encode import OBSERVATION_SIZE, encode
from take5.vector import VectorEnv
assert encode(Game(Settings(players=3), 1).view(0)).shape == (OBSERVATION_SIZE,)
VectorEnv(games=4, players=3, seed=1).reset()
assert "pettingzoo" not in sys.modules and "gymnasium" not in sys.modules
try:
    import take5.env
except ImportError as error:
    print(error)
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SDK)},
    )
    assert "take5.env needs the SDK's [rl] extra" in out.stdout, out.stdout  # one line, its extra


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(mask.shape) * mask).argmax(2)


@pytest.mark.parametrize(
    "players,variant", [(4, "standard"), (2, "standard"), (10, "standard"), (5, "professional")]
)
def test_vector_games_return_minus_their_scores(players, variant):
    env = VectorEnv(games=16, players=players, variant=variant, seed=3)
    obs, mask = env.reset()
    assert obs.shape == (16, players, OBSERVATION_SIZE) and mask.shape == (16, players, ACTIONS)
    rng = np.random.default_rng(0)
    returns = np.zeros((16, players))
    finished = 0
    for _ in range(400):
        step = env.step(random_actions(mask, rng))
        obs, mask = step.observations, step.masks
        returns += step.rewards
        for g in np.flatnonzero(step.done):
            assert returns[g].tolist() == (-step.scores[g]).tolist()
            assert step.scores[g].max() >= 66
            returns[g] = 0
            finished += 1
        assert (mask.sum(2) == env.batch.held[:, None]).all()  # every game is at a play turn
    assert finished > 16


def test_vector_env_is_seeded_and_checks_actions():
    def run(seed):
        env = VectorEnv(games=8, players=3, seed=seed)
        _, mask = env.reset()
        rng = np.random.default_rng(1)
        total = 0.0
        for _ in range(30):
            step = env.step(random_actions(mask, rng))
            mask = step.masks
            total += step.rewards.sum()
        return total, step.observations

    (a, obs_a), (b, obs_b) = run(5), run(5)
    assert a == b and np.array_equal(obs_a, obs_b)
    env = VectorEnv(games=2, players=2, seed=0)
    _, mask = env.reset()
    with pytest.raises(ValueError, match="not in the hand"):
        env.step(np.zeros((2, 2), dtype=int) + int(np.flatnonzero(mask[0, 1] == 0)[0]))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="not a card"):
        env.step(np.full((2, 2), 105))
    with pytest.raises(RuntimeError, match="reset"):
        _ = VectorEnv(games=1).batch

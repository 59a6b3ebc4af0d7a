"""take5.env: the PettingZoo AEC environment over the engine (optional: needs pettingzoo)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from pettingzoo.test import api_test, seed_test
from take5 import Game, Settings
from take5.env import ROW_ACTIONS, Take5Env, action_mask, encode


@pytest.mark.parametrize("kwargs", [{"players": 4}, {"players": 2}, {"players": 3, "variant": "professional"}])
def test_pettingzoo_api(kwargs) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Observation is not a NumPy array": dict observations are
        api_test(Take5Env(**kwargs), num_cycles=500, verbose_progress=False)


def test_seeded_resets_repeat() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: Take5Env(players=4), num_cycles=50)


def play_episode(env: Take5Env, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        returns[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) and info["view"].seat == env.agent_name_mapping[agent]
        env.step(int(rng.choice(legal)))
    return returns


def test_a_game_returns_minus_the_final_scores() -> None:
    env = Take5Env(players=5)
    returns = play_episode(env, seed=3)
    assert env.game is not None and env.game.is_over
    assert [returns[a] for a in env.possible_agents] == [-s for s in env.game.scores]
    assert sum(env.game.scores) > 0


def test_simultaneous_plays_are_hidden_until_revealed() -> None:
    env = Take5Env(players=3)
    env.reset(seed=1)
    first = env.observe("player_1")["observation"].copy()
    mask = env.observe("player_0")["action_mask"]
    env.step(int(np.flatnonzero(mask)[0]))  # player_0 chooses; nothing is revealed yet
    assert env.agent_selection == "player_1"
    assert np.array_equal(env.observe("player_1")["observation"], first)


def test_row_choice_and_illegal_actions() -> None:
    env = Take5Env(players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not legal"):
        env.step(ROW_ACTIONS)  # no row to choose in a play turn
    game = Game(Settings(players=2), 0)
    view = game.view(0)
    assert action_mask(view)[[c - 1 for c in view.hand]].all() and action_mask(view).sum() == len(view.hand)
    assert encode(view).shape == env.observation_space("player_0")["observation"].shape

"""take5.env: the PettingZoo AEC environment over the engine (optional: needs pettingzoo)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from pettingzoo.test import api_test, seed_test

from take5 import Game, Phase, Settings
from take5.env import ROW_ACTIONS, Take5Env, action_mask, encode


@pytest.mark.parametrize(
    "kwargs", [{"players": 4}, {"players": 2}, {"players": 3, "variant": "professional"}]
)
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
    returns = dict.fromkeys(env.possible_agents, 0.0)
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
    assert action_mask(view)[[c - 1 for c in view.hand]].all() and action_mask(view).sum() == len(
        view.hand
    )
    assert encode(view).shape == env.observation_space("player_0")["observation"].shape


# -- the parallel environment ----------------------------------------------------------------------

from pettingzoo.test import parallel_api_test  # noqa: E402

from take5.encode import OBSERVATION_SIZE  # noqa: E402
from take5.env import Take5ParallelEnv  # noqa: E402


@pytest.mark.parametrize(
    "kwargs",
    [
        {"players": 4},
        {"players": 2},
        {"players": 10},
        {"players": 3, "variant": "professional"},
        {"players": 5, "threshold": 10, "end_rule": "above"},
    ],
)
def test_parallel_pettingzoo_api(kwargs) -> None:
    parallel_api_test(Take5ParallelEnv(**kwargs), num_cycles=2000)


def test_parallel_seeded_resets_repeat() -> None:
    """(pettingzoo's parallel_seed_test samples actions without their masks, which a card game
    refuses: the same check with legal actions.)"""
    runs = [play_parallel(Take5ParallelEnv(players=4), seed=9) for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0] != play_parallel(Take5ParallelEnv(players=4), seed=10)


def play_parallel(env: Take5ParallelEnv, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    observations, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"])
            if len(legal):
                actions[agent] = int(rng.choice(legal))
        observations, rewards, *_ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    return returns


@pytest.mark.parametrize("variant", ["standard", "professional"])
def test_a_parallel_game_returns_minus_the_final_scores(variant) -> None:
    env = Take5ParallelEnv(players=4, variant=variant)
    returns = play_parallel(env, seed=5)
    assert env.game is not None and env.game.is_over and env.agents == []
    assert [returns[a] for a in env.possible_agents] == [-s for s in env.game.scores]


def test_parallel_steps_are_the_games_decisions() -> None:
    """A play turn takes everyone's card at once; a low card asks its owner alone for a row."""
    env = Take5ParallelEnv(players=3)
    observations, _ = env.reset(seed=0)
    asked_alone = 0
    for _ in range(200):
        if not env.agents:
            break
        acting = [a for a in env.agents if observations[a]["action_mask"].any()]
        if env.game.phase is Phase.PLAY:
            assert acting == env.agents
        else:
            assert len(acting) == 1 and env.game.phase is Phase.CHOOSE_ROW
            assert observations[acting[0]]["action_mask"][ROW_ACTIONS:].all()
            asked_alone += 1
        with pytest.raises(ValueError, match="not legal"):
            env.step({})  # every acting agent must answer
        actions = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in acting}
        observations, *_ = env.step(actions)
    assert asked_alone > 0


def test_observations_have_one_size_for_every_table() -> None:
    sizes = {
        Take5ParallelEnv(players=n).observation_space("player_0")["observation"].shape
        for n in range(2, 11)
    }
    sizes |= {
        Take5Env(players=n, variant="professional")
        .observation_space("player_0")["observation"]
        .shape
        for n in range(2, 7)
    }
    assert sizes == {(OBSERVATION_SIZE,)}
    for n in (2, 7, 10):
        game = Game(Settings(players=n), n)
        assert encode(game.view(n - 1)).shape == (OBSERVATION_SIZE,)

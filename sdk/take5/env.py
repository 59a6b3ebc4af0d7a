"""PettingZoo environments over the referee's own engine, for bot authors who train.

In short::

    pip install pettingzoo gymnasium   # or the SDK's extra: pip install './sdk[rl]'
    from take5.env import Take5Env, Take5ParallelEnv

    env = Take5Env(players=4)                       # AEC: one agent acts at a time
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        done = termination or truncation
        action = None if done else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

    par = Take5ParallelEnv(players=4)               # parallel: all agents of a play turn at once
    observations, infos = par.reset(seed=1)
    while par.agents:
        actions = {a: par.action_space(a).sample(observations[a]["action_mask"])
                   for a in par.agents}
        observations, rewards, terminations, truncations, infos = par.step(actions)

The game is `take5.Game`, the same engine the referee plays and checks records with, so a policy
trained here meets exactly these rules in a match. Plays are simultaneous in the game. In the AEC
environment every agent acts in seat order in a play turn, and the cards are revealed together once
the last one has chosen (no agent's observation shows the others' choices of that turn). In the
parallel environment a step is one decision of the game: every agent's card in a play turn; when a
card is lower than every row, a step in which only its owner chooses the row; in the professional
variant, one step per draft pick. In a step where an agent has nothing to decide its action mask is
all 0 and its action (if any) is ignored.

Actions: `Discrete(108)`. 0..103 play (or draft) card a+1; 104..107 take row a-104. Observations: a
dict with `observation`, the float vector of `take5.encode.encode` (856 values for every table
size: the seats are padded to 10 with a mask), and `action_mask`. `info["view"]` is the SDK's
`View` of the seat, so a trained policy can be wrapped in a `Bot` with the same encoding:
`take5.encode.encode(view)`, which needs numpy only (not pettingzoo or gymnasium).

Rewards: minus the bull heads an agent takes in a step (the game's penalty points), so the return of
a game is minus the agent's final score. Everyone's game ends together (terminations); there are no
truncations. For training on many games at once, see `take5.vector.VectorEnv` (the batched core,
numpy only).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, cast

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv, ParallelEnv
except ModuleNotFoundError as error:  # the [rl] extra
    from .extras import missing_extra

    raise missing_extra("rl", "take5.env", error) from None

from .encode import ACTIONS, OBSERVATION_SIZE, ROW_ACTIONS, action_mask, encode
from .game import Game, Phase, Settings, View
from .rules import DEFAULT_THRESHOLD, EndRule, Variant


def observation_size(players: int | None = None) -> int:
    """The observation's length: `take5.encode.OBSERVATION_SIZE`, the same for every table size."""
    return OBSERVATION_SIZE


def _spaces(agents: list[str]) -> tuple[dict[str, spaces.Space[Any]], dict[str, spaces.Space[Any]]]:
    observation: dict[str, spaces.Space[Any]] = {
        agent: spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(ACTIONS,), dtype=np.int8),
            }
        )
        for agent in agents
    }
    return observation, {agent: spaces.Discrete(ACTIONS) for agent in agents}


def _settings(
    players: int, variant: Variant | str, threshold: int, end_rule: EndRule | str
) -> Settings:
    # Settings checks strings and converts them (with the SDK's error messages).
    return Settings(
        players=players,
        variant=cast(Variant, variant),
        threshold=threshold,
        end_rule=cast(EndRule, end_rule),
    )


def _totals(game: Game) -> list[int]:
    """Each seat's score with this round's points so far."""
    if game.is_over:
        return list(game.scores)
    view = game.view(0)
    return [s + p for s, p in zip(view.scores, view.round_points)]


def _render(game: Game, agents: list[str]) -> str:
    totals = _totals(game)
    lines = [f"round {game.round}, turn {game.turn}"]
    lines += [f"  row {i + 1}: {' '.join(map(str, row))}" for i, row in enumerate(game.rows)]
    lines.append("  points: " + ", ".join(f"{a} {totals[i]}" for i, a in enumerate(agents)))
    return "\n".join(lines)


class Take5Env(AECEnv):
    """6 nimmt! for 2-10 agents ("player_0", ...); see the module text for spaces and rewards."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "take5_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 4,
        *,
        variant: Variant | str = Variant.STANDARD,
        threshold: int = DEFAULT_THRESHOLD,
        end_rule: EndRule | str = EndRule.AT_OR_ABOVE,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.settings = _settings(players, variant, threshold, end_rule)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = _spaces(self.possible_agents)
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- the AEC cycle ---------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None:
            seed = random.getrandbits(63)
        self.game = Game(self.settings, seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._chosen: dict[int, int] = {}
        self._select()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        view = self._view(self.agent_name_mapping[agent])
        return {"observation": encode(view), "action_mask": action_mask(view)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        view = self._view(seat)
        if action is None or not action_mask(view)[int(action)]:
            raise ValueError(
                f"{agent}: action {action!r} is not legal now (see the observation's action_mask)"
            )
        action = int(action)
        self._cumulative_rewards[agent] = 0.0
        before = _totals(game)
        if game.phase is Phase.PLAY:
            self._chosen[seat] = action + 1
            if len(self._chosen) == self.settings.players:
                cards = [self._chosen[s] for s in range(self.settings.players)]
                self._chosen = {}
                game.play(cards)
        elif game.phase is Phase.CHOOSE_ROW:
            game.choose_row(action - ROW_ACTIONS)
        else:
            game.draft(action + 1)
        after = _totals(game)
        self.rewards = {a: float(before[i] - after[i]) for i, a in enumerate(self.agents)}
        if game.is_over:
            self.terminations = dict.fromkeys(self.agents, True)
        self._select()
        self._accumulate_rewards()
        if self.render_mode == "ansi" and game.phase is Phase.PLAY and not self._chosen:
            print(self.render())

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
            return None
        return _render(self.game, self.possible_agents)

    def close(self) -> None:
        pass

    # -- internals -------------------------------------------------------------------------------

    def _view(self, seat: int) -> View:
        game = self.game
        assert game is not None, "call reset() first"
        view = game.view(seat)
        if self.agents and not game.is_over:
            self.infos[self.possible_agents[seat]] = {"view": view}
        return view

    def _select(self) -> None:
        """The agent the game waits for: seats in order in a play turn, the chooser, the drafter."""
        game = self.game
        assert game is not None
        if game.is_over:
            self.agent_selection = self.agents[0] if self.agents else self.possible_agents[0]
            return
        if game.phase is Phase.PLAY:
            seat = next(s for s in range(self.settings.players) if s not in self._chosen)
        else:
            seat = game.waiting_for[0]
        self.agent_selection = self.possible_agents[seat]


class Take5ParallelEnv(ParallelEnv):
    """6 nimmt! for 2-10 agents as a PettingZoo ParallelEnv: a step is one decision of the game
    (every agent's card in a play turn; one agent's row choice or draft pick otherwise). The same
    spaces, observations and rewards as `Take5Env`; see the module text."""

    metadata: ClassVar[dict[str, Any]] = {"name": "take5_parallel_v0", "render_modes": ["ansi"]}

    def __init__(
        self,
        players: int = 4,
        *,
        variant: Variant | str = Variant.STANDARD,
        threshold: int = DEFAULT_THRESHOLD,
        end_rule: EndRule | str = EndRule.AT_OR_ABOVE,
        render_mode: str | None = None,
    ) -> None:
        self.settings = _settings(players, variant, threshold, end_rule)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = _spaces(self.possible_agents)
        self.agents: list[str] = []
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        self.game = Game(self.settings, random.getrandbits(63) if seed is None else seed)
        self.agents = self.possible_agents[:]
        return self._observe()

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, dict[str, np.ndarray]],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Apply the actions of the agents the game waits for (the others' are ignored)."""
        game = self.game
        if game is None or not self.agents:
            raise ValueError("the game is over or was never started: call reset()")
        waiting = game.waiting_for
        chosen: list[int] = []
        for seat in waiting:
            agent = self.possible_agents[seat]
            action = actions.get(agent)
            if action is None or not action_mask(game.view(seat))[int(action)]:
                raise ValueError(
                    f"{agent}: action {action!r} is not legal now "
                    "(see the observation's action_mask)"
                )
            chosen.append(int(action))
        before = _totals(game)
        if game.phase is Phase.PLAY:
            game.play([action + 1 for action in chosen])
        elif game.phase is Phase.CHOOSE_ROW:
            game.choose_row(chosen[0] - ROW_ACTIONS)
        else:
            game.draft(chosen[0] + 1)
        after = _totals(game)
        agents = self.agents
        rewards = {a: float(before[i] - after[i]) for i, a in enumerate(agents)}
        over = game.is_over
        terminations = dict.fromkeys(agents, over)
        truncations = dict.fromkeys(agents, False)
        observations, infos = self._observe()
        if over:
            self.agents = []
        if self.render_mode == "ansi" and game.phase is Phase.PLAY:
            print(self.render())
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
            return None
        return _render(self.game, self.possible_agents)

    def close(self) -> None:
        pass

    def _observe(self) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        game = self.game
        assert game is not None
        observations: dict[str, dict[str, np.ndarray]] = {}
        infos: dict[str, dict[str, Any]] = {}
        waiting = set(game.waiting_for)
        for agent in self.agents:
            seat = self.agent_name_mapping[agent]
            view = game.view(seat)
            mask = action_mask(view) if seat in waiting else np.zeros(ACTIONS, dtype=np.int8)
            observations[agent] = {"observation": encode(view), "action_mask": mask}
            infos[agent] = {"view": view} if not game.is_over else {}
        return observations, infos


def env(**kwargs: Any) -> Take5Env:
    """PettingZoo's conventional constructor name."""
    return Take5Env(**kwargs)


def parallel_env(**kwargs: Any) -> Take5ParallelEnv:
    """PettingZoo's conventional constructor name for the parallel environment."""
    return Take5ParallelEnv(**kwargs)


__all__ = [
    "ACTIONS",
    "ROW_ACTIONS",
    "Take5Env",
    "Take5ParallelEnv",
    "action_mask",
    "encode",
    "env",
    "observation_size",
    "parallel_env",
]

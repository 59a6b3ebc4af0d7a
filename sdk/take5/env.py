"""A PettingZoo AEC environment over the referee's own engine, for bot authors who train.

    pip install pettingzoo gymnasium   # or the SDK's extra: pip install './sdk[rl]'
    from take5.env import Take5Env
    env = Take5Env(players=4)
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

The game is `take5.Game`, the same engine the referee plays and checks records with, so a policy
trained here meets exactly these rules in a match. Plays are simultaneous in the game and sequential
in AEC: in a play turn every agent acts in seat order, and the cards are revealed together once the
last one has chosen (no agent's observation shows the others' choices of that turn). When a card is
lower than every row, its owner acts again to choose the row; in the professional variant agents
draft in the game's order.

Actions: `Discrete(108)`. 0..103 play (or draft) card a+1; 104..107 take row a-104. The observation's
`action_mask` marks the legal ones. Observation: a dict with `observation`, a float vector in [0, 1]
(one-hot planes of 104 cards: the hand, each of the 4 rows, the cards seen this round, the draft pool,
the card to place when choosing a row; then the phase, and every seat's points / threshold capped at
1, starting with the agent's own), and `action_mask`. `info["view"]` is the SDK's `View` of the seat,
so a trained policy can be wrapped in a `Bot` with the same encoding (`encode(view)`).

Rewards: minus the bull heads an agent takes in a step (the game's penalty points), so the return of
a game is minus the agent's final score. Everyone's game ends together (terminations); there are no
truncations.
"""

from __future__ import annotations

import random
from typing import Any

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ImportError as error:  # an optional extra: say how to get it
    raise ImportError(
        f"take5.env needs pettingzoo and gymnasium ({error.name} is missing): "
        "pip install pettingzoo gymnasium (or the SDK's extra: pip install './sdk[rl]')"
    ) from None

from .game import Game, Phase, Settings, View
from .rules import CARD_COUNT, DEFAULT_THRESHOLD, ROW_COUNT, EndRule, Variant

ROW_ACTIONS = CARD_COUNT
"""Actions ROW_ACTIONS + r take row r."""
ACTIONS = CARD_COUNT + ROW_COUNT
_PHASES = (Phase.PLAY, Phase.CHOOSE_ROW, Phase.DRAFT)
_PLANES = 4 + ROW_COUNT  # hand, rows, seen, pool, card to place


def observation_size(players: int) -> int:
    return _PLANES * CARD_COUNT + len(_PHASES) + players


def encode(view: View) -> np.ndarray:
    """The observation vector of a seat's view (see the module text); usable from a Bot too."""
    n = view.settings.players
    out = np.zeros(observation_size(n), dtype=np.float32)

    def plane(index: int, cards: Any) -> None:
        for card in cards:
            out[index * CARD_COUNT + card - 1] = 1.0

    plane(0, view.hand)
    for r, row in enumerate(view.rows):
        plane(1 + r, row)
    plane(1 + ROW_COUNT, view.played_cards)
    plane(2 + ROW_COUNT, view.pool)
    if view.card is not None:
        plane(3 + ROW_COUNT, (view.card,))
    base = _PLANES * CARD_COUNT
    if view.phase in _PHASES:  # none once the game is over
        out[base + _PHASES.index(view.phase)] = 1.0
    threshold = view.settings.threshold
    points = view.round_points
    for k in range(n):
        seat = (view.seat + k) % n
        out[base + len(_PHASES) + k] = min(1.0, (view.scores[seat] + points[seat]) / threshold)
    return out


def action_mask(view: View) -> np.ndarray:
    """1 for each legal action of the seat whose view this is."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    if view.phase is Phase.CHOOSE_ROW:
        mask[ROW_ACTIONS : ROW_ACTIONS + len(view.rows)] = 1
    elif view.phase in (Phase.PLAY, Phase.DRAFT):
        for card in view.pool if view.phase is Phase.DRAFT else view.hand:
            mask[card - 1] = 1
    return mask


class Take5Env(AECEnv):
    """6 nimmt! for 2-10 agents ("player_0", ...); see the module text for spaces and rewards."""

    metadata: dict[str, Any] = {"name": "take5_v0", "render_modes": ["ansi"], "is_parallelizable": False}

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
        self.settings = Settings(players=players, variant=variant, threshold=threshold,  # type: ignore[arg-type]
                        end_rule=end_rule)  # type: ignore[arg-type]  # Settings checks and converts them
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        size = observation_size(players)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(ACTIONS,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(ACTIONS) for agent in self.possible_agents}
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
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
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
            raise ValueError(f"{agent}: action {action!r} is not legal now (see the observation's action_mask)")
        action = int(action)
        self._cumulative_rewards[agent] = 0.0
        before = self._totals()
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
        after = self._totals()
        self.rewards = {a: float(before[i] - after[i]) for i, a in enumerate(self.agents)}
        if game.is_over:
            self.terminations = {a: True for a in self.agents}
        self._select()
        self._accumulate_rewards()
        if self.render_mode == "ansi" and game.phase is Phase.PLAY and not self._chosen:
            print(self.render())

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
            return None
        game = self.game
        totals = self._totals()
        lines = [f"round {game.round}, turn {game.turn}"]
        lines += [f"  row {i + 1}: {' '.join(map(str, row))}" for i, row in enumerate(game.rows)]
        lines.append("  points: " + ", ".join(f"{a} {totals[i]}" for i, a in enumerate(self.possible_agents)))
        return "\n".join(lines)

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

    def _totals(self) -> list[int]:
        game = self.game
        assert game is not None
        if game.is_over:
            return list(game.scores)
        view = game.view(0)
        return [s + p for s, p in zip(view.scores, view.round_points)]

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


def env(**kwargs: Any) -> Take5Env:
    """PettingZoo's conventional constructor name."""
    return Take5Env(**kwargs)


__all__ = ["ACTIONS", "ROW_ACTIONS", "Take5Env", "action_mask", "encode", "env", "observation_size"]

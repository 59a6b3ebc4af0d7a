"""take5.core: the compiled core must play exactly the games of the pure-Python engine, refuse what
cannot be a game before doing any work, and be the one in use wherever it was built (CI)."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
from support import ROOT, in_ci, unavailable

from take5 import EndRule, InvalidSettings, Settings, Variant, core
from take5.core import _random_game, _rollouts_reference
from take5.shuffle import SplitMix64
from take5.sim import Table, play_out

COMPILED = core._CORE


def _compiled() -> object:
    if COMPILED is None:
        unavailable(f"the compiled core is not in use: {core.REASON}")
    return COMPILED


@pytest.fixture
def reference(monkeypatch):
    """Run take5.core on the pure-Python reference for the test."""
    monkeypatch.setattr(core, "_CORE", None)


def test_the_compiled_core_is_in_use_where_it_was_built():
    # scripts/test.sh builds it (CI runs it): there a fallback must not hide a broken build.
    if in_ci() or os.environ.get(core.ENV) == "compiled":
        assert core.COMPILED, core.REASON
    else:
        _compiled()
    assert core.COMPILED and core.REASON == ""


def _both(settings: Settings, seed: int, seeds: list[int], rotation: int):
    compiled = _random_game(settings, seed, seeds, rotation, trace=True)
    core._CORE = None
    try:
        engine = _random_game(settings, seed, seeds, rotation, trace=True)
    finally:
        core._CORE = COMPILED
    return compiled, engine


CASES = [(Variant.STANDARD, n) for n in range(2, 11)] + [
    (Variant.PROFESSIONAL, n) for n in range(2, 7)
]


@pytest.mark.parametrize(("variant", "players"), CASES)
def test_random_games_are_the_engines_decision_for_decision(variant, players):
    """150 seeds per table (2,100 games): every card played, row chosen and draft pick, in order,
    the rounds and the scores are play_game's with RandomPlayers."""
    _compiled()
    pick = random.Random(players * 7 + (variant is Variant.PROFESSIONAL))
    for i in range(150):
        settings = Settings(
            players=players,
            variant=variant,
            threshold=pick.choice((66, 66, 1, 20, 100)),
            end_rule=pick.choice((EndRule.AT_OR_ABOVE, EndRule.ABOVE)),
        )
        seed = pick.choice((i, -i - 1, 2**64 - 1 - i, pick.getrandbits(63)))
        seeds = [
            pick.choice((seed * 16 + s, -s, 2**64 - 1, pick.getrandbits(64)))
            for s in range(players)
        ]
        compiled, engine = _both(settings, seed, seeds, i % players)
        assert compiled == engine, (settings, seed, seeds, i % players)


def test_public_random_game_gives_the_scores(reference):
    settings = Settings(players=4)
    engine = core.random_game(settings, 7, [1, 2, 3, 4])
    core._CORE = COMPILED
    if COMPILED is not None:
        assert core.random_game(settings, 7, [1, 2, 3, 4]) == engine
    assert len(engine) == 4 and max(engine) >= 66


def _position(rng: random.Random, players: int, size: int, deals: int):
    deck = list(range(1, 105))
    rng.shuffle(deck)
    lens = [rng.randint(1, 5) for _ in range(4)]
    rows, at = [], 0
    for length in lens:
        rows.append(sorted(deck[at : at + length]))
        at += length
    table = Table.from_rows(rows)
    rest = deck[at:]
    size = min(size, len(rest) // players)
    hands = []
    for _ in range(deals):
        rng.shuffle(rest)
        hands.append([rest[s * size : (s + 1) * size] for s in range(players)])
    return table, np.array(hands, dtype=np.int8)


@pytest.mark.parametrize("players", [2, 3, 4, 6, 10])
def test_rollouts_are_play_out_deal_after_deal(players):
    """Thousands of rollouts: the same points as take5.sim.play_out with one SplitMix64, from
    every hand size, with and without forced first cards, greedy, random and mixed seats."""
    _compiled()
    rng = random.Random(players)
    for trial in range(40):
        size = rng.randint(1, 10)
        table, hands = _position(rng, players, size, 25)
        size = hands.shape[2]
        eps = rng.choice([0.0, 1.0, 0.5, [rng.random() for _ in range(players)]])
        first = None
        if trial % 2:
            first = np.where(
                np.array([[rng.random() < 0.5 for _ in range(players)] for _ in range(25)]),
                hands[:, :, rng.randrange(size)],
                0,
            ).astype(np.int8)
        seed = rng.getrandbits(64)
        compiled = core.rollouts(table, hands, eps, seed, first)
        per_seat = [float(eps)] * players if isinstance(eps, float) else eps
        reference = _rollouts_reference(table, hands, per_seat, seed, first)
        assert compiled.dtype == np.int32 and compiled.shape == (25, players)
        assert (compiled == reference).all(), (trial, eps)


def test_the_reference_rollouts_are_play_out(reference):
    rng = random.Random(5)
    table, hands = _position(rng, 4, 10, 3)
    got = core.rollouts(table, hands, 0.5, 11)
    draws = SplitMix64(11)
    for deal in range(3):
        want = play_out(table.copy(), hands[deal].tolist(), draws, 0.5)
        assert got[deal].tolist() == want


@pytest.mark.parametrize("path", ["compiled", "reference"])
@pytest.mark.parametrize(
    ("hands", "first", "message"),
    [
        (np.zeros((2, 4, 3), np.int8), None, "no such card"),
        (np.full((2, 4, 3), 105, np.int16), None, "no such card"),
        (np.full((2, 4, 3), -1, np.int8), None, "no such card"),
        (np.ones((2, 4, 3), np.int8), np.full((2, 4), 2, np.int8), "not in its hand"),
        (np.ones((2, 4, 3), np.int8), np.ones((3, 4), np.int8), "first must be"),
        (np.ones((2, 17, 3), np.int8), None, "at most 16 seats"),
        (np.ones((2, 4, 17), np.int8), None, "at most 16 seats"),
        (np.ones((4, 3), np.int8), None, "deals, seats, cards"),
    ],
)
def test_rollouts_refuse_impossible_hands_before_any_work(path, hands, first, message):
    if path == "compiled":
        _compiled()
    else:
        core._CORE = None
    try:
        with pytest.raises(ValueError, match=message):
            core.rollouts(Table([10, 20, 30, 40], [1, 1, 1, 1], [3, 3, 3, 3]), hands, 0.5, 1, first)
    finally:
        core._CORE = COMPILED


def test_the_extension_itself_refuses_lying_sizes():
    """Called directly, with sizes that do not match its buffers, it refuses instead of reading
    past them."""
    ext = _compiled()
    row = bytes([10, 20, 30, 40])
    ones = bytes([1, 1, 1, 1])
    with pytest.raises(ValueError):
        ext.rollouts(row, ones, ones, bytes(12), 1000, 4, 3, [0.5] * 4, 1, None)
    with pytest.raises(ValueError):  # a product that would wrap round to the buffer's length
        ext.rollouts(row, ones, ones, bytes(12), 2**62 + 1, 4, 3, [0.5] * 4, 1, None)
    with pytest.raises(ValueError):
        ext.rollouts(row[:3], ones, ones, bytes([1] * 12), 1, 4, 3, [0.5] * 4, 1, None)
    with pytest.raises(ValueError):
        ext.rollouts(row, ones, ones, bytes([1] * 12), 1, 4, 3, [0.5] * 3, 1, None)
    with pytest.raises(ValueError):
        ext.random_game(11, False, 66, False, 1, 0, list(range(11)), False)
    with pytest.raises(ValueError):
        ext.random_game(7, True, 66, False, 1, 0, list(range(7)), False)
    with pytest.raises(ValueError):
        ext.random_game(4, False, 66, False, 1, 4, list(range(4)), False)
    with pytest.raises(ValueError):
        ext.random_game(4, False, 66, False, 1, 0, list(range(3)), False)


def test_random_game_checks_seed_and_rotation_as_the_engine_does():
    for _ in (COMPILED, None):
        with pytest.raises(InvalidSettings):
            core.random_game(Settings(players=3), 2**64, [1, 2, 3])
        with pytest.raises(InvalidSettings):
            core.random_game(Settings(players=3), 1, [1, 2, 3], rotation=3)
        with pytest.raises(ValueError):
            core.random_game(Settings(players=3), 1, [1, 2])
        core._CORE = None
    core._CORE = COMPILED


def _import_core(env: dict[str, str], prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nimport take5.core as c\nprint(c.COMPILED, c.REASON)"
    path = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "PYTHONPATH": path},
        timeout=60,
    )


def test_take5_core_compiled_refuses_to_fall_back():
    # A build that is missing (or of another version) is an error, not a silent fallback.
    broken = "import sys; sys.modules['take5._core'] = None"
    done = _import_core({core.ENV: "compiled"}, broken)
    assert done.returncode != 0
    assert "TAKE5_CORE=compiled, but take5._core does not load" in done.stderr
    done = _import_core({core.ENV: "auto"}, broken)
    assert done.returncode == 0 and done.stdout.startswith("False take5._core does not load")
    done = _import_core({core.ENV: "python"})
    assert done.stdout.strip() == "False TAKE5_CORE=python"
    done = _import_core({core.ENV: "fast"})
    assert "TAKE5_CORE='fast': use auto, python or compiled" in done.stderr

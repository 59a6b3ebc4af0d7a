"""Synthetic 6 nimmt! tables with planted strengths, for the coverage and ranking benchmarks.

A game is decided by a performance per seat: the bot's planted strength (logits), plus the luck of
the hand it holds (normal, ``luck`` logits sd), plus Gumbel noise for the play. Gumbel noise alone
is the Plackett-Luce model, whose pairwise marginals are exactly Bradley-Terry; the hand luck makes
the pairs of one game share more than the model assumes, as in the real game. With duplicate deals a
table's deal is played once per rotation (rotation r gives hand p to seat (p + r) mod k, as
``take5.Game``), so every bot holds every hand of the deal once and the games of a set are
correlated through the hands, exactly the dependence the resampling units exist for.

Because the hand luck makes the model not quite Bradley-Terry, the rating a fit converges to is not
the planted logit itself; :func:`target_elo` finds it (the fit on a very large sample), and interval
coverage is measured against that.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from take5_arena.leaderboard.fit import ELO_PER_LOGIT
from take5_arena.leaderboard.results import GameResult

DEFAULT_LUCK = 0.8


def random_tables(n_bots: int, n_tables: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``n_tables`` tables of ``k`` distinct bots, every bot at the same number of tables (within
    one): rounds of a fresh permutation of all bots, cut into tables (a bot never sits twice)."""
    rows: list[np.ndarray] = []
    pool = np.zeros(0, dtype=np.intp)
    while len(rows) < n_tables:
        while len(pool) < k:
            fresh = rng.permutation(n_bots)
            fresh = np.concatenate([fresh[~np.isin(fresh, pool)], fresh[np.isin(fresh, pool)]])
            pool = np.concatenate([pool, fresh])
        row, pool = pool[:k], pool[k:]
        rows.append(row)
    return np.array(rows, dtype=np.intp)


def play(
    strength: np.ndarray,
    tables: np.ndarray,
    rng: np.random.Generator,
    *,
    duplicate: bool,
    luck: float = DEFAULT_LUCK,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play the tables: (seats per game, places per game, table index per game).

    Without duplicates each table is one game; with duplicates, k games, one per rotation.
    """
    t, k = tables.shape
    hands = luck * rng.standard_normal((t, k))  # quality of each hand of the table's deal
    if duplicate:
        rot = np.arange(k)
        held = (
            np.arange(k)[None, :] - rot[:, None]
        ) % k  # held[r, s]: hand of seat s at rotation r
        luck_of = hands[:, held]  # (t, k rotations, k seats)
        seats = np.repeat(tables[:, None, :], k, axis=1)
        table_of = np.repeat(np.arange(t), k)
        luck_of, seats = luck_of.reshape(t * k, k), seats.reshape(t * k, k)
    else:
        luck_of, seats, table_of = hands, tables, np.arange(t)
    perf = strength[seats] + luck_of + rng.gumbel(size=seats.shape)
    order = np.argsort(-perf, axis=1)
    places = np.empty_like(order)
    np.put_along_axis(places, order, np.arange(1, k + 1)[None, :], axis=1)
    return seats, places, table_of


def results(
    seats: np.ndarray,
    places: np.ndarray,
    table_of: np.ndarray | None,
    names: list[str],
    *,
    prefix: str = "g",
    start: int = 0,
) -> list[GameResult]:
    """GameResults of played games; ``table_of`` given: the games of a table form a duplicate
    set."""
    out = []
    for g in range(len(seats)):
        pl = tuple(int(p) for p in places[g])
        out.append(
            GameResult(
                f"{prefix}{start + g:07d}",
                tuple(names[i] for i in seats[g]),
                tuple(10 * p for p in pl),
                pl,
                duplicate_set=None if table_of is None else f"{prefix}s{table_of[g]}",
                played_at=start + g,
            )
        )
    return out


def target_elo(strength: np.ndarray, luck: float = DEFAULT_LUCK) -> np.ndarray:
    """The ratings (centred Elo) a fit converges to under this model with every pair meeting
    equally often. The performance difference of two seats, s_i - s_j + (hand luck difference) +
    (Gumbel difference, which is logistic), involves no other seat, so P(i ahead of j) is
    E[sigmoid(s_i - s_j + sqrt 2 luck Z)] (Gauss-Hermite), and the target is the Bradley-Terry fit
    to these probabilities as infinitely many results."""
    z, wq = np.polynomial.hermite_e.hermegauss(40)
    wq = wq / wq.sum()
    n = len(strength)
    a, b = np.triu_indices(n, 1)
    d = strength[a] - strength[b]
    p = (wq[None, :] / (1.0 + np.exp(-(d[:, None] + np.sqrt(2.0) * luck * z[None, :])))).sum(1)
    x = np.zeros(n)
    for _ in range(100):  # Newton on the concave log-likelihood, gauge fixed by centring
        q = 1.0 / (1.0 + np.exp(-(x[a] - x[b])))
        g = np.bincount(a, p - q, minlength=n) - np.bincount(b, p - q, minlength=n)
        h = q * (1 - q)
        hm = np.zeros((n, n))
        hm[a, b] = hm[b, a] = -h
        hm[np.diag_indices(n)] = np.bincount(a, h, minlength=n) + np.bincount(b, h, minlength=n)
        step = np.linalg.solve(hm + 1.0 / n, g)
        x += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return 1500.0 + ELO_PER_LOGIT * (x - float(x.mean()))


def play_real(
    randomness: np.ndarray,
    tables: np.ndarray,
    rng: np.random.Generator,
    *,
    duplicate: bool,
    threshold: int = 66,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Real 6 nimmt! games of bots of planted strength, with the SDK's simulator (take5.sim).

    Bot i plays take5.sim's greedy card (the fewest bull heads now) and takes the cheapest row,
    except that with probability ``randomness[i]`` it plays a uniformly random card of its hand.
    Rounds are dealt from a shuffled deck of 104 (4 row cards, 10 cards a seat) until a score
    reaches ``threshold``; places are the referee's (1 + the seats with strictly fewer bull heads).
    With duplicates each table plays its deals once per rotation (rotation r gives hand p to seat
    (p + r) mod k), so every bot holds every hand of every round's deal. Same shape of output as
    :func:`play`. Nothing here is Bradley-Terry: how a bot fares depends on the whole table.
    """
    import random

    from take5.rules import BULL_HEADS
    from take5.sim import Table, play_out

    t, k = tables.shape
    rotations = k if duplicate else 1
    seats = np.repeat(tables[:, None, :], rotations, axis=1).reshape(t * rotations, k)
    places = np.empty_like(seats)
    table_of = np.repeat(np.arange(t), rotations)
    seeds = rng.integers(0, 2**63, size=(t, 2))
    for ti in range(t):
        deal_rng = random.Random(int(seeds[ti, 0]))
        decks: list[list[int]] = []
        play_rng = random.Random(int(seeds[ti, 1]))
        eps = [float(randomness[b]) for b in tables[ti]]
        for r in range(rotations):
            scores = [0] * k
            rnd = 0
            while max(scores) < threshold:
                while len(decks) <= rnd:
                    deck = list(range(1, 105))
                    deal_rng.shuffle(deck)
                    decks.append(deck)
                deck = decks[rnd]
                hands = [deck[4 + 10 * ((s + r) % k) : 14 + 10 * ((s + r) % k)] for s in range(k)]
                table = Table(deck[:4], [1] * 4, [BULL_HEADS[c] for c in deck[:4]])
                play_out(table, hands, play_rng, eps, points=scores)
                rnd += 1
            places[ti * rotations + r] = [1 + sum(q < p for q in scores) for p in scores]
    return seats, places, table_of

"""Ratings at scale: the fit and the intervals at 1,000 to 10,000 bots and up to 1,000,000 games.

Synthetic games of 4 seats with planted strengths (finishing order by strength + Gumbel noise, so
pairwise outcomes follow Bradley-Terry), built straight into arrays and turned into the rating
arrays by the library's own ``prepare_tables`` (a million ``GameResult`` objects would measure
Python object building, not the ratings). Two schedules:

* ``random`` - every table drawn from the whole pool (a round robin's mixing: most pairs meet);
* ``ladder`` - every table drawn from a window of 60 neighbours on a ring (a ladder pairing bots of
  near rating: each bot meets a few dozen others).

For each size it prints, as CPU time of this process (``time.process_time``) and the peak of the
memory allocated by the step itself (``tracemalloc``: numpy and scipy allocate through it; what
was allocated before the step does not count):

* aggregate - one ``np.bincount`` to win/total per pair: the baseline a fit is measured against;
* fit       - ``fit_elo`` as published (dense Cholesky Newton up to 300 bots, sparse
              conjugate-gradient Newton above), its ratio to the baseline, and the other solver on
              the same games (up to ``--dense-max`` bots, 2,000 by default) with the largest
              difference in Elo;
* new game  - one more game. Baseline: the arrays built again from all games and the fit
              warm-started from the last one. Incremental (``leaderboard/incremental.py``): the
              counts per pair kept from the last fit, the game added to them and the fit
              warm-started; then five more games one by one, and the largest difference from the
              full fit in Elo;
* variances - the published intervals' variances without the inverse
              (``leaderboard/variances.py``) against ``design_cov``'s dense inverse where that runs
              (up to ``--dense-max`` bots), with the largest difference in Elo^2. A random schedule
              at 10,000 bots is left out: 11% of its pairs met, and a factor of H fills in to a
              dense one (800 MB, 3e11 flops);
* LOS next  - each bot's LOS over the next one down from the variances and the neighbours'
              covariances, and the rank ranges from the variances (what the standings publish
              above 1,000 bots); at 1,000 bots or fewer against the published LOS matrix
              (averaged over the field's spread) and the ranges it gives.

``--standings``: instead of the above, the standings without intervals of one new game:
``LiveStandings`` (leaderboard/live_board.py: the fit's counts per pair, the statistics' counts and
the online Elo kept game by game) against ``compute_standings(..., bootstrap=0)`` from every game.
``--standings --intervals``: the same with intervals (``bootstrap=100``, the publisher's), refreshed
from every game once 1% more games landed and carried in between (leaderboard/carried.py), and how
far the carried intervals are from fresh ones just before the next refresh.

Run: python bench/scale.py   (about 7 minutes on a loaded core)
     python bench/scale.py --standings --sizes 1000:100000 10000:1000000
     python bench/scale.py --sizes 1000:100000 --design random
     python bench/scale.py --standings --intervals --sizes 1000:100000 10000:1000000 --design ladder
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from take5_arena.leaderboard import fit as F
from take5_arena.leaderboard import intervals as I
from take5_arena.leaderboard import live_board as LB
from take5_arena.leaderboard import variances as V
from take5_arena.leaderboard.board import (
    Standings,
    compute_standings,
    rank_ranges,
    rank_ranges_from_variances,
)
from take5_arena.leaderboard.fit import PairData, aggregate, fit_elo, prepare_tables
from take5_arena.leaderboard.incremental import LiveRatings
from take5_arena.leaderboard.intervals import design_cov
from take5_arena.leaderboard.live_board import LiveStandings
from take5_arena.leaderboard.results import GameResult

SEATS = 4
WINDOW = 60
DEFAULT_SIZES = ("300:30000", "1000:100000", "2000:200000", "10000:1000000")

R = TypeVar("R")


def measured(fn: Callable[[], R]) -> tuple[R, float, float]:
    """(result, CPU seconds, peak MB allocated by the call)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t = time.process_time()
    out = fn()
    cpu = time.process_time() - t
    peak = (tracemalloc.get_traced_memory()[1] - base) / 1e6
    tracemalloc.stop()
    return out, cpu, peak


def schedule(n: int, games: int, design: str, rng: np.random.Generator) -> np.ndarray:
    """games x SEATS distinct bot indices."""

    def draw(k: int) -> np.ndarray:
        if design == "random":
            return rng.integers(0, n, (k, SEATS))
        base = rng.integers(0, n, k)
        return (base[:, None] + rng.integers(0, WINDOW, (k, SEATS))) % n

    seats = draw(games)
    while True:
        s = np.sort(seats, axis=1)
        bad = np.any(s[:, 1:] == s[:, :-1], axis=1)
        if not bad.any():
            return seats
        seats[bad] = draw(int(bad.sum()))


def build(seats: np.ndarray, places: np.ndarray, n: int) -> PairData:
    g = len(seats)
    gidx = np.arange(g, dtype=np.intp)
    return prepare_tables(
        tuple(f"b{i:05d}" for i in range(n)),
        tuple(f"g{i:07d}" for i in range(g)),
        gidx.astype(np.int64),
        gidx,
        [(gidx, seats.astype(np.intp), places.astype(np.int64))],
    )


def run(n: int, games: int, design: str, dense_max: int) -> None:
    rng = np.random.default_rng(n + games)
    strength = rng.normal(0.0, 1.0, n)
    seats = schedule(n, games + 1, design, rng)
    perf = strength[seats] + rng.gumbel(size=seats.shape)
    places = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)
    data, prep, _ = measured(lambda: build(seats[:games], places[:games], n))
    print(
        f"\n{design}, {n:,} bots, {games:,} games ({len(data.edge_a):,} pairs met, "
        f"{2 * len(data.edge_a) / (n * (n - 1)):.1%} of all): arrays {prep:.2f} s"
    )
    _, base, base_mb = measured(lambda: aggregate(data))
    print(f"  aggregate (baseline)  {base:7.2f} s  {base_mb:7.0f} MB")
    fit, cpu, mb = measured(lambda: fit_elo(data))
    print(f"  fit (published)       {cpu:7.2f} s  {mb:7.0f} MB   {cpu / base:5.1f} x baseline")
    if n <= dense_max:
        # the other solver: dense Cholesky Newton above DENSE_MAX_BOTS, sparse CG below
        dense_published = n <= F.DENSE_MAX_BOTS
        saved = F.DENSE_MAX_BOTS
        F.DENSE_MAX_BOTS = 0 if dense_published else n
        try:
            other, ocpu, omb = measured(lambda: fit_elo(data))
        finally:
            F.DENSE_MAX_BOTS = saved
        diff = float(np.max(np.abs(other.elo - fit.elo)))
        label = "fit (sparse CG)" if dense_published else "fit (dense Cholesky)"
        (scpu, smb), (dcpu, dmb) = (
            ((ocpu, omb), (cpu, mb)) if dense_published else ((cpu, mb), (ocpu, omb))
        )
        print(
            f"  {label:<22}{ocpu:7.2f} s  {omb:7.0f} MB   sparse/dense "
            f"time {scpu / dcpu:.2f}, memory {smb / max(dmb, 1e-9):.2f}; largest difference "
            f"{diff:.1e} Elo"
        )
    more, mprep, _ = measured(lambda: build(seats, places, n))
    full, wcpu, wmb = measured(lambda: fit_elo(more, start=fit.logits))
    print(
        f"  new game, from all games (baseline): arrays {mprep:.2f} s + warm refit {wcpu:.2f} s "
        f"{wmb:.0f} MB = {mprep + wcpu:.2f} s"
    )
    live, lcpu, lmb = measured(lambda: LiveRatings.from_pairs(data, fit))
    names = [f"b{i:05d}" for i in range(n)]

    def one_more(k: int) -> F.Fit:
        live.add([names[i] for i in seats[k]], places[k].tolist())
        return live.fit()

    inc, icpu, imb = measured(lambda: one_more(games))
    diff = float(np.max(np.abs(inc.elo - full.elo)))
    # the steady state: five more games, one fit after each (against a full fit after the last)
    extra = schedule(n, 5, design, rng)
    eperf = strength[extra] + rng.gumbel(size=extra.shape)
    eplaces = 1 + (eperf[:, None, :] > eperf[:, :, None]).sum(axis=2)
    seats, places = np.concatenate([seats, extra]), np.concatenate([places, eplaces])
    times = [measured(partial(one_more, k))[1] for k in range(games + 1, games + 6)]
    last = live.fit()
    ref = fit_elo(build(seats, places, n), start=fit.logits)
    diff = max(diff, float(np.max(np.abs(last.elo - ref.elo))))
    print(
        f"  new game, incremental: counts {lcpu:.2f} s {lmb:.0f} MB once, then add + warm refit "
        f"{icpu:.2f} s {imb:.0f} MB (next five: median {float(np.median(times)):.2f} s, "
        f"most {max(times):.2f} s); {(mprep + wcpu) / float(np.median(times + [icpu])):.0f} x "
        f"faster than the baseline; largest difference {diff:.1e} Elo"
    )
    if design == "random" and n > dense_max:
        print("  variances: left out (a dense factor; see the text)")
        return
    order = np.lexsort((np.arange(n), -fit.elo))
    (var, near), vcpu, vmb = measured(lambda: V.design_moments(data, fit, 1.0, order))
    line = f"  variances (no inverse) {vcpu:6.2f} s  {vmb:7.0f} MB"
    if n <= dense_max:
        cov, ccpu, cmb = measured(lambda: design_cov(data, fit, 1.0))
        diff = float(np.max(np.abs(np.diag(cov) - var)))
        line += (
            f"   dense inverse {ccpu:.2f} s {cmb:.0f} MB: time {vcpu / ccpu:.2f}, memory "
            f"{vmb / cmb:.2f}; largest difference {diff:.1e} Elo^2"
        )
    print(line)
    los_and_ranges(data, fit, var, near, order)


def los_and_ranges(
    data: PairData, fit: F.Fit, var: np.ndarray, near: np.ndarray, order: np.ndarray
) -> None:
    """Above LOS_MAX_BOTS: the LOS over the next bot and the rank ranges from the variances; at
    or below it, also the published (field-spread averaged) LOS matrix and its ranges."""
    n, df = data.n_bots, 1000.0  # df: the design effect's, large at these sizes
    enough = np.ones(n, dtype=bool)

    def sparse_part() -> tuple[np.ndarray, tuple[tuple[int, int] | None, ...]]:
        nxt = I.neighbour_los(fit.elo, var, near, order, enough, df)
        comp = fit.component[order].tolist()
        spans = rank_ranges_from_variances(fit.elo[order], var[order], comp, [True] * n, df)
        return nxt, spans

    (_, spans), cpu, mb = measured(sparse_part)
    width = float(np.mean([b - a for a, b in (s for s in spans if s is not None)]))
    line = (
        f"  LOS next + rank ranges from the variances {cpu:.3f} s {mb:.0f} MB "
        f"(mean range {width:.1f} places)"
    )
    if n <= I.LOS_MAX_BOTS:
        iv, icpu, _ = measured(lambda: I.rating_intervals(data, fit))
        (v2, near2) = V.design_moments(data, fit, iv.phi, order)
        mine = I.neighbour_los(fit.elo, v2, near2, order, iv.enough, iv.df)
        pairs = [(int(a), int(b)) for a, b in pairwise(order)]
        diffs = [abs(mine[a] - iv.los[a][b]) for a, b in pairs if iv.los[a][b] is not None]
        full = rank_ranges(
            tuple(tuple(iv.los[i][j] for j in order) for i in order),
            fit.component[order].tolist(),
            iv.enough[order].tolist(),
        )
        full_width = float(np.mean([b - a for a, b in (s for s in full if s is not None)]))
        line += (
            f"; the published LOS matrix (rating_intervals) {icpu:.2f} s: LOS next differs by "
            f"at most {max(diffs):.3f} (mean {float(np.mean(diffs)):.4f}), its ranges "
            f"{full_width:.1f} places wide"
        )
    print(line)


def standings_run(n: int, games: int, design: str) -> None:
    """``--standings``: the standings without intervals of one new game, ``LiveStandings`` (kept
    up to date game by game) against ``compute_standings(..., bootstrap=0)`` from every game."""
    rng = np.random.default_rng(n + games)
    strength = rng.normal(0.0, 1.0, n)
    seats = schedule(n, games + 6, design, rng)
    perf = strength[seats] + rng.gumbel(size=seats.shape)
    places = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)
    names = [f"b{i:05d}" for i in range(n)]
    results = [
        GameResult(f"g{k:07d}", tuple(names[i] for i in row), (0,) * SEATS, tuple(p), played_at=k)
        for k, (row, p) in enumerate(zip(seats.tolist(), places.tolist()))
    ]
    print(f"\n{design}, {n:,} bots, {games:,} games: standings without intervals")
    live, lcpu, lmb = measured(lambda: LiveStandings(results[:games]))
    full, fcpu, fmb = measured(lambda: compute_standings(results[: games + 1], bootstrap=0))

    def one_more(k: int) -> Standings:
        live.add(results[k])
        return live.standings()

    first, icpu, imb = measured(lambda: one_more(games))
    times = [measured(partial(one_more, k))[1] for k in range(games + 1, games + 6)]
    diff = max(abs(a.rating - b.rating) for a, b in zip(first.rows, full.rows))
    same = [a.entrant for a in first.rows] == [b.entrant for b in full.rows]
    print(
        f"  compute_standings from every game (baseline) {fcpu:.2f} s {fmb:.0f} MB; LiveStandings: "
        f"built once {lcpu:.2f} s {lmb:.0f} MB, then one game {icpu:.2f} s {imb:.0f} MB (next "
        f"five: median {float(np.median(times)):.2f} s, most {max(times):.2f} s), "
        f"{fcpu / float(np.median(times + [icpu])):.0f} x faster; same order {same}, largest "
        f"rating difference {diff:.1e} Elo"
    )


def intervals_run(n: int, games: int, design: str) -> None:
    """``--standings --intervals``: the standings with intervals (what the arena's publisher
    shows) of one new game: ``LiveStandings(bootstrap=100)``, whose intervals are refreshed from
    every game when 1% more games have landed and carried to the ratings in between
    (leaderboard/carried.py), against ``compute_standings(..., bootstrap=100)`` from every game;
    and how far the carried intervals are from fresh ones at the end of a refresh window."""
    window = max(8, int(LB.REFRESH_SHARE * games))
    LB.FAST_REFRESH_SECONDS = 0.0  # carried at every size (the publisher refreshes fast ones)
    rng = np.random.default_rng(n + games)
    strength = rng.normal(0.0, 1.0, n)
    seats = schedule(n, games + window, design, rng)
    perf = strength[seats] + rng.gumbel(size=seats.shape)
    places = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)
    names = [f"b{i:05d}" for i in range(n)]
    results = [
        GameResult(f"g{k:07d}", tuple(names[i] for i in row), (0,) * SEATS, tuple(p), played_at=k)
        for k, (row, p) in enumerate(zip(seats.tolist(), places.tolist()))
    ]
    print(f"\n{design}, {n:,} bots, {games:,} games: standings with intervals", flush=True)
    live, lcpu, lmb = measured(lambda: LiveStandings(results[:games], bootstrap=100))
    _, rcpu, rmb = measured(live.standings)  # the first call: the intervals of every game
    print(
        f"  LiveStandings: built {lcpu:.2f} s {lmb:.0f} MB, intervals of every game (refresh) "
        f"{rcpu:.2f} s {rmb:.0f} MB",
        flush=True,
    )

    def one_more(k: int) -> Standings:
        live.add(results[k])
        return live.standings()

    times = [measured(partial(one_more, k))[1:] for k in range(games, games + 6)]
    cpu, most_mb = [t for t, _ in times], max(m for _, m in times)
    print(
        f"  one game with carried intervals: median of six {float(np.median(cpu)):.2f} s, most "
        f"{max(cpu):.2f} s ({most_mb:.0f} MB)",
        flush=True,
    )
    last = games + window - 2  # the last game before a refresh is due (1% more games)
    for k in range(games + 6, last):
        live.add(results[k])
    end, ecpu, _ = measured(partial(one_more, last))
    full, fcpu, fmb = measured(lambda: compute_standings(results[: last + 1], bootstrap=100))
    assert end.intervals_as_of is not None and full.intervals_as_of is None
    mine = {r.entrant: r for r in end.rows}
    ends = [
        abs(x - y)
        for r in full.rows
        for x, y in ((mine[r.entrant].low, r.low), (mine[r.entrant].high, r.high))
        if x is not None and y is not None
    ]
    width = float(np.mean([r.high - r.low for r in full.rows if r.low is not None and r.high]))
    print(
        f"  compute_standings with intervals from every game (baseline) {fcpu:.2f} s {fmb:.0f} MB: "
        f"one game {fcpu / float(np.median(cpu)):.0f} x faster; {window - 1} games after the "
        f"refresh ({ecpu:.2f} s) an interval end differs from a fresh one by at most "
        f"{max(ends):.2f} Elo (mean {float(np.mean(ends)):.3f}; mean width {width:.1f} Elo)"
    )


def synthetic_results(n: int, games: int, design: str) -> list[GameResult]:
    """``games`` synthetic games of ``n`` bots as results (the schedule and places drawn as arrays;
    the objects made in one pass)."""
    rng = np.random.default_rng(n + games)
    strength = rng.normal(0.0, 1.0, n)
    seats = schedule(n, games, design, rng)
    perf = strength[seats] + rng.gumbel(size=seats.shape)
    places = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)
    names = [f"b{i:05d}" for i in range(n)]
    zero = (0,) * SEATS
    return [
        GameResult(f"g{k:07d}", tuple(names[i] for i in row), zero, tuple(p), played_at=k)
        for k, (row, p) in enumerate(zip(seats.tolist(), places.tolist()))
    ]


def publish_run(n: int, games: int, design: str, bootstrap: int, site_dir: str | None) -> None:
    """``--publish``: one new game's publication as the arena's publisher makes it
    (service/publisher.py), by part: ``catch_up`` of every game (a high-water mark), the standings
    (intervals carried with ``--bootstrap``), the crosstable and ratings over time kept game by
    game (``LiveStandings.document_parts``), the standings document, and the site written
    incrementally into the same folder (records of a few bytes: the site's own cost, not the
    records'). Baseline, in the same run: the crosstable and ratings over time from every game
    (``publish.document_parts``), which each publication computed twice before."""
    from take5_arena.leaderboard.collection import Games
    from take5_arena.leaderboard.publish import document_parts, standings_document
    from take5_arena.leaderboard.site_build import publish_site

    LB.FAST_REFRESH_SECONDS = 0.0  # carried at every size (the publisher refreshes fast ones)
    results = synthetic_results(n, games + 6, design)
    order = [g.game_id for g in results]
    print(f"\n{design}, {n:,} bots, {games:,} games: one game's publication", flush=True)
    live, lcpu, _ = measured(lambda: LiveStandings(results[:games], bootstrap=bootstrap, labels=1))
    table, scpu, _ = measured(live.standings)
    entrants = [r.entrant for r in table.rows]
    _, pcpu, _ = measured(lambda: live.document_parts(entrants))
    print(
        f"  LiveStandings built {lcpu:.2f} s, first standings {scpu:.2f} s, first document parts "
        f"(the ratings over time from every game) {pcpu:.2f} s",
        flush=True,
    )

    def read_records(start: int) -> Iterator[tuple[str, dict[str, Any]]]:
        for g in results[start : len(site.order)]:
            seats = [{"name": e, "entrant": e} for e in g.entrants]
            yield g.game_id, {"seats": seats, "seed": 0, "complete": True, "rounds": []}

    site = Games("scale", results[:games], order[:games], read_records)
    with tempfile.TemporaryDirectory(prefix="take5-scale-site-", dir=site_dir) as out:
        parts = live.document_parts(entrants)
        _, fcpu, fmb = measured(
            lambda: publish_site(
                out, results=site.results, games=site, standings=table, parts=parts
            )
        )
        size = sum(f.stat().st_size for f in Path(out).rglob("*") if f.is_file()) / 1e6
        print(f"  the site in full: {fcpu:.2f} s {fmb:.0f} MB, {size:.0f} MB on disk", flush=True)
        rows: list[list[float]] = []
        for k in range(games, games + 6):
            site.results, site.order = results[: k + 1], order[: k + 1]
            times = [time.process_time()]
            live.catch_up(site.results, labels=1)
            times.append(time.process_time())
            table = live.standings()
            times.append(time.process_time())
            parts = live.document_parts([r.entrant for r in table.rows])
            times.append(time.process_time())
            standings_document(table, site.results, title="scale", parts=parts)
            times.append(time.process_time())
            publish_site(out, results=site.results, games=site, standings=table, parts=parts)
            times.append(time.process_time())
            rows.append([b - a for a, b in pairwise(times)] + [times[-1] - times[0]])
        med = np.median(np.array(rows), axis=0)
        most = np.max(np.array(rows), axis=0)
        names = ("catch_up", "standings", "document parts", "document", "site", "in all")
        print(
            "  one new game, median of six (most): "
            + ", ".join(f"{a} {m:.2f} ({x:.2f})" for a, m, x in zip(names, med, most))
            + " s",
            flush=True,
        )
    _, bcpu, bmb = measured(lambda: document_parts(table, results[: games + 6]))
    print(
        f"  baseline: the document parts from every game {bcpu:.2f} s {bmb:.0f} MB, twice a "
        f"publication before: one game now {2 * bcpu / med[-1]:.0f} x faster in all",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", default=list(DEFAULT_SIZES), help="BOTS:GAMES ...")
    ap.add_argument("--design", choices=("random", "ladder", "both"), default="both")
    ap.add_argument("--dense-max", type=int, default=2000, help="largest pool run dense too")
    ap.add_argument(
        "--standings", action="store_true", help="the standings of one new game (no intervals)"
    )
    ap.add_argument(
        "--intervals", action="store_true", help="with --standings: with intervals, carried"
    )
    ap.add_argument(
        "--publish", action="store_true", help="one new game's publication (document and site)"
    )
    ap.add_argument(
        "--bootstrap", type=int, default=100, help="with --publish: intervals (0: none)"
    )
    ap.add_argument(
        "--site-dir", help="with --publish: where the site is written (a temporary folder)"
    )
    args = ap.parse_args()
    with F.one_blas_thread():  # load the thread controller once, outside every measurement
        pass
    designs = ("random", "ladder") if args.design == "both" else (args.design,)
    for size in args.sizes:
        n, games = (int(x) for x in size.split(":"))
        for design in designs:
            if args.publish:
                publish_run(n, games, design, args.bootstrap, args.site_dir)
            elif args.standings and args.intervals:
                intervals_run(n, games, design)
            elif args.standings:
                standings_run(n, games, design)
            else:
                run(n, games, design, args.dense_max)


if __name__ == "__main__":
    main()

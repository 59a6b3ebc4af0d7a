"""Coverage of the 95% rating intervals and calibration of the LOS, at every size the project runs.

The grid: tables of 2, 4 and 10 seats; single and duplicate deals; fields of 8, 32 and 100 bots; 2
to 500 games per bot (with duplicate deals a bot plays whole sets, so at least k games); and
newcomers: 16 bots joining an established field of 32 (50 games each; newcomers never meet) with 1,
2, 5 or 20 units (tables, or duplicate sets) each. Two truth models, neither of them the fit's own:

* ``pl``    - Plackett-Luce performances plus hand luck shared by the seats of a game (and, with
              duplicate deals, by the games of a set): bench/synthetic.py ``play``; bots evenly
              spaced over 350 Elo; the target is the rating the fit converges to
              (``synthetic.target_elo``).
* ``games`` - real 6 nimmt! games (take5.sim, the SDK's simulator of the rules): bot i plays the
              greedy card except with probability eps_i a random one, eps evenly spaced over
              [0, 1] (about 300 Elo from best to worst at tables of 4); ``synthetic.play_real``.
              How a bot fares depends on the whole table, so no pairwise model is right. The target
              is the Bradley-Terry solution of each bot's expected score against the field, from
              all other repetitions of the same field and table size (leave one out), so the
              target never uses the tournament it judges.

Per cell it plays ``reps`` tournaments (enough for about ``--intervals`` bot-intervals) and prints,
for the published method and the one published before: the share of bots shown an interval
("shown"), the coverage of the shown intervals with its Monte Carlo error (standard error over
repetitions), and among LOS claims at 95% or more between shown bots, the share that is wrong
(the target order is the other one). The LOS calibration table pools claims into bins of the
claimed LOS. ``--methods`` adds the other candidates (leaderboard/intervals.py: ``posterior``,
``sandwich``, ``blended``, ``bootstrap``).

``--narrow`` plays the fields where LOS is hardest instead: Plackett-Luce fields of spread 0, 25
and 50 Elo from the best bot to the worst (a spread of 0: every bot equally strong, so every claim
that one is stronger is wrong), 4 and 8 bots at tables of 2 and 4, 8 at tables of 6, 10 (and, not
quick, 100) at tables of 10, single and duplicate deals, 5 to 100 games per bot. There a claim is
wrong unless the target order is the claimed one (a tie is wrong too).

Run: python bench/coverage.py            (the full grid: about an hour on one free core)
     python bench/coverage.py --quick    (a few minutes: tables of 4 and 10, 8 and 32 bots)
     python bench/coverage.py --narrow --quick   (the narrow fields, a few minutes)
     python bench/coverage.py --truth pl --seats 2   (a part of the grid: --seats and --bots
                                                     pick cells, so a long grid runs in parts)

Besides the share of wrong claims per cell and its Monte Carlo error (the delta method over
repetitions, which reads 0.0 when one tournament made every claim), each cell says in how many of
its tournaments at least one claim at >= 95% was wrong: in a field of spread 0 that is the figure
that means something. A Plackett-Luce cell's figures also go to standard error as soon as it is
played, so that a run cut short keeps them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import numpy.typing as npt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import synthetic

from take5_arena.leaderboard.fit import (
    ELO_PER_LOGIT,
    FloatArray,
    IndexArray,
    fit_elo,
    one_blas_thread,
    prepare,
)
from take5_arena.leaderboard.intervals import IntervalMethod, rating_intervals

SPAN = 350.0  # Elo from the best to the worst bot of a Plackett-Luce field
GAMES_PER_BOT = (2, 5, 20, 100, 500)
NARROW_SPREADS = (0.0, 25.0, 50.0)  # Elo from the best to the worst bot of a narrow field
NARROW_GAMES = (5, 12, 20, 100)
FIELD = 32  # the established field newcomers join
FIELD_GAMES = 50
NEWCOMERS = 16
NEWCOMER_UNITS = (1, 2, 5, 20)
NEW = IntervalMethod.AUTO.resolved()
OLD = IntervalMethod.ROBUST
BINS = ((0.95, 0.99), (0.99, 1.0 + 1e-12))
TIE = 1e-6  # Elo: targets closer than this are equal (a field of spread 0)


#: Seats, places and table of each game, the planted strength of each bot, and the bots the
#: newcomers are clones of (None: not a newcomer cell).
Played = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]
#: One method's intervals of a repetition: low, high, enough, the LOS matrix, the information.
MethodIntervals = tuple[
    FloatArray, FloatArray, npt.NDArray[np.bool_], np.ndarray, FloatArray | None
]


@dataclass
class Rep:
    """One tournament of a cell, measured."""

    idx: np.ndarray  # bot of each entrant
    elo: FloatArray
    component: IndexArray
    score: np.ndarray  # per-bot pairwise score totals (for the games truth's target)
    count: np.ndarray
    games: int
    clones: np.ndarray | None
    measured: list[int]
    methods: dict[str, MethodIntervals] = field(default_factory=dict)  # by IntervalMethod value
    target: np.ndarray | None = None  # the target rating of every bot, once targets() ran


@dataclass
class Cell:
    truth: str
    seats: int
    duplicate: bool
    bots: int
    games_per_bot: int  # asked for; the tournament's own figure is measured
    newcomer_units: int = 0  # > 0: a newcomer cell (the field has FIELD_GAMES per bot)
    spread: float = SPAN  # Elo from the best to the worst bot (pl only)
    reps: list[Rep] = field(default_factory=list)

    @property
    def label(self) -> str:
        deals = "duplicate" if self.duplicate else "single"
        what = (
            f"newcomers, {self.newcomer_units} unit{'s' * (self.newcomer_units > 1)}"
            if self.newcomer_units
            else f"{self.bots} bots"
        )
        return f"{self.truth} {self.spread:.0f} | {self.seats} | {deals} | {what}"


def strengths(truth: str, n: int, spread: float = SPAN) -> np.ndarray:
    """Planted strength, best first: logits (pl, evenly spaced over ``spread`` Elo) or the
    probability of a random card (games)."""
    if truth == "pl":
        return (spread / 2 - np.arange(n) * spread / (n - 1)) / ELO_PER_LOGIT
    return np.linspace(0.0, 1.0, n)


def play(
    truth: str, power: np.ndarray, tables: np.ndarray, rng: np.random.Generator, duplicate: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if truth == "pl":
        return synthetic.play(power, tables, rng, duplicate=duplicate)
    return synthetic.play_real(power, tables, rng, duplicate=duplicate)


def tournament(cell: Cell, rng: np.random.Generator) -> tuple[list[int], Played]:
    """Play one tournament of the cell: (the bots measured, the games)."""
    k, per = cell.seats, (cell.seats if cell.duplicate else 1)
    power = strengths(cell.truth, cell.bots, cell.spread)
    if not cell.newcomer_units:
        tables = synthetic.random_tables(
            cell.bots, max(1, math.ceil(cell.bots * cell.games_per_bot / (k * per))), k, rng
        )
        seats, places, table_of = play(cell.truth, power, tables, rng, cell.duplicate)
        return list(range(cell.bots)), (seats, places, table_of, power, None)
    field_tables = synthetic.random_tables(
        cell.bots, math.ceil(cell.bots * FIELD_GAMES / (k * per)), k, rng
    )
    clones = rng.choice(cell.bots, size=NEWCOMERS, replace=False)
    rows: list[list[int | np.int64]] = []  # a newcomer, then others of the field
    for j in range(NEWCOMERS):
        rows.extend(
            [cell.bots + j, *rng.choice(cell.bots, size=k - 1, replace=False)]
            for _ in range(cell.newcomer_units)
        )
    tables = np.concatenate([field_tables, np.array(rows, dtype=np.intp)])
    power = np.concatenate([power, power[clones]])
    seats, places, table_of = play(cell.truth, power, tables, rng, cell.duplicate)
    return list(range(cell.bots, cell.bots + NEWCOMERS)), (seats, places, table_of, power, clones)


def measure(cell: Cell, methods: list[IntervalMethod], rng: np.random.Generator, rep: int) -> None:
    bots, played = tournament(cell, rng)
    seats, places, table_of, power, clones = played
    n_all = len(power)
    names = [f"b{i:03d}" for i in range(n_all)]
    results = synthetic.results(seats, places, table_of if cell.duplicate else None, names)
    data = prepare(results)
    fit = fit_elo(data)
    idx = np.array([int(e[1:]) for e in data.entrants])  # bot of each entrant
    # per-bot pairwise score totals (for the games truth's target)
    score = np.zeros(n_all)
    count = np.zeros(n_all)
    a, b = idx[data.edge_a[data.obs_edge]], idx[data.edge_b[data.obs_edge]]
    np.add.at(score, a, data.obs_score)
    np.add.at(score, b, 1.0 - data.obs_score)
    np.add.at(count, a, 1.0)
    np.add.at(count, b, 1.0)
    out = Rep(
        idx=idx,
        elo=fit.elo,
        component=fit.component,
        score=score,
        count=count,
        games=len(results) * cell.seats,
        clones=clones,
        measured=bots,
    )
    for m in methods:
        if m is IntervalMethod.BOOTSTRAP and cell.bots > 8:
            continue
        iv = rating_intervals(data, fit, method=m, seed=rep)
        los = (
            np.array([[np.nan if v is None else v for v in row] for row in iv.los])
            if iv.los
            else np.zeros((0, 0))
        )
        out.methods[m.value] = (iv.low, iv.high, iv.enough, los, iv.information)
    cell.reps.append(out)


def bt_solve(mean_score: np.ndarray) -> np.ndarray:
    """Ratings (centred Elo) whose mean expected score against everyone else is ``mean_score``."""
    with one_blas_thread():  # 100 x 100 solves: with BLAS threads on a busy host, 0.2 s each
        return _bt_solve(mean_score)


def _bt_solve(mean_score: np.ndarray) -> np.ndarray:
    n = len(mean_score)
    x = np.zeros(n)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x[:, None] - x[None, :])))
        np.fill_diagonal(p, 0.0)
        g = mean_score * (n - 1) - p.sum(1)
        w = p * (1 - p)
        h = np.diag(w.sum(1)) - w + 1.0 / n
        step = np.linalg.solve(h, g)
        x += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return 1500.0 + ELO_PER_LOGIT * (x - float(x.mean()))


def targets(cells: list[Cell]) -> None:
    """Attach the target rating of every bot to every repetition (see the module text)."""
    groups: dict[tuple[str, int, int, float], list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.truth, c.seats, c.bots, c.spread), []).append(c)
    for (truth, _, n, spread), group in groups.items():
        if truth == "pl":
            fixed = synthetic.target_elo(strengths("pl", n, spread))
            for c in group:
                for r in c.reps:
                    r.target = _extend(fixed, r)
            continue
        main = [r for c in group if not c.newcomer_units for r in c.reps]
        score = sum((r.score[:n] for r in main), np.zeros(n))
        count = sum((r.count[:n] for r in main), np.zeros(n))
        for c in group:
            for r in c.reps:
                own_s = r.score[:n] if not c.newcomer_units else 0.0
                own_c = r.count[:n] if not c.newcomer_units else 0.0
                r.target = _extend(bt_solve((score - own_s) / (count - own_c)), r)


def _extend(target: np.ndarray, rep: Rep) -> np.ndarray:
    clones = rep.clones
    return target if clones is None else np.concatenate([target, target[clones]])


@dataclass
class Tally:
    hits: list[float] = field(default_factory=list)  # per rep: covered, shown, measured
    shown: list[float] = field(default_factory=list)
    measured: list[float] = field(default_factory=list)
    claims: dict[int, list[float]] = field(default_factory=dict)  # bin -> per rep claims
    wrong: dict[int, list[float]] = field(default_factory=dict)
    claimed: dict[int, list[float]] = field(default_factory=dict)  # sum of claimed LOS
    ranked: list[float] = field(default_factory=list)  # per rep: rank ranges given, true place in
    placed: list[float] = field(default_factory=list)

    def tournaments_wrong(self) -> tuple[int, int]:
        """Tournaments with at least one wrong claim at >= 95%, of all: in a field of spread 0
        every claim is wrong, so the share of wrong claims is 100% as soon as one tournament makes
        one, and its error over repetitions says nothing; this says how often that happens."""
        k = len(self.hits)
        return sum(1 for r in range(k) if any(self.wrong[b][r] for b in self.wrong)), k

    def ranks(self) -> tuple[float, float]:
        return ratio(self.placed, self.ranked)

    def coverage(self) -> tuple[float, float]:
        return ratio(self.hits, self.shown)

    def wrong_share(self, bins: tuple[int, ...] = (0, 1)) -> tuple[float, float, int]:
        c = [sum(self.claims[b][r] for b in bins) for r in range(len(self.hits))]
        w = [sum(self.wrong[b][r] for b in bins) for r in range(len(self.hits))]
        share, err = ratio(w, c)
        return share, err, int(sum(c))


def ratio(num: list[float], den: list[float]) -> tuple[float, float]:
    """A ratio of sums over repetitions and its standard error (the delta method over reps)."""
    x, y = np.asarray(num), np.asarray(den)
    if y.sum() == 0:
        return math.nan, math.nan
    r = x.sum() / y.sum()
    k = len(x)
    if k < 2:
        return float(r), math.nan
    resid = x - r * y
    return float(r), float(math.sqrt(k / (k - 1) * np.sum(resid**2)) / y.sum())


def tally(cell: Cell, method: str) -> Tally:
    t = Tally(
        claims={b: [] for b in range(len(BINS))},
        wrong={b: [] for b in range(len(BINS))},
        claimed={b: [] for b in range(len(BINS))},
    )
    for r in cell.reps:
        if method not in r.methods:
            continue
        low, high, enough, los, _ = r.methods[method]
        idx, target, comp = r.idx, r.target, r.component
        assert target is not None, "targets() first"
        tgt = target[idx]
        # the published ratings are centred per component: so is the target
        for c in np.unique(comp):
            sel = comp == c
            tgt[sel] = tgt[sel] - tgt[sel].mean() + 1500.0
        measured = np.isin(idx, r.measured)
        shown = measured & enough
        covered = shown & (low <= tgt) & (tgt <= high)
        t.hits.append(float(covered.sum()))
        t.shown.append(float(shown.sum()))
        t.measured.append(float(measured.sum()))
        # LOS claims i over j, i measured, both shown, same component
        ok = shown[:, None] & enough[None, :] & (comp[:, None] == comp[None, :])
        np.fill_diagonal(ok, False)
        if cell.newcomer_units:  # newcomer against the field only
            ok &= ~measured[None, :]
        v = np.where(ok, los, np.nan) if los.size else np.full(ok.shape, np.nan)
        wrong = tgt[:, None] <= tgt[None, :] + TIE  # a tie is no order: claiming one is wrong
        # rank ranges (board.rank_ranges): the true place (a set of places among ties) must meet it
        same = comp[:, None] == comp[None, :]
        sure = np.where(same & enough[:, None] & enough[None, :], np.nan_to_num(los), 0.0) >= 0.95
        best = 1 + sure.sum(axis=0)
        worst = same.sum(axis=1) - sure.sum(axis=1)
        top = 1 + (same & (tgt[None, :] > tgt[:, None] + TIE)).sum(axis=1)
        bottom = same.sum(axis=1) - (same & (tgt[None, :] < tgt[:, None] - TIE)).sum(axis=1)
        t.ranked.append(float(shown.sum()))
        t.placed.append(float((shown & (best <= bottom) & (top <= worst)).sum()))
        for bi, (lo, hi) in enumerate(BINS):
            sel = (v >= lo) & (v < hi)
            t.claims[bi].append(float(sel.sum()))
            t.wrong[bi].append(float((sel & wrong).sum()))
            t.claimed[bi].append(float(np.nansum(np.where(sel, v, 0.0))))
    return t


def fmt(value: float, err: float, digits: int = 1) -> str:
    if math.isnan(value):
        return "-"
    e = "" if math.isnan(err) else f" ±{100 * err:.{digits}f}"
    return f"{100 * value:.{digits}f}{e}"


class Row(TypedDict):
    """A cell's line of the coverage table; shown, cov and wrong by method."""

    truth: str
    seats: int
    deals: str
    bots: str
    gpb: float
    reps: int
    shown: dict[str, float]  # share of the measured bots shown an interval
    cov: dict[str, tuple[float, float]]  # coverage and its error
    wrong: dict[str, tuple[float, float, int]]  # share of wrong LOS claims, its error, claims
    ranks: dict[str, tuple[float, float]]  # share of rank ranges holding the true place, error
    bad: dict[str, tuple[int, int]]  # tournaments with a wrong LOS claim at >= 95%, of all


def report(rows: list[Row], methods: list[str]) -> None:
    """The coverage table (published method against the one before) and, with more methods, how
    many cells each keeps within 93-97%."""
    new, old = methods[0], methods[1]

    def cov_text(row: Row, m: str) -> str:
        if m not in row["cov"]:
            return "not enough"
        v, e = row["cov"][m]
        return "not enough" if math.isnan(v) else fmt(v, e)

    def los_text(row: Row, m: str) -> str:
        if m not in row["wrong"]:
            return "-"
        v, e, n = row["wrong"][m]
        return f"{fmt(v, e)} ({n})" if n else "- (0)"

    def bad_text(row: Row, m: str) -> str:
        bad, k = row["bad"].get(m, (0, 0))
        return f"{bad}/{k}" if k else "-"

    def rank_text(row: Row, m: str) -> str:
        v, e = row["ranks"].get(m, (math.nan, math.nan))
        return "-" if math.isnan(v) else fmt(v, e)

    def verdict(row: Row, m: str) -> str:
        if m not in row["cov"] or row["shown"][m] == 0:
            return "not enough"
        v = row["cov"][m][0]
        return "yes" if 0.93 <= v <= 0.97 else "no"

    print(
        "| truth | seats | deals | bots | games/bot | reps | shown | coverage (± MC error) | in "
        f"93-97% | LOS >= 95% wrong (claims) | tournaments with a wrong claim | rank range holds | "
        f"{old}: shown | {old}: coverage | {old}: LOS >= 95% wrong |"
    )
    print("|---" * 15 + "|")
    for row in rows:
        shown = row["shown"]
        print(
            f"| {row['truth']} | {row['seats']} | {row['deals']} | {row['bots']} | "
            f"{row['gpb']:.0f} | {row['reps']} | {100 * shown.get(new, 0.0):.0f}% | "
            f"{cov_text(row, new)} | "
            f"{verdict(row, new)} | {los_text(row, new)} | {bad_text(row, new)} | "
            f"{rank_text(row, new)} | "
            f"{100 * shown.get(old, 0.0):.0f}% | "
            f"{cov_text(row, old)} | {los_text(row, old)} |"
        )
    print("\nEvery method on the same tournaments (cells where it shows an interval):\n")
    print(
        "| method | cells | coverage in 93-97% | lowest | median | highest "
        "| cells with LOS >= 95% wrong > 5% (20+ claims) |"
    )
    print("|---|---|---|---|---|---|---|")
    for m in methods:
        covs = [
            row["cov"][m][0] for row in rows if m in row["cov"] and not math.isnan(row["cov"][m][0])
        ]
        bad = sum(
            1
            for row in rows
            if m in row["wrong"] and row["wrong"][m][2] >= 20 and row["wrong"][m][0] > 0.05
        )
        if not covs:
            continue
        inside = sum(1 for c in covs if 0.93 <= c <= 0.97)
        print(
            f"| {m} | {len(covs)} | {inside} | {100 * min(covs):.1f}% | "
            f"{100 * float(np.median(covs)):.1f}% | {100 * max(covs):.1f}% | {bad} |"
        )
    sys.stdout.flush()


def grid(quick: bool, truths: list[str]) -> list[Cell]:
    cells = []
    seats = (4, 10) if quick else (2, 4, 10)
    fields = (8, 32) if quick else (8, 32, 100)
    sizes = (5, 20, 100) if quick else GAMES_PER_BOT
    for truth in truths:
        for k in seats:
            for dup in (False, True):
                for n in fields:
                    if k > n:
                        continue  # a table of 10 needs 10 bots
                    seen = set()
                    for g in sizes:
                        tables = max(1, math.ceil(n * g / (k * (k if dup else 1))))
                        if tables in seen:
                            continue
                        seen.add(tables)
                        cells.append(Cell(truth, k, dup, n, g))
                cells.extend(
                    Cell(truth, k, dup, FIELD, FIELD_GAMES, newcomer_units=u)
                    for u in ((1, 5) if quick else NEWCOMER_UNITS)
                )
    return cells


def narrow_grid(quick: bool) -> list[Cell]:
    """The narrow fields (see the module text): where the field's spread is hardest to measure."""
    fields = {2: (4, 8), 4: (4, 8), 6: (8,), 10: (10,) if quick else (10, 100)}
    cells = []
    for spread in NARROW_SPREADS:
        for k, sizes in fields.items():
            for dup in (False, True):
                for n in sizes:
                    seen = set()
                    for g in NARROW_GAMES:
                        tables = max(1, math.ceil(n * g / (k * (k if dup else 1))))
                        if tables not in seen:
                            seen.add(tables)
                            cells.append(Cell("pl", k, dup, n, g, spread=spread))
    return cells


def cell_seed(seed: int, cell: Cell) -> list[int]:
    """The random seed of a cell's tournaments: the run's seed and the cell's own parameters, so a
    cell plays the same tournaments whichever cells ``--seats``/``--bots`` (or a changed grid)
    leave around it (its position in the list gave other ones to each filter)."""
    truth = ("pl", "games").index(cell.truth)
    return [
        seed,
        truth,
        cell.seats,
        int(cell.duplicate),
        cell.bots,
        cell.games_per_bot,
        cell.newcomer_units,
        round(1000 * cell.spread),
    ]


def progress(cell: Cell) -> str:
    """The published method's figures of a Plackett-Luce cell as soon as it is played (its target
    needs no other cell), so that a run cut short on a loaded host keeps what it measured."""
    if cell.truth != "pl":
        return ""
    targets([cell])
    t = tally(cell, NEW.value)
    cov, cov_err = t.coverage()
    wrong, wrong_err, claims = t.wrong_share()
    bad, k = t.tournaments_wrong()
    return (
        f"; coverage {fmt(cov, cov_err)}, LOS >= 95% wrong {fmt(wrong, wrong_err)} ({claims}), "
        f"{bad}/{k} tournaments with a wrong claim"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="tables of 4 and 10, 8 and 32 bots, fewer sizes"
    )
    ap.add_argument(
        "--intervals",
        type=int,
        default=0,
        help="bot-intervals per cell (default 2000 pl / 600 games; quick: 400 / 160)",
    )
    ap.add_argument("--truth", choices=("pl", "games", "both"), default="both")
    ap.add_argument(
        "--narrow", action="store_true", help="the narrow fields (spread 0-50 Elo, few bots) only"
    )
    ap.add_argument(
        "--seats",
        default="",
        help="only these table sizes, comma-separated (to run the grid in parts)",
    )
    ap.add_argument("--bots", default="", help="only fields of these many bots, comma-separated")
    ap.add_argument("--methods", default="", help="extra methods, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    truths = ["pl", "games"] if args.truth == "both" else [args.truth]
    methods = [NEW, OLD] + [IntervalMethod(m) for m in args.methods.split(",") if m]
    cells = narrow_grid(args.quick) if args.narrow else grid(args.quick, truths)
    if args.seats:
        cells = [c for c in cells if c.seats in {int(k) for k in args.seats.split(",")}]
    if args.bots:
        cells = [c for c in cells if c.bots in {int(n) for n in args.bots.split(",")}]
    started = time.perf_counter()
    print(
        f"{len(cells)} cells; methods: {', '.join(m.value for m in methods)} "
        f"({NEW.value} is published, {OLD.value} was)\n",
        file=sys.stderr,
    )
    for ci, cell in enumerate(cells):
        want = (
            args.intervals
            or {
                ("pl", False): 2000,
                ("games", False): 600,
                ("pl", True): 400,
                ("games", True): 160,
            }[(cell.truth, args.quick)]
        )
        per = NEWCOMERS if cell.newcomer_units else cell.bots
        reps = max(4, math.ceil(want / per))
        if cell.truth == "games" and cell.games_per_bot >= 500 and not cell.newcomer_units:
            reps = max(3, reps // 4)  # the slowest cells: fewer repetitions, said in the table
        rng = np.random.default_rng(cell_seed(args.seed, cell))
        t0 = time.perf_counter()
        for rep in range(reps):
            measure(cell, methods, rng, rep)
        print(
            f"  [{ci + 1}/{len(cells)}] {cell.label} {cell.games_per_bot}: {reps} reps, "
            f"{time.perf_counter() - t0:.0f} s{progress(cell)}",
            file=sys.stderr,
            flush=True,
        )
    targets(cells)
    pooled = {m.value: {b: [0.0, 0.0, 0.0] for b in range(len(BINS))} for m in methods}
    by_size: dict[tuple[str, str], dict[int, list[float]]] = {}
    rows: list[Row] = []
    for cell in cells:
        gpb = sum(r.games for r in cell.reps) / (
            len(cell.reps) * (cell.bots + (NEWCOMERS if cell.newcomer_units else 0))
        )
        if cell.newcomer_units:
            gpb = cell.newcomer_units * (cell.seats if cell.duplicate else 1)
        tallies = {m.value: tally(cell, m.value) for m in methods}
        row: Row = {
            "truth": cell.truth if cell.spread == SPAN else f"{cell.truth} ({cell.spread:.0f} Elo)",
            "seats": cell.seats,
            "deals": "duplicate" if cell.duplicate else "single",
            "bots": (
                f"{NEWCOMERS} newcomers ({cell.newcomer_units} "
                f"unit{'s' * (cell.newcomer_units > 1)}) + {cell.bots}"
                if cell.newcomer_units
                else str(cell.bots)
            ),
            "gpb": gpb,
            "reps": len(cell.reps),
            "shown": {},
            "cov": {},
            "wrong": {},
            "ranks": {},
            "bad": {},
        }
        for m in methods:
            t = tallies[m.value]
            if not t.hits:
                continue
            row["shown"][m.value] = ratio(t.shown, t.measured)[0]
            row["cov"][m.value] = t.coverage()
            row["wrong"][m.value] = t.wrong_share()
            row["ranks"][m.value] = t.ranks()
            row["bad"][m.value] = t.tournaments_wrong()
            for b in range(len(BINS)):
                key = (m.value, "small" if gpb < 20 else "large")
                by_size.setdefault(key, {x: [0.0, 0.0, 0.0] for x in range(len(BINS))})
                for table in (pooled[m.value], by_size[key]):
                    table[b][0] += sum(t.claims[b])
                    table[b][1] += sum(t.wrong[b])
                    table[b][2] += sum(t.claimed[b])
        rows.append(row)
    report(rows, [m.value for m in methods])
    print("\nLOS calibration (all cells pooled; claims between shown bots):\n")
    print("| method | games/bot | claimed LOS | claims | mean claimed | right |")
    print("|---|---|---|---|---|---|")
    for m in methods:
        for label, table in [("all", pooled[m.value])] + [
            (("below 20" if s == "small" else "20 or more"), by_size.get((m.value, s), {}))
            for s in ("small", "large")
        ]:
            for b, (lo, hi) in enumerate(BINS):
                if b not in table:
                    continue
                c, w, claimed = table[b]
                rng_text = f"{100 * lo:.0f}-{min(100, 100 * hi):.0f}%"
                if c:
                    print(
                        f"| {m.value} | {label} | {rng_text} | {c:.0f} | "
                        f"{100 * claimed / c:.1f}% | {100 * (1 - w / c):.1f}% |"
                    )
                else:
                    print(f"| {m.value} | {label} | {rng_text} | 0 | - | - |")
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

"""What a tournament shows while it runs and when it ends (rich): progress bar, summary, status."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from take5_arena.cli.terminal import field
from take5_arena.leaderboard.markdown import fmt_faults, fmt_interval, fmt_wins
from take5_arena.referee import defaults
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.round_robin import RunProgress, RunReport
from take5_arena.referee.tournament.run.spec import GameOutcome
from take5_arena.referee.tournament.status import entrant_labels
from take5_arena.standings import store_standings


def markup(text: object, limit: int = 300) -> str:
    """A one-line value for rich's console.print: escaped for the terminal and for rich markup."""
    return escape(field(text, limit))


class _Leader:
    """Mean place per entrant over the recorded games: cheap enough to update after every game."""

    def __init__(self) -> None:
        self.places: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])

    def add(self, label: str, place: int) -> None:
        p = self.places[label]
        p[0] += place
        p[1] += 1

    def text(self) -> str:
        if not self.places:
            return "-"
        label, (total, n) = min(self.places.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0]))
        return f"{markup(label)} (mean place {total / n:.2f})"


class TournamentProgress(RunProgress):
    """The progress bar of `referee tournament run`: games done of total, rate, time left,
    leader."""

    def __init__(self, console: Console | None = None, *, enabled: bool = True) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.leader = _Leader()
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.infra_count = 0
        self.started = 0.0
        self.played = 0

    def start(self, report: RunReport, store: Store) -> None:
        labels = entrant_labels(store)
        for r in store.results.seat_results(report.schedule_id):
            for version, place in zip(r.versions, r.places):
                self.leader.add(labels[version], place)
        self.started = time.perf_counter()
        if not self.enabled:
            return
        self.progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("leader: {task.fields[leader]}{task.fields[infra]}"),
            console=self.console,
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task(
            "games",
            total=report.total,
            completed=report.done_before,
            rate="",
            leader=self.leader.text(),
            infra="",
        )

    def game(self, outcome: GameOutcome, store: Store) -> None:
        record = outcome.record
        if record is None:
            return
        for seat, place in zip(record["seats"], record["result"]["places"]):
            self.leader.add(seat["name"], place)
        self.played += 1
        self._update(advance=1)

    def infra(self, outcome: GameOutcome) -> None:
        self.infra_count += 1
        self._update(advance=0)

    def note(self, text: str) -> None:
        self.console.print(text)

    def _update(self, advance: int) -> None:
        if self.progress is None or self.task is None:
            return
        elapsed = max(1e-6, time.perf_counter() - self.started)
        infra = f"  [yellow]infra failures: {self.infra_count}" if self.infra_count else ""
        self.progress.update(
            self.task,
            advance=advance,
            rate=f"{self.played / elapsed:.2f} games/s",
            leader=self.leader.text(),
            infra=infra,
        )

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def standings_table(
    store: Store,
    *,
    bootstrap: int = defaults.BOOTSTRAP,
    seed: int = defaults.BOOTSTRAP_SEED,
    title: str = "Standings",
) -> Table | None:
    table_data = store_standings(store, bootstrap=bootstrap, seed=seed)
    if table_data is None:
        return None
    table = Table(title=title, title_justify="left")
    for col in (
        "#",
        "entrant",
        "rating",
        "95% interval",
        "games",
        "wins",
        "mean place",
        "mean penalty",
        "faults",
    ):
        table.add_column(col, justify="left" if col in ("entrant", "faults") else "right")
    for row in table_data.rows:  # the same cell formats as `referee standings` and standings.md
        table.add_row(
            str(row.rank),
            markup(row.entrant),
            f"{row.rating:.0f}",
            fmt_interval(row),
            str(row.games),
            fmt_wins(row.wins),
            f"{row.mean_place:.2f}",
            f"{row.mean_penalty:.1f}",
            fmt_faults(row),
        )
    return table


def _console() -> Console:
    """stdout; at least 110 columns when it is not a terminal (logs, CI), so tables stay
    readable."""
    console = Console()
    return console if console.is_terminal else Console(width=max(110, console.width))


def render_summary(report: RunReport, store: Store, console: Console | None = None) -> None:
    """The end of `referee tournament run`: what was played, failures, standings."""
    console = console or _console()
    rate = report.played / report.seconds if report.seconds > 0 else 0.0
    console.print(
        f"[bold]{report.done} of {report.total} games recorded[/bold] "
        f"({report.played} played now in {report.seconds:.1f} s, {rate:.2f} games/s; "
        f"{report.done_before} recorded before)"
    )
    console.print(f"schedule: {report.schedule.describe()}")
    if report.infra:
        kinds = Counter(kind for _, kind, _ in report.infra)
        console.print(
            "[yellow]infrastructure failures (rated no one, the games stay scheduled): "
            + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
        )
        first = report.infra[0]
        console.print(
            f"  first: game {markup(first[0])}: {markup(first[1])}: "
            f"{markup(first[2].splitlines()[0] if first[2] else '')}"
        )
    if report.interrupted:
        console.print(
            "[yellow]interrupted: run the same command again to play the games not yet recorded"
        )
    elif report.unplayed:
        console.print(
            f"[yellow]{report.unplayed} games not played (infrastructure); run the same command "
            "again to retry them"
        )
    table = standings_table(store)
    if table is not None:
        console.print(table)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def render_status(
    status: Mapping[str, Any],
    console: Console | None = None,
    *,
    bootstrap: int = defaults.BOOTSTRAP,
    seed: int = defaults.BOOTSTRAP_SEED,
) -> None:
    """`referee tournament status`: ``status`` from
    take5_arena.referee.tournament.status.tournament_status."""
    console = console or _console()
    settings = status["settings"]
    console.print(f"[bold]tournament {markup(status['directory'], 1000)}[/bold]: {status['state']}")
    if settings:
        console.print("settings: " + TournamentSettings.from_json(settings).describe())
    console.print(
        f"entrants: {len({e['name'] for e in status['entrants']})} "
        f"({len(status['entrants'])} versions)"
    )
    for e in status["entrants"]:
        console.print(
            f"  {markup(e['name'])} v{e['version']} ({e['kind']}, source "
            f"{e['source_hash']}{', image ' + e['image_id'] if e['image_id'] else ''}, submitted "
            f"{e['submitted_at'][:19]})"
        )
        out = e.get("output")
        if out and (out["kept_bytes"] or out["dropped_games"]):
            dropped = (
                f", dropped from its {out['dropped_games']} oldest games"
                if out["dropped_games"]
                else ""
            )
            console.print(
                f"    its output: {_mb(out['kept_bytes'])} of {_mb(status['output_budget'])} kept "
                f"({out['kept_games']} games{dropped})"
            )
    if "output_budget" in status:
        console.print(
            f"bot output kept in the records: at most {_mb(status['output_budget'])} per bot "
            "version (the oldest games' output is dropped first)"
        )
    for k in status.get("deal_keys", ()):
        told = f"key {k['key']}" if k["key"] else "key secret until `referee tournament reveal`"
        console.print(f"deal season {k['season']}: commitment {k['commitment']}, {told}")
    season = status.get("season")
    if season and "error" in season:
        console.print(f"season: {season['error']}")
    elif season:
        console.print(
            f"season {season['season']}: {season['phase']} (entries until {season['cutoff']}, "
            f"ends {season['ends']})"
        )
    schedule = status["schedule"]
    progress = status["progress"]
    if schedule:
        console.print(f"schedule: {schedule['description']}")
        total, done = progress["total"], progress["done"]
        pct = 100.0 * done / total if total else 0.0
        console.print(
            f"progress: {done} of {total} games recorded ({pct:.0f}%), "
            f"{total - done} to play; {status['recorded']} games recorded in all"
        )
    run = status["run"]
    if run:
        console.print(
            f"last run: {run['run_id']} started {run['started_at'][:19]}, {run['status']}, "
            f"pid {run['pid']} on {run['host']}, heartbeat {str(run['heartbeat_at'])[:19]}"
        )
    if status.get("ladder"):
        console.print(f"ladder: {markup(status['ladder'], 300)}")
    cluster = status.get("workers")
    if cluster is not None:
        where = markup(cluster["scheduler"], 200)
        if cluster["error"]:
            console.print(f"workers: the dask scheduler {where}: {markup(cluster['error'], 300)}")
        else:
            workers = cluster["workers"]
            console.print(f"workers: {len(workers)} seen by the dask scheduler {where}")
            for w in workers:
                console.print(
                    f"  {markup(w['name'], 100)} {markup(w['address'], 100)}: {w['threads']} "
                    f"threads, {w['tables']} tables running, {_mb(w['memory'])} memory"
                )
    disk = status.get("disk")
    if disk:
        parts = ", ".join(f"{markup(k, 100)} {_mb(v)}" for k, v in disk.items() if k != "total")
        console.print(f"disk used: {_mb(disk['total'])} ({parts})")
    if status["infra_failures"]:
        kinds = Counter(f["kind"] for f in status["infra_failures"])
        console.print(
            "infrastructure failures (games retried, rated no one): "
            + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
        )
    with Store(status["directory"], readonly=True) as store:
        table = standings_table(store, bootstrap=bootstrap, seed=seed)
    if table is not None:
        console.print(table)

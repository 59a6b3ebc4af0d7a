"""The command side of ``referee tournament run --until-settled`` / ``--gauntlet`` and of
``--format swiss``.

This is app-layer glue: it hands the leaderboard's ranking (order and LOS of neighbours, the same
numbers the standings publish) to the run loop of take5_arena/referee/tournament/settle.py, prints
one line per batch and the standings at the end.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from take5_arena.cli.progress import standings_table
from take5_arena.leaderboard.board import ranking_with_los
from take5_arena.leaderboard.results import GameResult
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.knockout import run_knockout
from take5_arena.referee.tournament.plan.adaptive import PairState, PlayedGame, Ranking
from take5_arena.referee.tournament.settle import StopReason, run_until_settled
from take5_arena.referee.tournament.swiss import run_swiss


def leaderboard_ranking(played: Sequence[PlayedGame]) -> Ranking:
    """The leaderboard's order and LOS of each bot over the next one down."""
    order, los = ranking_with_los(
        [GameResult(g.game_id, g.entrants, g.places, g.places, g.duplicate_set) for g in played]
    )
    return Ranking(order, los)


def run_settled(
    directory: Path,
    options: Mapping[str, Any],
    *,
    confidence: float,
    budget: int | None,
    gauntlet: str | None,
    quiet: bool = False,
) -> int:
    """Run until settled and print the outcome; returns the exit code (raises TournamentError)."""

    def log(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)

    report = run_until_settled(
        directory,
        options,
        rank=leaderboard_ranking,
        confidence=confidence,
        budget=budget,
        gauntlet=gauntlet,
        log=log,
    )
    what = {
        StopReason.SETTLED: "settled: every "
        f"{'pair of the gauntlet bot' if gauntlet else 'neighbour pair'} has LOS >= "
        f"{confidence:.0%}",
        StopReason.BUDGET: "the budget is spent before the ranking settled (raise --budget to go "
        "on)",
        StopReason.UNPLAYED: f"{report.unplayed} games not played (infrastructure); run the same "
        "command again",
        StopReason.INTERRUPTED: "interrupted: run the same command again to resume",
    }.get(report.reason or StopReason.INTERRUPTED, "")
    click.echo(
        f"{report.games} games in {report.batches} batches ({report.played} played now, "
        f"{report.seconds:.1f} s); {what}"
    )
    if report.decision is not None and report.decision.open_pairs:
        click.echo(
            "open: "
            + ", ".join(
                PairState(
                    p.upper.rsplit("@", 1)[0], p.lower.rsplit("@", 1)[0], p.los, p.settled
                ).text()
                for p in report.decision.open_pairs
            )
        )
    with Store(directory, readonly=True) as store:
        table = standings_table(store)
        if table is not None:
            Console(file=sys.stdout).print(table)
    return report.exit_code


def run_swiss_rounds(
    directory: Path, options: Mapping[str, Any], *, rounds: int, quiet: bool = False
) -> int:
    """Play a Swiss of ``rounds`` rounds and print the outcome; returns the exit code (raises
    TournamentError)."""

    def log(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)

    report = run_swiss(directory, options, rounds=rounds, log=log)
    games = sum(len(r.games) for r in report.rounds)
    if report.complete:
        what = "every round played"
    elif report.interrupted:
        what = "interrupted: run the same command again to resume"
    else:
        what = f"{report.unplayed} games not played (infrastructure); run the same command again"
    click.echo(
        f"Swiss: {len(report.rounds)} of {rounds} rounds, {games} games ({report.played} played "
        f"now, {report.seconds:.1f} s); {what}"
    )
    byes = Counter(e for r in report.rounds for e in r.byes)
    for place, e in enumerate(report.standing, 1):
        extra = f"  ({byes[e]} bye{'s' * (byes[e] != 1)})" if byes[e] else ""
        click.echo(f"{place:>3}. {e.rsplit('@', 1)[0]:<24} {report.points[e]:g} points{extra}")
    with Store(directory, readonly=True) as store:
        table = standings_table(store)
        if table is not None:
            Console(file=sys.stdout).print(table)
    return report.exit_code


def run_knockout_stages(
    directory: Path, options: Mapping[str, Any], bracket: Mapping[str, Any], *, quiet: bool = False
) -> int:
    """Play a knockout to its end and print the outcome; returns the exit code (raises
    TournamentError)."""

    def log(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)

    report = run_knockout(directory, options, bracket=bracket, log=log)
    games = sum(len(s.games) for s in report.stages)
    if report.outcome is not None:
        what = "decided"
    elif report.interrupted:
        what = "interrupted: run the same command again to resume"
    else:
        what = f"{report.unplayed} games not played (infrastructure); run the same command again"
    click.echo(
        f"Knockout: {len(report.stages)} stages, {games} games ({report.played} played now, "
        f"{report.seconds:.1f} s); {what}"
    )
    if report.outcome is not None:
        last = max(report.outcome.out_in.values())
        for place, e in enumerate(report.outcome.order, 1):
            went = report.outcome.out_in[e]
            how = "final" if went == last else f"out in round {went}"
            click.echo(f"{place:>3}. {e.rsplit('@', 1)[0]:<24} {how}")
    return report.exit_code

"""`referee verify`: game records replayed through the rules, or a published site checked.

A record is as hostile as the bots that played it: whatever it says is escaped before it is printed.
Exit codes: 0 every record valid (or the site agrees with its records), 1 otherwise, 2 bad usage
(a record named that does not exist, as for every command's input files).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from take5.record import Judgement, Verdict, iter_records, judge_file
from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.integrity import DealCounts, deal_counts
from take5_arena.referee.store.verify import stored_judgements
from take5_arena.referee.tournament.pairings import PairingCheck, check_pairings


@click.command()
@click.argument("records", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--tournament",
    "-t",
    "tournament",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Also check every game recorded in this tournament's store.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the records that fail.")
@click.option(
    "--site",
    "site",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Check a published site: every record, and its standings recomputed from them.",
)
@options.as_json("one result per record")
def verify(
    records: tuple[Path, ...],
    tournament: Path | None,
    quiet: bool,
    site: Path | None,
    as_json: bool,
) -> None:
    """Replay game RECORDS (files or folders of *.json) through the rules.

    Reports the first divergence of each record (round, turn, card, expected vs recorded).
    Exit code 0 when every record is valid, 1 otherwise. With --site DIR: check a published site
    (every record re-verified, its standings recomputed from exactly those records).
    """
    if site is not None:
        if records or tournament is not None:
            raise click.UsageError(
                "--site checks a published site alone: give no records or --tournament"
            )
        verify_site(site)
    if not records and tournament is None:
        raise click.UsageError("name record files or folders, or --tournament DIR, or --site DIR")

    def judgements() -> Iterator[tuple[str, Judgement]]:
        for path in iter_records(list(records)):
            yield str(path), judge_file(path)
        if tournament is not None:
            try:
                for game_id, judgement in stored_judgements(tournament):
                    yield f"{tournament}:{game_id}", judgement
            except StoreError as error:
                raise click.UsageError(str(error)) from None

    results: list[dict[str, str]] = []
    for name, judgement in judgements():
        status = "ok" if judgement.verdict is Verdict.VALID else judgement.verdict.value.lower()
        results.append({"record": name, "status": status, "detail": judgement.reason})
        if not as_json:  # a record is hostile too: what it says is escaped before it is printed
            if status != "ok":
                click.echo(
                    f"{field(name, 1000)}: {status.upper()}: {field(judgement.reason, 2000)}"
                )
            elif not quiet:
                click.echo(f"{field(name, 1000)}: ok")
    failures = sum(1 for r in results if r["status"] != "ok")
    deals = _deals(tournament) if tournament is not None else None
    pairings = _pairings(tournament) if tournament is not None else []
    failures += sum(1 for p in pairings if p.problem is not None)
    if as_json:
        summary: dict[str, object] = {
            "checked": len(results),
            "valid": len(results) - failures,
            "records": results,
        }
        if deals is not None:
            summary["deals"] = dataclasses.asdict(deals)
        if pairings:
            summary["pairings"] = [dataclasses.asdict(p) for p in pairings]
        click.echo(json.dumps(summary, indent=1))
    elif not results:
        click.echo("no records found", err=True)
    elif not quiet or failures:
        click.echo(f"{len(results) - failures} of {len(results)} records valid")
    if deals is not None and not as_json and not quiet:
        click.echo(_deals_line(deals))
    for p in pairings if not as_json else []:
        line = _pairing_line(p, quiet)
        if line is not None:
            click.echo(line)
    sys.exit(1 if failures or not results else 0)


def _pairing_line(p: PairingCheck, quiet: bool) -> str | None:
    """One Swiss's or knockout's check as a line (None: nothing to say when quiet)."""
    if p.problem is not None:
        return f"pairings: {field(p.prefix, 200)}: WRONG: {field(p.problem, 2000)}"
    if quiet:
        return None
    if p.unchecked is not None:
        return f"pairings: {field(p.prefix, 200)}: not checkable: {p.unchecked}"
    line = f"pairings: {field(p.prefix, 200)}: {p.stages} stages paired again from their results"
    if p.passed_over:
        names = ", ".join(field(e, 200) for e in p.passed_over)
        line += f" (its field passed over {names}: not current when it began)"
    return line


def _deals(directory: Path) -> DealCounts | None:
    """Where the tournament's recorded deals came from (None: the store cannot say)."""
    try:
        with Store(directory, readonly=True) as store:
            return deal_counts(store)
    except (StoreError, sqlite3.Error):  # already reported as a finding or a usage error
        return None


def _pairings(directory: Path) -> list[PairingCheck]:
    """Every Swiss and knockout of the tournament paired again (empty: none, or the store cannot
    be read, which is reported already)."""
    try:
        with Store(directory, readonly=True) as store:
            return check_pairings(store)
    except (StoreError, sqlite3.Error):
        return []


def _deals_line(deals: DealCounts) -> str:
    """What verify could check of the seeds (docs/security.md, "Deals")."""
    parts = []
    if deals.checked:
        parts.append(f"{deals.checked} dealt from revealed keys, every seed checked")
    if deals.sealed:
        parts.append(
            f"{deals.sealed} dealt from a secret key: their seeds are not checkable yet "
            "(until `referee tournament reveal`)"
        )
    if deals.public:
        parts.append(f"{deals.public} dealt from a public seed (predictable)")
    return "deals: " + ("; ".join(parts) or "no recorded games")


def verify_site(site: Path) -> None:
    """`referee verify --site DIR`: re-verify every record of a published site and recompute its
    standings from exactly those records (take5_arena/leaderboard/site_check.py). Exits 0 when they
    agree, 1 when anything differs, 2 when DIR is no published site."""
    from take5_arena.leaderboard.site_check import SiteCheckError, check_site
    from take5_arena.standings import check_site_competitions

    try:
        check = check_site(site)
    except SiteCheckError as error:
        raise click.BadParameter(str(error), param_hint="--site") from None
    competitions = check_site_competitions(site)
    for problem in competitions.problems:
        check.add(problem)
    for problem in check.problems:  # may quote bot names: no control character reaches the terminal
        click.echo(f"{site}: {field(problem, 2000)}")
    if check.more:
        click.echo(f"{site}: ... and {check.more} more problems")
    for note in check.notes:
        click.echo(f"{site}: note: {field(note, 2000)}")
    click.echo(
        f"{site}: "
        + _deals_line(DealCounts(check.public_deals, check.checked_deals, check.sealed_deals))
    )
    for p in competitions.checks:  # every Swiss and knockout paired again from the records
        line = _pairing_line(p, quiet=False)
        if line is not None:
            click.echo(f"{site}: {line}")
    if check.ok and not competitions.failures:
        click.echo(
            f"{site}: ok: {check.games} records verified, the standings of {check.rated} rated "
            "games recomputed and equal to standings.json, every data file and page as published"
            + (
                f", {len(competitions.checks)} Swisses and knockouts paired again"
                if competitions.checks
                else ""
            )
        )
        sys.exit(0)
    click.echo(f"{site}: FAILED: the published site does not match its records")
    sys.exit(1)

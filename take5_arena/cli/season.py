"""`referee season open|status|close`: a season with dates on a tournament (season.py in
take5_arena/referee/tournament): its key committed when it opens, entries frozen at its cut-off,
its key revealed and its archive published when it closes (docs/organisers/seasons.md).

`referee season divisions` says who goes up and down, and with ``--enter`` enters the next
season's divisions (take5_arena/referee/tournament/promotion.py).

Exit codes: 0 done, 2 bad usage (a date that is none, a season still open, closing before the
end without --early, a division's directory not ready for the next season), 3 a bot refused by a
division's validation (the others entered), 4 the host (a store that cannot be read).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.referee.errors import RefereeError
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.tournament.season import (
    Season,
    close_season,
    open_season,
    parse_time,
    season_of,
    utc_now,
)

if TYPE_CHECKING:
    from take5_arena.referee.tournament.promotion import Entry


@click.group()
def season() -> None:
    """A season with dates: entries until a cut-off, its deal key committed at the start and
    revealed at the end, an archive of its standings and games."""


def _lines(s: Season) -> list[str]:
    now = utc_now()
    out = [
        f"season {s.number}: {s.phase(now)}",
        f"  starts {s.to_json()['starts']}, entries until {s.to_json()['cutoff']}, "
        f"ends {s.to_json()['ends']}",
        f"  deal key commitment (SHA-256): {s.commitment}",
    ]
    if s.closed_at is not None:
        out.append(f"  closed at {s.closed_at}")
    return out


@season.command("open")
@options.tournament_dir()
@click.option("--starts", help="When it starts (ISO 8601, UTC unless given) [now].")
@click.option("--cutoff", required=True, help="When entries freeze: no new version after it.")
@click.option("--ends", required=True, help="When it ends: `season close` reveals its key then.")
@options.as_json("the season")
def season_open(directory: Path, starts: str | None, cutoff: str, ends: str, as_json: bool) -> None:
    """Open a season: its deal key is made and committed now (publish the commitment), entries
    are taken until --cutoff, and `referee season close` ends it after --ends."""
    try:
        now = utc_now()
        with Store(directory, create=True) as store:
            s = open_season(
                store,
                starts=parse_time(starts) if starts else now,
                cutoff=parse_time(cutoff),
                ends=parse_time(ends),
                now=now,
            )
    except StoreError:
        raise
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        click.echo(json.dumps(s.to_json(), indent=1))
        return
    for line in _lines(s):
        click.echo(line)


@season.command("status")
@options.tournament_dir()
@options.as_json("the season")
def season_status(directory: Path, as_json: bool) -> None:
    """The season's dates, where it stands (open, frozen, over, closed) and its commitment."""
    try:
        with Store(directory, readonly=True) as store:
            s = season_of(store)
    except StoreError:
        raise
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if s is None:
        raise click.UsageError(f"{directory} has no season (`referee season open`)")
    if as_json:
        click.echo(json.dumps({**s.to_json(), "phase": s.phase(utc_now())}, indent=1))
        return
    for line in _lines(s):
        click.echo(line)


@season.command("close")
@options.tournament_dir()
@click.option("--early", is_flag=True, help="Close it before its end date.")
@click.option(
    "--archive",
    type=click.Path(file_okay=False, path_type=Path),
    help="Publish the season's site (final standings, every game, the key) into ARCHIVE/season-N.",
)
@click.pass_context
def season_close(ctx: click.Context, directory: Path, early: bool, archive: Path | None) -> None:
    """Close the season once it has ended: its key revealed (games not played by then are given
    up), the next deal season begun, and with --archive its site published for good."""
    from take5_arena.referee.tournament.run.lifecycle import run_lock  # lazy: start-up time

    try:
        with run_lock(directory), Store(directory) as store:
            s, revealed = close_season(store, now=utc_now(), early=early)
    except StoreError:
        raise
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    click.echo(f"season {s.number} closed")
    if revealed is not None:
        click.echo(f"  deal key {revealed.key} (its SHA-256 {revealed.commitment})")
        if revealed.abandoned:
            click.echo(f"  {revealed.abandoned} games not played by its end were given up")
    if archive is not None:
        from take5_arena.cli.publish import publish

        out = archive / f"season-{s.number}"
        ctx.invoke(
            publish,
            tournament=directory,
            records=(),
            out=out,
            title=f"{directory.resolve().name}: season {s.number}",
            full=True,
        )
        click.echo(f"  archive: {out}/ (check it with `referee verify --site {out}`)")


@season.command("divisions")
@click.argument("standings", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--promoted", type=click.IntRange(min=0), default=1, show_default=True,
              help="The top this many of each lower division go up.")  # fmt: skip
@click.option("--relegated", type=click.IntRange(min=0), default=1, show_default=True,
              help="The bottom this many of each upper division go down.")  # fmt: skip
@click.option(
    "--withdrawn", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file of bots (one a line) that leave the league: dropped before anything moves.",
)  # fmt: skip
@click.option(
    "--newcomers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file of bots (one a line) that join the last division, at its bottom.",
)  # fmt: skip
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path),
    help="Write the next season's divisions here: division-N.txt, best seed first.",
)  # fmt: skip
@click.option(
    "--enter", is_flag=True,
    help="Enter each division's bots into its directory for the next season (`submit`'s "
    "validation, from the archive each played with) and withdraw those who left it.",
)  # fmt: skip
@click.option(
    "--into", multiple=True, type=click.Path(file_okay=False, path_type=Path),
    help="With --enter: the next season's directory of each division, division 1 first "
    "[the STANDINGS directories].",
)  # fmt: skip
@options.as_json("the next season's divisions and the moves")
def season_divisions(
    standings: tuple[Path, ...],
    promoted: int,
    relegated: int,
    withdrawn: Path | None,
    newcomers: Path | None,
    out: Path | None,
    enter: bool,
    into: tuple[Path, ...],
    as_json: bool,
) -> None:
    """Promotion and relegation at a season's end. STANDINGS: each division's final standing,
    division 1 (the strongest) first: a file of bot names, one a line, best first, or a
    tournament directory (its standings' order, by rating). With --enter (each STANDINGS a
    directory whose season is closed), the bots are entered for the next season."""
    from take5_arena.referee.tournament.plan.divisions import Boundary, season_end
    from take5_arena.referee.tournament.plan.schedule import ScheduleError

    if (enter or into) and not all(p.is_dir() for p in standings):
        raise click.UsageError("--enter needs each division as its directory (the bots' archives)")
    if into and len(into) != len(standings):
        raise click.UsageError(f"--into: give {len(standings)} directories, one per division")
    if into and not enter:
        raise click.UsageError("--into goes with --enter")
    try:
        rows = [_standing(p) for p in standings]
        end = season_end(
            rows,
            Boundary(promoted, relegated),
            withdrawn=_names(withdrawn) if withdrawn else (),
            newcomers=_names(newcomers) if newcomers else (),
        )
    except ScheduleError as error:
        raise click.UsageError(str(error)) from None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for d, division in enumerate(end.divisions, 1):
            (out / f"division-{d}.txt").write_text("".join(f"{e}\n" for e in division))
    entries = _enter(standings, end.divisions, list(into or standings)) if enter else []
    if as_json:
        doc = {
            "divisions": [list(d) for d in end.divisions],
            "moves": [{"bot": m.entrant, "from": m.start, "to": m.end} for m in end.moves],
            "entered": [{"division": e.division, "bot": e.bot, "done": e.done} for e in entries],
        }
        click.echo(json.dumps(doc, indent=1))
        return
    for m in end.moves:
        way = "up" if m.end < m.start else "down"
        click.echo(f"{field(m.entrant, 200)}: division {m.start} -> {m.end} ({way})")
    for d, division in enumerate(end.divisions, 1):
        click.echo(f"division {d}: {', '.join(field(e, 200) for e in division)}")
    for e in entries:
        click.echo(f"division {e.division}: {field(e.bot, 200)}: {field(e.done, 500)}")
    if any(e.done.startswith("refused") for e in entries):
        sys.exit(3)  # the others are entered; a refused bot is submitted again when fixed


def _enter(
    standings: tuple[Path, ...], divisions: Sequence[Sequence[str]], targets: list[Path]
) -> list[Entry]:
    """The next season's divisions entered (promotion.py); a directory not ready is one line
    (exit 2), nothing entered."""
    from take5_arena.referee.tournament.promotion import enter_divisions

    try:
        return enter_divisions(
            list(standings), divisions, targets, log=lambda line: click.echo(line, err=True)
        )
    except RefereeError as error:
        raise click.UsageError(str(error)) from None


def _names(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise click.BadParameter(f"cannot read {path}: {error}") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def _standing(path: Path) -> list[str]:
    """A division's standing: the names in a file, or a tournament's standings by rating."""
    if not path.is_dir():
        return _names(path)
    from take5_arena.leaderboard.board import compute_standings
    from take5_arena.standings import SourceError, load_tournament

    try:
        games = load_tournament(path)
    except SourceError as error:
        raise click.BadParameter(str(error)) from None
    if not games.results:
        raise click.BadParameter(f"{path} has no rated games to order its division by")
    return [r.entrant for r in compute_standings(games.results, bootstrap=0).rows]

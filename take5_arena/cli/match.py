"""`referee match`: the command-line face of take5_arena/referee/match/play.py (summary, JSON, exit
codes).

Exit codes (also in docs/faults.md):
  0   every game was played and no bot faulted
  1   every game was played, but some bot faulted (and maybe forfeited games)
  2   bad usage: an unknown BOT, a bad option, a player count the variant does not allow
  3   a bot was rejected before play (it did not start, or its handshake failed or named an
      incompatible protocol); the games were still played, its seat forfeiting each
  130 interrupted (Ctrl-C or SIGTERM): every bot was stopped; the games finished so far are reported
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, NoReturn

import click
from rich.console import Console

from take5 import Settings
from take5.rules import EndRule, InvalidSettings, Variant
from take5_arena.cli import options
from take5_arena.cli.terminal import block, field
from take5_arena.cli.watch import LiveWatcher
from take5_arena.referee import defaults
from take5_arena.referee.match.botref import BadBotRefError, BotRef, parse_bot
from take5_arena.referee.match.config import MatchConfig
from take5_arena.referee.match.play import Match
from take5_arena.referee.match.results import GameSummary, MatchResult

if TYPE_CHECKING:
    from take5_arena.referee.sandbox.launcher import DockerLauncher


def _game_line(summary: GameSummary, names: list[str]) -> str:
    order = sorted(range(len(names)), key=lambda s: (summary.places[s], s))
    parts = []
    for seat in order:
        mark = " (forfeit)" if seat in summary.forfeited else ""
        parts.append(f"{field(names[seat])} {summary.scores[seat]}{mark}")
    faults = sum(len(f) for f in summary.faults)
    tail = f", {faults} fault{'s' if faults != 1 else ''}" if faults else ""
    return f"{summary.game_id}: {', '.join(parts)} ({summary.seconds:.2f} s{tail})"


def summary_text(result: MatchResult, *, interrupted: bool = False) -> str:
    """The human-readable report: standings, penalties, faults per bot, rejections, records."""
    c = result.config
    n = len(result.entries)
    rules = c.settings(n)
    rule = "at or above" if rules.end_rule.value == "at-or-above" else "above"
    lines = [
        f"Match {c.prefix}: {n} bots, {len(result.games)} of {c.games} "
        f"games{' (interrupted)' if interrupted else ''}, {rules.variant.value}, game ends {rule} "
        f"{rules.threshold} points, {c.calls.describe()}, forfeit after "
        f"{c.calls.max_faults} faults ({result.seconds:.1f} s)",
        "",
        f"  {'#':>2}  {'bot':<20} {'games':>5} {'wins':>5} {'mean place':>11} {'points':>7} "
        f"{'mean points':>11} {'forfeits':>8} {'faults':>6}",
    ]
    for rank, st in enumerate(result.standings, 1):
        lines.append(
            f"  {rank:>2}  {field(st.name):<20} {st.games:>5} {st.wins:>5g} "
            f"{st.mean_place:>11.2f} {st.points:>7} {st.mean_points:>11.1f} {st.forfeits:>8} "
            f"{st.fault_count:>6}"
        )
    faulty = [st for st in result.standings if st.faults]
    if faulty:
        lines += ["", "Faults (docs/faults.md):"]
        seat_of = {e.name: i for i, e in enumerate(result.entries)}
        for st in faulty:
            kinds = ", ".join(f"{kind} x{count}" for kind, count in st.faults.items())
            lines.append(f"  {field(st.name)}: {kinds}")
            seat = seat_of[st.name]
            first = next((g, f) for g in result.games for f in g.faults[seat])
            game, fault = first
            lines.append(
                f"    first: {game.game_id} round {fault['round']} turn {fault['turn']}: "
                f"{fault['kind']}: {field(fault['detail'])}"
            )
    if result.rejections:
        lines += ["", "Rejected before play (their seats forfeited every game):"]
        for r in result.rejections:
            lines.append(f"  {field(r.name)} ({field(r.bot)}): {r.kind}: {field(r.detail)}")
    if result.logs:
        lines += ["", "Last output of bots with faults:"]
        for name, text in result.logs.items():
            lines.append(f"  --- {field(name)}")
            lines += [f"  | {line}" for line in block(text).splitlines()[-8:]]
    if c.records is not None:
        lines += [
            "",
            f"Records: {c.records} ({len(result.games)} games; check them with `referee verify "
            f"{c.records}`)",
        ]
    return "\n".join(lines)


@click.command("match")
@click.argument("bots", nargs=-1, required=True, metavar="BOT BOT [BOT...]")
@click.option(
    "--games",
    "-g",
    default=defaults.GAMES,
    show_default=True,
    type=click.IntRange(min=1),
    help="Games to play.",
)
@options.seed(help="Seed of the first deal; each deal is played once per rotation.")
@options.game_rules()
@options.call_limits()
@click.option(
    "--records",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each game's record (and the bots' output logs) here.",
)
@click.option(
    "--output-budget",
    type=click.IntRange(min=0),
    default=defaults.MATCH_OUTPUT_BUDGET,
    show_default=True,
    metavar="BYTES",
    help="Bytes of its own output each bot keeps in the records, all games together; past it the "
    "rest of its output is not kept (its log file under --records has a limit of its own).",
)
@options.as_json("the result")
@click.option("--verbose", "-v", is_flag=True, help="Log every fault as it happens (stderr).")
@click.option(
    "--watch",
    is_flag=True,
    help="Show each game in the terminal as it is played, with the bots' logs.",
)
@options.sandbox(default=defaults.MATCH_SANDBOX)
@options.docker_limits()
def match(
    bots: tuple[str, ...],
    games: int,
    seed: int,
    variant: str,
    threshold: int,
    end_rule: str,
    timeout: float,
    time_control: str | None,
    time_cap: float | None,
    clock: str,
    wall_factor: int,
    ponder: str,
    start_timeout: float,
    start_wall: float,
    max_faults: int,
    records: Path | None,
    output_budget: int,
    as_json: bool,
    verbose: bool,
    sandbox: str = defaults.MATCH_SANDBOX,
    memory: str = defaults.MEMORY,
    cpus: float = defaults.CPUS,
    pids: int = defaults.PIDS,
    base_image: str = defaults.BASE_IMAGE,
    runtime: str | None = defaults.RUNTIME,
    bot_memory: str = defaults.BOT_MEMORY,
    watch: bool = False,
) -> None:
    """Play a match between 2 to 10 bots and print the standings.

    A BOT is a folder with a bot.py (or an executable `run` script), a bot .py file, or the gRPC
    address of a running bot (unix:/path/bot.sock or host:port). Folders and files are started as
    local processes, each serving on a Unix socket in a private temporary folder, and stopped at the
    end (also on Ctrl-C).

    With --sandbox docker each bot folder is built into an image (`referee build`) and plays every
    game in a fresh process, in a locked-down container (no network, read-only files, --memory,
    --cpus and --pids limits); --bot-memory deals lets a process play several different deals
    instead. A bot killed for memory is a resource fault; any other exit a crash fault, with the
    exit code in the record.

    Time: --timeout S per decision, or --time-control BANK+INC (a bank per game, an increment per
    decision; --time-cap for the most one decision may take). By default the clock is each bot's
    own CPU time, so a busy machine does not make it late; a wall-clock cap of --wall-factor times
    the limit stops a bot that sleeps. --clock wall counts the wall clock instead.

    Faults (late answer, crash, illegal card or row, ...) get a default move and are recorded; a bot
    forfeits a game after --max-faults of them (docs/faults.md). Exit codes: 0 clean match; 1 some
    bot faulted; 2 bad usage; 3 a bot was rejected before play; 130 interrupted.
    """
    if not 2 <= len(bots) <= 10:
        raise click.UsageError(f"a match needs 2 to 10 bots, not {len(bots)}")
    if watch and as_json:
        raise click.UsageError("--watch and --json both write to stdout: choose one")
    refs = _bot_refs(bots, sandbox)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format="referee: %(message)s",
    )
    config = MatchConfig(
        games=games,
        seed=seed,
        game=_rules(len(refs), variant, threshold, end_rule),
        calls=options.limits_from_options(
            timeout=timeout,
            time_control=time_control,
            time_cap=time_cap,
            clock=clock,
            wall_factor=wall_factor,
            ponder=ponder,
            start_timeout=start_timeout,
            start_wall=start_wall,
            max_faults=max_faults,
        ),
        records=records,
        output_budget=output_budget,
    )
    launcher: DockerLauncher | None = None
    if sandbox == "docker":
        limits = _SandboxOptions(memory, cpus, pids, base_image, runtime, bot_memory)
        launcher = _docker_launcher(refs, limits, records, as_json)
    _play(refs, config, launcher, watch=watch, as_json=as_json)


def _rules(players: int, variant: str, threshold: int, end_rule: str) -> Settings:
    """The game's rules, checked (with the player count) before anything starts."""
    try:
        return Settings(
            players=players,
            variant=Variant(variant),
            threshold=threshold,
            end_rule=EndRule(end_rule),
        )
    except InvalidSettings as error:
        raise click.BadParameter(str(error), param_hint="BOT") from None


def _play(
    refs: list[BotRef],
    config: MatchConfig,
    launcher: DockerLauncher | None,
    *,
    watch: bool,
    as_json: bool,
) -> NoReturn:
    """Play the match, a line per game unless --json, and report it; Ctrl-C stops every bot and
    reports the games played so far."""
    watcher = LiveWatcher(Console(highlight=False)) if watch else None
    runner = Match(refs, config, launcher=launcher, observer=watcher)
    interrupted = False
    names: list[str] = []

    def progress(summary: GameSummary) -> None:
        if not as_json:
            click.echo(_game_line(summary, names))

    started = time.perf_counter()
    try:
        with runner:
            names[:] = [e.name for e in runner.entrants]
            runner.play(progress)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if launcher is not None:
            launcher.close()  # every container of the run, also the ones started ahead
    _report(runner.result(time.perf_counter() - started), interrupted, as_json)


def _bot_refs(bots: tuple[str, ...], sandbox: str) -> list[BotRef]:
    """The BOT arguments, parsed; a bad one, or one only Docker can run without --sandbox docker,
    is a usage error."""
    refs = []
    for text in bots:
        try:
            refs.append(parse_bot(text))
        except BadBotRefError as error:
            raise click.BadParameter(str(error), param_hint="BOT") from None
    if sandbox == "local":
        for ref in refs:
            if ref.kind == "dockerfile":
                raise click.BadParameter(
                    f"{ref.text!r} has only a Dockerfile: run it with --sandbox docker",
                    param_hint="BOT",
                )
    return refs


class _SandboxOptions(NamedTuple):
    """The options of :func:`options.docker_limits`, as `referee match` received them."""

    memory: str
    cpus: float
    pids: int
    base_image: str
    runtime: str | None
    bot_memory: str


def _docker_launcher(
    refs: list[BotRef], limits: _SandboxOptions, records: Path | None, quiet: bool
) -> DockerLauncher:
    """The match's Docker launcher, its images built first (`referee build`); Ctrl-C while they
    build ends the command (exit 130) before any game."""
    from take5_arena.cli.build import docker_match_launcher

    try:
        return docker_match_launcher(refs, records=records, quiet=quiet, **limits._asdict())
    except KeyboardInterrupt:  # while building images: nothing was started
        click.echo("interrupted: no game was played", err=True)
        sys.exit(130)


def _report(result: MatchResult, interrupted: bool, as_json: bool) -> NoReturn:
    """Print the result (JSON or the summary) and exit with the match's code (130 interrupted)."""
    if as_json:
        doc = result.to_dict()
        doc["interrupted"] = interrupted
        if interrupted:
            doc["exit_code"] = 130
        click.echo(json.dumps(doc, indent=1))
    else:
        click.echo("")
        click.echo(summary_text(result, interrupted=interrupted))
    if interrupted:
        click.echo("interrupted: every bot was stopped", err=True)
        sys.exit(130)
    sys.exit(result.exit_code)


if __name__ == "__main__":
    match()

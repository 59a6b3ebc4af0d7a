"""Click options shared by the commands, with their defaults from take5_arena/referee/defaults.py:
one name, one help text and one default for each option wherever it appears.

Two kinds of default: a command that plays on its own (``referee play``, ``referee match``) shows
the default value (``show_default``); a tournament command leaves an option unset (None) when it is
not given, so that the tournament's stored setting applies, and names the default in brackets.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from take5.rules import MAX_ROUNDS, MAX_THRESHOLD
from take5_arena.referee import defaults
from take5_arena.referee.archive import ArchiveLimits
from take5_arena.service import defaults as service_defaults
from take5_arena.service import logs

F = TypeVar("F", bound=Callable[..., Any])


class Decorator(Protocol):
    """What ``click.option`` returns: it gives a command's function one more parameter."""

    def __call__(self, function: F, /) -> F: ...


VARIANTS = click.Choice(["standard", "professional"])
END_RULES = click.Choice(["at-or-above", "above"])
SANDBOXES = click.Choice(list(defaults.SANDBOXES))


def _option(*names: str, stored: bool, default: Any, help: str, **kw: Any) -> Decorator:
    """An option with a default (``stored=False``) or unset unless given (``stored=True``)."""
    if stored:
        shown = (
            "none"
            if default is None
            else (f"{default:g}" if isinstance(default, float) else str(default))
        )
        return click.option(*names, default=None, help=f"{help} [{shown}]", **kw)
    return click.option(*names, default=default, show_default=True, help=help, **kw)


def players(*, stored: bool = False) -> Decorator:
    return _option(
        "--players",
        "-n",
        stored=stored,
        default=defaults.PLAYERS,
        type=int,
        help="Players at each table (2-10; 2-6 professional).",
    )


class Seed(click.ParamType[int]):
    """A 64-bit whole number: every seed a record may hold (-2**63 to 2**64-1,
    docs/record-format.md), so that any record's game can be played again with its --seed; refused
    with a short message however long the text (a 5,000-digit seed)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        else:
            text = str(value).strip()
        digits = text[1:] if text[:1] in "+-" else text
        if len(text) > 40 or not digits.isdigit() or not -(2**63) <= int(text) < 2**64:
            self.fail(
                f"{text[:40]!r}{'...' if len(text) > 40 else ''} is not a 64-bit whole number "
                "(-2**63 to 2**64-1)",
                param,
                ctx,
            )
        return int(text)


def seed(
    *,
    stored: bool = False,
    help: str = "Seed of the deals (64-bit): the same seed gives the same games.",
) -> Decorator:
    return _option("--seed", stored=stored, default=defaults.SEED, type=Seed(), help=help)


def game_rules(*, stored: bool = False) -> Decorator:
    """--variant, --threshold, --end-rule."""

    def apply(f: F) -> F:
        f = _option(
            "--end-rule",
            stored=stored,
            default=defaults.END_RULE,
            type=END_RULES,
            help="Whether the game ends at the threshold or only above it.",
        )(f)
        f = _option(
            "--threshold",
            stored=stored,
            default=defaults.THRESHOLD,
            type=click.IntRange(1, MAX_THRESHOLD),
            help=f"The game ends when a score reaches this (1-{MAX_THRESHOLD}; and after round "
            f"{MAX_ROUNDS}).",
        )(f)
        f = _option(
            "--variant",
            stored=stored,
            default=defaults.VARIANT,
            type=VARIANTS,
            help="Standard rules, or the professional variant (draft).",
        )(f)
        return f

    return apply


class TimeControlText(click.ParamType[str]):
    """BANK+INCREMENT in seconds (``30+0.5``): checked here, kept as text (take5.clock)."""

    name = "BANK+INC"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from take5.clock import TimeControl, TimeControlError

        try:
            return TimeControl.parse(str(value)).spec
        except TimeControlError as error:
            self.fail(str(error), param, ctx)


def call_limits(*, stored: bool = False) -> Decorator:
    """--timeout or --time-control (with --time-cap), --clock, --wall-factor, --ponder,
    --max-faults, --start-timeout and --start-wall (docs/faults.md, "Time controls and clocks")."""

    def apply(f: F) -> F:
        f = _option(
            "--max-faults",
            stored=stored,
            default=defaults.MAX_FAULTS,
            type=click.IntRange(min=1),
            help="Faults in a game after which a bot forfeits it.",
        )(f)
        f = _option(
            "--start-wall",
            stored=stored,
            default=defaults.START_WALL,
            type=click.FloatRange(min=0.01),
            help="CPU clock: wall-clock seconds a bot has to start serving at most.",
        )(f)
        f = _option(
            "--start-timeout",
            stored=stored,
            default=defaults.START_TIMEOUT,
            type=click.FloatRange(min=0.01),
            help="Seconds a bot has to start serving, on the clock in force.",
        )(f)
        f = _option(
            "--ponder",
            stored=stored,
            default=defaults.PONDER.value,
            type=click.Choice(defaults.PONDERS),
            help="CPU clock: whether a bot's CPU between its answer and its next request is "
            "taken from its bank (charge) or free (allow).",
        )(f)
        f = _option(
            "--wall-factor",
            stored=stored,
            default=defaults.WALL_FACTOR,
            type=click.IntRange(1, 1000),
            help="CPU clock: a decision may last this many times its limit on the wall clock.",
        )(f)
        f = _option(
            "--clock",
            stored=stored,
            default=defaults.CLOCK.value,
            type=click.Choice(["cpu", "wall"]),
            help="What measures a bot's time: its own CPU time (where the referee can measure "
            "it; else the wall clock), or the wall clock.",
        )(f)
        f = click.option(
            "--time-cap",
            type=click.FloatRange(min=0.001),
            default=None,
            help="With --time-control: the most seconds any one decision may take.",
        )(f)
        f = click.option(
            "--time-control",
            type=TimeControlText(),
            default=None,
            help="A bank per game and an increment per decision, in seconds: 30+0.5 gives 30 s "
            "a game and 0.5 s more before each decision; what a decision leaves stays in the "
            "bank. Instead of --timeout.",
        )(f)
        f = _option(
            "--timeout",
            stored=stored,
            default=defaults.TIMEOUT,
            type=click.FloatRange(min=0.001),
            help="Seconds a bot has for each decision (the simplest time control).",
        )(f)
        return f

    return apply


def limits_from_options(
    *,
    timeout: float,
    time_control: str | None,
    time_cap: float | None,
    clock: str,
    wall_factor: int,
    start_timeout: float,
    start_wall: float,
    max_faults: int,
    ponder: str = defaults.PONDER.value,
) -> Any:
    """The match's `CallLimits` from the options of :func:`call_limits` (given, not stored), by
    the one builder (`CallLimits.build`, as a tournament's settings); its ValueError (a cap
    without a time control, a bad limit) is a click.UsageError here, as is a --timeout given on
    the command line beside a --time-control."""
    from take5_arena.referee.match.config import CallLimits

    ctx = click.get_current_context(silent=True)
    if (
        time_control
        and ctx is not None
        and ctx.get_parameter_source("timeout") is click.core.ParameterSource.COMMANDLINE
    ):
        raise click.UsageError("give --timeout (per decision) or --time-control (a bank), not both")
    try:
        return CallLimits.build(
            timeout=timeout,
            time_control=time_control,
            time_cap=time_cap,
            clock=clock,
            wall_factor=wall_factor,
            start_timeout=start_timeout,
            start_wall=start_wall,
            max_faults=max_faults,
            ponder=ponder,
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None


def sandbox(*, default: str | None) -> Decorator:
    """--sandbox. ``referee match`` runs the bots a developer names on their own machine by default
    (local); tournaments and submissions run strangers' code in Docker by default."""
    if default is None:
        return click.option(
            "--sandbox",
            type=SANDBOXES,
            default=None,
            help=f"Where bots run [the tournament's; {defaults.TOURNAMENT_SANDBOX} for a new one].",
        )
    return click.option(
        "--sandbox",
        type=SANDBOXES,
        default=default,
        show_default=True,
        help="Run bots as local processes, or each in a fresh locked-down Docker container.",
    )


BOT_MEMORIES = click.Choice(list(defaults.BOT_MEMORIES))


def runtime(*, stored: bool = False) -> Decorator:
    """--runtime: the OCI runtime of the bot containers (``runsc``: gVisor)."""
    return _option(
        "--runtime",
        stored=stored,
        default=defaults.RUNTIME,
        help="Docker: the container runtime of the bots: runsc runs them under gVisor "
        "(scripts/setup-docker.sh registers it), runc is the engine's own ($TAKE5_RUNTIME sets "
        "the default; unset: the engine's default).",
    )


def bot_memory(*, stored: bool = False) -> Decorator:
    """--bot-memory: what a bot process may remember from one game to the next."""
    return _option(
        "--bot-memory",
        stored=stored,
        default=defaults.BOT_MEMORY,
        type=BOT_MEMORIES,
        help="Docker: game plays every game in a fresh bot process; deals lets a process play "
        "several different deals and keep what it learned (never the same deal twice).",
    )


def docker_limits(*, stored: bool = False) -> Decorator:
    """--memory, --cpus, --pids, --base-image, --runtime, --bot-memory."""

    def apply(f: F) -> F:
        f = bot_memory(stored=stored)(f)
        f = runtime(stored=stored)(f)
        f = _option(
            "--base-image",
            stored=stored,
            default=defaults.BASE_IMAGE,
            help="Docker: the image bot images are built on (scripts/setup-docker.sh makes the "
            "default).",
        )(f)
        f = _option(
            "--pids",
            stored=stored,
            default=defaults.PIDS,
            type=click.IntRange(min=8),
            help="Docker: processes and threads each bot may have.",
        )(f)
        f = _option(
            "--cpus",
            stored=stored,
            default=defaults.CPUS,
            type=click.FloatRange(min=0.01),
            help="Docker: CPUs each bot may use.",
        )(f)
        f = _option(
            "--memory",
            stored=stored,
            default=defaults.MEMORY,
            help="Docker: memory of each bot (no swap); a bot over it is OOM-killed (a resource "
            "fault).",
        )(f)
        return f

    return apply


def executor() -> Decorator:
    """--executor and --concurrency: where tables play, and how many at once."""

    def apply(f: F) -> F:
        f = click.option(
            "--concurrency",
            "-j",
            type=click.IntRange(min=1),
            help="Tables played at once [CPUs / players].",
        )(f)
        f = click.option(
            "--executor",
            help="auto, local (threads), process, dask:tcp://HOST:8786 or dask:local [auto: "
            "threads].",
        )(f)
        return f

    return apply


def play_settings() -> Decorator:
    """The settings a tournament run and the arena's ladder share, each unset unless given (the
    tournament's stored setting applies): the table size and the game's rules, the limits on each
    call, the sandbox and its limits, where tables play, the retries of a game after an
    infrastructure failure and each bot's output budget. The command gets them as keyword
    arguments named as the settings' JSON keys (take5_arena/referee/tournament/plan/settings.py)."""

    def apply(f: F) -> F:
        f = click.option(
            "--output-budget",
            type=click.IntRange(min=0),
            metavar="BYTES",
            help="Bytes of its own output each bot version keeps in the records; past it its "
            f"oldest games' output is dropped [{defaults.OUTPUT_BUDGET:,}].",
        )(f)
        f = click.option(
            "--retries",
            type=click.IntRange(min=0),
            help=f"Retries of a game after an infrastructure failure [{defaults.RETRIES}].",
        )(f)
        f = executor()(f)
        f = docker_limits(stored=True)(f)
        f = sandbox(default=None)(f)
        f = call_limits(stored=True)(f)
        f = game_rules(stored=True)(f)
        f = players(stored=True)(f)
        return f

    return apply


def bootstrap() -> Decorator:
    """--bootstrap and --bootstrap-seed: the rating intervals, the same in every command."""

    def apply(f: F) -> F:
        f = click.option(
            "--bootstrap-seed",
            "--seed",
            "bootstrap_seed",
            default=defaults.BOOTSTRAP_SEED,
            show_default=True,
            type=int,
            help="Seed of the bootstrap (same seed, same intervals).",
        )(f)
        f = click.option(
            "--bootstrap",
            default=defaults.BOOTSTRAP,
            show_default=True,
            type=click.IntRange(min=0),
            help="Bootstrap resamples for the 95% rating intervals (0: no intervals).",
        )(f)
        return f

    return apply


def as_json(what: str = "the result") -> Decorator:
    return click.option(
        "--json", "as_json", is_flag=True, help=f"Print {what} as JSON (for scripts)."
    )


def tournament_dir(*, required: bool = True, exists: bool = False) -> Decorator:
    return click.option(
        "--tournament",
        "-t",
        "directory",
        required=required,
        type=click.Path(file_okay=False, exists=exists, path_type=Path),
        help="The tournament directory (its store: DIR/tournament.sqlite, or the PostgreSQL "
        "database DIR/store.url names; its settings, entrants, games).",
    )


def store_url() -> Decorator:
    """``--store URL``: a new tournament's (or arena's) store on a PostgreSQL server."""
    return click.option(
        "--store",
        "store",
        metavar="URL",
        default=None,
        help="Keep a new tournament's store in this PostgreSQL database "
        "(postgresql://USER@HOST:PORT/DB) instead of DIR/tournament.sqlite; DIR/store.url then "
        "names it for every later command [needs the postgres extra].",
    )


def server_log() -> Decorator:
    """``--log-format`` and ``--log-level`` of a server's log (take5_arena/service/logs.py)."""

    def apply(f: F) -> F:
        f = click.option(
            "--log-level",
            type=click.Choice(logs.LEVELS),
            default=logs.DEFAULT_LEVEL,
            show_default=True,
            help="The least severe log lines written (the arena's own; others say warnings only).",
        )(f)
        f = click.option(
            "--log-format",
            type=click.Choice(logs.FORMATS),
            default=logs.DEFAULT_FORMAT,
            show_default=True,
            help="Log lines as text (UTC time, level, message) or one JSON object a line.",
        )(f)
        return f

    return apply


def server_limits(command: Any) -> Any:
    """The server-wide limits (take5_arena/service/defaults.py: ServerLimits), one option each,
    handed to the command as one `limits` argument."""
    d = service_defaults

    @functools.wraps(command)
    def f(**kwargs: Any) -> Any:
        max_archive_mb = kwargs.pop("max_archive_mb")
        kwargs["limits"] = service_defaults.ServerLimits(
            calls_per_author=kwargs.pop("calls_per_author"),
            uploads_per_author=kwargs.pop("uploads_per_author"),
            uploads_at_once=kwargs.pop("uploads_at_once"),
            uploaders=kwargs.pop("max_uploads"),
            streams_per_connection=kwargs.pop("streams_per_connection"),
            first_message_seconds=kwargs.pop("first_message_seconds"),
            chunk_seconds=kwargs.pop("chunk_seconds"),
            upload_seconds=kwargs.pop("upload_seconds"),
            max_submissions_per_hour=kwargs.pop("max_per_hour"),
            max_archive_bytes=int(max_archive_mb * 2**20) if max_archive_mb else None,
        )
        return command(**kwargs)

    for name, kind, default, text in reversed(
        [
            (
                "--calls-per-author",
                click.IntRange(min=1),
                d.MAX_CALLS_PER_AUTHOR,
                "Calls of one author in progress at once (uploads are counted apart).",
            ),
            (
                "--uploads-per-author",
                click.IntRange(min=1),
                d.MAX_UPLOADS_PER_AUTHOR,
                "Uploads received at once from one author.",
            ),
            (
                "--uploads-at-once",
                click.IntRange(min=1),
                d.MAX_UPLOADS_AT_ONCE,
                "Uploads received at once in all past which an author who has one gets no second.",
            ),
            (
                "--max-uploads",
                click.IntRange(min=1),
                d.MAX_UPLOADERS,
                "Uploads received at once in all, past which nobody gets one.",
            ),
            (
                "--streams-per-connection",
                click.IntRange(min=1),
                d.MAX_STREAMS_PER_CONNECTION,
                "Calls one connection carries at once (HTTP/2 streams).",
            ),
            (
                "--first-message-seconds",
                click.FloatRange(min=0.1),
                d.FIRST_MESSAGE_SECONDS,
                "Seconds an upload has for its first message before it is cut off.",
            ),
            (
                "--chunk-seconds",
                click.FloatRange(min=0.1),
                d.CHUNK_SECONDS,
                "Seconds within which each next chunk of an upload must come.",
            ),
            (
                "--upload-seconds",
                click.FloatRange(min=1),
                d.UPLOAD_SECONDS,
                "An upload still running after this many seconds is cut off.",
            ),
        ]
    ):
        f = click.option(name, type=kind, default=default, show_default=True, help=text)(f)
    f = click.option(
        "--max-archive-mb",
        type=click.FloatRange(min=0.01),
        help="Ceiling of every upload's size, MB, whatever an author's own limit "
        f"[{ArchiveLimits().max_archive_bytes / 2**20:g}: the archive limit; each author's own, "
        f"{d.MAX_ARCHIVE_BYTES / 2**20:g} unless `authors add` says otherwise].",
    )(f)
    f = click.option(
        "--max-per-hour",
        type=click.IntRange(min=1),
        help="Ceiling of every author's submissions per hour, whatever their own limit "
        f"[each author's own: {d.MAX_SUBMISSIONS_PER_HOUR} unless `authors add` says otherwise].",
    )(f)
    return f

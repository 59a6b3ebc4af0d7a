"""The arena service's commands: ``serve``, ``authors add|revoke|list|withdraw|ban|unban`` (the
organiser's), and
``submit --server``, ``my-bots``, ``withdraw``, ``my-faults``, ``arena-standings`` (an author's).

The remote form of ``submit`` (:func:`remote_submit` and its options) is used by cli/submit.py,
whose command also has the local form. What the arena sends back (bot names, a bot's output, fault
details) is shown through cli/terminal.py, like everything else a bot controls.

Exit codes: 0 success; 1 the arena cannot be reached or failed; 2 bad usage or input (also a wrong
or revoked token, another author's bot, a limit reached); 3 the bot was refused (with the reason);
130 interrupted.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import click
import grpc
from google.protobuf.json_format import MessageToDict

from take5_arena.cli import options
from take5_arena.cli.terminal import block, field
from take5_arena.referee.archive import ArchiveError, ArchiveLimits
from take5_arena.referee.match.results import ExitCode
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.health import SYNCHRONOUS, StoreFaultError
from take5_arena.service import defaults as service_defaults
from take5_arena.service import logs
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.authors import DEFAULT_LIMITS, Accounts, Limits
from take5_arena.service.client import (
    SERVER_ENV,
    TOKEN_ENV,
    ArenaClient,
    pack_folder,
    read_token,
)
from take5_arena.service.competitions import competition_problem
from take5_arena.service.errors import ClientError, ServeError, ServiceError
from take5_arena.service.ladder import LadderConfig
from take5_arena.service.organiser import holdings, revoke_author, unban_bot, withdraw_bot
from take5_arena.service.season_switch import AFTER_SEASON, SeasonSwitch
from take5_arena.service.serve import ServeOptions
from take5_arena.service.serve import serve as run
from take5_arena.web import defaults as web_defaults  # no extra needed: stdlib only

SERVER = click.option(
    "--server", envvar=SERVER_ENV, metavar="HOST:PORT", help=f"The arena's address [${SERVER_ENV}]."
)
TOKEN_FILE = click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"File holding your token [else ${TOKEN_ENV}].",
)
CA = click.option(
    "--ca",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The server's certificate (or its CA), for a self-signed certificate.",
)
INSECURE = click.option(
    "--insecure",
    is_flag=True,
    help="Plain text even to a non-loopback address (the token travels unencrypted).",
)


def _competition_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """``--competition``: a valid name (exit 2 before anything is sent), '' the default."""
    if not value:
        return ""
    problem = competition_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


COMPETITION = click.option(
    "--competition",
    metavar="NAME",
    default="",
    callback=_competition_name,
    help="Which of the arena's competitions [its default one] (`referee competition list`).",
)
TOURNAMENT = click.option(
    "--tournament",
    "-t",
    "directory",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The arena's tournament directory.",
)


def _client(
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    *,
    need_token: bool = True,
    competition: str = "",
) -> ArenaClient:
    if not server:
        raise click.UsageError(f"give --server HOST:PORT (or set {SERVER_ENV})")
    try:
        token = read_token(token_file)
    except ClientError as error:
        raise click.UsageError(str(error)) from None
    if need_token and not token:
        raise click.UsageError(f"no token: give --token-file FILE or set {TOKEN_ENV}")
    try:
        return ArenaClient(server, token=token, ca=ca, insecure=insecure, competition=competition)
    except ClientError as error:
        raise click.UsageError(str(error)) from None


def _fail(error: ClientError) -> None:
    """A failed call: one line, and the exit code of its kind: 4 for an arena that cannot be
    reached or does not answer in time (as for a store or a Dask scheduler: the host's, try again
    later), 2 for what the caller asked wrong, else 1 (docs/organisers/command-line.md)."""
    click.echo(f"referee: {field(error, 2000)}", err=True)
    if getattr(error, "code", None) in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    ):
        sys.exit(4)
    usage = {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
    sys.exit(2 if getattr(error, "code", None) in usage else 1)


# ------------------------------------------------------------------------------------------------
# The organiser


@click.command()
@TOURNAMENT
@click.option(
    "--listen",
    default=service_defaults.LISTEN,
    show_default=True,
    metavar="HOST:PORT",
    help="Address to serve on (port 0: any free port).",
)
@click.option(
    "--cert",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="TLS certificate (PEM); with --key the arena speaks TLS only.",
)
@click.option(
    "--key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="TLS private key (PEM).",
)
@click.option(
    "--insecure-public",
    is_flag=True,
    help="Without TLS, listen on a non-loopback address anyway (tokens in clear text).",
)
@options.play_settings()
@click.option(
    "--gauntlet",
    "gauntlet_tables",
    type=click.IntRange(min=0),
    default=service_defaults.GAUNTLET_TABLES,
    show_default=True,
    help="Tables a new bot version plays with each other active bot before the ladder goes on.",
)
@click.option(
    "--site",
    type=click.Path(file_okay=False, path_type=Path),
    help="Publish the static site here as games land [DIR/site].",
)
@click.option(
    "--publish-every-games",
    type=click.IntRange(min=1),
    default=service_defaults.PUBLISH_EVERY_GAMES,
    show_default=True,
)
@click.option(
    "--publish-every-seconds",
    type=click.FloatRange(min=0.1),
    default=service_defaults.PUBLISH_EVERY_SECONDS,
    show_default=True,
)
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=service_defaults.PUBLISH_BOOTSTRAP,
    show_default=True,
    help="Bootstrap resamples of the published intervals.",
)
@click.option(
    "--validators",
    type=click.IntRange(1, 16),
    default=service_defaults.VALIDATORS,
    show_default=True,
    help="Submissions validated at once.",
)
@click.option("--no-ladder", is_flag=True, help="Accept submissions but play no ladder games.")
@click.option(
    "--after-season",
    type=click.Choice(AFTER_SEASON),
    default="stop",
    show_default=True,
    help="At a season's end the arena closes it (its key revealed); then: stop dealing until "
    "`referee season open`, or open the next season at once with the same lengths.",
)
@click.option(
    "--season-archive",
    type=click.Path(file_okay=False, path_type=Path),
    help="Publish each season the arena closes into SEASON_ARCHIVE/season-N.",
)
@click.option(
    "--season-grace",
    type=click.FloatRange(min=0),
    default=service_defaults.SEASON_GRACE_SECONDS,
    show_default=True,
    help="Seconds the tables in flight at a season's end get to finish (then given up).",
)
@click.option(
    "--synchronous",
    type=click.Choice(SYNCHRONOUS),
    default=service_defaults.SYNCHRONOUS,
    show_default=True,
    help="full: every commit survives a power cut (an fsync each); normal: the last may not.",
)
@options.server_limits
@click.option(
    "--metrics",
    metavar="[HOST:]PORT",
    help="Serve a health check (/healthz) and Prometheus metrics (/metrics) over HTTP here "
    "(PORT alone: on loopback).",
)
@click.option(
    "--metrics-public",
    is_flag=True,
    help="Allow a --metrics address that is not loopback (they have no authentication).",
)
@click.option(
    "--stall-seconds",
    type=click.FloatRange(min=1),
    default=service_defaults.STALL_SECONDS,
    show_default=True,
    help="A ladder that could play but recorded no game for this long is stalled (--metrics).",
)
@options.server_log()
@click.option(
    "--web",
    metavar="HOST:PORT",
    help="Serve the arena's web pages here too (the same --cert/--key; docs/web.md).",
)
@click.option(
    "--web-session-seconds",
    type=click.FloatRange(min=1),
    default=web_defaults.SESSION_SECONDS,
    show_default=True,
    help="How long a web sign-in lasts.",
)
@click.option(
    "--web-max-connections",
    type=click.IntRange(min=1),
    default=web_defaults.MAX_CONNECTIONS,
    show_default=True,
    help='Connections the web pages hold at once (docs/web.md, "Limits").',
)
@click.option(
    "--web-max-streams",
    type=click.IntRange(min=1),
    default=web_defaults.MAX_STREAMS,
    show_default=True,
    help='Live streams of the pages open at once (docs/web.md, "Limits").',
)
@click.option(
    "--web-stream-seconds",
    type=click.FloatRange(min=1),
    default=web_defaults.STREAM_SECONDS,
    show_default=True,
    help="A live stream of the pages ends after this (the browser reopens it).",
)
@click.option(
    "--web-forwarded-allow-ips",
    metavar="ADDRESSES",
    default="",
    help="Reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For names "
    "the client for the pages' per-address limits; default none: the header is ignored "
    '(docs/operations.md, "In front of the web pages").',
)
def serve(
    directory: Path,
    listen: str,
    cert: Path | None,
    key: Path | None,
    insecure_public: bool,
    gauntlet_tables: int,
    site: Path | None,
    publish_every_games: int,
    publish_every_seconds: float,
    bootstrap: int,
    validators: int,
    no_ladder: bool,
    after_season: str,
    season_archive: Path | None,
    season_grace: float,
    synchronous: str,
    metrics: str | None,
    metrics_public: bool,
    stall_seconds: float,
    limits: service_defaults.ServerLimits,
    log_format: str,
    log_level: str,
    web: str | None,
    web_session_seconds: float,
    web_max_connections: int,
    web_max_streams: int,
    web_stream_seconds: float,
    web_forwarded_allow_ips: str,
    **settings: Any,
) -> None:
    """Run the arena service on tournament DIR: authors submit bots from their own machines
    (`referee submit FOLDER --server`), and a ladder keeps playing games between the active bots,
    refreshing the standings and the static site as they land. The play and sandbox options are
    those of `referee tournament run` (saved in the tournament); the limits on calls and uploads
    are the server's, for this run (docs/arena.md, "Limits"). Stop it with Ctrl-C or SIGTERM; it
    resumes where it stopped (docs/arena.md, "Running an arena")."""
    sidecars = []
    if web is not None:
        from take5_arena.web.proxies import Proxies  # lazy: see main
        from take5_arena.web.server import WebOptions, WebServer, check_address

        try:
            proxies = Proxies.parse(web_forwarded_allow_ips)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--web-forwarded-allow-ips") from None
        web_options = WebOptions(
            web,
            cert,
            key,
            insecure_public,
            web_session_seconds,
            web_max_connections,
            web_max_streams,
            web_stream_seconds,
            proxies,
        )
        try:
            check_address(web_options)
        except ServeError as error:
            raise click.UsageError(str(error)) from None
        sidecars.append(functools.partial(WebServer, web_options))
    serve_options = ServeOptions(
        directory=directory,
        sidecars=sidecars,
        listen=listen,
        cert=cert,
        key=key,
        insecure_public=insecure_public,
        settings=settings,
        play=not no_ladder,
        validators=validators,
        archive_limits=ArchiveLimits(),
        metrics=metrics,
        metrics_public=metrics_public,
        stall_seconds=stall_seconds,
        synchronous=synchronous,
        limits=limits,
        ladder=LadderConfig(
            gauntlet_tables=gauntlet_tables,
            every_games=publish_every_games,
            every_seconds=publish_every_seconds,
            site=site or directory / "site",
            bootstrap=bootstrap,
            season=SeasonSwitch(after_season, season_archive, season_grace, bootstrap),
        ),
    )

    logs.configure(level=log_level, format=log_format)
    try:
        code = run(serve_options)
    except ServeError as error:
        raise click.UsageError(str(error)) from None
    sys.exit(code)


@click.group()
def authors() -> None:
    """The arena's authors and their tokens (`referee serve` authenticates every call with one)."""


@authors.command("add")
@click.argument("name")
@TOURNAMENT
@click.option(
    "--max-bots",
    type=click.IntRange(min=1),
    help=f"Active bots at once [{service_defaults.MAX_ACTIVE_BOTS}].",
)
@click.option(
    "--per-hour",
    type=click.IntRange(min=1),
    help=f"Submissions per hour [{service_defaults.MAX_SUBMISSIONS_PER_HOUR}].",
)
@click.option(
    "--max-archive-mb",
    type=click.FloatRange(min=0.01),
    help=f"Largest archive, MB [{service_defaults.MAX_ARCHIVE_BYTES / 2**20:g}].",
)
@click.option(
    "--max-stored-mb",
    type=click.FloatRange(min=0.01),
    help=f"Archive MB kept for the author [{service_defaults.MAX_STORED_BYTES / 2**20:g}].",
)
@click.option(
    "--new-token",
    is_flag=True,
    help="The author exists: replace its token (the old one stops working).",
)
@options.store_url()
def authors_add(
    name: str,
    directory: Path,
    max_bots: int | None,
    per_hour: int | None,
    max_archive_mb: float | None,
    max_stored_mb: float | None,
    new_token: bool,
    store: str | None,
) -> None:
    """Add author NAME and print their token, once (the arena keeps only a salted hash).

    Only the token goes to stdout, so `referee authors add alice -t T > alice.token` keeps it in a
    file.
    """
    limits = Limits(
        max_bots or DEFAULT_LIMITS.max_active_bots,
        per_hour or DEFAULT_LIMITS.max_submissions_per_hour,
        int(max_archive_mb * 1024 * 1024) if max_archive_mb else DEFAULT_LIMITS.max_archive_bytes,
        int(max_stored_mb * 1024 * 1024) if max_stored_mb else DEFAULT_LIMITS.max_stored_bytes,
    )
    if store is not None:  # a new arena's store in PostgreSQL (the first author makes the arena)
        try:
            Store(directory, create=True, url=store).close()
        except StoreFaultError:
            raise  # the server's fault: exit 4, as any store's host
        except StoreError as error:
            raise click.UsageError(str(error)) from None
    db = _db(directory, create=True)
    try:
        token = db.add_author(name, limits, new_token=new_token)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    finally:
        db.close()
    click.echo(token)
    click.echo(
        f"author {name} added; give them this token (shown only now). They submit with "
        f"TAKE5_TOKEN=... referee submit FOLDER --server HOST:PORT",
        err=True,
    )


@authors.command("revoke")
@click.argument("name")
@TOURNAMENT
@click.option("--reason", default="", help="Why (shown to the author with their withdrawn bots).")
def authors_revoke(name: str, directory: Path, reason: str) -> None:
    """Revoke author NAME's token at once and withdraw every bot they hold."""
    db = _db(directory)
    try:
        withdrawn = revoke_author(directory, db, name, reason)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    finally:
        db.close()
    click.echo(
        f"author {name}: token revoked; bots withdrawn: {', '.join(withdrawn) or 'none active'}"
    )


@authors.command("list")
@TOURNAMENT
def authors_list(directory: Path) -> None:
    """The authors and their limits, then every bot with who holds it (the organiser's own
    bots, entered with `referee submit -t`, as "(house)")."""

    db = _db(directory)
    try:
        rows = db.authors()
        if not rows:
            click.echo("no authors (`referee authors add NAME -t DIR`)")
        for a in rows:
            state = "active" if a.active else f"revoked {a.revoked_at}"
            click.echo(
                f"{a.name:<20} {state:<10} (limits: {a.limits.max_active_bots} active, "
                f"{a.limits.max_submissions_per_hour}/hour, "
                f"{a.limits.max_archive_bytes // 1024} KiB archives, "
                f"{a.limits.max_stored_bytes // 2**20} MiB kept)"
            )
        held = holdings(directory, db)
        if held:
            click.echo("bots:")
        for h in held:
            note = f"  ({field(h.note)})" if h.note else ""
            click.echo(f"  {h.owner:<20} {h.bot_name:<24} {h.state:<9} {h.versions} versions{note}")
    finally:
        db.close()


def _withdraw_command(name: str, ban: bool) -> click.Command:
    @click.command(name)
    @click.argument("bot")
    @TOURNAMENT
    @click.option(
        "--reason",
        required=True,
        help="Why: the bot's author reads it in `referee my-bots`.",
    )
    def command(bot: str, directory: Path, reason: str) -> None:

        db = _db(directory)
        try:
            claim = withdraw_bot(directory, db, bot, reason, ban=ban)
        except ServiceError as error:
            raise click.UsageError(str(error)) from None
        finally:
            db.close()
        click.echo(f"{claim.bot_name} ({claim.owner}): {'banned' if ban else 'withdrawn'}")

    command.help = (
        "Ban BOT: withdraw it, and its author may not submit it again (any owner's bot)."
        if ban
        else "Withdraw BOT from the ladder, whoever holds it (its author may submit it again)."
    )
    return command


authors.add_command(_withdraw_command("withdraw", ban=False))
authors.add_command(_withdraw_command("ban", ban=True))


@authors.command("unban")
@click.argument("bot")
@TOURNAMENT
def authors_unban(bot: str, directory: Path) -> None:
    """Let BOT's author submit it again (it stays withdrawn until they do)."""

    db = _db(directory)
    try:
        unban_bot(db, bot)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    finally:
        db.close()
    click.echo(f"{bot}: no longer banned")


def _db(directory: Path, *, create: bool = False) -> Accounts:
    try:
        return Accounts(directory, create=create)
    except StoreError as error:
        raise click.UsageError(str(error)) from None


# ------------------------------------------------------------------------------------------------
# An author


def remote_submit(
    folder: Path,
    name: str | None,
    server: str,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str = "",
) -> None:
    """`referee submit FOLDER --server HOST:PORT [--competition NAME]`: pack, upload, show the
    outcome."""
    bot_name = name or folder.resolve().name
    client = _client(server, token_file, ca, insecure, competition=competition)
    try:
        packed = pack_folder(folder)
    except ArchiveError as error:
        click.echo(
            f"referee submit: {field(folder)}: cannot submit: {field(error, 2000)}", err=True
        )
        sys.exit(2)
    click.echo(
        f"submitting {field(bot_name)}: {packed.files} files, {len(packed.data)} bytes to "
        f"{field(server)}{f' (competition {competition})' if competition else ''}; the arena "
        "builds it and plays its smoke games ...",
        err=True,
    )

    def waiting(reply: Any) -> None:
        click.echo(f"{field(bot_name)}: pending: {field(reply.waiting)}", err=True)

    try:
        with client:
            reply = client.upload(bot_name, packed)
            click.echo(
                f"{field(bot_name)}: received as {field(reply.submission_id)}; validating ...",
                err=True,
            )
            reply = client.follow(reply, on_wait=waiting)
    except ClientError as error:
        _fail(error)
        return
    if reply.outcome == pb.SUBMIT_REFUSED:
        click.echo(
            f"referee submit: REFUSED {field(bot_name)}: {field(reply.reason, 2000)}", err=True
        )
        if reply.bot_output.strip():
            click.echo("--- the bot's output (last lines) ---", err=True)
            click.echo("\n".join(block(reply.bot_output).rstrip().splitlines()[-30:]), err=True)
        sys.exit(ExitCode.REJECTED)
    if reply.outcome == pb.SUBMIT_PENDING:
        why = f" ({field(reply.waiting)})" if reply.waiting else ""
        click.echo(
            f"{field(bot_name)}: received as {field(reply.submission_id)}; not judged yet{why}: "
            "`referee my-bots` shows the outcome"
        )
        return
    what = "new version" if reply.outcome == pb.SUBMIT_ACCEPTED else "unchanged (same sources as)"
    click.echo(
        f"{field(bot_name)}: {what} v{reply.version} (source {field(reply.source_hash[:12])}); "
        f"{field(reply.validation, 2000)}"
    )


@click.command("my-bots")
@SERVER
@TOKEN_FILE
@CA
@INSECURE
@COMPETITION
@click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON.")
def my_bots(
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str,
    as_json: bool,
) -> None:
    """Your bots on the arena: versions, games, faults, and your recent submissions (of one
    competition: --competition, else the default)."""
    try:
        with _client(server, token_file, ca, insecure, competition=competition) as client:
            reply = client.my_bots()
    except ClientError as error:
        _fail(error)
        return
    if as_json:
        click.echo(json.dumps(MessageToDict(reply, preserving_proto_field_name=True), indent=1))
        return
    click.echo(
        f"author {field(reply.author)}: {len(reply.bots)} bots "
        f"(limits: {reply.limits.max_active_bots} active, "
        f"{reply.limits.max_submissions_per_hour} submissions/hour, "
        f"{reply.limits.max_archive_bytes // 1024} KiB archives, "
        f"{reply.limits.max_stored_bytes // 2**20} MiB kept, {reply.limits.max_waiting} waiting)"
    )
    for bot in reply.bots:
        state = bot.state or ("active" if bot.active else "withdrawn")
        if state == "refused":
            state = "refused: never accepted, the name is not yours"
        note = f": {field(bot.organiser_note, 500)}" if bot.organiser_note else ""
        click.echo(f"  {field(bot.name)} ({field(state)}{note})")
        for v in bot.versions:
            click.echo(
                f"    v{v.version}  {field(v.submitted_at)}  source {field(v.source_hash[:12])}  "
                f"{v.games} games, "
                f"{v.faults} faults"
            )
    if reply.submissions:
        click.echo("recent submissions:")
    for s in reply.submissions:
        version = f" v{s.version}" if s.version else ""
        click.echo(
            f"  {field(s.received_at)}  {field(s.bot_name):<16} {field(s.status)}{version}: "
            f"{field(s.detail, 2000)}"
        )


@click.command("withdraw")
@click.argument("name")
@SERVER
@TOKEN_FILE
@CA
@INSECURE
@COMPETITION
def withdraw(
    name: str,
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str,
) -> None:
    """Take your bot NAME out of the arena's ladder (of one competition: --competition, else the
    default; its games stay recorded; submit it again to return)."""
    try:
        with _client(server, token_file, ca, insecure, competition=competition) as client:
            reply = client.withdraw(name)
    except ClientError as error:
        _fail(error)
        return
    state = "withdrawn" if reply.was_active else "was already withdrawn"
    click.echo(f"{field(reply.bot_name)}: {state}")


@click.command("my-faults")
@click.argument("name")
@SERVER
@TOKEN_FILE
@CA
@INSECURE
@COMPETITION
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
def my_faults(
    name: str,
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str,
    limit: int,
) -> None:
    """Your bot NAME's faults on the arena, newest first, with their causes and the bot's own
    output."""
    try:
        with _client(server, token_file, ca, insecure, competition=competition) as client:
            reply = client.faults(name, limit)
    except ClientError as error:
        _fail(error)
        return
    if not reply.faults:
        click.echo(f"{field(name)}: no faults in its games")
    for f in reply.faults:
        click.echo(
            f"{field(f.finished_at)}  game {field(f.game_id)} (v{f.version}) round {f.round} "
            f"turn {f.turn}: {field(f.kind)}: {field(f.detail, 2000)}"
        )
        if f.log_tail:
            click.echo("  " + block(f.log_tail).replace("\n", "\n  "))
    if reply.last_refusal_output:
        click.echo("--- the last refused submission ---")
        click.echo(block(reply.last_refusal_output))


@click.command("arena-standings")
@SERVER
@CA
@INSECURE
@COMPETITION
@click.option("--json", "as_json", is_flag=True, help="Print standings.json.")
def arena_standings(
    server: str | None, ca: Path | None, insecure: bool, competition: str, as_json: bool
) -> None:
    """The arena's current standings (public: no token needed), of one competition
    (--competition, else the default)."""
    try:
        client = _client(server, None, ca, insecure, need_token=False, competition=competition)
        with client:
            reply = client.standings()
    except ClientError as error:
        _fail(error)
        return
    if as_json:
        # Parsed and written again: valid JSON, and every character outside ASCII escaped.
        try:
            doc = json.loads(reply.standings_json or "{}")
        except ValueError:
            click.echo("referee: the arena sent standings that are not JSON", err=True)
            sys.exit(1)
        click.echo(json.dumps(doc, indent=1))
        return
    click.echo(f"{reply.games} games (computed {field(reply.computed_at or 'never')})")
    for r in reply.rows:
        interval = (
            f"[{r.rating_low:.0f}, {r.rating_high:.0f}]" if r.has_interval else "[not enough games]"
        )
        click.echo(
            f"{r.rank:>3}. {field(r.bot):<24} {r.rating:7.1f}  {interval}  "
            f"{r.games} games, mean penalty {r.mean_penalty:.1f}, {r.faults} faults"
        )

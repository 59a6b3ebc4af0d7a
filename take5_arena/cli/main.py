"""The `referee` command: play, check, match, submit, run tournaments, rate and publish.

Exit codes shared by every subcommand: 0 success, 1 the command ran but found a problem (an invalid
record, a failed game), 2 bad usage or input (click's own convention), 3 a bot was rejected, 4 the
host or the installation failed (a store on a full or read-only disk or damaged:
take5_arena/referee/store/health.py; an engine or a sandbox that did not answer; a part of the
platform that is not installed, one line naming the extra), 130 interrupted. Ctrl-C (or SIGTERM)
at any moment ends the command with 130 and one line, never a
traceback: take5_arena/cli/entry.py, the entry point, handles both from its first line.

Start-up time matters (bench/startup.py): a bot author runs `referee play`, `verify` and `match`
dozens of times an hour. So the group is lazy, as click's documentation recommends for large
command lines: :data:`COMMANDS` names each subcommand, the module that defines it and its one-line
help, and a subcommand's module is imported only when that subcommand runs or shows its own help.
`referee --help` imports click, this module and the referee's error base, nothing else. Each
subcommand's module imports what it needs at its top. The few imports left inside functions are
the ones that save a noticeable moment of a command that does not always need them, and they are
all listed here:

* ``referee --version`` and the one-line report of a referee error load the SDK only when asked
  (this module; `referee --help` needs neither);
* ``referee verify --site`` loads the leaderboard (numpy, scipy) only for a published site
  (cli/verify.py);
* ``referee match --sandbox docker`` loads docker-py only for the Docker sandbox (cli/match.py);
* ``referee serve --web`` loads the web pages (Starlette, uvicorn, Jinja2) only when asked
  (cli/service.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import click

from take5_arena.errors import MISSING_EXTRA_EXIT, ArenaError, missing_extra


class Subcommand(NamedTuple):
    """Where a subcommand lives (``module:attribute``) and its line in `referee --help`."""

    target: str
    help: str

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


#: The subcommands, by name. Their one-line help lives here (not in the modules, which would have to
#: be imported to read it); tests/test_cli.py checks that each entry loads the command it names.
COMMANDS: Mapping[str, Subcommand] = {
    "analyse": Subcommand(
        "take5_arena.cli.analyse:analyse_command",
        "Each card a seat played in a record beside the SDK search's card.",
    ),
    "arena-standings": Subcommand(
        "take5_arena.cli.service:arena_standings", "An arena's current standings (no token needed)."
    ),
    "authors": Subcommand(
        "take5_arena.cli.service:authors", "Add, revoke and list an arena's authors and tokens."
    ),
    "backup": Subcommand(
        "take5_arena.cli.backup:backup", "Copy a tournament or arena, also while it serves."
    ),
    "build": Subcommand("take5_arena.cli.build:build", "Build the Docker image of a bot folder."),
    "challenge": Subcommand(
        "take5_arena.cli.challenge:challenge",
        "Ask for an unrated challenge of your bot on an arena, or show one.",
    ),
    "competition": Subcommand(
        "take5_arena.cli.competition:competition",
        "Several competitions on one arena, each with its own settings and ladder.",
    ),
    "match": Subcommand("take5_arena.cli.match:match", "Play a match between 2 to 10 bots."),
    "my-bots": Subcommand(
        "take5_arena.cli.service:my_bots", "Your bots on an arena: versions, games, faults."
    ),
    "my-faults": Subcommand(
        "take5_arena.cli.service:my_faults", "Your bot's faults on an arena, with its own output."
    ),
    "play": Subcommand(
        "take5_arena.cli.play:play", "Play one game of random players and print its transcript."
    ),
    "prune": Subcommand(
        "take5_arena.cli.prune:prune", "Remove old uploads, validated folders and cached archives."
    ),
    "publish": Subcommand(
        "take5_arena.cli.publish:publish", "Publish the standings as a static site."
    ),
    "replay": Subcommand(
        "take5_arena.cli.replay:replay", "Step through a recorded game in the terminal."
    ),
    "restore": Subcommand(
        "take5_arena.cli.backup:restore", "Restore a backup made by `referee backup`."
    ),
    "season": Subcommand(
        "take5_arena.cli.season:season",
        "A season with dates: entries frozen at a cut-off, its key revealed at the end.",
    ),
    "serve": Subcommand(
        "take5_arena.cli.service:serve", "Run the arena service on a tournament directory."
    ),
    "standings": Subcommand(
        "take5_arena.cli.publish:standings", "Print the standings of a tournament or of records."
    ),
    "submit": Subcommand(
        "take5_arena.cli.submit:submit", "Add a bot to a tournament, or send it to an arena."
    ),
    "tournament": Subcommand(
        "take5_arena.cli.tournament:tournament",
        "Run a tournament of submitted bots; its status; reveal its deal key.",
    ),
    "verify": Subcommand(
        "take5_arena.cli.verify:verify", "Replay game records through the rules; check a site."
    ),
    "withdraw": Subcommand(
        "take5_arena.cli.service:withdraw", "Take your bot out of an arena's ladder."
    ),
}


def _own_code(error: BaseException) -> ArenaError | None:
    """The platform's error under ``error`` (raised while handling it) that has an exit code of its
    own, such as a store the host failed (4): subcommands turn the errors they expect into click's
    usage errors (2), and this keeps the host's faults apart from the user's, whichever did."""
    seen: BaseException | None = error.__context__
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ArenaError) and seen.exit_code != ArenaError.exit_code:
            return seen
        seen = seen.__context__
    return None


class ArenaGroup(click.Group):
    """click's group, lazy (:data:`COMMANDS`), with one way out for Ctrl-C (exit 130, one line) and
    for the platform's own errors (a one-line message, exit 2 or the error's own code), whatever
    the subcommand."""

    def __init__(
        self, *args: Any, lazy: Mapping[str, Subcommand] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, Subcommand] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of subcommands, from :data:`COMMANDS` alone: listing imports none of them."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in self.lazy:
                # click's own shortening, through its public API: a help-only command stands in
                # for the one not imported yet.
                stand_in = click.Command(name, help=self.lazy[name].help)
                rows.append((name, stand_in.get_short_help_str(limit)))
            elif not self.commands[name].hidden:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            try:
                code = super().main(args, prog_name, complete_var, False, **extra)
            except click.exceptions.Exit as done:
                code = done.exit_code
            except click.ClickException as error:
                own = _own_code(error)
                if own is None:
                    error.show()
                    code = error.exit_code
                else:  # a subcommand's usage error over an error with its own exit code
                    from take5_arena.cli.terminal import field

                    click.echo(f"referee: {field(own)}", err=True)
                    code = own.exit_code
            except (click.Abort, KeyboardInterrupt):
                click.echo("\ninterrupted", err=True)
                code = 130
            except ImportError as error:  # a part not installed (an extra), from any import
                missing = missing_extra(error)
                if missing is None:
                    raise
                click.echo(f"referee: {missing}", err=True)
                code = MISSING_EXTRA_EXIT
            except ArenaError as error:  # the platform's errors (take5_arena/errors.py): one line
                from take5_arena.cli.terminal import field

                click.echo(f"referee: {field(error)}", err=True)
                code = error.exit_code
        except KeyboardInterrupt:  # a second Ctrl-C while reporting the first
            code = 130
        sys.exit(code if isinstance(code, int) else 0)


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from take5_arena.referee.defaults import VERSION

    click.echo(f"referee, version {VERSION}")
    ctx.exit()


@click.group(
    cls=ArenaGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def main() -> None:
    """take5 arena: a referee for 6 nimmt! (Take 5) bots.

    Start with `referee play` to watch a game of random players, then write a bot
    (see the README) and pit it against others with `referee match`.
    """

"""The command line's conventions (docs/organisers/command-line.md): one set of shared options
with one default each, --json wherever a result is printed, the same bootstrap everywhere; and the
lazy group (take5_arena/cli/main.py) that keeps `referee --help` from importing the subcommands."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from support import referee_env

from take5_arena.cli.main import COMMANDS, main
from take5_arena.referee import defaults

RESULT_COMMANDS = (
    "play",
    "verify",
    "match",
    "submit",
    "tournament run",
    "tournament status",
    "tournament reveal",
    "standings",
    "publish",
    "build",
)


def command(path: str) -> click.Command:
    cmd: click.Command = main
    ctx = click.Context(main)
    for part in path.split():
        assert isinstance(cmd, click.Group)
        found = cmd.get_command(ctx, part)
        assert found is not None, path
        cmd = found
    return cmd


def option(cmd: click.Command, name: str) -> click.Option:
    found = [p for p in cmd.params if isinstance(p, click.Option) and name in p.opts]
    assert found, f"{cmd.name} has no {name}"
    return found[0]


def test_every_command_that_prints_a_result_has_json():
    for path in RESULT_COMMANDS:
        assert option(command(path), "--json").is_flag, path


def test_one_bootstrap_everywhere():
    for path in ("standings", "publish", "tournament status"):
        assert option(command(path), "--bootstrap").default == defaults.BOOTSTRAP, path
        assert option(command(path), "--bootstrap-seed").default == defaults.BOOTSTRAP_SEED, path


def test_shared_options_carry_the_defaults_module():
    match, run = command("match"), command("tournament run")
    for name, value in (
        ("--threshold", defaults.THRESHOLD),
        ("--timeout", defaults.TIMEOUT),
        ("--max-faults", defaults.MAX_FAULTS),
        ("--memory", defaults.MEMORY),
        ("--cpus", defaults.CPUS),
        ("--pids", defaults.PIDS),
        ("--base-image", defaults.BASE_IMAGE),
    ):
        assert option(match, name).default == value, name
        stored = option(run, name)  # a tournament keeps its own setting unless the option is given
        assert (
            stored.default is None
            and stored.help
            and stored.help.endswith(f"[{value:g}]" if isinstance(value, float) else f"[{value}]")
        ), (name, stored.help)
    assert option(match, "--sandbox").default == defaults.MATCH_SANDBOX == "local"
    assert option(run, "--sandbox").default is None  # the tournament's; docker for a new one


def test_play_json_is_the_game_record(referee_cli):
    result = referee_cli(["play", "-n", "3", "--seed", "7", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["complete"] and len(record["seats"]) == 3 and record["seed"] == 7


def test_tournament_status_json_needs_no_open_store(empty_tournament, referee_cli):
    result = referee_cli(["tournament", "status", "-t", str(empty_tournament), "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert status["state"] == "not started" and status["entrants"] == [] and "store" not in status


def test_version_is_the_sdk_version(referee_cli):
    import take5

    result = referee_cli(["--version"])
    assert result.exit_code == 0 and take5.__version__ in result.output


def test_errors_are_one_line_with_exit_code_2(tmp_path, referee_cli):
    result = referee_cli(["tournament", "status", "-t", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "{missing}"],
        ["standings", "--records", "{missing}"],
        ["publish", "--records", "{missing}", "--out", "{out}"],
        ["replay", "{missing}"],
        ["analyse", "{missing}"],
    ],
    ids=lambda args: args[0],
)
def test_an_input_file_that_is_missing_is_bad_usage_in_every_command(tmp_path, referee_cli, args):
    # docs/organisers/command-line.md: 2 for bad usage or input, whichever command reads it (1 is
    # for a record read that breaks the rules, 4 for a damaged store)
    missing, out = tmp_path / "no-such.json", tmp_path / "site"
    argv = [a.format(missing=missing, out=out) for a in args]
    result = referee_cli(argv)
    assert result.exit_code == 2, (argv, result.output)
    assert "Traceback" not in result.output and str(missing) in result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_declared_subcommand_loads_the_command_it_names(name):
    command = COMMANDS[name].load()
    assert command.name == name
    assert command.help and COMMANDS[name].help.endswith(".")


def test_help_lists_every_subcommand_and_imports_none_of_them():
    """`referee --help` reads the one-line help from COMMANDS: no subcommand module, no SDK and
    none of the heavy libraries are imported (bench/startup.py measures what that is worth)."""
    probe = (
        "import sys\n"
        "from take5_arena.cli.main import main\n"
        "try:\n    main(['--help'], prog_name='referee')\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('take5', 'numpy', "
        "'scipy', 'grpc', 'docker', 'rich', 'google')))), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=referee_env(), check=True
    )
    listed = [line.split()[0] for line in done.stdout.split("Commands:")[1].splitlines() if line]
    assert listed == sorted(COMMANDS)
    loaded = done.stderr.split()
    assert set(loaded) <= {
        "take5_arena",
        "take5_arena.cli",
        "take5_arena.cli.entry",
        "take5_arena.cli.main",
        "take5_arena.errors",
        "take5_arena.referee",
        "take5_arena.referee.errors",
    }, loaded


def test_an_unknown_subcommand_is_a_usage_error(referee_cli):
    result = referee_cli(["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_submit_that_fails_for_the_hosts_reasons_says_so_in_one_line(
    monkeypatch, referee_cli, tmp_path
):
    """No engine, or a sandbox that did not start: not a usage error (no click banner, no exit 2)
    and not a refusal, but one line and exit code 4 (docs/faults.md)."""
    from take5_arena.cli import submit
    from take5_arena.referee.tournament.errors import SubmitDeferredError

    def deferred(*args: object, **kwargs: object) -> None:
        raise SubmitDeferredError(
            "the arena could not start the bots (sandbox: its container was not started within "
            "120 s)"
        )

    monkeypatch.setattr(submit, "do_submit", deferred)
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("")
    done = referee_cli(["submit", str(bot), "--name", "b", "--tournament", str(tmp_path / "t")])
    assert done.exit_code == 4, done.output
    assert done.output.count("\n") == 1 and "NOT VALIDATED" in done.output, done.output
    assert "Usage:" not in done.output and "Traceback" not in done.output
    assert "not started within 120 s" in done.output

"""The command line's conventions (docs/organisers/command-line.md): one set of shared options
with one default each, --json wherever a result is printed, the same bootstrap everywhere."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from take5_arena.cli.main import main
from take5_arena.referee import defaults
from take5_arena.referee.store import Store

RESULT_COMMANDS = (
    "play",
    "verify",
    "match",
    "submit",
    "tournament run",
    "tournament status",
    "standings",
    "publish",
    "build",
)


def command(path: str) -> click.Command:
    cmd: click.Command = main
    for part in path.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[part]
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


def test_play_json_is_the_game_record():
    result = CliRunner().invoke(main, ["play", "-n", "3", "--seed", "7", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["complete"] and len(record["seats"]) == 3 and record["seed"] == 7


def test_tournament_status_json_needs_no_open_store(tmp_path):
    Store(tmp_path, create=True).close()
    result = CliRunner().invoke(main, ["tournament", "status", "-t", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert status["state"] == "not started" and status["entrants"] == [] and "store" not in status


def test_version_is_the_sdk_version():
    import take5

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and take5.__version__ in result.output


def test_errors_are_one_line_with_exit_code_2(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "status", "-t", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "Traceback" not in result.output

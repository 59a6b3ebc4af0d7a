"""`referee build` (a bot folder's Docker image) and the Docker side of `referee match --sandbox
docker`.

Exit codes of `referee build`: 0 built or already up to date; 2 bad usage; 3 the bot is rejected
(a rule or limit refused it, its command cannot start, or its build failed: the build's own output
is shown); 4 no Docker engine answers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from take5_arena.referee import defaults
from take5_arena.referee.match.botref import BotRef
from take5_arena.referee.sandbox.errors import EngineUnavailableError, ImageBuildError
from take5_arena.referee.sandbox.images import build_image
from take5_arena.referee.sandbox.launcher import DockerLauncher
from take5_arena.referee.sandbox.limits import SandboxLimits


@click.command("build")
@click.argument("bot_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--name", help="The bot's name in the image's labels and tag (default: the folder's name)."
)
@click.option(
    "--version",
    "bot_version",
    help="The bot's version (default: its VERSION file or __version__/version in bot.py).",
)
@click.option(
    "--base-image",
    default=defaults.BASE_IMAGE,
    show_default=True,
    help="The image to build on (scripts/setup-docker.sh makes the default).",
)
@click.option("--force", is_flag=True, help="Build even if an image of the same sources exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the image's details as JSON.")
def build(
    bot_dir: Path,
    name: str | None,
    bot_version: str | None,
    base_image: str,
    force: bool,
    as_json: bool,
) -> None:
    """Build the Docker image of the bot folder BOT_DIR, the way `referee match --sandbox docker`
    runs it.

    The folder is checked first (size, files, links; docs/security.md); a Python bot's image holds
    its folder in /bot, the take5 SDK and the wheels of its requirements.txt (package names only,
    binary wheels only: nothing of the bot runs on this machine); a folder with bot.toml runs
    another language; a folder with its own Dockerfile is built with it, from the arena's base
    images only, with no network. Images are tagged take5-bot/NAME:HASH by a hash of their sources
    and reused while the sources are unchanged.
    """
    try:
        info = build_image(
            bot_dir, name=name, version=bot_version, base_image=base_image, force=force
        )
    except EngineUnavailableError as error:
        click.echo(f"referee build: no Docker engine: {error}", err=True)
        sys.exit(4)
    except ImageBuildError as error:
        if error.output.strip():
            click.echo(error.output.rstrip(), err=True)
            click.echo("", err=True)
        click.echo(f"referee build: FAILED: {str(error).splitlines()[0]}", err=True)
        sys.exit(3)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "tag": info.tag,
                    "id": info.id,
                    "bot": info.bot_name,
                    "version": info.bot_version,
                    "sdk": info.sdk_version,
                    "protocol": info.protocol_version,
                    "source_hash": info.source_hash,
                    "base_image": info.base_image,
                    "built": info.built,
                    "seconds": round(info.build_seconds, 2),
                },
                indent=1,
            )
        )
    elif info.built:
        click.echo(
            f"built {info.tag} ({info.bot_name} {info.bot_version}, SDK {info.sdk_version}, "
            f"protocol {info.protocol_version}) in {info.build_seconds:.1f} s"
        )
    else:
        click.echo(f"{info.tag} is up to date ({info.bot_name} {info.bot_version})")


def docker_match_launcher(
    refs: Sequence[BotRef],
    *,
    memory: str,
    cpus: float,
    pids: int,
    base_image: str,
    records: Path | None,
    quiet: bool,
    runtime: str | None = None,
    bot_memory: str = defaults.BOT_MEMORY,
) -> DockerLauncher:
    """The launcher of `referee match --sandbox docker`, images built; usage errors exit 2."""
    try:
        limits = SandboxLimits(memory=memory, cpus=cpus, pids=pids, runtime=runtime or None)
    except ValueError as error:
        raise click.BadParameter(
            str(error).replace("SandboxLimits.", "--"),
            param_hint="--memory/--cpus/--pids/--runtime",
        ) from None
    try:
        launcher = DockerLauncher(
            limits=limits,
            base_image=base_image,
            log_dir=Path(records) / "logs" if records is not None else None,
            bot_memory=bot_memory,
        )
    except EngineUnavailableError as error:
        raise click.UsageError(f"--sandbox docker: {error}") from None
    try:
        for text, got in launcher.prepare(refs).items():
            if isinstance(got, ImageBuildError):
                # The bot is rejected before play; its build output is also its log.
                if got.output.strip():
                    click.echo(got.output.rstrip(), err=True)
                click.echo(
                    f"referee: {text}: image build FAILED: {str(got).splitlines()[0]}", err=True
                )
            elif got.built and not quiet:
                click.echo(f"built {got.tag} for {text} in {got.build_seconds:.1f} s", err=True)
    except BaseException:
        launcher.close()
        raise
    return launcher

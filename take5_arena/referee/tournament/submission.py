"""Submitting an entrant: validate a bot folder and record it as (a new version of) an entrant.

Validation is what a tournament relies on later: the image builds (docker), the bot starts,
answers the handshake and plays two smoke games (one deal, both rotations) against the random
example bot within the tournament's limits, without a fault. A refused bot is reported with the
reason and its own stderr.

What was validated is what plays (take5_arena/referee/artifacts.py): the folder is packed FIRST into
a content-addressed archive, and everything after (the source hash, the image, the smoke games)
works on that archive unpacked into the artifact cache, never on the folder. The archive goes to the
tournament's ``artifacts/`` folder and its digest to the store; tournament games play it, wherever
they run, so a folder changed or deleted after submission changes nothing.

Smoke games look like any other game to the bot: a fresh random deal and game ids of the same form
as a tournament's, so a bot cannot behave well only while it is being checked.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import defaults
from ..artifacts import Artifact, ArtifactError, ArtifactStore, materialize, pack
from ..kinds import SandboxKind
from ..match.botref import BadBotRefError, BotRef, parse_bot
from ..match.config import MatchConfig
from ..match.play import Match
from ..match.sanitize import clean_field, clean_text
from ..sandbox import context
from ..sandbox.errors import EngineUnavailableError, ImageBuildError
from ..sandbox.launcher import DockerLauncher
from ..store import EntrantVersion, Store
from .errors import SubmitRefusedError, TournamentError
from .settings import TournamentSettings

RANDOM_BOT = defaults.EXAMPLE_BOTS / "random"


@dataclass(frozen=True)
class Submitted:
    version: EntrantVersion
    created: bool
    smoke: str  # one line about the smoke games


def submit(
    directory: str | os.PathLike[str],
    bot_dir: str | os.PathLike[str],
    name: str,
    *,
    sandbox: str | None = None,
    timeout: float | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> Submitted:
    """Validate the bot in ``bot_dir`` and record it as (a new version of) entrant ``name``.

    Creates the tournament directory if needed. ``sandbox``/``timeout`` default to the tournament's
    settings. Raises :class:`SubmitRefusedError` (with the bot's stderr) when the bot does not
    build, start, shake hands, or play its smoke games without a fault.
    """
    if not name or not all(c.isalnum() or c in "-_." for c in name) or len(name) > 40:
        raise TournamentError(f"name {name!r}: use 1-40 letters, digits, - _ .")
    folder = Path(bot_dir).resolve()
    if not folder.is_dir():
        raise TournamentError(f"{bot_dir}: not a bot folder")
    try:
        # the folder's limits and links first (context.scan), before anything reads its files
        artifact = pack(context.scan(folder))
    except (ImageBuildError, ArtifactError) as error:
        raise SubmitRefusedError(str(error)) from None
    # Validated from a private unpacked copy, removed afterwards (a refused bot leaves nothing);
    # games unpack the same archive again into their worker's cache.
    with tempfile.TemporaryDirectory(prefix="take5-submit-") as scratch:
        try:
            snapshot = materialize(artifact.digest, artifact.data, Path(scratch))
        except ArtifactError as error:
            raise SubmitRefusedError(str(error)) from None
        return _validate(
            directory, folder, snapshot, artifact, name, sandbox=sandbox, timeout=timeout, log=log
        )


def _validate(
    directory: str | os.PathLike[str],
    folder: Path,
    snapshot: Path,
    artifact: Artifact,
    name: str,
    *,
    sandbox: str | None,
    timeout: float | None,
    log: Callable[[str], None],
) -> Submitted:
    """Validate the unpacked archive ``snapshot`` of ``folder``; record it if it passes."""
    try:
        ref = parse_bot(str(snapshot))
    except BadBotRefError as error:
        raise SubmitRefusedError(str(error).replace(str(snapshot), str(folder))) from None
    store = Store(directory, create=True)
    try:
        stored = store.settings()
        settings = TournamentSettings.from_json(stored).updated(
            {"sandbox": sandbox, "timeout": timeout}
        )
        if not stored:
            store.set_settings(settings.to_json())
        if ref.kind == "dockerfile" and settings.sandbox != SandboxKind.DOCKER:
            raise SubmitRefusedError(
                "the folder has only a Dockerfile: it can only run in the docker sandbox"
            )
        digest = artifact.digest.removeprefix(
            "sha256:"
        )  # one identity for a version: its archive's
        image_id = None
        launcher = None
        if settings.sandbox == SandboxKind.DOCKER:
            try:
                launcher = DockerLauncher(limits=settings.limits, base_image=settings.base_image)
            except EngineUnavailableError as error:
                raise TournamentError(
                    f"no Docker engine ({error}); run scripts/setup-docker.sh, or use --sandbox "
                    "local"
                ) from None
        try:
            if launcher is not None:
                log(
                    f"building the image of {folder} (archive {artifact.digest[:19]}, "
                    f"{artifact.size} bytes) ..."
                )
                try:
                    info = launcher.image(ref)
                except ImageBuildError as error:
                    raise SubmitRefusedError(
                        f"the image does not build: {clean_field(str(error).splitlines()[0])}",
                        clean_text(error.output),
                    ) from None
                image_id = info.id
            log(f"smoke games against the random example bot ({settings.sandbox}) ...")
            smoke = _smoke(ref, settings, launcher)
        finally:
            if launcher is not None:
                launcher.close()
        ArtifactStore(store.directory / "artifacts").put(artifact)
        version, created = store.add_version(
            name,
            source_hash=digest,
            bot_dir=str(folder),
            kind=ref.kind,
            image_id=image_id,
            validation={"smoke": smoke, "sandbox": settings.sandbox.value},
            artifact=artifact.digest,
        )
        return Submitted(version, created, smoke)
    finally:
        store.close()


def _smoke(ref: BotRef, settings: TournamentSettings, launcher: DockerLauncher | None) -> str:
    """Two games (one deal, both rotations) against the random bot; a fault refuses the bot.

    The deal is random and the game ids have the form of a tournament's (16 hex digits,
    take5_arena/referee/tournament/schedule.py), so the smoke games cannot be told from real ones.
    They are played under the tournament's rules and limits, two players, one fault allowed."""
    config = MatchConfig(
        games=2,
        seed=secrets.randbits(63),
        game=dataclasses.replace(settings.game, players=2),
        calls=dataclasses.replace(settings.calls, max_faults=1),
        game_ids=(secrets.token_hex(8), secrets.token_hex(8)),
    )
    with Match([ref, parse_bot(str(RANDOM_BOT))], config, launcher=launcher) as match:
        for rejection in match.rejections:
            if rejection.bot == ref.text:
                raise SubmitRefusedError(
                    f"{rejection.kind}: {rejection.detail}",
                    clean_text(match.entrants[0].handle.stderr_tail(4000)),
                )
        result = match.play()
        for game in result.games:
            if game.faults[0]:
                f = game.faults[0][0]
                raise SubmitRefusedError(
                    f"{f['kind']} in the smoke game (round {f['round']}, turn {f['turn']}): "
                    f"{f['detail']}",
                    clean_text(match.entrants[0].handle.stderr_tail(4000)),
                )
        info = match.entrants[0].info
    scores = [g.scores[0] for g in result.games]
    return (
        f"handshake ok ({info.name or ref.default_name} {info.version or ''}".rstrip()
        + f"), {len(scores)} smoke games without a fault, penalties {scores}"
    )

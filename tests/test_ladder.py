"""The arena's ladder plays what was validated: the content-addressed archives of the bot versions,
through the tournament's own table driver and spec builder (take5_arena/service/ladder.py), never
the folders the bots were submitted from.

The ladder runs here in this process, on local threads with local bots (the sandbox does not
matter for what is played: tests/test_cluster.py runs it with Docker on two engines).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from take5.record import verify_record
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import TournamentSettings, submit
from take5_arena.referee.tournament.run.executors import open_executor, parse_executor
from take5_arena.referee.tournament.run.spec import GameOutcome, TableSpec
from take5_arena.referee.tournament.run.table import run_table
from take5_arena.service.ladder import Ladder, LadderConfig

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "example_bots"
#: What an author's folder holds after the submission: a bot that would say another name and
#: crash at its first move, if it were ever played.
EDITED = """\
import sys
from take5 import Bot, run


class Edited(Bot):
    name = "edited-after-submission"

    def pick_card(self, view):
        sys.exit(3)


if __name__ == "__main__":
    run(Edited())
"""


def play_ladder(directory: Path, games: int) -> Ladder:
    with Store(directory) as store:
        settings = TournamentSettings.from_json(store.settings.get()).updated(
            {"players": 2, "sandbox": "local"}
        )
    with open_executor(parse_executor("local"), 2) as (executor, info):
        ladder = Ladder(
            directory, settings, LadderConfig(), executor=executor, info=info, retry_delay=0.1
        )
        ladder.start()
        try:
            deadline = time.monotonic() + 300
            while ladder.played < games and time.monotonic() < deadline and ladder.alive:
                time.sleep(0.2)
        finally:
            ladder.stop(timeout=60)
    return ladder


def test_the_ladder_plays_the_archives_not_the_folders(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TAKE5_ARTIFACT_CACHE", str(tmp_path / "cache"))
    directory = tmp_path / "T"
    folders = {}
    for name in ("lowest", "random"):
        folders[name] = Path(shutil.copytree(EXAMPLES / name, tmp_path / f"src-{name}"))
        submit(directory, folders[name], name, sandbox="local")
    # After the submission: one folder edited, the other moved away.
    (folders["lowest"] / "bot.py").write_text(EDITED)
    folders["random"].rename(tmp_path / "moved-away")

    ladder = play_ladder(directory, games=4)
    assert ladder.error is None, ladder.error
    assert ladder.played >= 4 and ladder.infra == 0
    with Store(directory) as store:
        versions = {v.key: v for v in store.versions.all()}
        records = list(store.records.all())
        assert not store.results.infra_failures()
        runs = store.runs.all()
    assert len(records) >= 4
    for _, record in records:
        assert verify_record(record) is None
        assert not any(record["faults"])
        for seat in record["seats"]:
            version = versions[seat["entrant"]]
            assert seat["digest"] == version.artifact  # what played is the validated archive
            assert seat["bot_name"] == seat["name"]  # the bot as validated, not "edited-..."
            assert Path(seat["bot"]).is_relative_to(tmp_path / "cache")
    assert runs[-1]["run_id"] == ladder.run_id and runs[-1]["status"] == "interrupted"


def test_a_game_that_failed_all_its_retries_is_played_again_without_a_restart(
    tmp_path: Path, monkeypatch
) -> None:
    """The first table fails every attempt (retries: 1, so two) for the arena's own reasons; the
    ladder gives it up, and once ``given_up_for`` has passed plays it again, in the same run, and
    records it: no game stays pending until the server restarts."""
    monkeypatch.setenv("TAKE5_ARTIFACT_CACHE", str(tmp_path / "cache"))
    directory = tmp_path / "T"
    for name in ("lowest", "random"):
        submit(directory, EXAMPLES / name, name, sandbox="local")
    with Store(directory) as store:
        settings = TournamentSettings.from_json(store.settings.get()).updated(
            {"players": 2, "sandbox": "local", "retries": 1}
        )
    failing: dict[str, int] = {}  # the first table's first game -> attempts failed

    def flaky(
        spec: TableSpec, on_game: Callable[[GameOutcome], None] | None = None
    ) -> list[GameOutcome]:
        first = spec.games[0][0]
        if not failing or (first in failing and failing[first] < 2):
            failing[first] = failing.get(first, 0) + 1
            out = [
                GameOutcome(gid, infra_kind="engine-unavailable", infra_detail="gone (test)")
                for gid, _ in spec.games
            ]
            for outcome in out:
                if on_game is not None:
                    on_game(outcome)
            return out
        return run_table(spec, on_game)

    with open_executor(parse_executor("local"), 1) as (executor, info):
        ladder = Ladder(
            directory,
            settings,
            LadderConfig(),
            executor=executor,
            info=info,
            runner=flaky,
            retry_delay=0.05,
            given_up_for=1.0,
        )
        ladder.start()
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline and ladder.alive:
                with Store(directory, readonly=True) as store:
                    failed = list(failing)
                    if failed and store.schedules.game(failed[0]).status == "done":
                        break
                time.sleep(0.2)
        finally:
            ladder.stop(timeout=60)
    assert ladder.error is None, ladder.error
    [game] = failing
    assert failing[game] == 2  # every retry failed: given up ...
    with Store(directory, readonly=True) as store:
        assert store.schedules.game(game).status == "done"  # ... and played again, in this run
        assert [f for f in store.results.infra_failures() if f["game_id"] == game]

"""An arena that deals from a public seed (made before secret deals) plays a new version's smoke
tables against its pool as an arena with a key does: through the table player it is given (in
`referee serve`, the ladder's driver), never on the validating thread; their deals come from the
OS's random source and, being no key's, they are never rated (issue 46)."""

from __future__ import annotations

from arena_support import plain_bot

from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.spec import GameOutcome, TableSpec
from take5_arena.referee.tournament.run.table import run_table
from take5_arena.referee.tournament.submission import VALIDATION_PREFIX, submit


def test_a_public_seed_arenas_pool_smoke_tables_go_through_the_table_player(tmp_path):
    directory = tmp_path / "T"
    with Store(directory, create=True) as store:
        settings = TournamentSettings.from_json({"deals": "public", "seed": 3}).updated(
            {"players": 3, "sandbox": "local"}
        )
        store.settings.set(settings.to_json())
    played: list[TableSpec] = []

    def play(spec: TableSpec) -> list[GameOutcome]:
        played.append(spec)
        return run_table(spec)

    for author, pick in (("bob", "-1"), ("carol", "0")):
        done = submit(
            directory,
            plain_bot(tmp_path, f"{author}bot", pick),
            f"{author}bot",
            author=author,
            pool=True,
            play=play,
        )
        assert "against house bots" in done.smoke  # too few other authors: house bots
    assert played == []
    done = submit(
        directory,
        plain_bot(tmp_path, "alicebot", "len(view.hand) // 2"),
        "alicebot",
        author="alice",
        pool=True,
        play=play,
    )
    assert "against the pool's bots" in done.smoke, done.smoke
    assert (done.version.key, done.created, done.rated) == ("alicebot@1", True, 0)
    [spec] = played  # one table of 3, every rotation: through the player, not a Match here
    assert sorted(s.key for s in spec.seats) == ["alicebot@1", "bobbot@1", "carolbot@1"]
    assert spec.deal is None and len(spec.games) == 3
    with Store(directory) as store:
        assert store.schedules.all(VALIDATION_PREFIX) == []  # a public deal never counts
        assert store.results.recorded_count() == 0

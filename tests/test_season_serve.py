"""The arena closes a season by itself at its end (take5_arena/service/season_switch.py): a real
`referee serve` with a season of a few seconds stops dealing from the season's key at its end,
records no game of that key after revealing it, archives the season (verifiable from its site
alone) and opens the next season, whose games are dealt from the new key."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from arena_support import Server, cli, db_rows, wait_until
from support import EXAMPLES


def _enter(t: Path) -> None:
    for bot in ("lowest", "random", "heuristic"):
        done = cli(
            "submit", str(EXAMPLES / bot), "--name", bot, "--author", bot,
            "--tournament", str(t), "--sandbox", "local",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr


def _games_of(t: Path, season: int) -> int:
    sql = (
        "SELECT COUNT(*) FROM results r JOIN games g ON g.game_id = r.game_id"
        " WHERE g.deal_season = ?"
    )
    return int(db_rows(t, sql, (season,))[0][0])


def test_the_arena_closes_a_season_at_its_end_and_opens_the_next(tmp_path: Path) -> None:
    t, archive = tmp_path / "T", tmp_path / "archive"
    _enter(t)
    now = datetime.now(timezone.utc)
    cutoff, ends = now + timedelta(seconds=8), now + timedelta(seconds=25)
    opened = cli(
        "season", "open", "-t", str(t), "--cutoff", cutoff.isoformat(), "--ends", ends.isoformat()
    )
    assert opened.returncode == 0, opened.stderr
    server = Server(
        t, "--sandbox", "local", "--players", "2", "-j", "1", "--after-season", "next",
        "--season-archive", str(archive), "--season-grace", "5", "--bootstrap", "10",
        "--publish-every-seconds", "1",
    )  # fmt: skip
    try:
        server.wait_for(r"season 1 closed at its end", timeout=180)
        server.wait_for(r"season 1 archived in")
        server.wait_for(r"season 2 opened: entries until")
        wait_until(lambda: _games_of(t, 2) >= 2, what="games of season 2", server=server)
    finally:
        assert server.stop() == 0, server.log
    assert _games_of(t, 1) >= 1, server.log  # the ladder played during the season
    ((revealed_at, key),) = db_rows(t, "SELECT revealed_at, key FROM deal_keys WHERE season = 1")
    assert key is not None and not (t / "secret" / "deal-key-1").exists()
    # nothing of the revealed key recorded after its revelation, nothing dealt from it after its
    # end: every schedule made after the end is dealt from season 2
    late = db_rows(
        t,
        "SELECT COUNT(*) FROM results r JOIN games g ON g.game_id = r.game_id"
        " WHERE g.deal_season = 1 AND r.finished_at > ?",
        (revealed_at,),
    )
    assert late == [(0,)]
    end = ends.strftime("%Y-%m-%dT%H:%M:%S")
    dealt_late = db_rows(
        t,
        "SELECT COUNT(*) FROM schedules s JOIN schedule_games sg ON sg.schedule_id = s.schedule_id"
        " JOIN games g ON g.game_id = sg.game_id WHERE g.deal_season = 1 AND s.created_at > ?",
        (end,),
    )
    assert dealt_late == [(0,)]
    status = cli("season", "status", "-t", str(t))
    assert re.match(r"season 2: (open|frozen)\n", status.stdout), status.stdout + status.stderr
    checked = cli("verify", "--site", str(archive / "season-1"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "every seed checked" in checked.stdout
    whole = cli("verify", "--tournament", str(t), "--quiet")
    assert whole.returncode == 0, whole.stdout + whole.stderr


def test_a_given_up_game_is_never_recorded(tmp_path: Path) -> None:
    """The store refuses the record of a game given up when its key was revealed (a table still
    in flight on some referee then): its seed is public from then on."""
    from take5_arena.referee.store import Store
    from take5_arena.referee.store.deals import reveal

    t = tmp_path / "T"
    _enter(t)
    with Store(t) as store:
        versions = [v.id for v in store.versions.current()][:2]
        from take5_arena.referee.tournament.plan.deals import Dealer
        from take5_arena.referee.tournament.plan.settings import TournamentSettings

        settings = TournamentSettings.from_json({**store.settings.get(), "players": 2})
        deal = Dealer.of(store, settings).source("test", settings.game_context())(0, versions)
        game = {
            "game_id": "g-1", "table": 0, "rotation": 0, "deal_seed": deal.seed,
            "duplicate_set": "d-1", "seats": versions, "settings": settings.game_context(),
            "deal_season": deal.season, "deal_id": deal.identity,
        }  # fmt: skip
        store.schedules.save("test-1", [game], description="test", settings={}, entrants=[])
        assert reveal(store, abandon=True).abandoned == 1
        record = {
            "game_id": "g-1",
            "seats": [{"name": "x"}, {"name": "y"}],
            "result": {"scores": [1, 2], "places": [1, 2], "forfeited": []},
        }
        assert store.results.record_game("g-1", record) is False
        assert store.results.recorded_count() == 0


def test_validation_games_dealt_from_a_key_revealed_meanwhile_are_not_rated(
    tmp_path: Path,
) -> None:
    """A version validated across a season's end: its smoke tables were dealt from the old key,
    revealed before they are stored, so they are not stored as rated games (their deals are
    public now); dealt from the current key, they would be."""
    from types import SimpleNamespace

    from take5_arena.referee.store import Store
    from take5_arena.referee.store.deals import current_key, reveal
    from take5_arena.referee.tournament.plan.settings import TournamentSettings
    from take5_arena.referee.tournament.submission import _rate

    t = tmp_path / "T"
    _enter(t)
    with Store(t) as store:
        version = store.versions.current()[0]
        old = current_key(store).season
        candidate = SimpleNamespace(key=version.key, owner=version.author)
        record = {"complete": True}
        table = SimpleNamespace(
            records=[record],
            games=[object()],
            spec=SimpleNamespace(deal={"season": old}),
        )
        reveal(store, abandon=True)
        settings = TournamentSettings.from_json(store.settings.get())
        stored, why = _rate(store, version, candidate, [table], settings)  # type: ignore[arg-type, list-item]
        assert stored == 0 and why is not None and "deal key was revealed meanwhile" in why
        assert store.results.recorded_count() == 0


def test_after_a_season_the_arena_waits_for_the_next_to_be_opened(tmp_path: Path) -> None:
    """``--after-season stop`` (the default): once the season is closed nothing is dealt, not
    even from the next key, until the organiser opens the next season on the running arena."""
    t = tmp_path / "T"
    _enter(t)
    now = datetime.now(timezone.utc)
    cutoff, ends = now + timedelta(seconds=8), now + timedelta(seconds=20)
    opened = cli(
        "season", "open", "-t", str(t), "--cutoff", cutoff.isoformat(), "--ends", ends.isoformat()
    )
    assert opened.returncode == 0, opened.stderr
    server = Server(
        t, "--sandbox", "local", "--players", "2", "-j", "1", "--season-grace", "5",
        "--bootstrap", "10",
    )  # fmt: skip
    try:
        server.wait_for(r"season 1 closed at its end", timeout=180)
        server.wait_for(r"ladder idle after season 1")

        def revealed_on_the_site() -> bool:
            path = t / "site" / "standings.json"
            deals = json.loads(path.read_text()).get("deals", []) if path.exists() else []
            return any(d.get("season") == 1 and d.get("key") for d in deals)

        wait_until(revealed_on_the_site, what="the revealed key on the live site", server=server)
        schedules = db_rows(t, "SELECT COUNT(*) FROM schedules")
        time.sleep(4)
        assert db_rows(t, "SELECT COUNT(*) FROM schedules") == schedules  # nothing planned
        assert _games_of(t, 2) == 0
        later = datetime.now(timezone.utc)
        again = cli(
            "season", "open", "-t", str(t),
            "--cutoff", (later + timedelta(seconds=10)).isoformat(),
            "--ends", (later + timedelta(hours=1)).isoformat(),
        )  # fmt: skip
        assert again.returncode == 0 and "season 2: open" in again.stdout, again.stderr
        wait_until(lambda: _games_of(t, 2) >= 2, what="games of season 2", server=server)
    finally:
        assert server.stop() == 0, server.log

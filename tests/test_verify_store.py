"""A dishonest operator's edits of a real tournament store: `referee verify --tournament` fails on
each, naming the game, and `referee standings` and `publish` refuse the edited store (exit 1, one
line, no traceback) instead of publishing what the edit says.

The store is made once per module by the real commands (`submit`, `tournament run` with local
bots); each test edits a copy of it with plain SQL, as anyone with the file could.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support import EXAMPLES

from take5_arena.cli.main import main

Cli = Callable[[Sequence[str]], Result]


def _cli(args: Sequence[str]) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament of three local bots, two tables of three, every rotation of each deal."""
    directory = tmp_path_factory.mktemp("verify-store") / "t"
    for name in ("random", "lowest", "heuristic"):
        result = _cli(
            ["submit", str(EXAMPLES / name), "--name", name, "-t", str(directory)]
            + ["--sandbox", "local"]
        )
        assert result.exit_code == 0, result.output
    result = _cli(
        ["tournament", "run", "-t", str(directory), "--players", "3", "--games", "6"]
        + ["--sandbox", "local", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    return directory


@pytest.fixture
def store(played: Path, tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A copy of the played tournament and a plain connection to its file (no foreign keys, no
    help from the store's code: what an operator with the file can do)."""
    directory = tmp_path / "t"
    shutil.copytree(played, directory)
    db = sqlite3.connect(directory / "tournament.sqlite")
    yield directory, db
    db.close()


def _games(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT game_id FROM results ORDER BY seq")]


def _leader(directory: Path) -> str:
    result = _cli(["standings", "-t", str(directory), "--json", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["rows"][0]["entrant"])


def _refused(directory: Path, *games: str) -> str:
    """Assert that verify fails naming each of ``games`` and that standings and publish refuse;
    the verify output."""
    result = _cli(["verify", "--tournament", str(directory), "--quiet"])
    assert result.exit_code == 1, result.output
    for game_id in games:
        assert f"{directory}:{game_id}: INVALID" in result.output, result.output
    for args in (["standings", "-t", str(directory)], ["publish", "-t", str(directory)]):
        if args[0] == "publish":
            args += ["--out", str(directory.parent / "site")]
        refused = _cli(args)
        assert refused.exit_code == 1, refused.output
        assert "does not follow from the records" in refused.output
        assert "Traceback" not in refused.output
        assert refused.exception is None or isinstance(refused.exception, SystemExit)
        assert len(refused.output.strip().splitlines()) == 1, refused.output
    assert not (directory.parent / "site").exists()
    return result.output


def test_the_store_as_played_verifies_and_publishes(played: Path) -> None:
    result = _cli(["verify", "--tournament", str(played)])
    assert result.exit_code == 0, result.output
    assert "6 of 6 records valid" in result.output
    assert _cli(["standings", "-t", str(played)]).exit_code == 0


def _seat_rows(db: sqlite3.Connection, game_id: str) -> list[tuple[Any, ...]]:
    return list(
        db.execute(
            "SELECT seat, version_id, score, place FROM seat_results WHERE game_id = ?"
            " ORDER BY place",
            (game_id,),
        )
    )


def test_places_of_the_best_and_the_worst_swapped(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[0]
    rows = _seat_rows(db, game)
    best, worst = rows[0], rows[-1]
    db.execute(
        "UPDATE seat_results SET place = CASE seat WHEN ? THEN ? ELSE ? END"
        " WHERE game_id = ? AND seat IN (?, ?)",
        (best[0], worst[3], best[3], game, best[0], worst[0]),
    )
    db.commit()
    assert "the results table says place" in _refused(directory, game)


def test_a_score_changed(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[2]
    db.execute("UPDATE seat_results SET score = score + 1 WHERE game_id = ? AND seat = 1", (game,))
    db.commit()
    assert "seat 1: the results table says score" in _refused(directory, game)


def test_who_sat_where_swapped(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[1]
    (a,), (b,) = db.execute(
        "SELECT version_id FROM seat_results WHERE game_id = ? AND seat IN (0, 1) ORDER BY seat",
        (game,),
    )
    db.execute(
        "UPDATE seat_results SET version_id = CASE seat WHEN 0 THEN ? ELSE ? END"
        " WHERE game_id = ? AND seat IN (0, 1)",
        (b, a, game),
    )
    db.commit()
    assert "says version" in _refused(directory, game)


def test_a_forfeit_added(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[3]
    db.execute("UPDATE seat_results SET forfeited = 1 WHERE game_id = ? AND seat = 2", (game,))
    db.commit()
    assert "says forfeited 1" in _refused(directory, game)


def test_a_fault_added_or_a_faults_column_malformed(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    directory, db = store
    first, second = _games(db)[:2]
    db.execute(
        "UPDATE seat_results SET faults = '[\"timeout\"]' WHERE game_id = ? AND seat = 0", (first,)
    )
    db.execute(
        "UPDATE seat_results SET faults = '{not json' WHERE game_id = ? AND seat = 1", (second,)
    )
    db.commit()
    output = _refused(directory, first, second)
    assert "says faults" in output and "Traceback" not in output


def test_a_game_deleted_everywhere(store: tuple[Path, sqlite3.Connection]) -> None:
    """Gone from every table, its schedule's game count corrected too: the results' sequence
    numbers still show the hole."""
    directory, db = store
    game = _games(db)[2]
    for table in ("bot_output", "seat_results", "results", "schedule_games", "games"):
        db.execute(f"DELETE FROM {table} WHERE game_id = ?", (game,))
    db.execute("UPDATE schedules SET games = games - 1")
    db.commit()
    output = _refused(directory, "results")
    assert "1 recorded games are missing" in output


def test_the_last_game_deleted_everywhere(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[-1]
    for table in ("bot_output", "seat_results", "results", "schedule_games", "games"):
        db.execute(f"DELETE FROM {table} WHERE game_id = ?", (game,))
    db.commit()
    output = _refused(directory, "results")
    assert "missing" in output and "was saved with 6 games, it lists 5" in output


def test_every_game_the_leader_lost_deleted(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    leader = _leader(directory)
    (version,) = db.execute(
        "SELECT v.id FROM entrant_versions v JOIN entrants e ON e.id = v.entrant_id"
        " WHERE e.name = ?",
        (leader,),
    ).fetchone()
    rows = list(
        db.execute(
            "SELECT game_id, place, score FROM seat_results WHERE version_id = ?", (version,)
        )
    )
    lost = [game for game, place, _ in rows if place > 1]
    if not lost:  # the deals are secret, so new each run: a leader may have won every game
        worst = max(score for _, _, score in rows)
        lost = [game for game, _, score in rows if score == worst]
    for game in lost:
        for table in ("bot_output", "seat_results", "results"):
            db.execute(f"DELETE FROM {table} WHERE game_id = ?", (game,))
    db.commit()
    output = _refused(directory, *lost, "results")
    assert "marked played, but it has no record" in output


def test_a_played_game_marked_pending_again(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[0]
    db.execute("UPDATE games SET status = 'pending' WHERE game_id = ?", (game,))
    db.commit()
    assert 'marked "pending"' in _refused(directory, game)


def test_a_record_without_a_scheduled_game(store: tuple[Path, sqlite3.Connection]) -> None:
    directory, db = store
    game = _games(db)[0]
    db.execute("UPDATE games SET game_id = 'g-elsewhere' WHERE game_id = ?", (game,))
    db.execute("UPDATE schedule_games SET game_id = 'g-elsewhere' WHERE game_id = ?", (game,))
    db.commit()
    output = _refused(directory, game, "g-elsewhere")
    assert "no such game was scheduled" in output


def test_a_stored_digest_or_version_edited(store: tuple[Path, sqlite3.Connection]) -> None:
    """The record's seats are bound to what was submitted: the archive's digest and the entrant's
    version number (verify alone: standings rate entrants, not archives)."""
    directory, db = store
    db.execute("UPDATE entrant_versions SET artifact = 'sha256:' || hex(randomblob(32))")
    db.commit()
    result = _cli(["verify", "--tournament", str(directory), "--quiet"])
    assert result.exit_code == 1 and "the record says digest" in result.output, result.output
    db.execute("UPDATE entrant_versions SET version = version + 1")
    db.commit()
    result = _cli(["verify", "--tournament", str(directory), "--quiet"])
    assert result.exit_code == 1 and "the record says entrant" in result.output, result.output


def test_seeds_are_checkable_once_the_key_is_revealed(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    directory, db = store
    result = _cli(["verify", "--tournament", str(directory)])
    assert result.exit_code == 0, result.output
    assert "6 dealt from a secret key: their seeds are not checkable yet" in result.output
    (commitment,) = db.execute("SELECT commitment FROM deal_keys").fetchone()
    status = _cli(["tournament", "status", "-t", str(directory)])
    assert f"commitment {commitment}, key secret" in status.output
    revealed = _cli(["tournament", "reveal", "-t", str(directory), "--json"])
    assert revealed.exit_code == 0, revealed.output
    doc = json.loads(revealed.stdout)
    assert doc["commitment"] == commitment and doc["next_commitment"] != commitment
    assert hashlib.sha256(bytes.fromhex(doc["key"])).hexdigest() == commitment
    result = _cli(["verify", "--tournament", str(directory)])
    assert result.exit_code == 0, result.output
    assert "6 dealt from revealed keys, every seed checked" in result.output

    # A deal that claims another identity than the one its seed was dealt from (what a deal
    # chosen by hand and given a made-up identity looks like): the seed does not follow.
    game = _games(db)[0]
    (text,) = db.execute("SELECT record FROM results WHERE game_id = ?", (game,)).fetchone()
    record = json.loads(text)
    record["deal"]["id"] += "-chosen"
    db.execute("UPDATE results SET record = ? WHERE game_id = ?", (json.dumps(record), game))
    db.execute("UPDATE games SET deal_id = deal_id || '-chosen' WHERE game_id = ?", (game,))
    db.commit()
    assert "a deal chosen by hand" in _refused(directory, game)

    # A key revealed that is not the committed one: nothing of its season is vouched for.
    db.execute("UPDATE deal_keys SET key = ? WHERE season = ?", ("ab" * 32, doc["season"]))
    db.commit()
    assert "is not the key its commitment was published for" in _refused(directory, "results")


def test_a_key_is_not_revealed_while_its_games_are_pending(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    directory, db = store
    db.execute(
        "UPDATE games SET status = 'pending' WHERE game_id = ?", (_games(db)[0],)
    )  # as if still to play (its record aside)
    db.commit()
    result = _cli(["tournament", "reveal", "-t", str(directory)])
    assert result.exit_code == 2 and "still to play" in result.output, result.output
    assert db.execute("SELECT key FROM deal_keys").fetchone() == (None,)


def test_a_seat_of_no_entrant_edited_in_both_tables(store: tuple[Path, sqlite3.Connection]) -> None:
    """Results and schedule agree, and the version exists nowhere: verify names the game (its
    record's seats are not what the schedule seated) and standings says so in one line."""
    directory, db = store
    game = _games(db)[0]
    (seats,) = db.execute("SELECT seats FROM games WHERE game_id = ?", (game,)).fetchone()
    db.execute(
        "UPDATE games SET seats = ? WHERE game_id = ?",
        (json.dumps([999, *json.loads(seats)[1:]]), game),
    )
    db.execute("UPDATE seat_results SET version_id = 999 WHERE game_id = ? AND seat = 0", (game,))
    db.commit()
    result = _cli(["verify", "--tournament", str(directory), "--quiet"])
    assert result.exit_code == 1 and f"{game}: INVALID" in result.output, result.output
    refused = _cli(["standings", "-t", str(directory)])
    assert refused.exit_code == 2 and "no entrant has version id 999" in refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)


def test_a_deal_with_a_rotation_still_to_play_is_not_published(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    """Its recorded games stay out of the standings until every rotation is played, so that no
    author reads a deal that is still to come (docs/security.md, "Deals")."""
    directory, db = store
    dup = _rotation_to_come(db)
    (in_deal,) = db.execute(
        "SELECT COUNT(*) FROM results r JOIN games g ON g.game_id = r.game_id"
        " WHERE g.duplicate_set = ?",
        (dup,),
    ).fetchone()
    assert _cli(["verify", "--tournament", str(directory)]).exit_code == 0
    result = _cli(["standings", "-t", str(directory), "--json", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["games"] == 6 - in_deal


def test_the_arenas_record_call_withholds_a_deal_with_a_rotation_still_to_play(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    """GetGameRecord answers for a game of an unfinished deal as for an unknown game, and gives
    the records of finished deals."""
    import concurrent.futures

    import grpc

    from take5_arena.service.api import arena_pb2 as pb
    from take5_arena.service.servicer import ArenaService, ServiceParts

    directory, db = store
    dup = _rotation_to_come(db)
    games = db.execute(
        "SELECT r.game_id, g.duplicate_set = ? FROM results r JOIN games g USING (game_id)", (dup,)
    ).fetchall()
    withheld = [g for g, held in games if held]
    public = [g for g, held in games if not held]
    assert withheld and public
    parts = ServiceParts(directory, *([None] * 5))  # type: ignore[arg-type]

    class Aborted(Exception):
        pass

    class Context:
        """What the service reads of a gRPC call's context: no metadata; abort raises."""

        def invocation_metadata(self) -> tuple[()]:
            return ()

        async def abort(self, code: Any, details: str) -> None:
            raise Aborted(code, details)

    def get_record(game_id: str) -> Any:
        """The service's GetGameRecord, as the gRPC server calls it."""
        request = pb.GetGameRecordRequest(game_id=game_id)
        return asyncio.run(service.GetGameRecord(request, Context()))  # type: ignore[arg-type]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        service = ArenaService(parts, pool)
        assert get_record(public[0]).game_id == public[0]
        with pytest.raises(Aborted, match="not published yet") as refused:
            get_record(withheld[0])
        assert refused.value.args[0] == grpc.StatusCode.NOT_FOUND


def _rotation_to_come(db: sqlite3.Connection) -> str:
    """Add a pending rotation to the deal of the first recorded game; its duplicate set."""
    game = _games(db)[0]
    (dup,) = db.execute("SELECT duplicate_set FROM games WHERE game_id = ?", (game,)).fetchone()
    db.execute(
        "INSERT INTO games(game_id, table_no, rotation, deal_seed, duplicate_set, seats, settings,"
        " status, scheduled_at, deal_season, deal_id) SELECT 'g-to-come', table_no, rotation,"
        " 0, duplicate_set, seats, settings, 'pending', scheduled_at, deal_season, deal_id"
        " FROM games WHERE game_id = ?",
        (game,),
    )
    (schedule,) = db.execute("SELECT schedule_id FROM schedules").fetchone()
    db.execute(
        "INSERT INTO schedule_games(schedule_id, position, game_id) VALUES (?, 99, 'g-to-come')",
        (schedule,),
    )
    db.execute("UPDATE schedules SET games = games + 1")
    db.commit()
    return str(dup)


def test_the_site_publishes_the_commitment_and_checks_seeds_once_revealed(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    """standings.json (and so the front page's data) carries the deal key's commitment from the
    start; `verify --site` says the seeds are not checkable until `tournament reveal`, then checks
    each against the revealed key: a deal identity changed by hand (its record's hash made to match)
    or a revealed key that is not the committed one fails."""
    from take5_arena.leaderboard.site_build import decode_bundle, record_hash

    directory, _db = store
    site = directory.parent / "site"
    status = json.loads(_cli(["tournament", "status", "-t", str(directory), "--json"]).stdout)
    (season,) = status["deal_keys"]
    assert _cli(["publish", "-t", str(directory), "--out", str(site)]).exit_code == 0
    doc = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert doc["deals"] == [{"season": 1, "commitment": season["commitment"], "key": None}]
    assert season["commitment"] in (site / "data" / "standings.js").read_text(encoding="utf-8")
    sealed = _cli(["verify", "--site", str(site)])
    assert sealed.exit_code == 0 and "not checkable yet" in sealed.output, sealed.output

    revealed = _cli(["tournament", "reveal", "-t", str(directory), "--json"])
    assert revealed.exit_code == 0, revealed.output
    key = json.loads(revealed.stdout)["key"]
    assert _cli(["publish", "-t", str(directory), "--out", str(site)]).exit_code == 0
    doc = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert doc["deals"][0] == {"season": 1, "commitment": season["commitment"], "key": key}
    checked = _cli(["verify", "--site", str(site)])
    assert checked.exit_code == 0 and "6 dealt from revealed keys" in checked.output

    # a deal named by hand: the record's deal identity changed, the manifest's hash made to match
    path = next((site / "replays").glob("*/*.js"))
    rel = path.relative_to(site).as_posix()
    games = decode_bundle(path.read_text(encoding="utf-8"))
    games[0]["record"]["deal"]["id"] += "x"
    from take5_arena.leaderboard import site_build

    path.write_text(site_build.bundle_file(rel, [json.dumps(g) for g in games]), encoding="utf-8")
    lines = [json.loads(x) for x in (site / "manifest.jsonl").read_text().splitlines()]
    lines[0]["sha256"] = record_hash(games[0]["record"])
    (site / "manifest.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    forged = _cli(["verify", "--site", str(site)])
    assert forged.exit_code == 1
    assert "its seed is not the one the revealed deal key gives" in forged.output

    doc["deals"][0]["key"] = "00" * 32  # a key that is not the committed one
    (site / "standings.json").write_text(json.dumps(doc), encoding="utf-8")
    wrong = _cli(["verify", "--site", str(site)])
    assert wrong.exit_code == 1 and "not the key its commitment was published for" in wrong.output


def test_standings_of_a_store_being_written_are_never_refused(tmp_path: Path) -> None:
    """A tournament records games while its standings are read again and again, as an arena's
    publisher reads them while its ladder plays. The checks and the loads read one snapshot of the
    store: before they did, about one read in 25 found a game "deleted" that was being recorded
    between two of their reads, and the publication was refused."""
    import subprocess
    import sys

    from take5_arena.standings import UnverifiedStoreError, load_tournament

    directory = tmp_path / "t"
    for name in ("random", "lowest", "heuristic"):
        result = _cli(
            ["submit", str(EXAMPLES / name), "--name", name, "-t", str(directory)]
            + ["--sandbox", "local"]
        )
        assert result.exit_code == 0, result.output
    run = subprocess.Popen(
        [sys.executable, "-m", "take5_arena", "tournament", "run", "-t", str(directory)]
        + ["--players", "3", "--games", "60", "--sandbox", "local", "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    reads, refused = 0, []
    try:
        while run.poll() is None:
            try:
                load_tournament(directory)
                reads += 1
            except UnverifiedStoreError as error:
                refused.append(str(error))
    finally:
        _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert refused == [], f"{len(refused)} of {reads + len(refused)} reads refused: {refused[0]}"
    assert reads > 20, reads

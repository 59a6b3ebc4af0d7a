"""A season with dates (take5_arena/referee/tournament/season.py, `referee season ...`): its key
committed when it opens, entries refused from the cut-off, its key revealed and its archive
published when it closes; the archive verified from the site alone."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support import EXAMPLES

from take5_arena.cli.main import main as cli
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import TournamentError
from take5_arena.referee.tournament.season import (
    close_season,
    entries_closed,
    open_season,
    parse_time,
    season_of,
)

T0 = datetime(2027, 3, 1, tzinfo=timezone.utc)
DAY = timedelta(days=1)


def _run(*args: str) -> Result:
    out = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in out.output, out.output
    return out


def test_a_season_moves_through_its_phases_and_freezes_entries(tmp_path: Path) -> None:
    with Store(tmp_path, create=True) as store:
        s = open_season(store, starts=T0, cutoff=T0 + DAY, ends=T0 + 3 * DAY, now=T0 - DAY)
        assert [s.phase(T0 + k * DAY) for k in (-1, 0, 1, 3)] == [
            "not started",
            "open",
            "frozen",
            "over",
        ]
        assert store.deal_keys.seasons()[-1].commitment == s.commitment  # committed at opening
        assert entries_closed(store, T0) is None
        assert "entries to season 1 closed at 2027-03-02T00:00:00Z" in str(
            entries_closed(store, T0 + DAY)
        )
        with pytest.raises(TournamentError, match="is not closed yet"):
            open_season(store, starts=T0, cutoff=T0, ends=T0 + 9 * DAY, now=T0)
        with pytest.raises(TournamentError, match="--early closes it now"):
            close_season(store, now=T0 + 2 * DAY)
        closed, revealed = close_season(store, now=T0 + 3 * DAY)
        assert revealed is not None and revealed.commitment == s.commitment
        assert closed.phase(T0) == "closed" and season_of(store) == closed
        assert entries_closed(store, T0 + 4 * DAY) is None  # closed: the next season's entries
        nxt = open_season(store, starts=T0, cutoff=T0 + 5 * DAY, ends=T0 + 6 * DAY, now=T0)
        assert nxt.number == 2 and nxt.commitment == revealed.next.commitment


def test_a_calendar_out_of_order_or_past_or_public_deals_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path, create=True) as store:
        with pytest.raises(TournamentError, match="in that order"):
            open_season(store, starts=T0, cutoff=T0 - DAY, ends=T0 + DAY, now=T0)
        with pytest.raises(TournamentError, match="would end in the past"):
            open_season(store, starts=T0, cutoff=T0, ends=T0, now=T0 + DAY)
        store.settings.set({"deals": "public", "seed": 3})
        with pytest.raises(TournamentError, match="a season needs secret deals"):
            open_season(store, starts=T0, cutoff=T0, ends=T0 + DAY, now=T0)
    with pytest.raises(TournamentError, match="is not a date or time"):
        parse_time("next tuesday")
    assert parse_time("2027-03-01") == T0
    assert parse_time("2027-03-01T02:00+02:00") == T0


def test_a_season_from_opening_to_its_archive_by_the_commands(tmp_path: Path) -> None:
    """Entries, `season open` with a cut-off seconds away, a qualifying Swiss and a knockout, an
    entry after the cut-off refused (exit 3), closing before the end refused (exit 2), then
    closed with its archive, which verifies from the site alone (every seed, both phases)."""
    t = str(tmp_path / "spring")
    for i, bot in enumerate(("heuristic", "lowest", "random", "heuristic")):
        out = _run(
            "submit", str(EXAMPLES / bot), "--name", f"{bot}{i}", "--author", f"a{i}",
            "--tournament", t, "--sandbox", "local",
        )  # fmt: skip
        assert out.exit_code == 0, out.output
    now = datetime.now(timezone.utc)
    cutoff, ends = now + timedelta(seconds=2), now + timedelta(seconds=4)
    out = _run(
        "season", "open", "-t", t, "--cutoff", cutoff.isoformat(), "--ends", ends.isoformat()
    )
    assert out.exit_code == 0 and "season 1: open" in out.output, out.output
    commitment = re.search(r"commitment \(SHA-256\): (\w+)", out.output)
    assert commitment is not None
    run = ["tournament", "run", "--tournament", t, "--sandbox", "local", "--players", "2"]
    assert _run(*run, "--format", "swiss", "--rounds", "2").exit_code == 0
    final = _run(*run, "--format", "knockout", "--from-swiss", "2", "--final-deals", "1")
    assert final.exit_code == 0, final.output
    time.sleep(max(0.0, (cutoff - datetime.now(timezone.utc)).total_seconds()) + 0.1)
    late = _run(
        "submit", str(EXAMPLES / "lowest"), "--name", "late", "--tournament", t,
        "--sandbox", "local",
    )  # fmt: skip
    assert late.exit_code == 3 and "entries to season 1 closed at" in late.output, late.output
    status = json.loads(_run("season", "status", "-t", t, "--json").output)
    assert status["phase"] in ("frozen", "over")
    shown = _run("tournament", "status", "-t", t)
    assert re.search(r"season 1: (frozen|over) \(entries until \S+, ends \S+\)", shown.output)
    if status["phase"] == "frozen":
        early = _run("season", "close", "-t", t)
        assert early.exit_code == 2 and "--early closes it now" in early.output
    time.sleep(max(0.0, (ends - datetime.now(timezone.utc)).total_seconds()) + 0.1)
    archive = tmp_path / "archive"
    out = _run("season", "close", "-t", t, "--archive", str(archive))
    assert out.exit_code == 0, out.output
    assert f"(its SHA-256 {commitment[1]})" in out.output
    site = archive / "season-1"
    checked = _run("verify", "--site", str(site))
    assert checked.exit_code == 0, checked.output
    assert "every seed checked" in checked.output
    assert re.search(r"pairings: swiss-\w+: 2 stages paired again", checked.output)
    assert re.search(r"pairings: knockout-\w+: \d+ stages paired again", checked.output)
    assert _run("submit", str(EXAMPLES / "lowest"), "--name", "late", "--tournament", t,
                "--sandbox", "local").exit_code == 0  # fmt: skip
    again = _run("season", "close", "-t", t)
    assert again.exit_code == 2 and "no season is open" in again.output


def test_the_documented_season_of_four_player_tables_beside_a_second_competition(
    tmp_path: Path,
) -> None:
    """The issue's "done when", by docs/organisers/seasons.md's commands: a season with a
    qualifying Swiss of 4-player tables and a knockout final of its top 8, beside a 2-player
    competition in its own directory; closed with its archive, which anyone verifies from the site
    alone (every record, every seed, both phases paired again)."""
    spring, duel = str(tmp_path / "spring"), str(tmp_path / "duel")
    bots = ("heuristic", "lowest", "random") * 3
    for i, bot in enumerate(bots):
        for t in (spring, duel) if i < 4 else (spring,):
            out = _run(
                "submit", str(EXAMPLES / bot), "--name", f"{bot}{i}", "--author", f"a{i}",
                "--tournament", t, "--sandbox", "local",
            )  # fmt: skip
            assert out.exit_code == 0, out.output
    ends = datetime.now(timezone.utc) + timedelta(days=30)
    opened = _run(
        "season", "open", "-t", spring, "--cutoff", ends.isoformat(), "--ends", ends.isoformat()
    )
    assert opened.exit_code == 0, opened.output
    run = ["tournament", "run", "--tournament", spring, "--sandbox", "local", "--players", "4"]
    swiss = _run(*run, "--format", "swiss", "--rounds", "2")
    assert swiss.exit_code == 0, swiss.output
    final = _run(*run, "--format", "knockout", "--from-swiss", "8", "--final-deals", "1")
    assert final.exit_code == 0 and "decided" in final.output, final.output
    other = ["tournament", "run", "--tournament", duel, "--sandbox", "local", "--players", "2"]
    assert _run(*other, "--format", "swiss", "--rounds", "2").exit_code == 0
    archive = tmp_path / "archive"
    closed = _run("season", "close", "-t", spring, "--early", "--archive", str(archive))
    assert closed.exit_code == 0, closed.output
    checked = _run("verify", "--site", str(archive / "season-1"))
    assert checked.exit_code == 0, checked.output
    assert "every seed checked" in checked.output
    assert re.search(r"pairings: swiss-\w+: 2 stages paired again", checked.output)
    assert re.search(r"pairings: knockout-\w+: \d+ stages paired again", checked.output)
    doc = json.loads((archive / "season-1" / "competitions.json").read_text())
    assert {c["settings"]["format"]["table_size"] for c in doc["competitions"]} == {4}
    # the duel never mixes with the season: its own store, its own key
    duel_site = tmp_path / "duel-site"
    assert _run("publish", "--tournament", duel, "--out", str(duel_site)).exit_code == 0
    duel_doc = json.loads((duel_site / "competitions.json").read_text())
    assert [c["settings"]["format"]["table_size"] for c in duel_doc["competitions"]] == [2]
    assert not set(duel_doc["competitions"][0]["entrants"]) - {
        f"{b}{i}@1" for i, b in enumerate(bots[:4])
    }

"""A published site can be checked by anyone (`referee verify --site`), and re-publishing is
incremental.

The check passes on a site as published, and fails after deleting one record, editing one score
(in a record), editing one rating in standings.json, calling a complete game unrated, or changing a
record's entrant. Re-publishing after new games writes only the new games' files (and the one
partly filled bundle), and gives exactly the files a full publication gives.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from site_games import make_records

from take5_arena.cli.main import main
from take5_arena.leaderboard import site_build
from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.collection import games_from_records
from take5_arena.leaderboard.results import results_from_records
from take5_arena.leaderboard.site_build import (
    decode_bundle,
    publish_site,
    write_site,
)
from take5_arena.leaderboard.site_check import check_site


@pytest.fixture(scope="module")
def records():
    return make_records()


@pytest.fixture(scope="module")
def published(tmp_path_factory, records):
    results = results_from_records(records)
    out = tmp_path_factory.mktemp("site")
    publish_site(
        out,
        results=results,
        records=records,
        standings=compute_standings(results, bootstrap=30, seed=2),
        title="check",
    )
    return out


@pytest.fixture
def site(published, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(published, copy)
    return copy


def verify(site: Path):
    return CliRunner().invoke(main, ["verify", "--site", str(site)])


def rewrite_bundle(site: Path, change) -> None:
    """Apply ``change`` to the games of the (single) replay bundle and write it back."""
    path = next((site / "replays").glob("*/*.js"))
    rel = path.relative_to(site).as_posix()
    games = decode_bundle(path.read_text(encoding="utf-8"))
    change(games)
    items = [json.dumps(g, ensure_ascii=False) for g in games]
    path.write_text(
        site_build.bundle_file(rel, items),
        encoding="utf-8",
    )


def test_a_published_site_passes(site):
    result = verify(site)
    assert result.exit_code == 0, result.output
    assert "ok" in result.output and "equal to standings.json" in result.output
    check = check_site(site)
    assert check.ok and check.games == 19 and check.rated == 18


def test_deleting_one_record_fails(site):
    rewrite_bundle(site, lambda games: games.pop(3))
    result = verify(site)
    assert result.exit_code == 1
    assert "no record" in result.output and "a rated game is missing" in result.output


def test_editing_one_score_fails(site):
    def change(games):
        games[0]["record"]["result"]["scores"][0] += 1

    rewrite_bundle(site, change)
    result = verify(site)
    assert result.exit_code == 1
    assert "hash" in result.output and "invalid record" in result.output


def test_a_deleted_record_and_manifest_line_still_fail(site):
    """Leaving a game out everywhere but standings.json: the recomputed standings differ."""
    rewrite_bundle(site, lambda games: games.pop(0))
    lines = (site / "manifest.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (site / "manifest.jsonl").write_text("".join(lines[1:]), encoding="utf-8")
    result = verify(site)
    assert result.exit_code == 1 and "rated games" in result.output


def test_editing_one_rating_in_standings_json_fails(site):
    doc = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    doc["rows"][1]["rating"] += 5
    (site / "standings.json").write_text(json.dumps(doc), encoding="utf-8")
    result = verify(site)
    assert result.exit_code == 1
    assert f"{doc['rows'][1]['entrant']}: rating" in result.output


def test_a_sparse_crosstable_is_checked_too(tmp_path, records, monkeypatch):
    """Above CROSSTABLE_DENSE_MAX bots the crosstable lists the pairs that met: verify --site
    publishes it again the same way and finds one edited pair."""
    from take5_arena.leaderboard import publish as P

    monkeypatch.setattr(P, "CROSSTABLE_DENSE_MAX", 2)
    results = results_from_records(records)
    publish_site(
        tmp_path,
        results=results,
        records=records,
        standings=compute_standings(results, bootstrap=30, seed=2),
        title="check",
    )
    doc = json.loads((tmp_path / "standings.json").read_text(encoding="utf-8"))
    assert doc["crosstable"]["pairs"] and "score" not in doc["crosstable"]
    assert verify(tmp_path).exit_code == 0
    doc["crosstable"]["pairs"][0][2] += 1
    (tmp_path / "standings.json").write_text(json.dumps(doc), encoding="utf-8")
    result = verify(tmp_path)
    assert result.exit_code == 1
    assert "standings.json" in result.output and "crosstable" in result.output


def test_calling_a_complete_game_unrated_or_changing_entrants_fails(site):
    path = site / "manifest.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[0]["rated"] = False
    lines[1]["entrants"] = list(reversed(lines[1]["entrants"]))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = verify(site).output
    assert "a complete game listed as not rated" in out and "not the record's seats" in out


def _edit_data(site: Path, rel: str, change) -> None:
    """Apply ``change`` to the value a data file assigns and write it back as the site writes it."""
    path = site / rel
    *before, last = path.read_text(encoding="utf-8").rstrip().splitlines()
    head, _, value = last.partition(" = ")
    data = json.loads(value.removesuffix(";"))
    change(data)
    path.write_text("".join(f"{b}\n" for b in before) + f"{head} = {json.dumps(data)};\n")


def _one_finding(site: Path, *words: str) -> str:
    """verify --site fails, with one finding line that holds every word."""
    result = verify(site)
    assert result.exit_code == 1, result.output
    findings = [
        line
        for line in result.output.splitlines()
        if not any(k in line for k in (": note:", ": deals:", "FAILED"))
    ]
    assert len(findings) == 1, result.output
    assert all(w in findings[0] for w in words), result.output
    return findings[0]


def test_two_names_swapped_on_the_front_page_fail(site):
    def swap(doc):
        rows = doc["rows"]
        rows[0]["entrant"], rows[1]["entrant"] = rows[1]["entrant"], rows[0]["entrant"]

    _edit_data(site, "data/standings.js", swap)
    _one_finding(site, "data/standings.js", "rows[0].entrant")


def test_an_edited_game_list_fails(site):
    def edit(rows):
        rows[2]["penalties"][0] += 10

    _edit_data(site, "data/games/000000.js", edit)
    _one_finding(site, "data/games/000000.js", "[2].penalties[0]")


def test_edited_bot_page_data_fails(site):
    bot = sorted((site / "data" / "bots").glob("*.js"))[0]
    rel = bot.relative_to(site).as_posix()

    def edit(summary):
        summary["fault_total"] += 1

    _edit_data(site, rel, edit)
    _one_finding(site, rel, "fault_total")
    shutil.copy(bot, site / "data" / "bots" / "zz-invented.js")  # a bot page nobody played for
    assert "zz-invented.js: a data file the records do not give" in verify(site).output


def test_an_edited_game_of_a_bots_game_list_fails(site):
    page = sorted((site / "data" / "bots").glob("*/000000.js"))[0]
    rel = page.relative_to(site).as_posix()

    def edit(rows):
        rows[0]["place"] = 1 if rows[0]["place"] != 1 else 2

    _edit_data(site, rel, edit)
    _one_finding(site, rel, "[0].place")


def test_a_changed_script_fails(site):
    with (site / "assets" / "site.js").open("a", encoding="utf-8") as f:
        f.write("\ndocument.title = 'changed';\n")
    _one_finding(site, "assets/site.js", "the page was changed")


def test_a_changed_page_with_its_manifest_hash_is_noted(site):
    """Changing the page and the manifest's hash of it passes the manifest check, but the pages
    are then not this version's: said, so a verifier knows to look."""
    page = site / "index.html"
    page.write_text(page.read_text(encoding="utf-8") + "<!-- changed -->\n", encoding="utf-8")
    head = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    head["pages"]["index.html"] = hashlib.sha256(page.read_bytes()).hexdigest()
    (site / "manifest.json").write_text(json.dumps(head), encoding="utf-8")
    result = verify(site)
    assert result.exit_code == 0, result.output
    assert "note: the manifest's pages are not the ones this version" in result.output


def test_a_folder_that_is_no_site(tmp_path):
    result = verify(tmp_path)
    assert result.exit_code == 2 and "not a published site" in result.output
    assert CliRunner().invoke(main, ["verify", "--site", str(tmp_path), "x.json"]).exit_code == 2


# -- incremental publishing ------------------------------------------------------------------------


def many_records(n: int) -> dict[str, dict]:
    """``n`` records (copies of the test games under new ids, each with its own start time)."""
    base = [r for r in make_records().values() if r["complete"]]
    out = {}
    for i in range(n):
        record = json.loads(json.dumps(base[i % len(base)]))
        record["game_id"] = f"g{i:05d}"
        record["started_at"] = f"2025-02-01T00:00:00.{i:06d}Z"
        out[record["game_id"]] = record
    return out


def publish(out: Path, records: dict, **kw):
    results = results_from_records(records)
    games = games_from_records(records, results)
    return write_site(out, games, compute_standings(results, bootstrap=0), title="inc", **kw)


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_republishing_writes_only_what_new_games_change(tmp_path, monkeypatch):
    monkeypatch.setattr(site_build, "BUNDLE", 10)
    monkeypatch.setattr(site_build, "LIST_PAGE", 25)
    monkeypatch.setattr(site_build, "FOLDER_FILES", 3)
    everything = many_records(95)
    first = dict(list(everything.items())[:73])
    inc, full = tmp_path / "inc", tmp_path / "full"

    report = publish(inc, first)
    assert not report.incremental and report.written == 73
    assert (
        sorted(p.parent.name for p in (inc / "replays").glob("*/*.js"))
        == ["000"] * 3 + ["001"] * 3 + ["002"] * 2
    )
    report = publish(inc, everything)
    assert (
        report.incremental and report.written == 95 - 70
    )  # the partly filled bundle and the new games
    publish(full, everything)
    assert files(inc) == files(full)
    assert check_site(inc).ok

    again = publish(inc, everything)  # nothing new: only the last bundle is written again
    assert again.incremental and again.written == 5
    assert files(inc) == files(full)

    # a site whose last bundle is full, then new games; and nothing new at all
    exact, exact_full = tmp_path / "exact", tmp_path / "exact-full"
    publish(exact, dict(list(everything.items())[:70]))
    assert publish(exact, dict(list(everything.items())[:70])).written == 0
    assert publish(exact, everything).written == 25
    publish(exact_full, everything)
    assert files(exact) == files(exact_full) and check_site(exact).ok

    # another set of games (not a continuation): everything is written again, stale files go
    other = many_records(30)
    other.pop("g00003")
    report = publish(inc, other)
    assert not report.incremental and report.written == 29
    assert files(inc) == files(publish_full(tmp_path / "other", other))


def publish_full(out: Path, records: dict) -> Path:
    publish(out, records)
    return out


def test_logs_are_published_only_on_request(tmp_path, records):
    record = json.loads(json.dumps(records["t000"]))
    record["rounds"][0]["turns"][0]["logs"] = [[0, "thinking <script>alert(1)</script>"]]
    some = {"t000": record}
    publish(tmp_path / "plain", some)
    publish(tmp_path / "logs", some, with_logs=True)
    plain = decode_bundle(next((tmp_path / "plain" / "replays").glob("*/*.js")).read_text())[0][
        "record"
    ]
    shown = decode_bundle(next((tmp_path / "logs" / "replays").glob("*/*.js")).read_text())[0][
        "record"
    ]
    assert "logs" not in plain["rounds"][0]["turns"][0]
    assert shown["rounds"][0]["turns"][0]["logs"] == [[0, "thinking <script>alert(1)</script>"]]
    assert check_site(tmp_path / "plain").ok and check_site(tmp_path / "logs").ok
    # switching logs on rewrites everything
    report = publish(tmp_path / "plain", some, with_logs=True)
    assert not report.incremental and files(tmp_path / "plain") == files(tmp_path / "logs")


def test_games_recorded_while_publishing_wait_for_the_next_publication(tmp_path):
    """A tournament still playing: records newer than the results read are not published yet."""
    everything = many_records(12)
    first = dict(list(everything.items())[:10])
    results = results_from_records(first)
    games = games_from_records(first, results)
    read = games.read_records

    def read_and_more(start):
        yield from read(start)
        yield from ((gid, r) for gid, r in list(everything.items())[10:])

    games.read_records = read_and_more
    report = write_site(tmp_path / "s", games, compute_standings(results, bootstrap=0))
    assert report.games == 10 and check_site(tmp_path / "s").ok


def test_one_new_game_rewrites_the_summaries_of_its_bots_only(tmp_path):
    everything = many_records(19)  # the 19th is a copy of t000: charlie, delta and bravo
    first = dict(list(everything.items())[:18])
    site, full = tmp_path / "site", tmp_path / "full"
    publish(site, first)
    # a file written again is a new file renamed over the old one: a new inode (site_build._write)
    inodes = {p.name: p.stat().st_ino for p in (site / "data" / "bots").glob("*.js")}
    assert len(inodes) == 4
    # and its game pages: those of a bot without a new game are not built again either
    pages = {p: p.stat().st_ino for p in (site / "data" / "bots").glob("*/*.js")}
    assert len(pages) == 4
    publish(site, everything)
    rewritten = {
        p.name for p in (site / "data" / "bots").glob("*.js") if p.stat().st_ino != inodes[p.name]
    }
    new = results_from_records(everything)[-1]
    assert "alpha" not in new.entrants and len(set(new.entrants)) == 3
    assert rewritten == {f"{site_build.file_key(e)}.js" for e in new.entrants}
    pages_rewritten = {p.parent.name for p in pages if p.stat().st_ino != pages[p]}
    assert pages_rewritten == {site_build.file_key(e) for e in new.entrants}
    publish(full, everything)
    assert files(site) == files(full) and check_site(site).ok

"""Publishing without a browser: records -> results, standings.json, standings.md, site files,
CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from site_games import FAULTY, NAMES, make_records

from take5.text import inert
from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.markdown import standings_markdown, standings_text
from take5_arena.leaderboard.publish import (
    SITE_ASSETS,
    STANDINGS_FORMAT,
    crosstable,
    file_key,
    standings_document,
)
from take5_arena.leaderboard.results import result_from_record, results_from_records
from take5_arena.leaderboard.site_build import publish_site
from take5_arena.standings import load_record_files


@pytest.fixture(scope="module")
def records():
    return make_records()


@pytest.fixture(scope="module")
def results(records):
    return results_from_records(records)


@pytest.fixture(scope="module")
def standings(results):
    return compute_standings(results, bootstrap=100, seed=1)


@pytest.fixture(scope="module")
def site(tmp_path_factory, records, results, standings):
    out = tmp_path_factory.mktemp("site")
    index = publish_site(
        out, results=results, records=records, standings=standings, title="Test | cup"
    )
    assert index == out / "index.html"
    return out


def read_js(path: Path, name: str):
    text = path.read_text(encoding="utf-8")
    prefix = f"window.{name} = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix) : -2])


def read_data(site: Path, rel: str, table: str):
    """The value a lazily loaded data file puts under its own path in window[table]."""
    text = (site / rel).read_text(encoding="utf-8")
    last = text.rstrip("\n").splitlines()[-1]
    prefix = f"window.{table}[{json.dumps(rel)}] = "
    assert last.startswith(prefix) and last.endswith(";"), last[:100]
    return json.loads(last[len(prefix) : -1])


def replays(site: Path) -> dict[str, dict]:
    from take5_arena.leaderboard.site_build import decode_bundle

    out = {}
    for path in sorted((site / "replays").glob("*/*.js")):
        for game in decode_bundle(path.read_text(encoding="utf-8")):
            out[game["id"]] = game
    return out


# -- records -> results -----------------------------------------------------------------------


def test_result_from_record_takes_seats_scores_places_and_fault_kinds(records):
    record = next(r for r in records.values() if any(r["faults"]) and r["complete"])
    g = result_from_record(record, played_at=5)
    assert g.game_id == record["game_id"]
    assert g.entrants == tuple(s["name"] for s in record["seats"])
    assert list(g.penalties) == record["result"]["scores"]
    assert list(g.places) == record["result"]["places"]
    assert g.faults == tuple(tuple(f["kind"] for f in seat) for seat in record["faults"])
    assert g.played_at == 5


def test_results_skip_incomplete_games_order_by_start_and_group_duplicate_deals(records, results):
    ids = [g.game_id for g in sorted(results, key=lambda g: g.played_at)]
    assert "cut-1" not in ids and len(ids) == len(records) - 1
    assert [g.played_at for g in sorted(results, key=lambda g: g.played_at)] == list(
        range(len(ids))
    )
    assert ids[:3] == ["t000", "t001", "t002"] and ids[-1] == "pro-1"
    dup = {g.game_id: g.duplicate_set for g in results if g.game_id.startswith("dup-")}
    assert len(dup) == 3 and len(set(dup.values())) == 1 and None not in dup.values()
    assert all(g.duplicate_set is None for g in results if not g.game_id.startswith("dup-"))


def test_games_without_times_are_ordered_by_id_with_numbers_as_numbers(records):
    base = records["t000"]
    named = {
        gid: {**base, "game_id": gid, "started_at": None} for gid in ("s0-g10", "s0-g2", "s0-g1")
    }
    order = sorted(results_from_records(named), key=lambda g: g.played_at)
    assert [g.game_id for g in order] == ["s0-g1", "s0-g2", "s0-g10"]


def test_result_from_record_refuses_incomplete_records(records):
    with pytest.raises(ValueError, match="incomplete"):
        result_from_record(records["cut-1"])


# -- standings.json -------------------------------------------------------------------------------


def test_standings_document_follows_the_documented_schema(results, standings):
    doc = standings_document(standings, results, title="T", generated_at="now")
    json.dumps(doc, allow_nan=False)  # strict JSON
    assert doc["format"] == STANDINGS_FORMAT and doc["version"] == 1
    assert doc["title"] == "T" and doc["generated_at"] == "now"
    assert doc["games"] == len(results)
    assert set(doc["method"]) == {"rating", "interval", "los", "online_elo"}
    names = [row["entrant"] for row in doc["rows"]]
    assert sorted(names) == sorted(NAMES)
    for rank, row in enumerate(doc["rows"], 1):
        assert set(row) == {
            "rank",
            "entrant",
            "rating",
            "interval",
            "component",
            "games",
            "wins",
            "outright_wins",
            "mean_penalty",
            "mean_place",
            "faults",
            "online_elo",
            "enough_games",
            "rank_range",
            "los_next",
        }
        assert row["rank"] == rank
        if rank < len(doc["rows"]):
            assert row["los_next"] == doc["los"]["matrix"][rank - 1][rank]
        best, worst = row["rank_range"]
        assert 1 <= best <= rank <= worst <= len(doc["rows"])
        low, high = row["interval"]
        assert low <= row["rating"] <= high
    ratings = [row["rating"] for row in doc["rows"]]
    assert ratings == sorted(ratings, reverse=True)
    kinds: dict[str, int] = {}
    for g in results:
        if FAULTY in g.entrants:
            for kind in g.faults[g.entrants.index(FAULTY)]:
                kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.keys() == {"crash", "timeout"}
    assert doc["rows"][names.index(FAULTY)]["faults"] == kinds
    # LOS and crosstable: square, in the rows' order
    assert doc["los"]["entrants"] == names == doc["crosstable"]["entrants"]
    n = len(names)
    los = doc["los"]["matrix"]
    for i in range(n):
        assert los[i][i] is None
        for j in range(n):
            if i != j:
                assert los[i][j] + los[j][i] == pytest.approx(1.0)
    # ratings over time: the last point is the fit on every game, i.e. the standings
    points = doc["over_time"]["points"]
    assert doc["over_time"]["method"] == "fit"
    assert points[-1]["games"] == len(results)
    assert [p["games"] for p in points] == sorted(p["games"] for p in points)
    for row in doc["rows"]:
        assert points[-1]["ratings"][row["entrant"]] == pytest.approx(row["rating"], abs=1e-6)


def test_crosstable_counts_pairwise_meetings_and_points(results):
    table = crosstable(results, NAMES)
    n = len(NAMES)
    for i in range(n):
        assert table["score"][i][i] is None and table["meetings"][i][i] == 0
        for j in range(i + 1, n):
            a, b = NAMES[i], NAMES[j]
            both = [g for g in results if a in g.entrants and b in g.entrants]
            assert table["meetings"][i][j] == table["meetings"][j][i] == len(both)
            expected = sum(
                1.0
                if g.places[g.entrants.index(a)] < g.places[g.entrants.index(b)]
                else 0.5
                if g.places[g.entrants.index(a)] == g.places[g.entrants.index(b)]
                else 0.0
                for g in both
            )
            assert table["score"][i][j] == pytest.approx(expected / len(both))
            assert table["score"][i][j] + table["score"][j][i] == pytest.approx(1.0)


# -- standings.md and the terminal table ----------------------------------------------------------


def test_markdown_table_has_one_line_per_bot_and_escapes_names(standings):
    text = standings_markdown(standings, title="Cup | 1", generated_at="2025-01-01")
    lines = text.splitlines()
    assert lines[0] == "# Cup \\| 1"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(standings.rows)
    columns = len(re.split(r"(?<!\\)\|", table[0]))
    for line in table:
        assert len(re.split(r"(?<!\\)\|", line)) == columns, line
    assert "delta \\<b\\>\\&\\|x" in text
    for row in standings.rows:
        assert f"| {row.rank} |" in text
        assert f"{row.rating:.0f}" in text
    assert "95% interval" in text and "posterior" in text


HOSTILE_NAMES = [
    "pipe|split",
    "`code` ``more``",
    "[click me](javascript:alert(1))",
    "![img](http://127.0.0.1/x.png)",
    "line one\n# heading\n| a | b |",
    "<img src=x onerror=alert(1)>",
    "*bold* _em_ &amp; &#60;",
    "<https://evil.example>",
    "back\\slash\\",
    "\u202eevil\u200b\x1b[2J",  # a bidi override, a zero-width space, a terminal escape
]


def test_markdown_shows_hostile_names_as_plain_text():
    """Rendered by a CommonMark renderer with tables: every name is one cell of plain text - no
    link, image, code, HTML, entity, heading or extra cell - and reads back as the name, its
    control and format characters (newlines, bidi overrides) as the SDK's visible escapes."""
    from markdown_it import MarkdownIt

    from take5_arena.leaderboard.results import GameResult

    names = HOSTILE_NAMES + ["plain"]
    games = [
        GameResult(game_id=f"g{i}", entrants=(a, b), penalties=(10, 20), places=(1, 2), played_at=i)
        for i, (a, b) in enumerate(zip(names, names[1:] + names[:1]))
    ]
    table = compute_standings(games, bootstrap=0)
    text = standings_markdown(
        table, title="[t](javascript:x) <b>", unrated=[("g|9", "cut <off>\nbad")]
    )
    md = MarkdownIt("commonmark").enable("table")
    html = md.render(text)
    for forbidden in (
        "<a",
        "<img",
        "<code",
        "<em",
        "<strong",
        "<b>",
        "<h2",
        "<h3",
        "javascript:alert(1)</a",
    ):
        assert forbidden not in html, (forbidden, html)
    tokens = md.parse(text)
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) == 1 + len(names)
    cells: list[str] = []
    for i, t in enumerate(tokens):
        if t.type == "td_open" and tokens[i + 1].type == "inline":
            cells.append("".join(c.content for c in tokens[i + 1].children if c.type == "text"))
    per_row = len(cells) // len(names)
    shown = {cells[k * per_row + 1] for k in range(len(names))}  # the Bot column, as read
    assert shown == {inert(n, keep_lines=False) for n in names}
    assert text.count("\n# ") == 0 and text.startswith("# \\[t\\]")


def test_terminal_table_lists_the_bots_in_rank_order(standings):
    text = standings_text(standings)
    positions = [text.index(row.entrant) for row in standings.rows]
    assert positions == sorted(positions)


# -- the site's files -----------------------------------------------------------------------------


def test_site_has_pages_assets_and_data(site, records, results, standings):
    for name in (
        "index.html",
        "bot.html",
        "replay.html",
        "assets/site.js",
        "assets/site.css",
        "standings.json",
        "standings.md",
        "data/standings.js",
        "manifest.json",
        "manifest.jsonl",
    ):
        assert (site / name).is_file(), name
    doc = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert doc == standings_document(standings, results, title="Test | cup")
    data = read_js(site / "data" / "standings.js", "TAKE5_STANDINGS")
    assert {k: v for k, v in data.items() if k in doc} == doc
    assert [g["id"] for g in data["recent_games"]][:3] == ["cut-1", "pro-1", "dup-r2"]
    assert data["unrated"]["count"] == 1 and data["unrated"]["games"][0]["id"] == "cut-1"
    assert "cut off" in data["unrated"]["games"][0]["reason"]
    games = replays(site)
    assert set(games) == set(records)
    for gid, record in records.items():
        game = games[gid]
        assert game["record"] == record
        assert game["entrants"] == [s["name"] for s in record["seats"]]
        assert game["seed"] == str(record["seed"])
    listed = read_data(site, "data/games/000000.js", "TAKE5_PAGES")
    assert [g["n"] for g in listed] == list(range(len(records)))
    assert {g["id"] for g in listed} == set(records)
    for g in listed:  # each game's number says where its replay is
        assert g["id"] in {x["id"] for x in replays(site).values()}
    for name in NAMES:
        bot = read_data(site, f"data/bots/{file_key(name)}.js", "TAKE5_BOTS")
        mine = [g for g in results if name in g.entrants]
        assert bot["entrant"] == name and bot["games"] == len(mine) and bot["pages"] == 1
        page = read_data(site, f"data/bots/{file_key(name)}/000000.js", "TAKE5_PAGES")
        assert len(page) == len(mine)
        for game in page:
            assert game["entrants"][game["seat"]] == name
            assert game["place"] == game["places"][game["seat"]]
    faulty = read_data(site, f"data/bots/{file_key(FAULTY)}.js", "TAKE5_BOTS")
    expected = sorted(
        f["kind"]
        for r in records.values()
        if r["complete"]
        for s, seat in enumerate(r["seats"])
        if seat["name"] == FAULTY
        for f in r["faults"][s]
    )
    # the bot page's fault log comes from the records: the cut-off game's faults are in it too
    assert sorted(f["kind"] for f in faulty["faults"] if f["game"] != "cut-1") == expected
    crash = next(f for f in faulty["faults"] if f["kind"] == "crash")
    assert (crash["round"], crash["turn"]) == (2, 7) and "exited" in crash["detail"]


def test_publishing_is_deterministic_and_replaces_old_files(tmp_path, records, results, standings):
    a, b = tmp_path / "a", tmp_path / "b"
    publish_site(a, results=results, records=records, standings=standings, title="x")
    (b / "replays" / "000").mkdir(parents=True)
    (b / "replays" / "000" / "000007.js").write_text("old")
    (b / "notes.txt").write_text("not ours")
    publish_site(b, results=results, records=records, standings=standings, title="x")
    assert not (b / "replays" / "000" / "000007.js").exists() and (b / "notes.txt").exists()
    (b / "notes.txt").unlink()
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_site_needs_no_network():
    """Only local files: no http(s) URL anywhere but the SVG namespace name (which is never
    fetched), no protocol-relative URL, and every src/href of the pages is a relative path."""
    for path in SITE_ASSETS.iterdir():
        text = path.read_text(encoding="utf-8")
        urls = set(re.findall(r"https?://[^\s\"')]+", text)) - {"http://www.w3.org/2000/svg"}
        assert not urls, (path.name, urls)
        assert not re.search(r"""["'(]//\w""", text), path.name
        assert "fetch(" not in text and "XMLHttpRequest" not in text and "@import" not in text
        for ref in re.findall(r"""(?:src|href)=["']([^"']+)""", text):
            assert not re.match(r"^[a-z]+:|^/", ref), (path.name, ref)


def test_file_keys_are_safe_distinct_and_bounded():
    names = [
        "alpha",
        "Alpha",
        "ALPHA",
        "a b",
        "a/b",
        "a\\b",
        "..",
        ".",
        "",
        "über",
        "名前",
        "a~20b",
        "a b" * 200,
        "a b" * 201,
        "con",
        "x.js",
    ]
    keys = [file_key(n) for n in names]
    assert len(set(keys)) == len(keys)
    for key in keys:
        assert re.fullmatch(r"[a-z0-9_~-]+", key) and len(key) <= 190, key
    assert file_key("alpha") == "alpha" and file_key("t001") == "t001"


# -- the CLI --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def record_dir(tmp_path_factory, records):
    folder = tmp_path_factory.mktemp("records")
    for gid, record in records.items():
        (folder / f"{gid}.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_cli_standings_prints_the_table_and_json(record_dir, referee_cli):
    result = referee_cli(["standings", "--records", str(record_dir), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    for name in NAMES:
        assert name in result.output
    assert "95% interval" in result.output
    result = referee_cli(["standings", "--records", str(record_dir), "--json", "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    assert "not rated: cut-1: incomplete" in result.stderr  # reported, not silently skipped
    doc = json.loads(result.stdout)
    assert doc["format"] == STANDINGS_FORMAT and len(doc["rows"]) == len(NAMES)
    assert doc["games"] == len(list(record_dir.glob("*.json"))) - 1  # the cut-off game is not rated


def test_cli_standings_of_a_tournament_directory_of_records(record_dir, referee_cli):
    result = referee_cli(["standings", "--tournament", str(record_dir), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert all(name in result.output for name in NAMES)


def test_cli_publish_writes_the_site_and_says_where(record_dir, tmp_path, referee_cli):
    out = tmp_path / "site"
    result = referee_cli(
        [
            "publish",
            "--records",
            str(record_dir),
            "--out",
            str(out),
            "--bootstrap",
            "50",
            "--no-timestamp",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and (out / "standings.json").is_file()
    assert (out / "index.html").resolve().as_uri() in result.output


def test_cli_usage_errors_and_nothing_to_rate(
    tmp_path, record_dir, records, referee_cli, empty_tournament
):

    assert referee_cli(["standings"]).exit_code == 2
    both = referee_cli(["standings", "--records", str(record_dir), "--tournament", str(record_dir)])
    assert both.exit_code == 2
    assert referee_cli(["standings", "--tournament", str(tmp_path / "missing")]).exit_code == 2
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / "cut.json").write_text(json.dumps(records["cut-1"]))
    result = referee_cli(["publish", "--records", str(unfinished), "--out", str(tmp_path / "s")])
    assert result.exit_code == 1 and "no complete games" in result.output
    # a tournament before its first game
    result = referee_cli(["standings", "--tournament", str(empty_tournament)])
    assert result.exit_code == 1 and "no complete games" in result.output


def test_invalid_records_are_left_out_and_reported(tmp_path, records):
    good = dict(records["t000"])
    bad = json.loads(json.dumps(records["t001"]))
    bad["result"]["scores"][0] += 1
    (tmp_path / "good.json").write_text(json.dumps(good))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "junk.json").write_text("{}")
    games = load_record_files([tmp_path])
    assert games.order == ["t000"] and [gid for gid, _ in games.records()] == ["t000"]
    assert len(games.problems) == 2


# -- a tournament store ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tournament_dir(tmp_path_factory, records):
    """A tournament store holding the complete test games; alpha has an older version (v1) that
    played the first games and is rated apart from its current version."""
    from take5_arena.referee.store import Store

    folder = tmp_path_factory.mktemp("tournament")
    complete = {gid: r for gid, r in records.items() if r["complete"]}
    with Store(folder, create=True) as store:
        ids = {}
        for name in NAMES:
            version, _ = store.versions.add(
                name, source_hash=f"h-{name}", bot_dir=f"/bots/{name}", kind="python"
            )
            ids[name] = version.id
        newer, _ = store.versions.add(
            "alpha", source_hash="h-alpha-2", bot_dir="/bots/alpha2", kind="python"
        )
        games = []
        for k, (gid, record) in enumerate(complete.items()):
            names = [s["name"] for s in record["seats"]]
            seats = [newer.id if n == "alpha" and k >= 4 else ids[n] for n in names]
            games.append(
                {
                    "game_id": gid,
                    "table": k,
                    "rotation": record["rotation"],
                    "deal_seed": record["seed"],
                    "duplicate_set": f"set-{record['seed']}",
                    "seats": seats,
                    "settings": record["settings"],
                }
            )
        store.schedules.save("s1", games, description="test", settings={}, entrants=[])
        for gid, record in complete.items():
            store.results.record_game(gid, record)
    return folder


def test_standings_and_site_from_a_tournament_store(tournament_dir, records, tmp_path, referee_cli):
    result = referee_cli(
        ["standings", "--tournament", str(tournament_dir), "--json", "--bootstrap", "20"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["games"] == len([r for r in records.values() if r["complete"]])
    assert sorted(row["entrant"] for row in doc["rows"]) == sorted(NAMES + ["alpha@v1"])
    assert doc["title"] == f"{tournament_dir.name} standings"

    out = tmp_path / "site"
    result = referee_cli(
        ["publish", "-t", str(tournament_dir), "-o", str(out), "--bootstrap", "20"]
    )
    assert result.exit_code == 0, result.output
    games = replays(out)
    # alpha played the first four stored games as v1 and the later ones as its current version
    complete = [gid for gid, r in records.items() if r["complete"]]
    with_alpha = [
        (k, gid)
        for k, gid in enumerate(complete)
        if "alpha" in [s["name"] for s in records[gid]["seats"]]
    ]
    early = [gid for k, gid in with_alpha if k < 4]
    late = [gid for k, gid in with_alpha if k >= 4]
    assert early and late, "the test games must seat alpha both before and after its new version"
    assert "alpha@v1" in games[early[0]]["entrants"]
    later = games[late[0]]["entrants"]
    assert "alpha" in later and "alpha@v1" not in later
    assert games["t000"]["label"] == "table 1, game 1"
    assert (out / "data" / "bots" / f"{file_key('alpha@v1')}.js").is_file()
    assert "cut-1" not in games  # a store holds finished games only
    assert referee_cli(["verify", "--site", str(out)]).exit_code == 0


def test_standings_refuse_results_their_records_cannot_vouch_for(
    tournament_dir, tmp_path, referee_cli
):
    """With every stored record unreadable, the results table cannot be checked against them:
    standings and publish refuse in one line (exit 1; docs/security.md, "Results"); the status,
    which rates from the results table alone, still works."""
    import shutil
    import sqlite3

    copy = tmp_path / "t"
    shutil.copytree(tournament_dir, copy)
    with sqlite3.connect(copy / "tournament.sqlite") as db:
        db.execute("UPDATE results SET record = 'not json'")
    result = referee_cli(["standings", "--tournament", str(copy), "--bootstrap", "10"])
    assert result.exit_code == 1, result.output
    assert "does not follow from the records" in result.output
    assert "cannot be read" in result.output and len(result.output.splitlines()) == 1
    status = referee_cli(["tournament", "status", "-t", str(copy), "--bootstrap", "10"])
    assert status.exit_code == 0, status.output
    published = referee_cli(
        ["publish", "-t", str(copy), "-o", str(tmp_path / "site"), "--bootstrap", "0"]
    )
    assert published.exit_code == 1 and "does not follow from the records" in published.output
    assert "Traceback" not in published.output
    assert published.exception is None or isinstance(published.exception, SystemExit)


def test_a_directory_that_is_no_tournament(tmp_path, referee_cli):
    (tmp_path / "notes.txt").write_text("hello")
    result = referee_cli(["standings", "--tournament", str(tmp_path)])
    assert result.exit_code == 2 and "not a tournament directory" in result.output


def test_standings_and_tournament_status_print_the_same_intervals(tournament_dir, referee_cli):
    """One bootstrap and one interval format: the same games give the same intervals in both."""
    import re

    table = referee_cli(["standings", "-t", str(tournament_dir)])
    status = referee_cli(["tournament", "status", "-t", str(tournament_dir)])
    assert table.exit_code == 0 and status.exit_code == 0, table.output + status.output
    intervals = re.compile(r"\b\d{3,4} to \d{3,4}\b")
    found = sorted(intervals.findall(table.output))
    assert found and found == sorted(intervals.findall(status.output)), (
        table.output,
        status.output,
    )


def test_a_site_with_carried_intervals_verifies(tmp_path, records, results):
    """Intervals as of an earlier game (a large arena's publisher between refreshes:
    leaderboard/carried.py): the manifest records the last sequence number they came from, so
    `referee verify --site` computes the same table; a manifest that names another one fails."""
    from take5_arena.leaderboard.site_check import check_site

    through = sorted(g.played_at for g in results)[len(results) // 2]
    carried = compute_standings(results, bootstrap=100, seed=1, intervals_through=through)
    assert carried.intervals_as_of is not None and carried.intervals_as_of[1] == through
    assert carried.intervals_as_of[0] < len(results)
    out = tmp_path / "site"
    publish_site(out, results=results, records=records, standings=carried, title="x")
    doc = json.loads((out / "standings.json").read_text())
    assert doc["intervals_as_of"] == {"games": carried.intervals_as_of[0], "through": through}
    assert "as of game" in doc["method"]["interval"]
    check = check_site(out)
    assert check.ok, check.problems
    head = json.loads((out / "manifest.json").read_text())
    assert head["ratings"]["intervals_through"] == through
    head["ratings"]["intervals_through"] = through - 3
    (out / "manifest.json").write_text(json.dumps(head))
    problems = check_site(out).problems
    assert any("interval" in p for p in problems), problems

"""The published site in a real browser: headless Chromium driven by Playwright.

Publishes a site from real games (tests/site_games.py), opens it from disk (file://) with every
non-file request blocked and counted, and checks what a person would look at: the standings table
and its interval bars, a bot page, and replays stepped through turn by turn against the records;
that strings a bot controls (a name like ``<img src=x onerror=alert(1)>``, its handshake, fault
details, log lines) show as text and run nothing; and that a site of many games pages its lists and
loads one replay bundle at a time.
Screenshots go to $TAKE5_SCREENSHOTS or a temporary folder (printed; `pytest -s` shows it).

Needs the Debian package `chromium` and the Python package `playwright` (scripts/setup-browser.sh);
never `playwright install`. Skips without them, except under CI (env CI set), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import support
from site_games import FAULTY, NAMES, make_records

from take5_arena.leaderboard.board import compute_standings, format_rank_range
from take5_arena.leaderboard.publish import file_key
from take5_arena.leaderboard.results import results_from_records
from take5_arena.leaderboard.site_build import publish_site

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    found = (
        os.environ.get("TAKE5_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if found is None and os.path.exists("/usr/bin/chromium"):
        found = "/usr/bin/chromium"
    return found


def unavailable(reason: str) -> None:
    support.unavailable(f"{reason}; run scripts/setup-browser.sh")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed")
    executable = chromium_path()
    if executable is None:
        unavailable("no chromium executable (Debian package `chromium`)")
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as error:
            unavailable(f"chromium at {executable} does not start: {str(error).splitlines()[0]}")
        yield b
        b.close()


@pytest.fixture(scope="module")
def records():
    return make_records()


@pytest.fixture(scope="module")
def site(tmp_path_factory, records):
    results = results_from_records(records)
    standings = compute_standings(results, bootstrap=100, seed=0)
    out = tmp_path_factory.mktemp("published")
    publish_site(
        out,
        results=results,
        records=records,
        standings=standings,
        title="Browser test cup",
        generated_at="2025-01-01 12:00 UTC",
    )
    return out


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("TAKE5_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nsite screenshots: {folder}")
    yield folder
    print(
        f"\nsite screenshots saved in {folder}: "
        f"{', '.join(sorted(p.name for p in folder.glob('*.png')))}"
    )


@pytest.fixture
def page(browser):
    """A fresh page that may load file:// URLs only; anything else is blocked and reported."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []
    problems: list[str] = []

    def guard(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    pg = context.new_page()
    pg.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    pg.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )
    pg.problems = problems
    yield pg
    context.close()
    assert not outside, f"the site tried to reach the network: {outside}"


def open_page(pg, site: Path, rel: str, *, clean: bool = True):
    pg.goto((site / "index.html").as_uri().rsplit("/", 1)[0] + "/" + rel)
    pg.wait_for_selector("body[data-ready='1'], p.error", timeout=10_000)
    if clean:
        assert not pg.problems, pg.problems


def expected_rows(site: Path):
    return json.loads((site / "standings.json").read_text(encoding="utf-8"))["rows"]


# -- front page -----------------------------------------------------------------------------------


def test_index_shows_the_standings_with_their_intervals(page, site, shots, records):
    open_page(page, site, "index.html")
    rows = expected_rows(site)
    assert page.title() == "Browser test cup"
    table = page.locator("table#standings tbody tr")
    assert table.count() == len(rows) == len(NAMES)
    xs = []
    for i, row in enumerate(rows):
        tr = table.nth(i)
        assert tr.get_attribute("data-entrant") == row["entrant"]
        cells = tr.locator("td")
        assert cells.nth(0).inner_text() == str(row["rank"])
        assert cells.nth(1).inner_text().strip() == row["entrant"]
        assert cells.nth(2).inner_text() == f"{row['rating']:.0f}"
        span = row["rank_range"]
        assert cells.nth(5).inner_text() == (
            "–" if span is None else format_rank_range(tuple(span))
        )
        if row["interval"] is None:  # not enough games: no interval, said so (the one text)
            assert not row["enough_games"] and cells.nth(3).inner_text() == "not enough games"
            continue
        low, high = row["interval"]
        assert cells.nth(3).inner_text() == f"{low:.0f} – {high:.0f}"
        # the interval is drawn: a bar from low to high around the dot of the rating
        bar = tr.locator("svg.interval line.ci")
        dot = tr.locator("svg.interval circle.rating")
        assert bar.count() == 1 and dot.count() == 1
        x1, x2 = float(bar.get_attribute("x1")), float(bar.get_attribute("x2"))
        cx = float(dot.get_attribute("cx"))
        assert x1 <= cx <= x2 and x2 - x1 > 2
        assert tr.locator("svg.interval").bounding_box()["width"] > 100  # really laid out
        xs.append(cx)
    assert xs == sorted(xs, reverse=True)  # higher rating, further right
    method = json.loads((site / "standings.json").read_text(encoding="utf-8"))["method"]["interval"]
    assert (
        method in page.locator("#standings-section").inner_text()
    )  # the method is said, not assumed
    n = len(rows)
    assert page.locator("table#los tbody td").count() == n * n
    assert page.locator("table#crosstable tbody td").count() == n * n
    assert page.locator("#over-time-section svg path.series").count() == n
    # the whole range is drawn: every point of every line inside the plot area (none cut off)
    box = page.evaluate("""() => {
        const c = document.querySelector('#over-time-section svg rect');
        const y = Number(c.getAttribute('y'));
        return [y, y + Number(c.getAttribute('height'))]; }""")
    for d in page.locator("#over-time-section svg path.series").evaluate_all(
        "ps => ps.map(p => p.getAttribute('d'))"
    ):
        ys = [float(y) for y in re.findall(r"[ML][\d.]+ ([\d.]+)", d)]
        assert ys and all(box[0] <= y <= box[1] for y in ys), (box, min(ys), max(ys))
    assert page.locator("table#all-games tbody tr").count() == len(
        records
    )  # one page, newest first
    assert page.locator("table#all-games tbody tr").first.get_attribute("data-game") == "cut-1"
    assert "not rated" in page.locator("table#all-games tbody tr").first.inner_text()
    assert "cut off" in page.locator("#unrated").inner_text()
    # bot names on both axes of both grids
    for grid in ("los", "crosstable"):
        assert page.locator(f"table#{grid} thead th.col-name").all_inner_texts() == [
            r["entrant"] for r in rows
        ]
        assert page.locator(f"table#{grid} tbody th.row-name").all_inner_texts() == [
            r["entrant"] for r in rows
        ]
    faulty = page.locator(f"table#standings tr[data-entrant='{FAULTY}'] td.faults").inner_text()
    assert "timeout" in faulty and "crash" in faulty
    page.screenshot(path=str(shots / "index.png"), full_page=True)


def test_a_sparse_crosstable_reads_as_the_square_one(page, tmp_path, records, monkeypatch):
    """Above CROSSTABLE_DENSE_MAX bots standings.json lists the pairs that met: the front page's
    grid and a bot page's head to head show what the square one gave."""
    from take5_arena.leaderboard import publish as P

    results = results_from_records(records)
    standings = compute_standings(results, bootstrap=100, seed=0)
    names = [r.entrant for r in standings.rows]
    square = P.crosstable(results, names)
    monkeypatch.setattr(P, "CROSSTABLE_DENSE_MAX", 2)
    publish_site(tmp_path, results=results, records=records, standings=standings, title="Sparse")
    doc = json.loads((tmp_path / "standings.json").read_text(encoding="utf-8"))
    assert "pairs" in doc["crosstable"] and "score" not in doc["crosstable"]
    open_page(page, tmp_path, "index.html")
    cells = page.locator("table#crosstable tbody td[data-value]")
    shown = {
        (
            c.evaluate("td => td.parentNode.rowIndex - 1"),
            c.evaluate("td => td.cellIndex - 1"),
        ): float(c.get_attribute("data-value"))
        for c in cells.all()
    }
    want = {
        (i, j): square["score"][i][j]
        for i in range(len(names))
        for j in range(len(names))
        if square["score"][i][j] is not None
    }
    assert shown.keys() == want.keys()
    assert all(abs(shown[k] - want[k]) < 1e-4 for k in want)
    page.locator(f"table#standings tr[data-entrant='{FAULTY}'] td.name a").click()
    page.wait_for_selector("body[data-ready='1']")
    assert not page.problems, page.problems
    me = names.index(FAULTY)
    rows = page.locator("table#h2h tbody tr")
    assert rows.count() == sum(1 for m in square["meetings"][me] if m)
    for k in range(rows.count()):
        other = names.index(rows.nth(k).locator("td").first.inner_text())
        assert rows.nth(k).locator("td").nth(2).inner_text() == str(square["meetings"][me][other])


def test_a_bot_without_enough_games_shows_no_interval(page, tmp_path):
    """One duplicate set of three bots: nothing measures its design effect, so no interval is drawn
    or printed, and no rank range is given."""
    # the duplicate deal alone (make_records also plays a professional game and others)
    few = {gid: r for gid, r in make_records(games=0).items() if gid.startswith("dup-")}
    results = results_from_records(few)
    standings = compute_standings(results, bootstrap=100, seed=0)
    assert not any(r.enough_games for r in standings.rows)
    publish_site(tmp_path, results=results, records=few, standings=standings, title="Thin cup")
    open_page(page, tmp_path, "index.html")
    rows = page.locator("table#standings tbody tr")
    assert rows.count() == len(standings.rows)
    for i in range(rows.count()):
        assert rows.nth(i).locator("td").nth(3).inner_text() == "not enough games"
        assert rows.nth(i).locator("svg.interval line.ci").count() == 0
        assert rows.nth(i).locator("td.rank-range").inner_text() == "–"
    assert "it has no interval, and no order is claimed" in page.locator("body").inner_text()


def test_a_pool_too_large_for_the_los_matrix_shows_los_next_and_ranges(page, tmp_path, monkeypatch):
    """Above LOS_MAX_BOTS the standings have no LOS matrix: the table's "LOS next" column and rank
    ranges come from each row's own los_next and rank_range."""
    from take5_arena.leaderboard import intervals

    monkeypatch.setattr(intervals, "LOS_MAX_BOTS", 2)
    records = make_records(games=30)
    results = results_from_records(records)
    standings = compute_standings(results, bootstrap=100, seed=0)
    assert not standings.los and any(r.los_next is not None for r in standings.rows)
    publish_site(tmp_path, results=results, records=records, standings=standings, title="Big cup")
    open_page(page, tmp_path, "index.html")
    rows = page.locator("table#standings tbody tr")
    assert rows.count() == len(standings.rows)
    for i, row in enumerate(standings.rows):
        cells = rows.nth(i).locator("td")
        want = "–" if row.los_next is None else f"{100 * row.los_next:.0f}%"
        assert cells.nth(6).inner_text() == want
        span = row.rank_range
        assert cells.nth(5).inner_text() == ("–" if span is None else format_rank_range(span))
    assert page.locator("#los-section").count() == 0  # no matrix to show


def test_file_keys_are_the_same_in_javascript(page, site):
    open_page(page, site, "index.html")
    names = NAMES + ["Alpha", "a/b", "über", "名前", "x" * 300, "", "t001"]
    assert page.evaluate("names => names.map(window.Take5.fileKey)", names) == [
        file_key(n) for n in names
    ]


def test_links_escape_every_value_they_carry(page, site):
    # A published file is hostile: a replay's number or a name must not add or change parameters.
    open_page(page, site, "index.html")
    hrefs = page.evaluate(
        """() => [
            Take5.replayHref("g 1&x", 3),
            Take5.replayHref("g1", "2&game=evil#r9"),
            Take5.replayHref("g1", null),
            Take5.botHref("a&b=c/d"),
        ]"""
    )
    assert hrefs == [
        "replay.html?game=g%201%26x&n=3",
        "replay.html?game=g1&n=2%26game%3Devil%23r9",
        "replay.html?game=g1",
        "bot.html?bot=a%26b%3Dc%2Fd",
    ]


# -- bot page -------------------------------------------------------------------------------------


def test_bot_page_lists_its_games_and_faults(page, site, shots, records):
    open_page(page, site, "index.html")
    page.locator(f"table#standings tr[data-entrant='{FAULTY}'] td.name a").click()
    page.wait_for_selector("body[data-ready='1']")
    assert not page.problems, page.problems
    assert page.locator("h1").inner_text() == FAULTY
    played = [
        r for r in records.values() if r["complete"] and FAULTY in [s["name"] for s in r["seats"]]
    ]
    assert page.locator("table#games tbody tr").count() == len(played)
    kinds = page.locator("table#fault-kinds tbody tr")
    assert sorted(kinds.nth(i).locator("td").first.inner_text() for i in range(kinds.count())) == [
        "crash",
        "timeout",
    ]
    assert page.locator("table#fault-log tbody tr").count() >= 3
    assert page.locator("table#h2h tbody tr").count() == len(NAMES) - 1
    page.screenshot(path=str(shots / "bot.png"), full_page=True)

    # an awkward name works through the link as well
    open_page(page, site, "index.html")
    odd = next(n for n in NAMES if "<" in n)
    page.locator("table#standings td.name a", has_text=odd).click()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("h1").inner_text() == odd
    assert page.locator("table#games tbody tr").count() > 0


# -- replays --------------------------------------------------------------------------------------


def shown_rows(page) -> list[list[int]]:
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#rows .row')).map(
             row => Array.from(row.querySelectorAll('.card')).map(c => Number(c.dataset.card)))"""
    )


def shown_column(page, cls: str) -> list[int]:
    return page.evaluate(
        f"""() => Array.from(document.querySelectorAll('#scores tbody tr')).map(
             tr => Number(tr.querySelector('.{cls}').textContent))"""
    )


def position(page) -> tuple[int, int]:
    label = page.locator("#step-label")
    return int(label.get_attribute("data-round")), int(label.get_attribute("data-turn"))


def step_through(page, record, shots, prefix: str) -> int:
    """Walk the whole game with the next button, checking every position against the record."""
    if not page.locator("#first").is_disabled():
        page.locator("#first").click()
    totals = [0] * len(record["seats"])
    steps = 0
    for rnd in record["rounds"]:
        assert position(page) == (rnd["round"], 0)
        assert shown_rows(page) == rnd["rows"]
        assert shown_column(page, "total") == totals
        hands = page.evaluate(
            "() => Array.from(document.querySelectorAll('#scores tbody tr')).map(tr => "
            "tr.querySelectorAll('.hand .card').length)"
        )
        assert hands == [len(h) for h in rnd["hands"]]
        if rnd["round"] == 1:
            page.screenshot(path=str(shots / f"{prefix}-deal.png"), full_page=True)
        for turn in rnd["turns"]:
            page.locator("#next").click()
            steps += 1
            assert position(page) == (rnd["round"], turn["turn"])
            assert shown_rows(page) == turn["rows"], (rnd["round"], turn["turn"])
            revealed = sorted(
                page.evaluate(
                    "() => Array.from(document.querySelectorAll('#plays li')).map(li => "
                    "[Number(li.dataset.seat), Number(li.querySelector('.card').dataset.card)])"
                )
            )
            assert revealed == sorted(map(list, turn["plays"]))
            takers = page.evaluate(
                "() => Array.from(document.querySelectorAll('#takes .take')).map(t => "
                "Number(t.dataset.seat))"
            )
            assert takers == [t["seat"] for t in turn["takes"]]
            if turn["takes"] and not (shots / f"{prefix}-take.png").exists():
                page.screenshot(path=str(shots / f"{prefix}-take.png"), full_page=True)
        if "scores" in rnd:  # the round ended: the totals shown are the recorded scores
            assert shown_column(page, "round-points") == rnd["points"]
            assert shown_column(page, "total") == rnd["scores"]
            assert page.locator("#banner").is_visible()
            totals = rnd["scores"]
            if rnd["round"] == 1:
                page.screenshot(path=str(shots / f"{prefix}-round-end.png"), full_page=True)
        if rnd is not record["rounds"][-1]:
            page.locator("#next").click()
            steps += 1
    assert page.locator("#next").is_disabled()
    assert not page.problems, page.problems
    return steps


def test_replay_steps_through_a_game_turn_by_turn(page, site, shots, records):
    # reach a replay the way a visitor does: standings -> bot -> one of its games
    open_page(page, site, "index.html")
    page.locator("table#standings tbody tr").first.locator("td.name a").click()
    page.wait_for_selector("body[data-ready='1']")
    link = page.locator("table#games tbody tr").last.locator("td").first.locator("a")
    gid = link.inner_text()
    link.click()
    page.wait_for_selector("body[data-ready='1']")
    assert not page.problems, page.problems
    record = records[gid]
    assert page.locator("h1").inner_text() == f"Game {gid}"
    steps = step_through(page, record, shots, "replay")
    assert steps == sum(len(r["turns"]) for r in record["rounds"]) + len(record["rounds"]) - 1
    banner = page.locator("#banner").inner_text()
    assert "Game over" in banner
    winners = record["result"]["standing"][0]
    assert all(record["seats"][s]["name"] in banner for s in winners)
    page.screenshot(path=str(shots / "replay-end.png"), full_page=True)

    # keys and deep links
    page.keyboard.press("Home")
    assert position(page) == (1, 0)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert position(page) == (1, 2)
    page.keyboard.press("PageDown")
    assert position(page) == (2, 0)
    page.keyboard.press("ArrowLeft")
    assert position(page) == (1, 10)
    open_page(page, site, f"replay.html?game={gid}#r2t5")  # same page: a hash change
    page.wait_for_function("() => document.getElementById('step-label').dataset.round === '2'")
    assert position(page) == (2, 5)
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert position(page) == (2, 5)
    assert shown_rows(page) == record["rounds"][1]["turns"][4]["rows"]


def test_replay_of_a_professional_game_shows_the_draft(page, site, shots, records):
    open_page(page, site, "replay.html?game=pro-1")
    assert page.locator("#draft ol.draft li").count() == len(
        records["pro-1"]["rounds"][0]["draft"]["picks"]
    )
    page.screenshot(path=str(shots / "replay-professional.png"), full_page=True)
    step_through(page, records["pro-1"], shots, "professional")


def test_replay_of_a_cut_off_game_and_of_an_unknown_one(page, site, records):
    open_page(page, site, "replay.html?game=cut-1")
    assert "INCOMPLETE" in page.locator(".subtitle").inner_text()
    page.keyboard.press("End")
    last = records["cut-1"]["rounds"][-1]
    assert position(page) == (last["round"], len(last["turns"]))
    assert shown_rows(page) == last["turns"][-1]["rows"]
    assert "cut off" in page.locator("#banner").inner_text()
    open_page(page, site, "replay.html?game=no-such-game", clean=False)
    assert "No replay of game no-such-game" in page.locator("p.error").inner_text()
    assert all("ERR_FILE_NOT_FOUND" in p for p in page.problems), page.problems


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """A site of one real game played with a bank (`referee match --time-control`): its record
    keeps each decision's time and the bank after it."""
    from take5.record import load_record

    folder = tmp_path_factory.mktemp("timed")
    run = support.referee(
        "match",
        str(support.EXAMPLES / "lowest"),
        str(support.EXAMPLES / "random"),
        "--games",
        "1",
        "--threshold",
        "20",
        "--time-control",
        "5+0.5",
        "--records",
        str(folder / "records"),
    )
    assert run.returncode == 0, run.stderr
    record = load_record(folder / "records" / "s0-g1.json")
    records = {"s0-g1": record}
    results = results_from_records(records)
    out = folder / "site"
    publish_site(
        out,
        results=results,
        records=records,
        standings=compute_standings(results, bootstrap=20, seed=0),
        title="Timed cup",
    )
    return out, record


def test_replay_shows_each_decisions_time_and_the_bank_after_it(page, timed, site, shots):
    out, record = timed
    open_page(page, out, "replay.html?game=s0-g1")
    assert "time 5+0.5, cpu clock" in page.locator(".subtitle").inner_text()
    headers = page.locator("#scores thead th").all_inner_texts()
    assert headers[-1] == "Time (bank after)"
    for rnd in record["rounds"]:
        for turn in rnd["turns"]:
            page.locator("#next").click()
            assert position(page) == (rnd["round"], turn["turn"])
            shown = page.locator("#scores tbody td.time").all_inner_texts()
            for seat, text in enumerate(shown):
                mine = [e for e in turn["clock"] if e[0] == seat]
                expected = " + ".join(f"{e[1]} ms" for e in mine)
                assert text == f"{expected} · bank {mine[-1][2] / 1000:.2f} s", (turn, seat)
        if rnd is not record["rounds"][-1]:
            page.locator("#next").click()
    page.screenshot(path=str(shots / "replay-times.png"), full_page=True)
    # a record from before time controls shows no time column, and no error
    open_page(page, site, "replay.html?game=t000")
    assert "Time" not in " ".join(page.locator("#scores thead th").all_inner_texts())
    assert "time " not in page.locator(".subtitle").inner_text()


# -- what bots control, and what organisers add ----------------------------------------------------

EVIL = "<img src=x onerror=alert(1)>"
EVIL_AUTHOR = "<script>alert(2)</script>"
EVIL_VERSION = '"><svg onload=alert(3)>'
EVIL_LOG = "<img src=y onerror=alert(4)> & </pre><b>bold</b>"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, records):
    """A tournament-like site: a bot named like an HTML attack, with a hostile handshake, fault
    detail and log lines; games labelled by table; the tournament's settings; logs published."""
    from take5_arena.leaderboard.collection import games_from_records
    from take5_arena.leaderboard.site_build import write_site

    chosen = {}
    for gid in ["t001", "t004", "t005"]:
        record = json.loads(json.dumps(records[gid]))
        for seat in record["seats"]:
            if seat["name"] == "delta <b>&|x":
                seat.update(
                    name=EVIL, author=EVIL_AUTHOR, version=EVIL_VERSION, sdk="take5-python 1.0"
                )
        evil = next(s for s, seat in enumerate(record["seats"]) if seat["name"] == EVIL)
        record["faults"][evil].append(
            {"round": 1, "turn": 2, "kind": "timeout", "detail": EVIL_LOG}
        )
        record["rounds"][0]["turns"][1]["logs"] = [[evil, EVIL_LOG], [0, "plain line"]]
        chosen[gid] = record
    results = results_from_records(chosen)
    games = games_from_records(chosen, results)
    games.labels = {gid: f"table {k + 1}, game 1" for k, gid in enumerate(chosen)}
    games.settings = {
        "players": 4,
        "variant": "standard",
        "threshold": 66,
        "end_rule": "at-or-above",
        "timeout": 1.0,
        "duplicate": True,
    }
    games.deals = [
        {"season": 1, "commitment": "ab" * 32, "key": "cd" * 32},
        {"season": 2, "commitment": EVIL, "key": None},  # what a page shows is text, never markup
    ]
    out = tmp_path_factory.mktemp("hostile")
    write_site(
        out,
        games,
        compute_standings(results, bootstrap=20, seed=0),
        title=f"Cup {EVIL}",
        with_logs=True,
    )
    return out, chosen


def test_hostile_strings_show_as_text_and_run_nothing(page, hostile, shots):
    site, chosen = hostile
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))

    open_page(page, site, "index.html")
    assert page.locator("h1").inner_text() == f"Cup {EVIL}"
    assert EVIL in page.locator("table#standings td.name").all_inner_texts()
    assert page.locator("table#los thead th.col-name").all_inner_texts().count(EVIL) == 1
    settings = page.locator("#settings")
    assert settings.locator("[data-key=players] dd").inner_text() == "4"
    assert settings.locator("[data-key=threshold] dd").inner_text() == "66"
    assert settings.locator("[data-key=duplicate] dd").inner_text() == "yes"
    assert "table 1, game 1" in page.locator("table#all-games").inner_text()
    deals = page.locator("#deals")  # the deal keys' commitments, each key once revealed
    assert "ab" * 32 in deals.locator("[data-season='1'] dd").inner_text()
    assert "key (revealed) " + "cd" * 32 in deals.locator("[data-season='1'] dd").inner_text()
    assert EVIL in deals.locator("[data-season='2'] dd").inner_text()
    assert "key still secret" in deals.locator("[data-season='2'] dd").inner_text()
    page.screenshot(path=str(shots / "hostile-index.png"), full_page=True)

    page.locator("table#standings td.name a", has_text=EVIL).click()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("h1").inner_text() == EVIL
    info = page.locator("#bot-info")
    assert info.locator("[data-key=author] dd").inner_text() == EVIL_AUTHOR
    assert info.locator("[data-key=version] dd").inner_text() == EVIL_VERSION
    assert info.locator("[data-key=sdk] dd").inner_text() == "take5-python 1.0"
    assert EVIL_LOG in page.locator("table#fault-log").inner_text()
    assert page.locator("table#games tbody tr").count() == 3
    page.screenshot(path=str(shots / "hostile-bot.png"), full_page=True)

    link = page.locator("table#games tbody tr").last.locator("td").first.locator("a")
    assert link.inner_text() == "table 1, game 1"
    link.click()
    page.wait_for_selector("body[data-ready='1']")
    record = chosen["t001"]
    assert page.locator("h1").inner_text() == "Table 1, game 1"
    page.keyboard.press("ArrowRight")
    assert page.locator("#logs .log").count() == 0
    page.keyboard.press("ArrowRight")  # turn 2: the logs of that turn, and the fault
    logs = page.locator("#logs .log")
    assert logs.count() == 2 and logs.first.locator("pre").inner_text() == EVIL_LOG
    assert EVIL_LOG in page.locator("#takes .fault").inner_text()
    page.screenshot(path=str(shots / "hostile-replay.png"), full_page=True)
    step_through(page, record, shots, "hostile")

    assert not dialogs, dialogs
    assert not page.locator("img, svg[onload], script:not([src])").count()
    outside = [u for u in requests if not u.startswith(site.as_uri() + "/")]
    assert not outside, outside
    assert not [u for u in requests if u.rsplit("/", 1)[-1] in ("x", "y")], requests
    assert not page.problems, page.problems


# -- many games: paged lists, replay bundles in several folders, all loaded lazily -----------------


@pytest.fixture(scope="module")
def big_site(tmp_path_factory, records):
    """60 games published with tiny pages and bundles, so that the lists have many pages and the
    replays lie in several bundles and folders."""
    import pytest as _pytest

    from take5_arena.leaderboard import site_build

    base = [r for r in records.values() if r["complete"]]
    many = {}
    for i in range(60):
        record = json.loads(json.dumps(base[i % len(base)]))
        record["game_id"] = f"g{i:03d}"
        record["started_at"] = f"2025-03-01T00:00:{i:02d}Z"
        many[record["game_id"]] = record
    results = results_from_records(many)
    out = tmp_path_factory.mktemp("big")
    with _pytest.MonkeyPatch.context() as mp:
        mp.setattr(site_build, "BUNDLE", 7)
        mp.setattr(site_build, "LIST_PAGE", 10)
        mp.setattr(site_build, "FOLDER_FILES", 3)
        publish_site(
            out,
            results=results,
            records=many,
            standings=compute_standings(results, bootstrap=0),
            title="Big",
        )
    assert len(list((out / "replays").iterdir())) == 3  # 9 bundles, 3 a folder
    return out, many


def test_game_lists_page_and_replays_load_lazily(page, big_site, shots):
    site, many = big_site
    requests: list[str] = []
    page.on(
        "request",
        lambda r: requests.append(r.url.rsplit("/", 2)[-2] + "/" + r.url.rsplit("/", 1)[-1]),
    )
    open_page(page, site, "index.html")
    rows = page.locator("table#all-games tbody tr")
    assert rows.count() == 10 and rows.first.get_attribute("data-game") == "g059"
    assert page.locator("#all-games-page").inner_text() == "page 1 of 6"
    assert page.locator("table#recent tbody tr").count() == 30

    def replay_files():
        return [r for r in requests if re.fullmatch(r"\d{3}/\d{6}\.js", r)]

    def list_pages():
        return [r for r in requests if re.fullmatch(r"games/\d{6}\.js", r)]

    assert replay_files() == [] and list_pages() == ["games/000005.js"]  # the newest page only
    page.locator("#all-games-older").click()
    page.wait_for_function("() => document.getElementById('all-games-page').dataset.page === '4'")
    assert rows.first.get_attribute("data-game") == "g049" and rows.count() == 10
    for _ in range(4):
        page.locator("#all-games-older").click()
    page.wait_for_function("() => document.getElementById('all-games-page').dataset.page === '0'")
    assert (
        rows.last.get_attribute("data-game") == "g000"
        and page.locator("#all-games-older").is_disabled()
    )
    page.screenshot(path=str(shots / "paged-index.png"), full_page=True)

    # a replay from the oldest page: its bundle (games 0-6) is the only replay file loaded
    rows.nth(3).locator("td a").first.click()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("h1").inner_text() == "Game g006"
    assert "n=6" in page.url
    assert replay_files() == ["000/000000.js"], requests
    step_through(page, many["g006"], shots, "paged")

    # a link without the game number still finds the game (through the list pages)
    open_page(page, site, "replay.html?game=g045")
    assert page.locator("h1").inner_text() == "Game g045"
    assert shown_rows(page) == many["g045"]["rounds"][0]["rows"]

    # a bot's games, newest first, a page at a time
    open_page(page, site, "bot.html?bot=alpha")
    played = sorted(
        (gid for gid, r in many.items() if "alpha" in [s["name"] for s in r["seats"]]), reverse=True
    )
    games = page.locator("table#games tbody tr")
    seen = []
    while True:
        seen += [games.nth(i).get_attribute("data-game") for i in range(games.count())]
        older = page.locator("#games-older")
        if older.count() == 0 or older.is_disabled():
            break
        before = page.locator("#games-page").get_attribute("data-page")
        older.click()
        page.wait_for_function(
            f"() => document.getElementById('games-page').dataset.page !== '{before}'"
        )
    assert seen == played
    assert not page.problems, page.problems


def test_the_standings_name_the_author_of_each_version(page, tmp_path):
    """A store whose versions have their authors (schema 4's golden store): the front page's
    standings name, beside each bot, the author its records name as the seat's ``owner``."""
    store = shutil.copytree(support.ROOT / "tests" / "data" / "tournament-v4", tmp_path / "T")
    out = tmp_path / "site"
    done = support.referee("publish", "-t", str(store), "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    open_page(page, out, "index.html")
    owners = {}
    for tr in page.locator("table#standings tbody tr").all():
        owners[tr.get_attribute("data-entrant")] = tr.locator("td.name .owner").inner_text()
    assert owners == {"random": " by alice", "lowest": " by bob", "heuristic": " by carol"}
    assert page.locator("table#standings td.name a").all_inner_texts() == list(owners)

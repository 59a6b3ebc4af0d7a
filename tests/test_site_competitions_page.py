"""The published site's competitions page (competitions.html, data/competitions.js): a season's
Swiss and knockout stage by stage, table by table, with each game's places and a link to its
replay, in real Chromium; its data checked by ``referee verify --site`` (published again from the
site's competitions.json and records, so an edited result is a finding); hostile strings in it
shown as text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_site import browser, open_page, page  # noqa: F401 - the real Chromium's fixtures
from test_site_competitions import _ok, _run, _season

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _season(tmp_path_factory.mktemp("season"))


def _data(site: Path) -> dict[str, Any]:
    text = (site / "data" / "competitions.js").read_text(encoding="utf-8")
    assert text.startswith("window.TAKE5_COMPETITIONS = ")
    doc: dict[str, Any] = json.loads(text.split(" = ", 1)[1].rstrip().removesuffix(";"))
    return doc


def _write_data(site: Path, doc: dict[str, Any]) -> None:
    text = f"window.TAKE5_COMPETITIONS = {json.dumps(doc, ensure_ascii=False)};\n"
    (site / "data" / "competitions.js").write_text(text, encoding="utf-8")


def test_the_page_data_is_competitions_json_with_the_results(season: tuple[Path, Path]) -> None:
    _t, site = season
    doc = json.loads((site / "competitions.json").read_text())
    data = _data(site)
    assert data["competitions"] == doc["competitions"]
    listed = [g["game"] for c in doc["competitions"] for s in c["stages"] for g in s["games"]]
    assert set(data["results"]) == set(listed)  # every game of a finished season is rated
    manifest = [json.loads(line)["game"] for line in (site / "manifest.jsonl").open()]
    for gid, r in data["results"].items():
        assert manifest[r["n"]] == gid and sorted(r["places"])[0] == 1
    front = (site / "data" / "standings.js").read_text()
    assert '"competitions":2' in front
    out = _ok("verify", "--site", str(site))
    assert "FAILED" not in out


def test_a_result_edited_on_the_page_is_caught(season: tuple[Path, Path], tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(season[1], site)
    data = _data(site)
    gid = next(iter(data["results"]))
    data["results"][gid]["places"] = list(reversed(data["results"][gid]["places"]))
    if data["results"][gid]["places"] == _data(season[1])["results"][gid]["places"]:
        data["results"][gid]["places"] = [9] * len(data["results"][gid]["places"])
    _write_data(site, data)
    out = _run("verify", "--site", str(site))
    assert out.exit_code == 1
    assert re.search(rf"data/competitions\.js: results\.{re.escape(gid)}\.places", out.output)


@pytest.mark.browser
def test_the_page_shows_stages_tables_results_and_replay_links(
    page: Any,  # noqa: F811
    season: tuple[Path, Path],
) -> None:
    _t, site = season
    doc = json.loads((site / "competitions.json").read_text())
    open_page(page, site, "index.html")
    assert page.locator("#competitions-link").inner_text() == "competitions (2)"
    open_page(page, site, "competitions.html")
    sections = page.locator("main section")
    assert sections.count() == 2
    for i, comp in enumerate(doc["competitions"]):
        section = sections.nth(i)
        assert comp["prefix"] in section.locator("h2").inner_text()
        assert section.locator("h3").count() == len(comp["stages"])
        tables = {(s["schedule"], g["table"]) for s in comp["stages"] for g in s["games"]}
        assert section.locator("table.competition-stage tbody tr").count() == len(tables)
    first = doc["competitions"][0]["stages"][0]["games"][0]
    link = page.locator(f"a[title='game {first['game']}']")
    n = _data(site)["results"][first["game"]]["n"]
    assert link.get_attribute("href") == f"replay.html?game={first['game']}&n={n}"
    row = link.locator("xpath=ancestor::tr")
    assert "1. " in row.inner_text()
    link.click()
    page.wait_for_selector("body[data-ready='1'], p.error", timeout=10_000)
    assert page.locator("p.error").count() == 0


@pytest.mark.browser
def test_hostile_strings_on_the_page_show_as_text(
    page: Any,  # noqa: F811
    season: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    shutil.copytree(season[1], site)
    game = {"game": EVIL, "table": 0, "seats": [EVIL, "b</td><script>alert(2)</script>"]}
    _write_data(
        site,
        {
            "competitions": [
                {
                    "prefix": EVIL,
                    "created_at": EVIL,
                    "settings": {"format": {"format": EVIL, "table_size": EVIL}},
                    "entrants": [EVIL],
                    "stages": [{"schedule": EVIL, "games": [game]}],
                }
            ],
            "results": {EVIL: {"n": EVIL, "places": [EVIL, 2]}},
        },
    )
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_page(page, site, "competitions.html")
    text = page.locator("main").inner_text()
    assert EVIL in page.locator("main section h2").inner_text()
    assert "b</td><script>alert(2)</script>" in text
    assert page.locator("main img, main script").count() == 0
    assert page.locator("a[title]").first.get_attribute("href") == (
        "replay.html?game=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"
    )
    assert dialogs == []


def test_a_site_published_before_the_page_still_verifies(
    season: tuple[Path, Path], tmp_path: Path
) -> None:
    """A site of an earlier version: no competitions page, its manifest listing no hash of it.
    The missing page is said in a note (other pages than this version's), never a failure."""
    site = tmp_path / "site"
    shutil.copytree(season[1], site)
    (site / "competitions.html").unlink()
    (site / "data" / "competitions.js").unlink()
    head = json.loads((site / "manifest.json").read_text())
    del head["pages"]["competitions.html"]
    (site / "manifest.json").write_text(json.dumps(head, indent=1))
    out = _run("verify", "--site", str(site))
    assert out.exit_code == 0, out.output
    assert "competitions.html is missing" not in out.output

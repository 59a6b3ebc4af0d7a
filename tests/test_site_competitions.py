"""A season's Swiss and knockout verified from the published site alone (competitions.json and
the site's records: take5_arena/referee/tournament/published.py, take5_arena/standings.py), and
the edits a hostile organiser could make to a published site, each caught by
``referee verify --site``. Real games of the example bots in local processes."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support import EXAMPLES

from take5_arena.cli.main import main as cli
from take5_arena.leaderboard.site_build import bundle_file, canonical_json, decode_bundle

BOTS = ("heuristic", "lowest", "random", "heuristic", "lowest", "random")


def _run(*args: str) -> Result:
    out = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in out.output
    return out


def _ok(*args: str) -> str:
    out = _run(*args)
    assert out.exit_code == 0, (args, out.output)
    return out.output


def _season(root: Path, *extra: str) -> tuple[Path, Path]:
    """Six bots of six authors, a qualifying Swiss of two rounds at tables of 2, a knockout of
    its top 4, the key revealed, the site published: (tournament, site)."""
    t = root / "t"
    for i, bot in enumerate(BOTS):
        _ok(
            "submit", str(EXAMPLES / bot), "--name", f"{bot}{i}", "--author", f"a{i}",
            "--tournament", str(t), "--sandbox", "local",
        )  # fmt: skip
    run = ["tournament", "run", "--tournament", str(t), "--sandbox", "local", "--players", "2"]
    _ok(*run, *extra, "--format", "swiss", "--rounds", "2")
    _ok(*run, *extra, "--format", "knockout", "--from-swiss", "4", "--final-deals", "2")
    if not extra:
        _ok("tournament", "reveal", "--tournament", str(t))
    site = root / "site"
    _ok("publish", "--tournament", str(t), "--out", str(site), "--no-timestamp")
    return t, site


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _season(tmp_path_factory.mktemp("season"))


def _copy(site: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    return copy


def _edit_competitions(site: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = site / "competitions.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, indent=1))


def _competition(doc: dict[str, Any], fmt: str) -> dict[str, Any]:
    return next(c for c in doc["competitions"] if c["prefix"].startswith(fmt + "-"))


def test_the_site_publishes_what_pairs_both_phases_and_verify_pairs_them_again(
    season: tuple[Path, Path],
) -> None:
    t, site = season
    doc = json.loads((site / "competitions.json").read_text())
    assert doc["format"] == "take5-competitions" and len(doc["competitions"]) == 2
    swiss = _competition(doc, "swiss")
    assert swiss["settings"]["format"]["seed"] is not None  # secret deals: the seed seats only
    assert {"executor", "memory", "concurrency"}.isdisjoint(swiss["settings"])  # no operations
    assert all(len(g["seats"]) == 2 for s in swiss["stages"] for g in s["games"])
    out = _ok("verify", "--site", str(site))
    assert re.search(r"pairings: swiss-\w+: 2 stages paired again from their results", out)
    assert re.search(r"pairings: knockout-\w+: \d+ stages paired again", out)
    assert "2 Swisses and knockouts paired again" in out
    # the same verdicts as from the store
    store = _ok("verify", "--tournament", str(t))
    assert re.findall(r"pairings: (\S+): (\d+) stages", store) == re.findall(
        r"pairings: (\S+): (\d+) stages", out
    )


def test_a_pairing_edited_on_the_site_is_caught(season: tuple[Path, Path], tmp_path: Path) -> None:
    """Two bots swapped between the Swiss's first-round tables, in the listing (the records
    cannot follow without breaking their hashes)."""
    site = _copy(season[1], tmp_path)

    def swap(doc: dict[str, Any]) -> None:
        games = _competition(doc, "swiss")["stages"][0]["games"]
        other = next(g for g in games if g["table"] != games[0]["table"])
        a, b = games[0]["seats"][0], other["seats"][0]
        for g in games:
            g["seats"] = [b if s == a else a if s == b else s for s in g["seats"]]

    _edit_competitions(site, swap)
    out = _run("verify", "--site", str(site))
    assert out.exit_code == 1
    assert re.search(r"competitions.json: game \S+ of swiss-\w+-0001 lists seats", out.output)
    assert re.search(
        r"pairings: swiss-\w+: WRONG: stage 1 \(swiss-\w+-0001\) is not the", out.output
    )
    assert "FAILED" in out.output


@pytest.mark.parametrize("edit", ["seed", "seeding", "dropped game", "stage removed"])
def test_a_consistent_lie_in_what_pairs_is_caught(
    season: tuple[Path, Path], tmp_path: Path, edit: str
) -> None:
    """Edits that keep every record and seat as they are: another seed (other tables), the 5th of
    the Swiss let into the final, a game of the Swiss left out of its listing (its result no
    longer counts), a stage of the knockout left out."""
    site = _copy(season[1], tmp_path)

    def lie(doc: dict[str, Any]) -> None:
        swiss, ko = _competition(doc, "swiss"), _competition(doc, "knockout")
        if edit == "seed":
            swiss["settings"]["format"]["seed"] += 1
        elif edit == "seeding":
            seeding = ko["settings"]["format"]["seeding"]
            seeding[3] = next(e for e in swiss["entrants"] if e not in seeding)
        elif edit == "dropped game":
            del swiss["stages"][0]["games"][-1]
        else:
            del ko["stages"][0]

    _edit_competitions(site, lie)
    out = _run("verify", "--site", str(site))
    assert out.exit_code == 1, out.output
    wrong = dict(re.findall(r"pairings: (\w+)-\w+: WRONG: (.*)", out.output))
    if edit == "seeding":
        assert wrong["knockout"].startswith("its field is not the top 4 of swiss-")
    elif edit == "stage removed":
        assert wrong["knockout"].startswith("stage 1 is missing (found knockout-")
    else:  # the final may follow from it no longer too
        assert "is not the pairing its results before it give" in wrong["swiss"]


def test_a_result_edited_on_the_site_is_caught(season: tuple[Path, Path], tmp_path: Path) -> None:
    """The places of a Swiss game changed in its record, the manifest's hash made to match: the
    record no longer replays, and the pairings that followed no longer follow."""
    site = _copy(season[1], tmp_path)
    doc = json.loads((site / "competitions.json").read_text())
    gid = _competition(doc, "swiss")["stages"][0]["games"][0]["game"]
    lines = (site / "manifest.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    entry = next(e for e in entries if e["game"] == gid)
    bundle = site / entry["replay"]
    games = decode_bundle(bundle.read_text())
    game = next(g for g in games if g["id"] == gid)
    result = game["record"]["result"]
    result["places"] = [len(result["places"]) + 1 - p for p in result["places"]]
    entry["sha256"] = hashlib.sha256(canonical_json(game["record"]).encode()).hexdigest()
    bundle.write_text(bundle_file(entry["replay"], [json.dumps(g) for g in games]))
    (site / "manifest.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    out = _run("verify", "--site", str(site))
    assert out.exit_code == 1, out.output
    assert f"game {gid}: invalid record" in out.output


def test_a_broken_competitions_file_is_one_line(season: tuple[Path, Path], tmp_path: Path) -> None:
    site = _copy(season[1], tmp_path)
    for text, said in [
        ("{not json", "competitions.json: Expecting property name"),
        ('{"format": "take5-competitions", "version": 1, "competitions": [{"prefix": 3}]}',
         "competitions.json: competition 1 is malformed"),
        ("[]", "competitions.json is not a take5-competitions version 1 document"),
    ]:  # fmt: skip
        (site / "competitions.json").write_text(text)
        out = _run("verify", "--site", str(site))
        assert out.exit_code == 1 and said in out.output, out.output


def test_public_deals_withhold_the_seed_and_are_checked_from_the_store(tmp_path: Path) -> None:
    """With deals from a public seed (``--seed``) the seed would give away the deals to come: the
    site withholds it and says the competitions are checked from the store."""
    t, site = _season(tmp_path, "--seed", "5")
    doc = json.loads((site / "competitions.json").read_text())
    assert all(c["settings"]["format"]["seed"] is None for c in doc["competitions"])
    assert all(c["settings"]["deals"] == "public" for c in doc["competitions"])
    out = _ok("verify", "--site", str(site))
    assert len(re.findall(r"pairings: \S+: not checkable: its seed is withheld", out)) == 2
    assert "2 stages paired again" in _ok("verify", "--tournament", str(t))


def test_any_edit_of_a_definition_is_a_finding_never_a_traceback(tmp_path: Path) -> None:
    """Every field of a Swiss's and a knockout's published definition replaced by values of other
    types and sizes: the check answers (a finding, or not checkable), it never raises."""
    import copy

    from test_swiss import OPTIONS, hashed_runner, make_tournament

    from take5_arena.referee.store import Store
    from take5_arena.referee.tournament import run_knockout, run_swiss
    from take5_arena.referee.tournament.pairings import check_competitions, recorded_games
    from take5_arena.referee.tournament.published import (
        PublishedError,
        from_document,
        store_document,
    )

    make_tournament(tmp_path)
    run_swiss(tmp_path, OPTIONS, rounds=2, runner=hashed_runner)
    run_knockout(tmp_path, {**OPTIONS, "deals": "secret"}, bracket={"from_swiss": 4},
                 runner=hashed_runner)  # fmt: skip
    with Store(tmp_path, readonly=True) as store:
        doc = store_document(store)
        recorded = recorded_games(store, {v.id: v.key for v in store.versions.all()})
    assert doc is not None
    for comp in doc["competitions"]:  # public deals in this store: a seed to check with
        comp["settings"]["format"]["seed"] = 3
    values: list[Any] = [None, -1, 0, 1, 2, 10**9, 1.5, "x", True, [], ["x"], {}, {"x": 1}]
    for c in range(len(doc["competitions"])):
        for key in list(doc["competitions"][c]["settings"].get("format", {})):
            for value in values:
                edited = copy.deepcopy(doc)
                edited["competitions"][c]["settings"]["format"][key] = value
                try:
                    found = from_document(edited)
                except PublishedError:
                    continue
                checks = check_competitions(found, recorded)
                assert len(checks) == len(found)
    for qualified in ({"swiss": 1, "top": "x"}, {"swiss": None, "top": None}, {"top": 2.5}):
        edited = copy.deepcopy(doc)
        ko = next(c for c in edited["competitions"] if c["prefix"].startswith("knockout-"))
        ko["settings"]["format"]["qualified"] = qualified
        checks = check_competitions(from_document(edited), recorded)
        assert any(c.problem and "its field's Swiss" in c.problem for c in checks)

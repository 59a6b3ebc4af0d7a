"""Checking a published site: are its standings exactly what its records give?

``referee verify --site DIR`` runs :func:`check_site`. Anyone who downloads a site can run it; it
trusts nothing of the site but the records themselves and the rating parameters:

1. every game of the manifest (``manifest.jsonl``, take5_arena/leaderboard/site_build.py) has its
   record in the replay file the manifest names, and the record's SHA-256 is the one listed (so a
   record edited after publishing, or deleted, is found);
2. every record replays through the rules (:func:`take5.record.verify_record`), and a game listed as
   rated is complete while a game listed as not rated is not (a finished game cannot be left out of
   the standings by calling it unrated);
3. each rated game's entrants are its seats' names (or ``name@vN``, an older version of that name),
   and games of one duplicate set share a deal;
4. the standings recomputed from exactly the rated records - with the bootstrap count, seed, prior
   and K of ``manifest.json`` - equal the rows of ``standings.json`` (ratings, intervals, games,
   wins, penalties, places, faults, online Elo), and the game count matches;
5. every data file the pages read (``data/standings.js``, ``data/games/*``, ``data/bots/*``,
   ``data/competitions.js``, and the replay bundles' game entries) is exactly what publishing
   those records (and the site's competitions.json, which the pairing check pairs) gives: the site
   is published again from them into a scratch folder (take5_arena/leaderboard/site_build.py, the
   one writer) and each file compared, so two names swapped on the front page, an edited game list,
   bot page or competitions result, or a file added are each a finding naming the file and the
   first difference;
6. the pages' code (HTML, script, style) has the SHA-256 ``manifest.json`` lists (``pages``); a
   manifest whose pages are not the ones this version of take5 arena publishes is noted;
7. deals (docs/security.md, "Deals"): every record dealt from a secret key names a season whose
   commitment standings.json publishes (``deals``), a revealed key is the one committed to, and
   once revealed each seed is that key's HMAC of the record's deal identity; until then the seeds
   are counted as not yet checkable;
8. the games that seated two bots of one author at a table (standings.json's ``same_author``) are
   those whose records' seats say so (``owner``).

It streams: one replay file's games at a time besides the results (and the scratch publication,
streamed the same way).
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.record import MalformedRecord, verify_record
from take5.shuffle import key_commitment, keyed_seed, parse_key

from .board import Standings, compute_standings
from .collection import Games, Unrated
from .errors import LeaderboardError
from .fit import DEFAULT_PRIOR
from .online import DEFAULT_K
from .publish import shared_tables_of
from .results import GameResult, result_from_record, seat_entrant
from .site_build import (
    COMPETITIONS,
    COMPETITIONS_DATA,
    MANIFEST_FORMAT,
    decode_bundle,
    page_files,
    page_hashes,
    record_hash,
    write_site,
)

#: relative tolerance when comparing recomputed numbers with the published ones
TOLERANCE = 1e-6
MAX_PROBLEMS = 50


class SiteCheckError(LeaderboardError):
    """The folder is not a published site (no manifest, unreadable): a message for the user."""


@dataclass
class SiteCheck:
    games: int = 0
    rated: int = 0
    problems: list[str] = field(default_factory=list)
    more: int = 0  # problems found beyond the ones kept
    notes: list[str] = field(default_factory=list)  # worth saying, but no failure
    public_deals: int = 0  # records dealt from a public seed (predictable)
    checked_deals: int = 0  # records dealt from a revealed key, their seeds checked
    sealed_deals: int = 0  # records dealt from a key still secret: not checkable yet

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.more += 1


def _manifest(site: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    try:
        head = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SiteCheckError(f"{site} is not a published site (no manifest.json)") from None
    except (OSError, ValueError) as error:
        raise SiteCheckError(f"cannot read {site / 'manifest.json'}: {error}") from None
    if (
        not isinstance(head, dict)
        or head.get("format") != MANIFEST_FORMAT
        or head.get("version") != 1
    ):
        raise SiteCheckError(f"{site / 'manifest.json'} is not a {MANIFEST_FORMAT} version 1 file")

    def lines() -> Iterator[dict[str, Any]]:
        try:
            with (site / "manifest.jsonl").open(encoding="utf-8") as f:
                for k, line in enumerate(f, 1):
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        entry = None
                    if not isinstance(entry, dict):
                        raise SiteCheckError(f"manifest.jsonl line {k} is not a JSON object")
                    yield entry
        except OSError as error:
            raise SiteCheckError(f"cannot read {site / 'manifest.jsonl'}: {error}") from None

    return head, lines()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _entrant_matches(label: Any, seat: Any) -> bool:
    if not isinstance(label, str) or not isinstance(seat, Mapping):
        return False
    name = seat.get("name")
    return label in (seat.get("entrant"), name) or (
        isinstance(name, str) and label.startswith(name + "@v") and label[len(name) + 2 :].isdigit()
    )


@dataclass
class _Read:
    """What the replay files say, gathered game by game for the comparisons that follow."""

    results: list[GameResult] = field(default_factory=list)
    """The rated games, as the ratings read them."""
    deals: dict[str, str] = field(default_factory=dict)
    """Duplicate set -> the deal its first game was played on."""
    labels: dict[str, str] = field(default_factory=dict)
    unrated: dict[str, Unrated] = field(default_factory=dict)
    shared: list[tuple[str, str]] = field(default_factory=list)
    """Games that seated two bots of one author at a table."""


def check_site(site_dir: str | Path) -> SiteCheck:
    """Check a published site (see the module text); raises :class:`SiteCheckError` when the
    folder is no site at all, else returns every problem found."""
    # a live site is a link to its current version (site_versions.py): read one version throughout
    site = Path(site_dir).resolve()
    head, entries = _manifest(site)
    check = SiteCheck()
    doc = _standings_json(site, check)
    seasons = _seasons(doc, check)
    by_file: dict[str, list[dict[str, Any]]] = {}
    games_order: list[str] = []  # every game of the manifest, in publishing order
    for entry in entries:
        replay = entry.get("replay")
        if not isinstance(replay, str) or not replay.startswith("replays/") or ".." in replay:
            check.add(f"manifest: game {entry.get('game')!r} names no replay file")
            continue
        by_file.setdefault(replay, []).append(entry)  # a dict keeps the files' first-seen order
        games_order.append(str(entry.get("game")))
        check.games += 1
    read = _Read()
    for replay, wanted in by_file.items():
        _check_replay_file(site, replay, wanted, seasons, check, read)
    results = read.results
    check.rated = len(results)
    table = _compare_standings(doc, head, results, check) if doc is not None else None
    _check_pages(site, head, check)
    if table is not None and check.ok:
        games = Games("", results, games_order, None, unrated=read.unrated, labels=read.labels)
        position = {gid: n for n, gid in enumerate(games_order)}
        games.shared_tables = sorted(read.shared, key=lambda s: (position.get(s[0], 0), s[1]))
        games.deals = list(seasons.values()) if isinstance(doc, dict) and "deals" in doc else []
        games.competitions = _competitions_json(site, check)
        _compare_data(site, head, doc or {}, games, table, check)
    elif table is not None:
        check.notes.append("the data files were not compared: the records do not agree yet")
    return check


def _check_replay_file(
    site: Path,
    replay: str,
    wanted: list[dict[str, Any]],
    seasons: Mapping[str, Any],
    check: SiteCheck,
    read: _Read,
) -> None:
    """The games the manifest lists in one replay file: each there, verified, as listed."""
    try:
        bundled = {
            str(g.get("id")): g for g in decode_bundle((site / replay).read_text(encoding="utf-8"))
        }
        found = {gid: g.get("record") for gid, g in bundled.items()}
    except FileNotFoundError:
        for e in wanted:
            check.add(f"game {e.get('game')}: its replay file {replay} is missing")
        return
    except (OSError, ValueError) as error:
        check.add(f"{replay}: unreadable replay file ({error})")
        return
    for e in wanted:
        gid = str(e.get("game"))
        where = f"game {gid}"
        record = found.pop(gid, None)
        if not isinstance(record, dict):
            check.add(
                f"{where}: no record in {replay}"
                + (" (a rated game is missing)" if e.get("rated") else "")
            )
            continue
        label = bundled[gid].get("label")
        _check_game(gid, e, record, label, seasons, check, read)
    for gid in found:
        check.add(f"game {gid}: in {replay} but not in the manifest")


def _check_game(
    gid: str,
    e: Mapping[str, Any],
    record: dict[str, Any],
    label: Any,
    seasons: Mapping[str, Any],
    check: SiteCheck,
    read: _Read,
) -> None:
    """One game's record against its manifest entry: its hash, a replay through the engine, its
    deal, rated or not as listed, its seats, its duplicate set; a rated one joins `read.results`."""
    where = f"game {gid}"
    if record_hash(record) != e.get("sha256"):
        check.add(f"{where}: the record's hash is not the manifest's (the record was changed)")
    try:
        divergence = verify_record(record)
    except MalformedRecord as error:
        check.add(f"{where}: malformed record: {error}")
        return
    if divergence is not None:
        check.add(f"{where}: invalid record: {divergence}")
        return
    if isinstance(label, str):
        read.labels[gid] = label
    _check_deal(where, record, seasons, check)
    read.shared += shared_tables_of(gid, record)
    complete = bool(record.get("complete", False))
    if not e.get("rated"):
        if complete:
            check.add(f"{where}: a complete game listed as not rated")
        try:
            entrants_of = tuple(seat_entrant(seat) for seat in record.get("seats") or [])
        except (TypeError, ValueError, AttributeError):
            entrants_of = ()
        read.unrated[gid] = Unrated(entrants_of, str(e.get("why", "not rated")))
        return
    if not complete:
        check.add(f"{where}: an incomplete game listed as rated")
        return
    entrants = e.get("entrants")
    seats = record.get("seats") or []
    if (
        not isinstance(entrants, list)
        or len(entrants) != len(seats)
        or not all(_entrant_matches(a, s) for a, s in zip(entrants, seats))
    ):
        check.add(f"{where}: the manifest's entrants {entrants!r} are not the record's seats")
        return
    dup = e.get("duplicate_set")
    if dup is not None:
        deal = json.dumps([record.get("seed"), record.get("settings")], sort_keys=True)
        if read.deals.setdefault(str(dup), deal) != deal:
            check.add(f"{where}: duplicate set {dup!r} holds games of different deals")
    played_at = e.get("played_at")
    try:
        base = result_from_record(record, game_id=gid)
        read.results.append(
            GameResult(
                game_id=gid,
                entrants=tuple(entrants),
                penalties=base.penalties,
                places=base.places,
                duplicate_set=None if dup is None else str(dup),
                faults=base.faults,
                played_at=played_at if isinstance(played_at, int) else len(read.results),
            )
        )
    except (KeyError, TypeError, ValueError) as error:
        check.add(f"{where}: cannot rate the record ({error})")


def _standings_json(site: Path, check: SiteCheck) -> Any:
    try:
        return json.loads((site / "standings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        check.add(f"cannot read standings.json: {error}")
        return None


def _seasons(doc: Any, check: SiteCheck) -> dict[Any, dict[str, Any]]:
    """The deal seasons standings.json publishes, by number; a revealed key must be the one its
    commitment was published for (else it is left out, and the finding says so)."""
    raw = doc.get("deals", []) if isinstance(doc, dict) else []
    if not isinstance(raw, list):
        check.add("standings.json: deals is not a list")
        return {}
    seasons: dict[Any, dict[str, Any]] = {}
    for d in raw:
        if not isinstance(d, dict) or not isinstance(d.get("commitment"), str):
            check.add(f"standings.json: a deal season that is no object with a commitment: {d!r}")
            continue
        key = d.get("key")
        if key is not None:
            try:
                if key_commitment(parse_key(key)) != d["commitment"]:
                    check.add(
                        f"standings.json: the revealed key of deal season {d.get('season')!r} is "
                        "not the key its commitment was published for"
                    )
                    continue
            except (ValueError, TypeError) as error:
                check.add(f"standings.json: deal season {d.get('season')!r}: {error}")
                continue
        seasons[d.get("season")] = {
            "season": d.get("season"),
            "commitment": d["commitment"],
            "key": key,
        }
    return seasons


def _check_deal(
    where: str,
    record: Mapping[str, Any],
    seasons: Mapping[Any, Mapping[str, Any]],
    check: SiteCheck,
) -> None:
    """A record's deal against the published seasons (see the module text, point 7)."""
    deal = record.get("deal")
    if deal is None:
        check.public_deals += 1
        return
    season = deal.get("season") if isinstance(deal, dict) else None
    published = seasons.get(season) if isinstance(season, int) else None
    if not isinstance(deal, dict) or published is None:
        check.add(f"{where}: dealt from a deal season whose commitment the site does not publish")
        return
    if deal.get("commitment") != published["commitment"]:
        check.add(f"{where}: its deal names a commitment the site does not publish")
        return
    if published["key"] is None:
        check.sealed_deals += 1
        return
    ident = deal.get("id")
    if not isinstance(ident, str) or record.get("seed") != keyed_seed(
        parse_key(published["key"]), ident
    ):
        check.add(f"{where}: its seed is not the one the revealed deal key gives")
        return
    check.checked_deals += 1


def _check_pages(site: Path, head: Mapping[str, Any], check: SiteCheck) -> None:
    """The pages' code against the manifest's hashes (see the module text, point 6)."""
    listed = head.get("pages")
    if not isinstance(listed, dict):
        check.add("manifest.json lists no hashes of the pages (HTML, script, style)")
        return
    for rel in page_files():
        try:
            digest = hashlib.sha256((site / rel).read_bytes()).hexdigest()
        except OSError:
            if rel in listed:  # a page added since (competitions.html): the note below says so
                check.add(f"{rel} is missing")
            continue
        if digest != listed.get(rel):
            check.add(f"{rel}: its SHA-256 is not the manifest's (the page was changed)")
    if listed != page_hashes():
        check.notes.append(
            "the manifest's pages are not the ones this version of take5 arena publishes "
            "(another version published the site, or the pages and manifest were both changed)"
        )


def _competitions_json(site: Path, check: SiteCheck) -> dict[str, Any] | None:
    """The site's competitions.json as it is (None: the site has none), for the competitions
    page's data to be published again from it; whether it pairs is the pairing check's
    (take5_arena/standings.py, ``check_site_competitions``)."""
    try:
        doc = json.loads((site / COMPETITIONS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        check.add(f"{COMPETITIONS} cannot be read: {error}")
        return None
    if not isinstance(doc, dict):
        check.add(f"{COMPETITIONS} is not an object")
        return None
    return doc


def _payload(text: str) -> Any:
    """The JSON value a data file assigns (``window.X = V;`` or ``window.X["path"] = V;``)."""
    line = text.rstrip().splitlines()[-1]
    return json.loads(line.split(" = ", 1)[1].rstrip().removesuffix(";"))


def _first_difference(got: Any, want: Any, path: str = "") -> str | None:
    """Where ``got`` first differs from ``want`` (a JSON path) and how, or None."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want), key=str):
            at = f"{path}.{k}" if path else str(k)
            if k not in got or k not in want:
                return f"{at} is {'extra' if k in got else 'missing'}"
            found = _first_difference(got[k], want[k], at)
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        for i, (a, b) in enumerate(zip(got, want)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(got) != len(want):
            return f"{path} has {len(got)} items; the records give {len(want)}"
        return None
    if _same(got, want) and type(got) is type(want):
        return None
    return f"{path or 'the value'} is {_short(got)}; the records give {_short(want)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _data_files(root: Path) -> dict[str, Path]:
    """The files the pages read (and standings.json), by path relative to the site."""
    files = {"standings.json": root / "standings.json"}
    files["data/standings.js"] = root / "data" / "standings.js"
    files[COMPETITIONS_DATA] = root / COMPETITIONS_DATA
    for folder in ("data/games", "data/bots", "replays"):
        for path in (root / folder).rglob("*.js"):
            files[path.relative_to(root).as_posix()] = path
    return {rel: path for rel, path in files.items() if path.is_file()}


def _compare_data(
    site: Path,
    head: Mapping[str, Any],
    doc: Mapping[str, Any],
    games: Games,
    table: Standings,
    check: SiteCheck,
) -> None:
    """Publish the site again from its own records into a scratch folder and compare every file the
    pages read (see the module text, point 5). What the records cannot give is taken as published:
    the title, the time of publication, the settings shown and the labels of the games."""
    front = _read_payload("data/standings.js", site / "data" / "standings.js")
    games.settings = front.get("settings", {}) if isinstance(front, dict) else {}
    if not isinstance(games.settings, dict):
        games.settings = {}
    bundles = {rel: path for rel, path in _data_files(site).items() if rel.startswith("replays/")}

    def read_records(start: int) -> Iterator[tuple[str, dict[str, Any]]]:
        wanted = set(games.order[start:])
        for rel in sorted(bundles):
            for g in decode_bundle(bundles[rel].read_text(encoding="utf-8")):
                gid = str(g.get("id"))
                if gid in wanted and isinstance(g.get("record"), dict):
                    yield gid, g["record"]

    games.read_records = read_records
    with tempfile.TemporaryDirectory(prefix="take5-site-check-") as scratch:
        try:
            write_site(
                scratch,
                games,
                table,
                title=str(doc.get("title", "")),
                generated_at=doc.get("generated_at"),
                with_logs=bool(head.get("with_logs", False)),
                full=True,
            )
        except (ValueError, OSError) as error:
            check.add(f"cannot publish the records again to compare the data files: {error}")
            return
        want = _data_files(Path(scratch))
        have = _data_files(site)
        pages = head.get("pages")
        before_page = not isinstance(pages, dict) or "competitions.html" not in pages
        for rel in sorted(set(want) | set(have)):
            if rel not in have and rel == COMPETITIONS_DATA and before_page:
                continue  # a site published before the competitions page had none
            if rel not in have:
                check.add(f"{rel} is missing (the records give it)")
            elif rel not in want:
                check.add(f"{rel}: a data file the records do not give")
            else:
                _compare_file(rel, have[rel], want[rel], check)
        for rel in ("standings.md",):
            if (site / rel).read_bytes() != (Path(scratch) / rel).read_bytes():
                check.add(f"{rel} is not what the records give")


def _read_payload(rel: str, path: Path) -> Any:
    """A data file's value (None: unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
        if rel.startswith("replays/"):
            return decode_bundle(text)
        return json.loads(text) if rel.endswith(".json") else _payload(text)
    except (OSError, ValueError, IndexError):
        return None


def _compare_file(rel: str, have: Path, want: Path, check: SiteCheck) -> None:
    if have.read_bytes() == want.read_bytes():
        return
    got, expected = _read_payload(rel, have), _read_payload(rel, want)
    if got is None:
        check.add(f"{rel}: not a data file the pages can read")
        return
    if rel.startswith("replays/"):  # the records are checked by hash: the game entries here
        got = [{k: v for k, v in g.items() if k != "record"} for g in got]
        expected = [{k: v for k, v in g.items() if k != "record"} for g in expected]
    where = _first_difference(got, expected)
    if where is not None:
        check.add(f"{rel}: {where}")


def _optional_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"intervals_through is {value!r}, not a whole number")
    return value


def _compare_standings(
    doc: Any, head: Mapping[str, Any], results: list[GameResult], check: SiteCheck
) -> Standings | None:
    raw = head.get("ratings")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        check.add("standings.json has no rows")
        return None
    if doc.get("games") != len(results):
        check.add(
            f"standings.json counts {doc.get('games')} rated games; the records give {len(results)}"
        )
    if not results:
        if doc["rows"]:
            check.add("standings.json lists bots, but no rated record was found")
        return None
    try:
        table = compute_standings(
            results,
            bootstrap=int(params.get("bootstrap", 0)),
            seed=int(params.get("seed", 0)),
            prior=float(params.get("prior", DEFAULT_PRIOR)),
            k=float(params.get("k", DEFAULT_K)),
            intervals_through=_optional_int(params.get("intervals_through")),
        )
    except (TypeError, ValueError) as error:
        check.add(f"cannot recompute the standings: {error}")
        return None
    expected = [r.to_json_dict() for r in table.rows]
    published = {r.get("entrant"): r for r in doc["rows"] if isinstance(r, dict)}
    if sorted(published, key=str) != sorted(r["entrant"] for r in expected):
        check.add(
            f"standings.json lists bots {sorted(published, key=str)}; the records give "
            f"{sorted(r['entrant'] for r in expected)}"
        )
    for row in expected:
        got = published.get(row["entrant"])
        if got is None:
            continue
        for key, value in row.items():
            if not _same(json.loads(json.dumps(value)), got.get(key)):
                check.add(
                    f"standings.json: {row['entrant']}: {key} is {got.get(key)!r}; "
                    f"the records give {value!r}"
                )
    return table

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
   wins, penalties, places, faults, online Elo), and the game count matches.

It streams: one replay file's games at a time besides the results.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.record import MalformedRecord, verify_record

from .board import compute_standings
from .errors import LeaderboardError
from .fit import DEFAULT_PRIOR
from .online import DEFAULT_K
from .results import GameResult, result_from_record
from .site_build import MANIFEST_FORMAT, decode_bundle, record_hash

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


def check_site(site_dir: str | Path) -> SiteCheck:
    """Check a published site (see the module text); raises :class:`SiteCheckError` when the
    folder is no site at all, else returns every problem found."""
    # a live site is a link to its current version (site_versions.py): read one version throughout
    site = Path(site_dir).resolve()
    head, entries = _manifest(site)
    check = SiteCheck()
    by_file: dict[str, list[dict[str, Any]]] = {}
    order: list[str] = []
    for entry in entries:
        replay = entry.get("replay")
        if not isinstance(replay, str) or not replay.startswith("replays/") or ".." in replay:
            check.add(f"manifest: game {entry.get('game')!r} names no replay file")
            continue
        if replay not in by_file:
            order.append(replay)
        by_file.setdefault(replay, []).append(entry)
        check.games += 1

    results: list[GameResult] = []
    deals: dict[str, str] = {}
    for replay in order:
        wanted = by_file.pop(replay)
        try:
            found = {
                str(g.get("id")): g.get("record")
                for g in decode_bundle((site / replay).read_text(encoding="utf-8"))
            }
        except FileNotFoundError:
            for e in wanted:
                check.add(f"game {e.get('game')}: its replay file {replay} is missing")
            continue
        except (OSError, ValueError) as error:
            check.add(f"{replay}: unreadable replay file ({error})")
            continue
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
            if record_hash(record) != e.get("sha256"):
                check.add(
                    f"{where}: the record's hash is not the manifest's (the record was changed)"
                )
            try:
                divergence = verify_record(record)
            except MalformedRecord as error:
                check.add(f"{where}: malformed record: {error}")
                continue
            if divergence is not None:
                check.add(f"{where}: invalid record: {divergence}")
                continue
            complete = bool(record.get("complete", False))
            if not e.get("rated"):
                if complete:
                    check.add(f"{where}: a complete game listed as not rated")
                continue
            if not complete:
                check.add(f"{where}: an incomplete game listed as rated")
                continue
            entrants = e.get("entrants")
            seats = record.get("seats") or []
            if (
                not isinstance(entrants, list)
                or len(entrants) != len(seats)
                or not all(_entrant_matches(a, s) for a, s in zip(entrants, seats))
            ):
                check.add(
                    f"{where}: the manifest's entrants {entrants!r} are not the record's seats"
                )
                continue
            dup = e.get("duplicate_set")
            if dup is not None:
                deal = json.dumps([record.get("seed"), record.get("settings")], sort_keys=True)
                if deals.setdefault(str(dup), deal) != deal:
                    check.add(f"{where}: duplicate set {dup!r} holds games of different deals")
            played_at = e.get("played_at")
            try:
                base = result_from_record(record, game_id=gid)
                results.append(
                    GameResult(
                        game_id=gid,
                        entrants=tuple(entrants),
                        penalties=base.penalties,
                        places=base.places,
                        duplicate_set=None if dup is None else str(dup),
                        faults=base.faults,
                        played_at=played_at if isinstance(played_at, int) else len(results),
                    )
                )
            except (KeyError, TypeError, ValueError) as error:
                check.add(f"{where}: cannot rate the record ({error})")
        for gid in found:
            check.add(f"game {gid}: in {replay} but not in the manifest")
    check.rated = len(results)
    _compare_standings(site, head, results, check)
    return check


def _compare_standings(
    site: Path, head: Mapping[str, Any], results: list[GameResult], check: SiteCheck
) -> None:
    try:
        doc = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        check.add(f"cannot read standings.json: {error}")
        return
    raw = head.get("ratings")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        check.add("standings.json has no rows")
        return
    if doc.get("games") != len(results):
        check.add(
            f"standings.json counts {doc.get('games')} rated games; the records give {len(results)}"
        )
    if not results:
        if doc["rows"]:
            check.add("standings.json lists bots, but no rated record was found")
        return
    try:
        table = compute_standings(
            results,
            bootstrap=int(params.get("bootstrap", 0)),
            seed=int(params.get("seed", 0)),
            prior=float(params.get("prior", DEFAULT_PRIOR)),
            k=float(params.get("k", DEFAULT_K)),
        )
    except (TypeError, ValueError) as error:
        check.add(f"cannot recompute the standings: {error}")
        return
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

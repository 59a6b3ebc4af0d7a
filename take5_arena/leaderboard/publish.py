"""Publishing the leaderboard: the documents (standings.json, standings.md) and the static site.

Everything here is built from plain inputs - the games as :class:`GameResult`, their records (JSON
documents, docs/record-format.md) and the computed :class:`Standings` - so it works the same for a
tournament store, a folder of record files or a test. This module holds the pieces every layer
shares (records -> results, the standings document, the crosstable, file names); the site's files
are written by take5_arena/leaderboard/site_build.py (streamed, sharded, compressed, incremental;
its :func:`~take5_arena.leaderboard.site_build.publish_site` is the entry point).

The site is static files only. It opens from disk (file://) or any static host, with no server and
no network: the pages are hand-written HTML with one script (``assets/site.js``) and one style
sheet, and the data is in JavaScript files that set globals, loaded with ``<script>`` tags (also
lazily, by the page), because browsers block the fetch API on local files. Pages::

    index.html            standings with intervals, superiority matrix, crosstable, ratings over
                          time, tournament settings, every game (paged)
    bot.html?bot=NAME     one bot: numbers, handshake info, faults, head-to-head, its games (paged)
    replay.html?game=ID&n=N   one game, step by step (N: the game's number on the site)

``KEY`` in file names is :func:`file_key` of the bot name (the JavaScript does the same encoding).
The output is a pure function of the inputs: publishing twice gives identical files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .board import Standings
from .fit import FloatArray, IndexArray, aggregate, prepare
from .online import TimePoint, ratings_over_time
from .results import GameResult

STANDINGS_FORMAT = "take5-standings"
STANDINGS_VERSION = 1
SITE_ASSETS = Path(__file__).with_name("site")
PAGES = ("index.html", "bot.html", "replay.html", "competitions.html")
ASSET_FILES = ("site.js", "site.css")

# --------------------------------------------------------------------------------------------------
# Derived tables


#: Above this many bots the crosstable is published sparse, one entry per pair that met
#: (docs/standings-format.md): a square one has n^2 cells, 10^8 at 10,000 bots.
CROSSTABLE_DENSE_MAX = 300


def crosstable(results: Sequence[GameResult], entrants: Sequence[str]) -> dict[str, Any]:
    """Head-to-head over pairwise outcomes (docs/standings-format.md, ``crosstable``): for each pair
    of ``entrants`` that met, how many meetings they had (one per game in which both sat) and the
    share of the points i took (lower place = 1, equal = 1/2). These are the pairs the ratings
    are fitted to, so they come from the same arrays (:func:`~.fit.prepare`,
    :func:`~.fit.aggregate`)."""
    if not results:
        return crosstable_of_pairs(entrants, (), _NO_INDEX, _NO_INDEX, _NO_FLOAT, _NO_FLOAT)
    data = prepare(results)
    points, meetings = aggregate(data)
    return crosstable_of_pairs(entrants, data.entrants, data.edge_a, data.edge_b, points, meetings)


_NO_INDEX: IndexArray = np.zeros(0, dtype=np.intp)
_NO_FLOAT: FloatArray = np.zeros(0)


def crosstable_of_pairs(
    entrants: Sequence[str],
    names: Sequence[str],
    a: IndexArray,
    b: IndexArray,
    points: FloatArray,
    meetings: FloatArray,
) -> dict[str, Any]:
    """The crosstable of ``entrants`` from counts per pair: ``points[k]`` of ``names[a[k]]`` in its
    ``meetings[k]`` meetings with ``names[b[k]]`` (one entry per pair, either way round). Square
    (``score`` and ``meetings`` matrices) up to :data:`CROSSTABLE_DENSE_MAX` bots, else sparse
    (``pairs``: ``[i, j, meetings, score of i]`` with i < j, sorted)."""
    index = {e: i for i, e in enumerate(entrants)}
    n = len(entrants)
    where = np.array([index.get(e, -1) for e in names], dtype=np.intp)
    i, j = where[a], where[b]
    keep = (i >= 0) & (j >= 0) & (i != j) & (meetings > 0)
    i, j, pts, met = i[keep], j[keep], points[keep], meetings[keep]
    flip = i > j
    i, j = np.where(flip, j, i), np.where(flip, i, j)
    pts = np.where(flip, met - pts, pts)
    if n > CROSSTABLE_DENSE_MAX:
        order = np.lexsort((j, i))
        i, j, pts, met = i[order], j[order], pts[order], met[order]
        score = pts / met
        pairs = [
            [x, y, int(m), s]
            for x, y, m, s in zip(i.tolist(), j.tolist(), met.tolist(), score.tolist())
        ]
        return {"entrants": list(entrants), "pairs": pairs}
    count = np.zeros((n, n))
    share = np.zeros((n, n))
    count[i, j] = count[j, i] = met
    share[i, j], share[j, i] = pts, met - pts
    shown = count > 0
    share = np.divide(share, count, out=np.zeros((n, n)), where=shown)
    return {
        "entrants": list(entrants),
        "score": [
            [s if m else None for s, m in zip(srow, mrow)]
            for srow, mrow in zip(share.tolist(), shown.tolist())
        ],
        "meetings": count.astype(np.int64).tolist(),
    }


@dataclass(frozen=True)
class DocumentParts:
    """The parts of standings.json that cost a pass over every game: the crosstable and the ratings
    over time. A publication computes them once (the arena's publisher keeps them game by game:
    :meth:`~.live_board.LiveStandings.document_parts`) and gives them to its document and to its
    site's (:func:`standings_document`, ``parts``)."""

    crosstable: dict[str, Any]
    over_time: tuple[TimePoint, ...]


def document_parts(
    standings: Standings, results: Sequence[GameResult], *, over_time: bool = True
) -> DocumentParts:
    """The :class:`DocumentParts` of ``results``, from every game."""
    points = (
        ratings_over_time(results, method="fit", prior=standings.prior)
        if over_time and results
        else ()
    )
    return DocumentParts(crosstable(results, [r.entrant for r in standings.rows]), points)


def standings_document(
    standings: Standings,
    results: Sequence[GameResult],
    *,
    title: str = "Standings",
    generated_at: str | None = None,
    over_time: bool = True,
    deals: Sequence[Mapping[str, Any]] = (),
    shared_tables: Sequence[tuple[str, str]] = (),
    owners: Mapping[str, str] | None = None,
    parts: DocumentParts | None = None,
) -> dict[str, Any]:
    """The contents of standings.json (docs/standings-format.md). ``deals``: the deal keys'
    seasons (commitment, and the key once revealed), published so that anyone can check every
    seed once a key is revealed (docs/security.md, "Deals"). ``shared_tables``: (game id, author)
    of each game that had to seat two bots of one author at its table (:func:`same_author`).
    ``owners``: bot -> its author as the organiser knows it, each row's optional ``owner``.
    ``parts``: the crosstable and ratings over time of ``results`` if already computed (else
    computed here, :func:`document_parts`)."""
    doc: dict[str, Any] = {
        "format": STANDINGS_FORMAT,
        "version": STANDINGS_VERSION,
        "title": title,
        "generated_at": generated_at,
    }
    doc.update(_finite(standings.to_json_dict()))
    for row in doc["rows"]:
        if owners and row["entrant"] in owners:
            row["owner"] = owners[row["entrant"]]
    if parts is None:
        parts = document_parts(standings, results, over_time=over_time)
    # both finite by construction (shares of counts, fitted ratings): not walked again
    doc["crosstable"] = parts.crosstable
    if over_time and parts.over_time:
        doc["over_time"] = {
            "method": "fit",
            "points": [p.to_json_dict() for p in parts.over_time],
        }
    else:
        doc["over_time"] = None
    if deals:
        doc["deals"] = _finite(
            [
                {"season": d.get("season"), "commitment": d.get("commitment"), "key": d.get("key")}
                for d in deals
            ]
        )
    if shared_tables:
        doc["same_author"] = same_author(shared_tables)
    return doc


def document_lines(doc: Mapping[str, Any]) -> str:
    """standings.json's text: a key a line, and a list's items a line each (a row of the
    standings, a point of the ratings over time). Readable as the indented form, and written by
    json's C encoder: the indented one is pure Python (6 of 8 s of a re-publish at 1,000 bots)."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    def lines(value: Any) -> str:
        if isinstance(value, list) and value:
            return "[\n  " + ",\n  ".join(compact(v) for v in value) + "\n ]"
        if isinstance(value, dict) and value and any(isinstance(v, list) for v in value.values()):
            inner = ",\n  ".join(f"{compact(k)}: {compact(v)}" for k, v in value.items())
            return "{\n  " + inner + "\n }"
        return compact(value)

    return "{\n" + ",\n".join(f" {compact(k)}: {lines(v)}" for k, v in doc.items()) + "\n}\n"


def competitions_page(
    doc: Any, result_of: Mapping[str, GameResult], position_of: Mapping[str, int]
) -> dict[str, Any]:
    """The competitions page's data: competitions.json's competitions as they are, and for each
    game they list that the site rates, its places by seat and its position (the replay link).
    ``doc`` may be anything (`referee verify --site` publishes a site's own file again): what is
    not of the published shape lists no result, and the pairing check says what is wrong."""
    found = doc.get("competitions") if isinstance(doc, dict) else None
    listed = found if isinstance(found, list) else []
    results: dict[str, Any] = {}
    for comp in listed:
        stages = comp.get("stages") if isinstance(comp, dict) else None
        for stage in stages if isinstance(stages, list) else []:
            rows = stage.get("games") if isinstance(stage, dict) else None
            for game in rows if isinstance(rows, list) else []:
                gid = game.get("game") if isinstance(game, dict) else None
                if isinstance(gid, str) and gid in result_of:
                    places = list(result_of[gid].places)
                    results[gid] = {"n": position_of.get(gid), "places": places}
    return {"competitions": listed, "results": results}


def same_author(shared_tables: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """standings.json's ``same_author``: how many games seated two or more bots of one author at
    their table, and how many of them per author (the rule that keeps an author's bots apart could
    not hold: too few authors in the pool)."""
    per_author: dict[str, int] = {}
    for _game, author in shared_tables:
        per_author[author] = per_author.get(author, 0) + 1
    return {
        "games": len({game for game, _ in shared_tables}),
        "authors": dict(sorted(per_author.items())),
    }


def shared_tables_of(game_id: str, record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(game id, author) for each author with two or more seats of this record (seat ``owner``)."""
    seen: dict[str, int] = {}
    for seat in record.get("seats") or []:
        owner = seat.get("owner") if isinstance(seat, Mapping) else None
        if isinstance(owner, str):
            seen[owner] = seen.get(owner, 0) + 1
    return [(game_id, a) for a, n in sorted(seen.items()) if n > 1]


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite number (never expected) becomes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(v is None or type(v) is float for v in value):
            # a row of numbers (the LOS matrix's: a million at 1,000 bots), without a call each
            return [v if v is None or math.isfinite(v) else None for v in value]
        return [_finite(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------------
# File names

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_KEY = 180


def _fnv1a(text: str) -> str:
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def file_key(text: str) -> str:
    """A file name stem for a bot name or game id, the same in site.js (``fileKey``).

    Lower-case letters, digits, ``-`` and ``_`` stay; any other character becomes ``~`` and the hex
    of each of its UTF-8 bytes (so names differing only in case never share a file, also on
    case-insensitive file systems). Long keys are cut and end with a hash of the whole key.
    """
    key = "".join(
        ch if ch in _SAFE else "".join(f"~{b:02x}" for b in ch.encode("utf-8")) for ch in text
    )
    if not key:
        return "~"
    if len(key) > _MAX_KEY:
        key = key[:_MAX_KEY] + "~~" + _fnv1a(key)
    return key

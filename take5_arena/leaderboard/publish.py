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

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .board import Standings
from .online import ratings_over_time
from .results import GameResult

STANDINGS_FORMAT = "take5-standings"
STANDINGS_VERSION = 1
SITE_ASSETS = Path(__file__).with_name("site")
PAGES = ("index.html", "bot.html", "replay.html", "competitions.html")
ASSET_FILES = ("site.js", "site.css")

# --------------------------------------------------------------------------------------------------
# Derived tables


def crosstable(results: Iterable[GameResult], entrants: Sequence[str]) -> dict[str, Any]:
    """Head-to-head over pairwise outcomes: ``score[i][j]`` is the share of points entrant i took
    from its meetings with j (lower place = 1, equal = 1/2), ``meetings[i][j]`` how many there
    were (one per game in which both sat). ``None`` where they never met."""
    index = {e: i for i, e in enumerate(entrants)}
    n = len(entrants)
    points = [[0.0] * n for _ in range(n)]
    meetings = [[0] * n for _ in range(n)]
    for g in results:
        seats = [(index.get(e), p) for e, p in zip(g.entrants, g.places)]
        for s, (a, pa) in enumerate(seats):
            for b, pb in seats[s + 1 :]:
                if a is None or b is None or a == b:
                    continue
                meetings[a][b] += 1
                meetings[b][a] += 1
                score = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
                points[a][b] += score
                points[b][a] += 1.0 - score
    return {
        "entrants": list(entrants),
        "score": [
            [points[i][j] / meetings[i][j] if meetings[i][j] else None for j in range(n)]
            for i in range(n)
        ],
        "meetings": meetings,
    }


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
) -> dict[str, Any]:
    """The contents of standings.json (docs/standings-format.md). ``deals``: the deal keys'
    seasons (commitment, and the key once revealed), published so that anyone can check every
    seed once a key is revealed (docs/security.md, "Deals"). ``shared_tables``: (game id, author)
    of each game that had to seat two bots of one author at its table (:func:`same_author`).
    ``owners``: bot -> its author as the organiser knows it, each row's optional ``owner``."""
    doc: dict[str, Any] = {
        "format": STANDINGS_FORMAT,
        "version": STANDINGS_VERSION,
        "title": title,
        "generated_at": generated_at,
    }
    doc.update(standings.to_json_dict())
    for row in doc["rows"]:
        if owners and row["entrant"] in owners:
            row["owner"] = owners[row["entrant"]]
    doc["crosstable"] = crosstable(results, [r.entrant for r in standings.rows])
    if over_time and results:
        points = ratings_over_time(results, method="fit", prior=standings.prior)
        doc["over_time"] = {
            "method": "fit",
            "points": [p.to_json_dict() for p in points],
        }
    else:
        doc["over_time"] = None
    if deals:
        doc["deals"] = [
            {"season": d.get("season"), "commitment": d.get("commitment"), "key": d.get("key")}
            for d in deals
        ]
    if shared_tables:
        doc["same_author"] = same_author(shared_tables)
    finite: dict[str, Any] = _finite(doc)
    return finite


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

"""Publishing the leaderboard: standings.json, standings.md and a static site.

Everything here is built from plain inputs - the games as :class:`GameResult`, their records (JSON
documents, docs/record-format.md) and the computed :class:`Standings` - so it works the same for a
tournament store, a folder of record files or a test.

The site is static files only. It opens from disk (file://) or any static host, with no server and
no network: the pages are hand-written HTML with one script (``assets/site.js``) and one style sheet,
and the data is embedded in JavaScript files that set a global (``data/standings.js`` sets
``window.TAKE5_STANDINGS``), loaded with ``<script>`` tags, because browsers block the fetch API
on local files. Layout of a published site::

    index.html            standings with intervals, superiority matrix, crosstable, ratings over time
    bot.html?bot=NAME     one bot: numbers, faults, head-to-head, its games
    replay.html?game=ID   one game, step by step
    standings.json        the documented standings (docs/standings-format.md)
    standings.md          the standings table in Markdown
    assets/site.js, assets/site.css
    data/standings.js     window.TAKE5_STANDINGS = {standings.json + recent games}
    data/bots/KEY.js      window.TAKE5_BOT = {that bot's games and faults}
    games/KEY.js          window.TAKE5_GAME = {game_id, entrants, seed (text), record}

``KEY`` is :func:`file_key` of the bot name or game id (the JavaScript does the same encoding).
The output is a pure function of the inputs: publishing twice gives identical files.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .markdown import standings_markdown
from .ratings import Standings, ratings_over_time
from .results import (  # noqa: F401 - re-exported: the record -> results path lived here
    GameResult,
    natural_key,
    result_from_record,
    results_from_records,
    seat_entrant,
)

STANDINGS_FORMAT = "take5-standings"
STANDINGS_VERSION = 1
SITE_ASSETS = Path(__file__).with_name("site")
PAGES = ("index.html", "bot.html", "replay.html")
ASSET_FILES = ("site.js", "site.css")
#: Games listed on the front page (the newest).
RECENT_GAMES = 30

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
) -> dict[str, Any]:
    """The contents of standings.json (docs/standings-format.md)."""
    doc: dict[str, Any] = {
        "format": STANDINGS_FORMAT,
        "version": STANDINGS_VERSION,
        "title": title,
        "generated_at": generated_at,
    }
    doc.update(standings.to_json_dict())
    doc["crosstable"] = crosstable(results, [r.entrant for r in standings.rows])
    if over_time and results:
        points = ratings_over_time(results, method="fit", prior=standings.prior)
        doc["over_time"] = {
            "method": "fit",
            "points": [p.to_json_dict() for p in points],
        }
    else:
        doc["over_time"] = None
    return _finite(doc)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite number (never expected) becomes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _game_summary(g: GameResult) -> dict[str, Any]:
    return {
        "id": g.game_id,
        "played_at": g.played_at,
        "entrants": list(g.entrants),
        "penalties": list(g.penalties),
        "places": list(g.places),
    }


def bot_pages(
    results: Sequence[GameResult], records: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per entrant: its games (newest first) and every fault with where it happened."""
    pages: dict[str, dict[str, Any]] = {}
    for g in sorted(results, key=lambda g: (-g.played_at, g.game_id)):
        record = records.get(g.game_id)
        record_faults = (record or {}).get("faults") or []
        for seat, entrant in enumerate(g.entrants):
            page = pages.setdefault(entrant, {"entrant": entrant, "games": [], "faults": []})
            kinds = list(g.faults[seat]) if g.faults else []
            page["games"].append(
                {
                    **_game_summary(g),
                    "seat": seat,
                    "place": g.places[seat],
                    "penalty": g.penalties[seat],
                    "faults": kinds,
                    "replay": record is not None,
                }
            )
            if seat < len(record_faults) and record_faults[seat]:
                for f in record_faults[seat]:
                    page["faults"].append(
                        {
                            "game": g.game_id,
                            "round": f.get("round"),
                            "turn": f.get("turn"),
                            "kind": f.get("kind"),
                            "detail": f.get("detail", ""),
                        }
                    )
            else:
                page["faults"].extend(
                    {"game": g.game_id, "round": None, "turn": None, "kind": k, "detail": ""}
                    for k in kinds
                )
    return pages


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


# --------------------------------------------------------------------------------------------------
# Writing


def _js(global_name: str, value: Any) -> str:
    def dump(v: Any) -> str:
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    try:
        body = dump(value)
    except ValueError:  # a NaN or infinity somewhere (never expected): null it and go on
        body = dump(_finite(value))
    return f"window.{global_name} = {body};\n"


def _clean(folder: Path, pattern: str) -> None:
    """Remove files of an earlier publication that this one rewrites (never anything else)."""
    if folder.is_dir():
        for path in folder.glob(pattern):
            if path.is_file():
                path.unlink()


def publish_site(
    out_dir: str | Path,
    *,
    results: Sequence[GameResult],
    records: Mapping[str, Mapping[str, Any]],
    standings: Standings,
    title: str = "take5 arena standings",
    generated_at: str | None = None,
) -> Path:
    """Write the static site, standings.json and standings.md into ``out_dir``; return index.html.

    ``records`` maps game id to record; every record gets a replay page (games without a record are
    listed but not replayable). ``generated_at`` (any text, e.g. an ISO time) is shown and stored;
    leave it None for byte-identical output from identical inputs.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = standings_document(standings, results, title=title, generated_at=generated_at)

    (out / "standings.json").write_text(
        json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )
    (out / "standings.md").write_text(
        standings_markdown(standings, title=title, generated_at=generated_at), encoding="utf-8"
    )

    for page in PAGES:
        shutil.copyfile(SITE_ASSETS / page, out / page)
    (out / "assets").mkdir(exist_ok=True)
    for asset in ASSET_FILES:
        shutil.copyfile(SITE_ASSETS / asset, out / "assets" / asset)

    data = out / "data"
    bots = data / "bots"
    games = out / "games"
    for folder in (data, bots, games):
        folder.mkdir(exist_ok=True)
    _clean(bots, "*.js")
    _clean(games, "*.js")

    recent = sorted(results, key=lambda g: (-g.played_at, g.game_id))[:RECENT_GAMES]
    site = dict(doc)
    site["recent_games"] = [
        {**_game_summary(g), "replay": g.game_id in records} for g in recent
    ]
    (data / "standings.js").write_text(_js("TAKE5_STANDINGS", site), encoding="utf-8")

    for entrant, bot_page in bot_pages(results, records).items():
        (bots / f"{file_key(entrant)}.js").write_text(_js("TAKE5_BOT", bot_page), encoding="utf-8")

    entrants_of = {g.game_id: list(g.entrants) for g in results}
    for gid, record in records.items():
        entrants = entrants_of.get(gid) or [seat_entrant(s) for s in record["seats"]]
        # the seed as text too: a 64-bit seed does not survive as a JavaScript number
        game = {"game_id": gid, "entrants": entrants, "seed": str(record.get("seed")), "record": record}
        (games / f"{file_key(gid)}.js").write_text(_js("TAKE5_GAME", game), encoding="utf-8")
    return out / "index.html"

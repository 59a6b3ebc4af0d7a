"""Writing the static site for any number of games: streamed, sharded, compressed, incremental.

Memory holds the results (a few hundred bytes a game) and one replay bundle, never all records;
every folder holds a bounded number of files; a re-publish writes only what new games change.

Layout (all paths relative to the site folder)::

    index.html, bot.html, replay.html, assets/  the pages (take5_arena/leaderboard/site/)
    standings.json, standings.md                the standings (docs/standings-format.md)
    manifest.json                               what was published, with the rating parameters
    manifest.jsonl                              one line per published game: its record hash
    data/standings.js                           window.TAKE5_STANDINGS: standings, settings,
                                                bots' handshake info, newest games, page counts
    data/games/NNNNNN.js                        the game list, LIST_PAGE games a page, oldest
                                                first: window.TAKE5_PAGES[path] = [...]
    data/bots/KEY.js                            one bot: game count, pages, newest faults
    data/bots/KEY/NNNNNN.js                     that bot's games, LIST_PAGE a page
    replays/FFF/NNNNNN.js                       BUNDLE records, JSON compressed (raw deflate) and
                                                base64-encoded: window.TAKE5_REPLAYS[path] = "..."
                                                (FOLDER_FILES bundles a folder)
    data/state.json                             what a re-publish needs to add to this site
    competitions.json                           what pairs each Swiss and knockout: definitions,
                                                stages, seats (when the tournament has any)
    competitions.html, data/competitions.js     the page of the Swisses and knockouts: the same
                                                competitions, with each listed game's places and
                                                position for its replay link (TAKE5_COMPETITIONS)

Game number ``n`` (its position in publishing order, from 0) fixes where everything about it lives:
bundle ``n // BUNDLE`` in folder ``n // BUNDLE // FOLDER_FILES``, list page ``n // LIST_PAGE``; so a
link to a replay is ``replay.html?game=ID&n=N``, and the page loads one bundle of ``BUNDLE`` games.
The browser decompresses a bundle with ``DecompressionStream`` (no library, works from file://).

**Incremental publishing.** ``data/state.json`` keeps how many games the site holds and a digest of
their ids in order. When the new publishing order starts with exactly those games (a tournament
that played more games), only the last, partly filled bundle and list pages and the new ones are
written, the summaries of the bots whose state changed (the bots of the new games), and the
manifest is appended to; the standings pages (a few hundred kilobytes) are always rewritten.
Anything else (other games, a different order, ``--with-logs`` switched, another layout version)
publishes everything again, after removing the old generated files.

**The manifest** lets anyone check the published standings (``referee verify --site``, see
take5_arena/leaderboard/site_check.py): for every game its record's SHA-256 (of
:func:`canonical_json`), where its replay is, whether it is rated (and why not), its entrants as
rated and its duplicate set.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .board import Standings
from .collection import Games, games_from_records
from .markdown import standings_markdown
from .publish import (
    ASSET_FILES,
    PAGES,
    SITE_ASSETS,
    DocumentParts,
    _finite,
    competitions_page,
    document_lines,
    file_key,
    standings_document,
)
from .results import GameResult, seat_entrant

LAYOUT_VERSION = 2
BUNDLE = 100  # records per replay file
FOLDER_FILES = 1000  # replay files per folder
LIST_PAGE = 1000  # games per page of a game list
RECENT_GAMES = 30  # newest games on the front page
BOT_FAULTS = 200  # newest faults (with their details) on a bot page
MANIFEST_FORMAT = "take5-site-manifest"
STATE_FORMAT = "take5-site-state"
#: the Swisses' and knockouts' definitions and stages (take5_arena/referee/tournament/published.py)
COMPETITIONS = "competitions.json"
#: the competitions page's data: competitions.json's competitions and their games' results
COMPETITIONS_DATA = "data/competitions.js"
#: tournament settings shown on the front page, in this order
SHOWN_SETTINGS = (
    "players",
    "variant",
    "threshold",
    "end_rule",
    "timeout",
    "time_control",
    "time_cap",
    "clock",
    "start_timeout",
    "max_faults",
    "duplicate",
    "games",
    "sandbox",
)
#: a record's seat fields shown on a bot page: the organiser's ``owner``, then the handshake's
SEAT_INFO = ("owner", "version", "author", "sdk", "protocol_version", "kind", "bot_name", "digest")
MAX_INFO = 200  # characters kept of each handshake field


def canonical_json(record: Any) -> str:
    """The one serialisation of a record that its manifest hash is taken of."""
    return json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def record_hash(record: Any) -> str:
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def page_files() -> list[str]:
    """The pages' files (HTML, script, style), relative to the site: what the manifest hashes."""
    return [*PAGES, *(f"assets/{a}" for a in ASSET_FILES)]


def page_hashes(root: Path | None = None) -> dict[str, str]:
    """SHA-256 of each of :func:`page_files` of the site in ``root`` (None: the pages this
    version of take5 arena publishes, take5_arena/leaderboard/site/)."""
    return {
        rel: hashlib.sha256(
            (SITE_ASSETS / Path(rel).name if root is None else root / rel).read_bytes()
        ).hexdigest()
        for rel in page_files()
    }


def bundle_path(n: int) -> str:
    """Where the replay of game number ``n`` is (relative to the site)."""
    b = n // BUNDLE
    return f"replays/{b // FOLDER_FILES:03d}/{b:06d}.js"


def page_path(prefix: str, page: int) -> str:
    return f"{prefix}/{page:06d}.js"


def encode_bundle(items: list[str]) -> str:
    """One replay bundle: a JSON list of games (each ``{"id", "entrants", "seed", "label",
    "record"}``, given as JSON text) as raw deflate, base64-encoded."""
    body = "[" + ",".join(items) + "]"
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    packed = deflate.compress(body.encode("utf-8")) + deflate.flush()
    return base64.b64encode(packed).decode("ascii")


def decode_bundle(text: str) -> list[dict[str, Any]]:
    """The games of one replay bundle file (its whole text, as written by :func:`write_site`)."""
    last = text.rstrip().splitlines()[-1]
    start, end = last.index('"', last.index("=")) + 1, last.rindex('"')
    raw = zlib.decompress(base64.b64decode(last[start:end], validate=True), -15)
    games = json.loads(raw.decode("utf-8"))
    if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
        raise ValueError("a replay bundle holds a list of games")
    return games


def bundle_file(rel: str, items: list[str]) -> str:
    """The whole text of the replay bundle file at ``rel`` (see :func:`encode_bundle`), as
    :func:`write_site` writes it and :func:`decode_bundle` reads it."""
    return _js_assign("TAKE5_REPLAYS", rel, json.dumps(encode_bundle(items)))


def _dump(value: Any) -> str:
    return json.dumps(_finite(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _js_assign(table: str, key: str, value_json: str) -> str:
    return (
        f"window.{table} = window.{table} || {{}};\n"
        f"window.{table}[{json.dumps(key)}] = {value_json};\n"
    )


def _write(path: Path, text: str) -> None:
    """Write ``path`` whole under a new name and rename it over the old one: a reader sees the old
    file or the new, never half of one, and a version of the site that shares the old file by a
    hard link (take5_arena/leaderboard/site_versions.py) keeps it unchanged."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _strip_logs(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the bots' log lines (``turn.logs``): those are published only on
    request."""
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not any(
        isinstance(t, dict) and "logs" in t
        for r in rounds
        if isinstance(r, dict)
        for t in r.get("turns") or []
    ):
        return record
    out = dict(record)
    out["rounds"] = [
        {**r, "turns": [{k: v for k, v in t.items() if k != "logs"} for t in r.get("turns") or []]}
        if isinstance(r, dict)
        else r
        for r in rounds
    ]
    return out


def _seat_info(seat: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(seat[k])[:MAX_INFO] for k in SEAT_INFO if seat.get(k) not in (None, "", [], {})}


@dataclass
class PublishReport:
    games: int  # games on the site
    written: int  # replays written by this run (a re-publish: the new ones, and their bundle's)
    incremental: bool


class _Digest:
    """A running digest of game ids in order (sha256 over id + newline)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, gid: str) -> None:
        self.h.update(gid.encode("utf-8") + b"\n")

    def hex(self) -> str:
        return self.h.hexdigest()


def _read_state(out: Path) -> dict[str, Any] | None:
    try:
        state = json.loads((out / "data" / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(state, dict)
        or state.get("format") != STATE_FORMAT
        or state.get("version") != LAYOUT_VERSION
    ):
        return None
    return state


def _clean_generated(out: Path) -> None:
    """Remove what an earlier publication generated (never anything else in the folder)."""
    for sub in ("replays", "data", "games"):
        folder = out / sub
        if folder.is_dir():
            shutil.rmtree(folder)
    for name in ("manifest.jsonl", "manifest.json"):
        (out / name).unlink(missing_ok=True)


def write_site(
    out_dir: str | Path,
    games: Games,
    standings: Standings,
    *,
    title: str = "take5 arena standings",
    generated_at: str | None = None,
    with_logs: bool = False,
    full: bool = False,
    parts: DocumentParts | None = None,
) -> PublishReport:
    """Write (or bring up to date) the static site in ``out_dir``; see the module text.

    ``with_logs`` publishes the bots' log lines kept in the records (off by default: a public site
    shows them only when the organiser opts in). ``full`` ignores what is already there.
    ``parts``: standings.json's crosstable and ratings over time, if already computed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = games.results
    order = games.order
    total = len(order)
    result_of: dict[str, GameResult] = {g.game_id: g for g in results}
    kept, state = _kept(out, order, with_logs=with_logs, full=full)
    bots_state: dict[str, dict[str, Any]] = (state or {}).get("bots", {})
    report = PublishReport(total, 0, kept > 0)

    def write(rel: str, text: str) -> None:
        _write(out / rel, text)

    before = {b: _dump(s) for b, s in bots_state.items()}  # a bot's summary is its state's view
    offsets = _write_replays(
        out, games, result_of, kept, state, with_logs, bots_state, write, report
    )
    entry_of = _entries(games, result_of)
    _write_game_list(entry_of, kept, total, write)
    position_of = {gid: n for n, gid in enumerate(order)}
    _write_bot_pages(results, position_of, bots_state, before, entry_of, write)
    _write_standings(
        out,
        games,
        standings,
        bots_state,
        entry_of,
        position_of,
        title,
        generated_at,
        with_logs,
        write,
        parts,
    )
    _write_manifest_and_state(out, games, standings, offsets, bots_state, with_logs, write)
    _write_competitions(out, games, result_of, position_of, write)
    return report


def _write_competitions(
    out: Path,
    games: Games,
    result_of: Mapping[str, GameResult],
    position_of: Mapping[str, int],
    write: Callable[[str, str], None],
) -> None:
    """competitions.json: what pairs the site's Swisses and knockouts (``referee verify --site``
    pairs them again), and the competitions page's data; none, none left over from an earlier
    publication."""
    if games.competitions is None:
        (out / COMPETITIONS).unlink(missing_ok=True)
        (out / COMPETITIONS_DATA).unlink(missing_ok=True)
        return
    write(COMPETITIONS, json.dumps(games.competitions, indent=1, ensure_ascii=False) + "\n")
    page = competitions_page(games.competitions, result_of, position_of)
    write(COMPETITIONS_DATA, f"window.TAKE5_COMPETITIONS = {_dump(page)};\n")


def _kept(
    out: Path, order: Sequence[str], *, with_logs: bool, full: bool
) -> tuple[int, dict[str, Any] | None]:
    """How many games of the old site stay (the first ones of ``order`` that it holds, with the
    same logs setting), and its state; a site that cannot be kept is cleaned first."""
    total = len(order)
    state = None if full else _read_state(out)
    kept = 0
    if (
        state is not None
        and state.get("with_logs") == with_logs
        and 0 < state.get("games", 0) <= total
    ):
        digest = _Digest()
        for gid in order[: state["games"]]:
            digest.add(gid)
        if digest.hex() == state.get("digest"):
            kept = int(state["games"])
    if kept == 0:
        _clean_generated(out)
        state = None
    return kept, state


def _write_replays(
    out: Path,
    games: Games,
    result_of: Mapping[str, GameResult],
    kept: int,
    state: dict[str, Any] | None,
    with_logs: bool,
    bots_state: dict[str, dict[str, Any]],
    write: Callable[[str, str], None],
    report: PublishReport,
) -> list[int]:
    """The replays' bundles and the manifest's lines, from the start of the last, partly filled
    bundle; the manifest's byte offset of each bundle."""
    order = games.order
    total = len(order)
    start = (kept // BUNDLE) * BUNDLE
    manifest_path = out / "manifest.jsonl"
    offsets: list[int] = list(
        (state or {}).get("manifest_offsets", [])
    )  # byte offset of each bundle
    size = manifest_path.stat().st_size if kept and manifest_path.exists() else 0
    keep_bytes = offsets[start // BUNDLE] if start // BUNDLE < len(offsets) else size
    offsets = offsets[: start // BUNDLE]
    if manifest_path.exists():
        with manifest_path.open("r+b") as f:
            f.truncate(keep_bytes)
    position = start
    bundle: list[str] = []
    with manifest_path.open("ab") as manifest:
        reader = games.read_records(start) if games.read_records and start < total else iter(())
        for gid, record in reader:
            if position >= total:
                break  # games recorded after the results were read (a tournament still playing)
            if gid != order[position]:
                raise ValueError(
                    f"the records are not in publishing order at game {position} ({gid})"
                )
            if not with_logs:
                record = _strip_logs(record)
            text = canonical_json(record)
            if position % BUNDLE == 0:
                offsets.append(manifest.tell())
            manifest.write(
                _manifest_line(position, gid, text, record, result_of.get(gid), games).encode(
                    "utf-8"
                )
            )
            _note_bot_info(
                bots_state,
                record,
                result_of.get(gid),
                gid,
                position,
                games.labels.get(gid),
                new=position >= kept,
            )
            result = result_of.get(gid)
            entrants = (
                list(result.entrants)
                if result
                else list(games.unrated[gid].entrants)
                if gid in games.unrated
                else []
            )
            # the seed as text too: a 64-bit seed does not survive as a JavaScript number
            label = json.dumps(games.labels.get(gid), ensure_ascii=False)
            bundle.append(
                f'{{"id":{json.dumps(gid, ensure_ascii=False)},"entrants":{_dump(entrants)},'
                f'"seed":{json.dumps(str(record.get("seed")))},"label":{label},'
                f'"record":{text}}}'
            )
            position += 1
            if position % BUNDLE == 0 or position == total:
                rel = bundle_path(position - 1)
                write(rel, bundle_file(rel, bundle))
                report.written += len(bundle)
                bundle = []
    close = getattr(reader, "close", None)
    if close is not None:
        close()
    if position != total:
        raise ValueError(f"{total - position} records of the games to publish could not be read")
    return offsets


def _write_game_list(
    entry_of: Callable[[int], dict[str, Any]],
    kept: int,
    total: int,
    write: Callable[[str, str], None],
) -> None:
    """The game list's pages, from the first one that changed."""
    first_page = kept // LIST_PAGE
    for page in range(first_page, (total + LIST_PAGE - 1) // LIST_PAGE):
        rel = page_path("data/games", page)
        rows = [entry_of(n) for n in range(page * LIST_PAGE, min(total, (page + 1) * LIST_PAGE))]
        write(rel, _js_assign("TAKE5_PAGES", rel, _dump(rows)))


def _write_bot_pages(
    results: Sequence[GameResult],
    position_of: Mapping[str, int],
    bots_state: dict[str, dict[str, Any]],
    before: Mapping[str, str],
    entry_of: Callable[[int], dict[str, Any]],
    write: Callable[[str, str], None],
) -> None:
    """Each bot's game pages (from its first one that changed) and its summary, where it changed:
    a summary is a view of the bot's state, so it is written only when that state (``before``:
    as published last time) changed - for the bots of the new games, not for every bot. A bot
    whose games are as many as last time has the same pages (the games kept are those of the last
    publication, in the same order: _kept): none of them is built again."""
    bot_counts = Counter(e for g in results for e in g.entrants)
    pending: dict[str, list[dict[str, Any]]] = {}
    old_counts = {b: int(s.get("games", 0)) for b, s in bots_state.items()}
    # where each changed bot's pages start to change (its last page as published, or the first)
    first = {
        e: (old_counts.get(e, 0) // LIST_PAGE) * LIST_PAGE
        for e, c in bot_counts.items()
        if c != old_counts.get(e, 0)
    }
    seen: dict[str, int] = {}
    for g in results:
        if first.keys().isdisjoint(g.entrants):
            continue
        n = position_of[g.game_id]
        for seat, entrant in enumerate(g.entrants):
            start = first.get(entrant)
            if start is None:
                continue
            i = seen.get(entrant, 0)
            seen[entrant] = i + 1
            if i >= start:
                entry = dict(entry_of(n))
                entry.update(
                    seat=seat,
                    place=g.places[seat],
                    penalty=g.penalties[seat],
                    faults=list(g.faults[seat]) if g.faults else [],
                )
                rows = pending.setdefault(entrant, [])
                rows.append(entry)
                if (i + 1) % LIST_PAGE == 0:
                    _flush_bot_page(write, entrant, i // LIST_PAGE, rows)
                    pending[entrant] = []
    for entrant, rows in pending.items():
        if rows:
            _flush_bot_page(write, entrant, (bot_counts[entrant] - 1) // LIST_PAGE, rows)
    for entrant in set(bot_counts) | set(bots_state):
        b = bots_state.setdefault(entrant, {})
        b["games"] = bot_counts.get(entrant, 0)
        if _dump(b) == before.get(entrant):
            continue
        summary = {
            "entrant": entrant,
            "games": b["games"],
            "pages": (b["games"] + LIST_PAGE - 1) // LIST_PAGE,
            "page_size": LIST_PAGE,
            "info": b.get("info", {}),
            "faults": b.get("faults", []),
            "fault_total": b.get("fault_total", 0),
        }
        rel = f"data/bots/{file_key(entrant)}.js"
        write(rel, _js_assign("TAKE5_BOTS", rel, _dump(summary)))


def _write_standings(
    out: Path,
    games: Games,
    standings: Standings,
    bots_state: dict[str, dict[str, Any]],
    entry_of: Callable[[int], dict[str, Any]],
    position_of: Mapping[str, int],
    title: str,
    generated_at: str | None,
    with_logs: bool,
    write: Callable[[str, str], None],
    parts: DocumentParts | None,
) -> None:
    """The standings (JSON, Markdown and the pages' data) and the pages themselves."""
    results = games.results
    total = len(games.order)
    # each bot's author as its newest record names it (``owner``): what the records give, so that
    # `referee verify --site`, publishing them again, finds the same
    owners = {
        b: str(s["info"]["owner"])
        for b, s in bots_state.items()
        if isinstance(s.get("info"), dict) and isinstance(s["info"].get("owner"), str)
    }
    doc = standings_document(
        standings,
        results,
        title=title,
        generated_at=generated_at,
        deals=games.deals,
        shared_tables=games.shared_tables,
        owners=owners,
        parts=parts,
    )
    write("standings.json", document_lines(doc))
    write(
        "standings.md",
        standings_markdown(
            standings,
            title=title,
            generated_at=generated_at,
            unrated=[(gid, u.reason) for gid, u in games.unrated.items()],
            owners=owners,
        ),
    )
    site: dict[str, Any] = {}
    site["settings"] = {k: games.settings[k] for k in SHOWN_SETTINGS if k in games.settings}
    site["bots"] = {b: s.get("info", {}) for b, s in sorted(bots_state.items())}
    site["recent_games"] = [
        entry_of(n) for n in range(total - 1, max(-1, total - 1 - RECENT_GAMES), -1)
    ]
    site["game_count"] = total
    site["game_pages"] = (total + LIST_PAGE - 1) // LIST_PAGE
    site["page_size"] = LIST_PAGE
    site["unrated"] = {
        "count": len(games.unrated),
        "games": [
            {"id": gid, "reason": u.reason, "n": position_of.get(gid)}
            for gid, u in list(games.unrated.items())[:100]
        ],
    }
    site["with_logs"] = with_logs
    site["layout"] = {"bundle": BUNDLE, "folder_files": FOLDER_FILES, "page_size": LIST_PAGE}
    if games.competitions is not None:  # the front page links to competitions.html
        found = games.competitions.get("competitions")
        site["competitions"] = len(found) if isinstance(found, list) else 0
    # the document is finite already (standings_document): only what is added here is walked
    whole = {**doc, **_finite(site)}
    text = json.dumps(whole, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    write("data/standings.js", f"window.TAKE5_STANDINGS = {text};\n")

    for name in PAGES:
        shutil.copyfile(SITE_ASSETS / name, out / name)
    (out / "assets").mkdir(exist_ok=True)
    for asset in ASSET_FILES:
        shutil.copyfile(SITE_ASSETS / asset, out / "assets" / asset)


def _write_manifest_and_state(
    out: Path,
    games: Games,
    standings: Standings,
    offsets: list[int],
    bots_state: dict[str, dict[str, Any]],
    with_logs: bool,
    write: Callable[[str, str], None],
) -> None:
    """The manifest's head and the site's state (what the next update keeps)."""
    results = games.results
    order = games.order
    total = len(order)
    manifest_head = {
        "format": MANIFEST_FORMAT,
        "version": 1,
        "games": total,
        "rated": len(results),
        "unrated": len(games.unrated),
        "with_logs": with_logs,
        "hash": "sha256 of the record as JSON with sorted keys, no spaces, UTF-8 (logs removed "
        "unless with_logs)",
        "ratings": {
            "bootstrap": standings.bootstrap,
            "seed": standings.seed,
            "prior": standings.prior,
            "k": standings.k,
            # intervals of the games up to this sequence number only (leaderboard/carried.py)
            **(
                {"intervals_through": standings.intervals_as_of[1]}
                if standings.intervals_as_of is not None
                else {}
            ),
        },
        "lines": "manifest.jsonl",
        # the pages' code, so that a changed page is found like a changed record
        "pages": page_hashes(out),
    }
    write("manifest.json", json.dumps(manifest_head, indent=1) + "\n")

    digest = _Digest()
    for gid in order:
        digest.add(gid)
    new_state = {
        "format": STATE_FORMAT,
        "version": LAYOUT_VERSION,
        "games": total,
        "digest": digest.hex(),
        "with_logs": with_logs,
        "manifest_offsets": offsets,
        "bots": bots_state,
    }
    write("data/state.json", json.dumps(new_state, ensure_ascii=False) + "\n")


def _flush_bot_page(write: Any, entrant: str, page: int, rows: list[dict[str, Any]]) -> None:
    rel = page_path(f"data/bots/{file_key(entrant)}", page)
    write(rel, _js_assign("TAKE5_PAGES", rel, _dump(rows)))


def _entries(games: Games, result_of: Mapping[str, GameResult]) -> Any:
    order, labels, unrated = games.order, games.labels, games.unrated

    def entry(n: int) -> dict[str, Any]:
        gid = order[n]
        e: dict[str, Any] = {"id": gid, "n": n}
        if gid in labels:
            e["label"] = labels[gid]
        g = result_of.get(gid)
        if g is not None:
            e.update(entrants=list(g.entrants), penalties=list(g.penalties), places=list(g.places))
        else:
            u = unrated.get(gid)
            e.update(entrants=list(u.entrants) if u else [], unrated=u.reason if u else "not rated")
        return e

    return entry


def _manifest_line(
    n: int, gid: str, text: str, record: Mapping[str, Any], result: GameResult | None, games: Games
) -> str:
    line: dict[str, Any] = {
        "n": n,
        "game": gid,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "replay": bundle_path(n),
        "rated": result is not None,
    }
    if result is not None:
        line.update(
            entrants=list(result.entrants),
            duplicate_set=result.duplicate_set,
            played_at=result.played_at,
        )
    else:
        u = games.unrated.get(gid)
        line["why"] = u.reason if u else "not rated"
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"


def _note_bot_info(
    bots: dict[str, dict[str, Any]],
    record: Mapping[str, Any],
    result: GameResult | None,
    gid: str,
    n: int,
    label: str | None,
    *,
    new: bool,
) -> None:
    """Keep each bot's newest handshake info and newest faults (with details) while streaming
    (faults only of games ``new`` to the site: a re-publish reads a few games again)."""
    seats = record.get("seats") or []
    faults = record.get("faults") or []
    for s, seat in enumerate(seats):
        if not isinstance(seat, Mapping):
            continue
        try:
            entrant = result.entrants[s] if result is not None else seat_entrant(seat)
        except (IndexError, ValueError):
            continue
        b = bots.setdefault(entrant, {})
        info = _seat_info(seat)
        if info:
            b["info"] = info
        seat_faults = faults[s] if s < len(faults) and isinstance(faults[s], list) else []
        if seat_faults and new:
            log = b.setdefault("faults", [])
            log[0:0] = [
                {
                    "game": gid,
                    "n": n,
                    "label": label,
                    "round": f.get("round"),
                    "turn": f.get("turn"),
                    "kind": str(f.get("kind", "?"))[:MAX_INFO],
                    "detail": str(f.get("detail", ""))[:2000],
                }
                for f in seat_faults
                if isinstance(f, Mapping)
            ]
            del log[BOT_FAULTS:]
            b["fault_total"] = b.get("fault_total", 0) + len(seat_faults)


def publish_site(
    out_dir: str | Path,
    *,
    results: Sequence[GameResult],
    records: Mapping[str, Mapping[str, Any]] | None = None,
    standings: Standings,
    games: Any = None,
    title: str = "take5 arena standings",
    generated_at: str | None = None,
    with_logs: bool = False,
    full: bool = False,
    parts: DocumentParts | None = None,
) -> Path:
    """Write the static site, standings.json and standings.md into ``out_dir``; return index.html.

    The games come either as ``games`` (a :class:`take5_arena.leaderboard.collection.Games`,
    streamed: what ``referee publish`` uses) or as ``records`` held in memory (game id -> record;
    every record gets a replay, games without a record are listed but not replayable). The writing
    itself, streamed, sharded and incremental, is take5_arena/leaderboard/site_build.py.
    ``parts``: standings.json's crosstable and ratings over time, if already computed.
    ``generated_at`` (any text, e.g. an ISO time) is shown and stored; leave it None for
    byte-identical output from identical inputs.
    """
    if games is None:
        games = games_from_records(records or {}, list(results))
    write_site(
        out_dir,
        games,
        standings,
        title=title,
        generated_at=generated_at,
        with_logs=with_logs,
        full=full,
        parts=parts,
    )
    return Path(out_dir) / "index.html"

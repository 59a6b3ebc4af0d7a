"""The Swisses and knockouts of a store as a published site carries them (``competitions.json``),
so that anyone re-derives every pairing from the site alone (``referee verify --site``).

What a verifier needs besides the records (which the site holds, each hashed in its manifest) is
what pairs each competition: its format's definition (table size, seed, seeding, authors kept
apart, where a final's field came from), the game settings, its entrants and every stage's games
(table and seats by entrant key, ``name@version`` as in the records' seats). The document holds
only that: none of the store's operational settings (executor, memory, paths).

One exception keeps a secret secret: a competition dealt from the public seed (``--deals
public``) would give away the deals still to come with its seed, so the seed is withheld
(``null``) and the site's check says that this competition is checked by ``referee verify
--tournament`` only. With secret deals (the default) the seed only seats and breaks ties: the
deals come from the key, committed at the start and revealed at the end.

A document read back (:func:`from_document`) is hostile input: anything not of the published
shape is a :class:`PublishedError` naming it, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..kinds import DealMode
from ..store import Store
from .errors import TournamentError
from .pairings import FORMAT_KEY, STAGE_ID, Competition, StageGame, competitions
from .plan.settings import TournamentSettings

#: The file's name in a published site, and what its ``format`` and ``version`` say.
FILE = "competitions.json"
FORMAT = "take5-competitions"
VERSION = 1


class PublishedError(TournamentError):
    """A competitions.json that is not what a site publishes: the message names what."""


def to_document(found: Sequence[Competition]) -> dict[str, Any]:
    """competitions.json of these competitions (module text)."""
    out = []
    for comp in found:
        stored = dict(comp.settings)
        definition = stored.pop(FORMAT_KEY, None)
        try:
            settings = TournamentSettings.from_json(stored)
        except TournamentError:
            continue  # unreadable settings: `verify --tournament` says so; nothing to publish
        if isinstance(definition, dict) and settings.deals is DealMode.PUBLIC:
            definition = {**definition, "seed": None}
        published: dict[str, Any] = {
            **settings.game_context(),
            "deals": settings.deals.value,
        }
        if isinstance(definition, dict):
            published[FORMAT_KEY] = definition
        out.append(
            {
                "prefix": comp.prefix,
                "created_at": comp.created_at,
                "settings": published,
                "entrants": list(comp.entrants),
                "stages": [
                    {
                        "schedule": sid,
                        "games": [
                            {"game": g.game_id, "table": g.table_no, "seats": list(g.seats)}
                            for g in games
                        ],
                    }
                    for sid, games in comp.stages
                ],
            }
        )
    return {"format": FORMAT, "version": VERSION, "competitions": out}


def store_document(store: Store) -> dict[str, Any] | None:
    """competitions.json of a store's Swisses and knockouts (None: it has none)."""
    found = competitions(store)
    return to_document(found) if found else None


def from_document(doc: Any) -> list[Competition]:
    """The competitions a published competitions.json holds; PublishedError when it is not of
    the published shape."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise PublishedError(f"{FILE} is not a {FORMAT} version {VERSION} document")
    raw = doc.get("competitions")
    if not isinstance(raw, list):
        raise PublishedError(f"{FILE}: competitions is not a list")
    out = []
    for n, c in enumerate(raw, 1):
        try:
            out.append(_competition(c))
        except (KeyError, TypeError, ValueError) as error:
            raise PublishedError(f"{FILE}: competition {n} is malformed ({error})") from None
    prefixes = [c.prefix for c in out]
    if len(set(prefixes)) != len(prefixes):
        raise PublishedError(f"{FILE}: a competition is listed twice")
    return out


def _competition(c: Any) -> Competition:
    if not isinstance(c, dict):
        raise TypeError("not an object")
    prefix = _text(c["prefix"])
    settings = c["settings"]
    if not isinstance(settings, dict):
        raise TypeError("settings is not an object")
    stages = []
    for s in _list(c["stages"]):
        sid = _text(s["schedule"])
        match = STAGE_ID.match(sid)
        if not match or f"{match[1]}-{match[2]}" != prefix:
            raise ValueError(f"stage {sid!r} is not a stage of {prefix}")
        games = tuple(
            StageGame(
                _text(g["game"]), _int(g["table"]), tuple(_text(e) for e in _list(g["seats"]))
            )
            for g in _list(s["games"])
        )
        stages.append((sid, games))
    return Competition(
        prefix,
        _text(c.get("created_at", "")),
        settings,
        tuple(_text(e) for e in _list(c["entrants"])),
        tuple(sorted(stages, key=lambda s: s[0])),
    )


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{str(value)[:40]!r} is not a list")
    return value


def seat_keys(record: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The entrant keys (``name@version``) of a record's seats (None: a seat without one)."""
    keys = []
    for seat in record.get("seats") or []:
        entrant = seat.get("entrant") if isinstance(seat, Mapping) else None
        if not isinstance(entrant, str):
            return None
        keys.append(entrant)
    return tuple(keys)


__all__ = [
    "FILE",
    "FORMAT",
    "VERSION",
    "PublishedError",
    "from_document",
    "seat_keys",
    "store_document",
    "to_document",
]

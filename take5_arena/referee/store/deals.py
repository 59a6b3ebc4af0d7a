"""A tournament's deal keys: the secret key of the current season on disk, its commitment in the
store, and its revelation (docs/security.md, "Deals").

Each season's key is derived from the tournament's root secret, ``DIR/secret/deal-root``: 32 bytes
from the operating system's cryptographic random source (:func:`secrets.token_bytes`), made with
the first key; season N's key is its HMAC-SHA256 of ``take5 deal season N``. Revealing a season's
key reveals nothing of the root nor of another season's key, and every host that holds the root
(the referees of an arena on several hosts, docs/operators/several-hosts.md) can make the key of a
season another host opened: a season the arena closes by itself (take5_arena/service/
season_switch.py) goes on on every referee. (A tournament made before the root existed keeps its
random first key; its root is made with its next one.) The key is written to
``DIR/secret/deal-key-N`` (the folder 0700, the files 0600) before its commitment (the key's
SHA-256, take5.shuffle.key_commitment) goes into the store, so that a commitment never names a key
that was lost in a crash; a key file whose season the store
does not know yet (a crash between the two writes) is taken up by the next call. A second process
making the same season's key at the same moment loses the race cleanly: the file is created with
``link``, which fails if it exists, and the loser reads the winner's file.

Nothing here prints or logs a key. :class:`SeasonKey` keeps it out of its ``repr``; the table
specs that workers get carry seeds, never the key (take5_arena/referee/tournament/run/driver.py).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from take5.shuffle import KEY_BYTES, key_commitment, parse_key

from .base import StoreError
from .deal_keys import DealSeason
from .store import Store

SECRET_DIR = "secret"
KEY_FORMAT = "take5-deal-key"
ROOT_FORMAT = "take5-deal-root"
ROOT_NAME = "deal-root"


class DealKeyError(StoreError):
    """The deal key cannot be used or revealed (missing, not the committed one, games pending)."""


@dataclass(frozen=True)
class SeasonKey:
    """The secret key of a deal season (never in a repr, a log or a record)."""

    season: int
    commitment: str
    key: bytes = field(repr=False)


def key_path(directory: Path, season: int) -> Path:
    return directory / SECRET_DIR / f"deal-key-{season}"


def current_season(store: Store) -> DealSeason | None:
    """The season whose key deals the games scheduled now (None: no key yet)."""
    seasons = store.deal_keys.seasons()
    return seasons[-1] if seasons and seasons[-1].key is None else None


def current_key(store: Store) -> SeasonKey:
    """The secret key of the current season, made (and committed to in the store) if there is
    none: at the tournament's creation, and after each revelation. DealKeyError when the key file
    is missing or is not the committed key."""
    season = current_season(store)
    if season is not None:
        return _read(store.directory, season.season, season.commitment)
    seasons = store.deal_keys.seasons()
    number = seasons[-1].season + 1 if seasons else 1
    path = key_path(store.directory, number)
    key = _read_uncommitted(path, number) or _create(path, number)
    commitment = key_commitment(key)
    if store.deal_keys.begin(number, commitment) != commitment:
        raise DealKeyError(
            f"season {number}'s deal key was committed by another process; try again"
        )
    return SeasonKey(number, commitment, key)


def _read(directory: Path, season: int, commitment: str) -> SeasonKey:
    path = key_path(directory, season)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        key = parse_key(doc["key"])
        if doc.get("format") != KEY_FORMAT or doc.get("season") != season:
            raise ValueError("not the key of this season")
    except FileNotFoundError:
        root = _read_root(directory)
        derived = None if root is None else _derive(root, season)
        if derived is None or key_commitment(derived) != commitment:
            raise DealKeyError(
                f"the secret deal key of season {season} is missing ({path}) and "
                f"{path.with_name(ROOT_NAME)} does not make it: copy the arena's {SECRET_DIR}/ "
                "folder from the host that made it, or restore it from a backup; no game can be "
                "scheduled without it"
            ) from None
        return SeasonKey(season, commitment, _write(path, season, derived))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DealKeyError(f"{path} is not a deal key: {error}") from None
    if key_commitment(key) != commitment:
        raise DealKeyError(f"{path} is not the key the tournament committed to for season {season}")
    return SeasonKey(season, commitment, key)


def _read_uncommitted(path: Path, season: int) -> bytes | None:
    """The key a crashed (or concurrent) call left for a season not committed yet, if valid."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("format") == KEY_FORMAT and doc.get("season") == season:
            return parse_key(doc["key"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    path.unlink(missing_ok=True)  # half-written or foreign: nobody committed to it
    return None


def _derive(root: bytes, season: int) -> bytes:
    """Season ``season``'s key under the root secret (see the module text)."""
    return hmac.new(root, f"take5 deal season {season}".encode(), hashlib.sha256).digest()


def _read_root(directory: Path) -> bytes | None:
    """The root secret, or None when this tournament has none (made before roots, or its
    ``secret/`` folder not copied here)."""
    path = directory / SECRET_DIR / ROOT_NAME
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise DealKeyError(f"{path} is not a deal root: {error}") from None
    try:
        if doc.get("format") != ROOT_FORMAT:
            raise ValueError("not a deal root")
        return parse_key(doc["key"])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise DealKeyError(f"{path} is not a deal root: {error}") from None


def _create(path: Path, season: int) -> bytes:
    folder = path.parent
    root = _read_root(folder.parent)
    if root is None:
        made = secrets.token_bytes(KEY_BYTES)
        root = _write(folder / ROOT_NAME, None, made)
    return _write(path, season, _derive(root, season))


def _write(path: Path, season: int | None, key: bytes) -> bytes:
    """Write ``key`` (a season's, or with ``season`` None the root) to ``path``, 0600 in a 0700
    folder, unless another process wrote that file first: then that process's key."""
    folder = path.parent
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    doc = (
        {"format": ROOT_FORMAT, "key": key.hex()}
        if season is None
        else {"format": KEY_FORMAT, "season": season, "key": key.hex()}
    )
    text = json.dumps(doc) + "\n"
    tmp = folder / f".{path.name}.{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)  # fails if another process made this file first
        except FileExistsError:
            other = _read_root(folder.parent) if season is None else _read_uncommitted(path, season)
            if other is None:
                raise DealKeyError(f"{path}: another process is making the deal key") from None
            return other
        _fsync_dir(folder)
    finally:
        tmp.unlink(missing_ok=True)
    return key


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Revealed:
    """What `referee tournament reveal` did."""

    season: int
    key: str
    """The revealed key, 64 hex digits."""
    commitment: str
    abandoned: int
    """Games of the season given up (not recorded) because they would have become predictable."""
    next: SeasonKey
    """The key of the season that starts now (its commitment is published; the key is not)."""


def reveal(store: Store, *, abandon: bool = False) -> Revealed:
    """Publish the current season's key in the store and start the next season with a new key.

    Games of the season not recorded yet would become predictable: DealKeyError unless
    ``abandon``, which gives them up (they are never played). The caller holds the run lock."""
    season = current_season(store)
    if season is None:
        if not store.deal_keys.seasons():
            raise DealKeyError(
                "this tournament deals from a public seed: there is no key to reveal"
            )
        raise DealKeyError("no deal season is open")
    key = _read(store.directory, season.season, season.commitment)
    pending = store.deal_keys.pending(season.season)
    abandoned = 0
    if pending:
        if not abandon:
            raise DealKeyError(
                f"{len(pending)} game{'s' * (len(pending) != 1)} dealt from this key "
                f"{'are' if len(pending) != 1 else 'is'} still to play (first: {pending[0]}); "
                "finish them (`referee tournament run`), or give --abandon-pending to give them up"
            )
        abandoned = store.deal_keys.abandon_pending(season.season)
    store.deal_keys.reveal(season.season, key.key.hex())
    nxt = current_key(store)
    key_path(store.directory, season.season).unlink(missing_ok=True)  # public now, in the store
    return Revealed(season.season, key.key.hex(), season.commitment, abandoned, nxt)


__all__ = [
    "KEY_FORMAT",
    "ROOT_FORMAT",
    "ROOT_NAME",
    "SECRET_DIR",
    "DealKeyError",
    "Revealed",
    "SeasonKey",
    "current_key",
    "current_season",
    "key_path",
    "reveal",
]

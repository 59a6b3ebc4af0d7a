"""Every season's deal key comes from the tournament's root secret (take5_arena/referee/store/
deals.py): a host that holds the root makes the key of a season another host opened, revealing a
key says nothing of the next, and a host without the root is told what to copy."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from take5_arena.referee.store import Store
from take5_arena.referee.store.deals import (
    ROOT_NAME,
    SECRET_DIR,
    DealKeyError,
    current_key,
    key_path,
    reveal,
)


def test_another_host_with_the_root_makes_the_next_seasons_key(tmp_path: Path) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    with Store(a, create=True) as store:
        first = current_key(store)
        secret = a / SECRET_DIR
        assert stat.S_IMODE(secret.stat().st_mode) == 0o700
        for path in secret.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        shutil.copytree(secret, tmp_path / "copied")  # the other host's copy, taken once
        second = reveal(store).next
    assert second.season == 2 and second.key != first.key
    # host B: the store (shared, here copied) and the secret folder copied before season 2
    shutil.copytree(a, b, ignore=shutil.ignore_patterns(SECRET_DIR))
    shutil.copytree(tmp_path / "copied", b / SECRET_DIR)
    assert not key_path(b, 2).exists()
    with Store(b) as store:
        made = current_key(store)
    assert made == second and key_path(b, 2).exists()
    assert stat.S_IMODE(key_path(b, 2).stat().st_mode) == 0o600


def test_without_the_root_a_missing_key_is_one_clear_error(tmp_path: Path) -> None:
    with Store(tmp_path / "A", create=True) as store:
        current_key(store)
        (tmp_path / "A" / SECRET_DIR / ROOT_NAME).unlink()
        key_path(tmp_path / "A", 1).unlink()
        with pytest.raises(DealKeyError, match=r"copy the arena's secret/ folder"):
            current_key(store)


def test_a_tournament_made_before_roots_gets_one_with_its_next_key(tmp_path: Path) -> None:
    """Its first key was random (no root); it stays the committed one, and the next season's key
    comes from a root made then."""
    directory = tmp_path / "A"
    with Store(directory, create=True) as store:
        first = current_key(store)
        (directory / SECRET_DIR / ROOT_NAME).unlink()
        assert current_key(store) == first  # read from its file, as before
        second = reveal(store).next
        assert (directory / SECRET_DIR / ROOT_NAME).exists()
        key_path(directory, 2).unlink()
        assert current_key(store) == second  # made again from the root

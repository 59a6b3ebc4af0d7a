"""`referee season divisions ... --enter`: the next season's divisions entered into each
division's directory by `submit`'s own validation, from the archive each bot played with, those
who left a division withdrawn from it; a directory whose season is not closed is refused in one
line (exit 2) before anything is entered (take5_arena/referee/tournament/promotion.py)."""

from __future__ import annotations

import json
from pathlib import Path

from support import EXAMPLES, referee

from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings

_BOTS = {"D1": ("lowest", "random", "heuristic"), "D2": ("planner", "random", "lowest")}


def _ok(*args: str) -> str:
    done = referee(*args, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _local(directory: Path) -> None:
    """Every table of ``directory`` played in the local sandbox (no image to build)."""
    with Store(directory, create=True) as store:
        chosen = TournamentSettings.from_json(store.settings.get()).updated({"sandbox": "local"})
        store.settings.set(chosen.to_json())


def _division(directory: Path, prefix: str, bots: tuple[str, ...]) -> None:
    _local(directory)
    for i, bot in enumerate(bots, 1):
        _ok("submit", str(EXAMPLES / bot), "--name", f"{prefix}{i}", "-t", str(directory))
    _ok("tournament", "run", "-t", str(directory), "-n", "2", "-g", "6", "--sandbox", "local")


def _entrants(directory: Path) -> dict[str, str | None]:
    with Store(directory, readonly=True) as store:
        return {v.name: v.artifact for v in store.versions.current()}


def test_the_next_seasons_divisions_are_entered_into_their_directories(tmp_path: Path) -> None:
    d1, d2 = tmp_path / "D1", tmp_path / "D2"
    _division(d1, "a", _BOTS["D1"])
    _division(d2, "b", _BOTS["D2"])
    before = {**_entrants(d1), **_entrants(d2)}
    # a directory whose season is not closed: refused in one line, nothing entered anywhere
    busy = tmp_path / "busy"
    _local(busy)
    _ok("season", "open", "-t", str(busy), "--cutoff", "2099-01-01", "--ends", "2099-02-01")
    done = referee(
        "season", "divisions", str(d1), str(d2), "--enter", "--into", str(d1), "--into", str(busy)
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "season 1 is not closed" in done.stderr and "Traceback" not in done.stderr
    assert {**_entrants(d1), **_entrants(d2)} == before and _entrants(busy) == {}
    # files of names have no archives to enter from
    names = tmp_path / "names.txt"
    names.write_text("a1\n")
    done = referee("season", "divisions", str(names), str(d2), "--enter")
    assert done.returncode == 2 and "needs each division as its directory" in done.stderr

    out = tmp_path / "next"
    said = json.loads(
        _ok("season", "divisions", str(d1), str(d2), "--out", str(out), "--enter", "--json")
    )
    (down,), (up,) = [[m["bot"] for m in said["moves"] if m["to"] == d] for d in (2, 1)]
    assert down.startswith("a") and up.startswith("b")
    for n, directory in ((1, d1), (2, d2)):
        listed = (out / f"division-{n}.txt").read_text().split()
        now = _entrants(directory)
        assert sorted(now) == sorted(listed)  # the moved in entered, the moved out withdrawn
        assert all(now[bot] == before[bot] for bot in listed)  # with the archive each played
    done = {(e["bot"], e["done"]) for e in said["entered"]}
    assert {(up, "entered"), (down, "entered"), (up, "withdrawn"), (down, "withdrawn")} <= done
    assert all(d in ("entered", "stays", "withdrawn") for _, d in done), done
    # entering again changes nothing: everyone stays
    again = json.loads(_ok("season", "divisions", str(d1), str(d2), "--enter", "--json"))
    assert {e["done"] for e in again["entered"]} <= {"stays", "withdrawn"}

"""A new version's first games look like any other game (issue 46): a detector bot
(tests/bots/detector) submitted again and again to a real `referee serve` guesses, at each table,
whether it is being validated or rated, from what it sees; its guesses are held to the truth (a
rated game is in the store, a validation game never is) with a one-sided Fisher exact test at 95%.

The same detector against the house bots that smoke tables used to seat (``submit(pool=False)``,
still what a local `referee submit` and a pool too small to fill a table get) is the baseline,
measured in the same run: there it tells them apart. The figures go to docs/security.md."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
from pathlib import Path

import pytest
from arena_support import Server, add_author, db_rows, wait_until
from support import referee_env

from take5_arena.referee.store import Store
from take5_arena.referee.tournament import submit
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder

DETECTOR = Path(__file__).resolve().parent / "bots" / "detector"
VERSIONS = int(os.environ.get("TAKE5_BLIND_VERSIONS", "16"))
"""How many versions of the detector are validated (one smoke table each)."""
RATED_TABLES = int(os.environ.get("TAKE5_BLIND_RATED", "16"))

OTHER = """from take5 import Bot, run


class Other(Bot):
    name = "{name}"

    def pick_card(self, view):
        hand = sorted(view.hand)
        return hand[{pick}]


if __name__ == "__main__":
    run(Other())
"""


def _bot(tmp_path: Path, name: str, pick: str) -> Path:
    folder = tmp_path / "bots" / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(OTHER.format(name=name, pick=pick))
    return folder


def _version(tmp_path: Path, n: int) -> Path:
    """The detector as a new version (its sources differ by a comment)."""
    folder = tmp_path / "detector" / str(n)
    folder.mkdir(parents=True)
    text = (DETECTOR / "bot.py").read_text()
    (folder / "bot.py").write_text(f"{text}\n# version {n}\n")
    return folder


def fisher_one_sided(a: int, b: int, c: int, d: int) -> float:
    """P of a table at least as far towards "the guess follows the truth" as [[a, b], [c, d]]
    (rows: validation, rated; columns: guessed validation, guessed rated), margins fixed."""
    row1, col1, n = a + b, a + c, a + b + c + d
    total = math.comb(n, col1)
    return (
        sum(
            math.comb(row1, x) * math.comb(n - row1, col1 - x)
            for x in range(a, min(row1, col1) + 1)
        )
        / total
    )


def _tables(seen: Path) -> dict[str, dict[str, object]]:
    """Each table the detector sat at (its process), with its games and its guess (validation if
    any game of it said so) and its first decision's delay."""
    tables: dict[str, dict[str, object]] = {}
    for line in seen.read_text().splitlines():
        note = json.loads(line)
        t = tables.setdefault(note["process"], {"games": [], "guess": "rated", "delay": None})
        t["games"].append(note["game_id"])  # type: ignore[union-attr]
        if note["guess"] == "validation":
            t["guess"] = "validation"
        if t["delay"] is None:
            t["delay"] = note["first_call"]
    return tables


def _judge(tables: dict[str, dict[str, object]], rated_ids: set[str]) -> dict[str, object]:
    counts = {("validation", "validation"): 0, ("validation", "rated"): 0}
    counts |= {("rated", "validation"): 0, ("rated", "rated"): 0}
    delays: dict[str, list[float]] = {"validation": [], "rated": []}
    for t in tables.values():
        games = set(t["games"])  # type: ignore[arg-type]
        truth = "rated" if games & rated_ids else "validation"
        assert not (truth == "rated" and games - rated_ids), "a table both rated and not"
        counts[(truth, str(t["guess"]))] += 1
        delays[truth].append(float(t["delay"]))  # type: ignore[arg-type]
    a, b = counts[("validation", "validation")], counts[("validation", "rated")]
    c, d = counts[("rated", "validation")], counts[("rated", "rated")]
    return {
        "validation tables": a + b,
        "rated tables": c + d,
        "caught (validation guessed validation)": a,
        "false alarms (rated guessed validation)": c,
        "balanced accuracy": round(((a / max(a + b, 1)) + (d / max(c + d, 1))) / 2, 3),
        "p (one-sided Fisher)": fisher_one_sided(a, b, c, d),
        "median first decision, validation / rated (s)": (
            round(statistics.median(delays["validation"] or [0.0]), 3),
            round(statistics.median(delays["rated"] or [0.0]), 3),
        ),
        "timing AUC (P a validation table starts sooner)": round(
            _auc(delays["validation"], delays["rated"]), 3
        ),
    }


def _auc(first: list[float], second: list[float]) -> float:
    """The chance that a value of ``first`` is below one of ``second`` (ties half): 0.5 when the
    time to the first decision says nothing about the kind of game."""
    if not first or not second:
        return 0.5
    wins = sum((a < b) + 0.5 * (a == b) for a in first for b in second)
    return wins / (len(first) * len(second))


def test_fisher_exact_agrees_with_a_known_table():
    # [[8, 2], [1, 5]]: scipy.stats.fisher_exact(..., alternative="greater") gives 0.0244755245
    assert abs(fisher_one_sided(8, 2, 1, 5) - 0.0244755245) < 1e-9
    assert fisher_one_sided(0, 5, 0, 5) == 1.0


@pytest.mark.slow
def test_a_detector_cannot_tell_its_validation_from_its_rated_games(tmp_path, monkeypatch):
    directory = tmp_path / "T"
    tokens = {
        n: add_author(directory, n, "--per-hour", "1000") for n in ("alice", "bob", "carol", "dave")
    }
    seen = tmp_path / "seen.jsonl"
    server = Server(
        directory,
        "--sandbox",
        "local",
        "--players",
        "3",
        "--gauntlet",
        "1",
        env=referee_env(TAKE5_TEST_SEEN=str(seen)),
    )
    try:
        # the pool: three other authors' bots, none of which plays like the house's lowest bot
        for author, pick in (
            ("bob", "-1"),
            ("carol", "len(hand) // 2"),
            ("dave", "max(0, len(hand) - 2)"),
        ):
            with server.client(tokens[author]) as client:
                reply = client.submit(
                    f"{author}bot", pack_folder(_bot(tmp_path, f"{author}bot", pick))
                )
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        with server.client(tokens["alice"]) as alice:
            for n in range(VERSIONS):
                reply = alice.submit("detector", pack_folder(_version(tmp_path, n)))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
                assert "against the pool's bots" in reply.validation, reply
        wait_until(
            lambda: len(_detector_games(directory)) >= 3 * RATED_TABLES,
            timeout=900,
            what="the detector's rated games",
            server=server,
        )
    finally:
        assert server.stop() == 0, server.log
    found = _judge(_tables(seen), _scheduled_games(directory))
    print("\npool validation:", found)
    assert found["validation tables"] == VERSIONS
    assert found["p (one-sided Fisher)"] >= 0.05, found  # no better than chance

    # The baseline, in the same run: the same detector against house-bot smoke tables.
    house_seen = tmp_path / "house.jsonl"
    monkeypatch.setenv("TAKE5_TEST_SEEN", str(house_seen))
    for n in range(VERSIONS):
        done = submit(directory, _version(tmp_path / "house", n), "detector", author="alice")
        assert "against house bots" in done.smoke
    tables = _tables(house_seen)
    tables |= {
        k: v for k, v in _tables(seen).items() if set(v["games"]) & _detector_games(directory)
    }  # type: ignore[arg-type]
    base = _judge(tables, _scheduled_games(directory))
    print("house validation (before):", base)
    assert base["p (one-sided Fisher)"] < 0.05, base  # the leak this closes


def _scheduled_games(directory: Path) -> set[str]:
    """Every game the ladder scheduled (played or cut off when the server stopped): the truth of
    "rated later". A passed version's validation games are stored too, but under a schedule of
    their own (``validation-NNNNNN``)."""
    return {gid for (gid,) in db_rows(directory, LADDER_GAMES)}


LADDER_GAMES = "SELECT game_id FROM schedule_games WHERE schedule_id LIKE 'ladder-%'"


def _detector_games(directory: Path, name: str = "detector") -> set[str]:
    """The recorded games of the ladder at which a version of the detector sat."""
    with Store(directory, readonly=True) as store:
        ids = {v.id for v in store.versions.all() if v.name == name}
    rows = db_rows(directory, "SELECT DISTINCT game_id, version_id FROM seat_results")
    return {gid for gid, vid in rows if vid in ids} & _scheduled_games(directory)


# -- the clock: timing-based detection, in the local sandbox and in Docker ------------------------

CLOCKWATCH = Path(__file__).resolve().parent / "bots" / "clockwatch"
TIMING_VERSIONS = int(os.environ.get("TAKE5_BLIND_TIMING_VERSIONS", "16"))
"""Versions of the clock-watching detector validated (one smoke table of 3 games each)."""
TIMING_RATED = int(os.environ.get("TAKE5_BLIND_TIMING_RATED", "2"))
"""Rated tables of each version played before the next version is submitted."""
FEATURES = ("first", "gap", "think", "seat")


def _clock_tables(directory: Path) -> dict[str, list[dict[str, float]]]:
    """The detector's own notes (its stderr, kept in the records' ``logs``) by kind of table
    ("validation" or "rated"): per table (a duplicate set), the median over its games of the last
    note of each game."""
    kinds = dict(
        db_rows(
            directory,
            "SELECT g.duplicate_set, substr(sg.schedule_id, 1, 6) FROM games g"
            " JOIN schedule_games sg ON sg.game_id = g.game_id",
        )
    )
    notes: dict[str, list[dict[str, float]]] = {}
    rows = db_rows(
        directory,
        "SELECT g.duplicate_set, r.record FROM results r JOIN games g ON g.game_id = r.game_id",
    )
    for dset, text in rows:
        record = json.loads(text)
        seats = [i for i, s in enumerate(record["seats"]) if s["name"] == "clockwatch"]
        if not seats:
            continue
        last = None
        for rnd in record["rounds"]:
            for turn in rnd["turns"]:
                for seat, line in turn.get("logs", []):
                    if seat == seats[0] and line.startswith("clockwatch "):
                        last = json.loads(line.removeprefix("clockwatch "))
        if last is not None and last["gap"] is not None:
            notes.setdefault(dset, []).append(last)
    tables: dict[str, list[dict[str, float]]] = {"validation": [], "rated": []}
    for dset, games in notes.items():
        kind = "validation" if kinds[dset] == "valida" else "rated"
        table = {f: statistics.median(g[f] for g in games) for f in FEATURES}
        table["began"] = min(g.get("began", 0.0) for g in games)
        table["ended"] = max(g.get("ended", 0.0) for g in games)
        tables[kind].append(table)
    return tables


def _overlap(tables: dict[str, list[dict[str, float]]]) -> dict[str, object]:
    """The time between decisions of the rated tables played while a validation table played
    (by the detector's wall clock) and of those played alone, beside the validation tables': a
    diagnosis of what the referee's load does to it (printed, not asserted)."""

    def meets(t: dict[str, float], u: dict[str, float]) -> bool:
        return t["began"] < u["ended"] and u["began"] < t["ended"]

    beside = [t["gap"] for t in tables["rated"] if any(meets(t, v) for v in tables["validation"])]
    alone = [
        t["gap"] for t in tables["rated"] if not any(meets(t, v) for v in tables["validation"])
    ]
    validation = [t["gap"] for t in tables["validation"]]
    return {
        "gap median: validation, rated beside a validation, rated alone (s)": tuple(
            round(statistics.median(x), 5) if x else None for x in (validation, beside, alone)
        ),
        "tables (validation, rated beside, rated alone)": (
            len(validation),
            len(beside),
            len(alone),
        ),
    }


Table = dict[str, float]


def _blocks(tables: dict[str, list[Table]]) -> list[tuple[list[Table], list[Table]]]:
    """The tables in blocks of time, by the detector's wall clock: each validation table with the
    rated tables that began after it and before the next validation table began. Compared within a
    block only, a validation table meets rated tables played minutes later on a machine whose load
    has drifted meanwhile (other processes, the engine's caches, the page cache); across the whole
    run that drift alone gave AUCs past chance in both directions on a quiet 2-core machine."""
    validation = sorted(tables["validation"], key=lambda t: t["began"])
    blocks: list[tuple[list[Table], list[Table]]] = [([v], []) for v in validation]
    for t in tables["rated"]:
        before = [i for i, v in enumerate(validation) if v["began"] <= t["began"]]
        if before:
            blocks[before[-1]][1].append(t)
    return [(v, r) for v, r in blocks if r]


def _blocked_auc(blocks: list[tuple[list[float], list[float]]]) -> float:
    """The chance that a validation table's figure is below a rated table's of the same block (ties
    half), over every such pair: 0.5 when the figure says nothing of the kind of table."""
    pairs = sum(len(a) * len(b) for a, b in blocks)
    wins = sum(_auc(a, b) * len(a) * len(b) for a, b in blocks)
    return wins / pairs if pairs else 0.5


def _null_interval(
    blocks: list[tuple[list[float], list[float]]], level: float = 0.95, draws: int = 20_000
) -> tuple[float, float]:
    """The ``level`` interval of :func:`_blocked_auc` when the labels say nothing: a permutation
    test (seeded) that shuffles the labels within each block, never across, so that the drift
    between blocks is in the null as it is in the figure."""
    rng = random.Random(0)
    aucs = []
    for _ in range(draws):
        shuffled = []
        for a, b in blocks:
            both = a + b
            rng.shuffle(both)
            shuffled.append((both[: len(a)], both[len(a) :]))
        aucs.append(_blocked_auc(shuffled))
    aucs.sort()
    tail = (1 - level) / 2
    return aucs[int(tail * draws)], aucs[int((1 - tail) * draws) - 1]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_clock_does_not_tell_validation_from_rated_games(tmp_path, sandbox):
    """A detector that watches the clock from inside its sandbox (tests/bots/clockwatch: the delay
    to its first decision, the wall clock between its decisions, its own think time for a fixed
    work, and the seat it was given) cannot tell its validation tables from its rated ones
    better than chance: for each figure, the AUC (the chance that a validation table's figure is
    below that of a rated table of the same block of time, :func:`_blocks`) lies in the interval
    that labels saying nothing give 99.75% of the time (a permutation test within blocks; 99%
    over the four figures together, so that CI fails by chance in one run of a hundred, not one
    of twenty: this test gates every change, and the leaks it found had AUCs of 0.09 to 0.25).
    Each version is submitted once the one before has played its rated tables, so that the two
    kinds alternate: submitted all at once, every validation table came before every rated one,
    and the machine's drift over those minutes alone put the AUC past chance in CI, one way in
    one run and the other way in the next. The seat was the leak once: the gauntlet seated a new
    version first at all its first rated tables, and a bot sees its seat, so its time to the
    first decision and between decisions (seat 0 is asked first) told them apart even where the
    seat was not read."""
    directory = tmp_path / "T"
    tokens = {
        n: add_author(directory, n, "--per-hour", "1000") for n in ("alice", "bob", "carol", "dave")
    }
    server = Server(directory, "--sandbox", sandbox, "--players", "3", "--gauntlet", "1")
    try:
        for author, pick in (("bob", "-1"), ("carol", "len(hand) // 2"), ("dave", "0")):
            with server.client(tokens[author]) as client:
                folder = _bot(tmp_path, f"{author}bot", pick)
                reply = client.submit(f"{author}bot", pack_folder(folder))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        with server.client(tokens["alice"]) as alice:
            for n in range(TIMING_VERSIONS):
                folder = tmp_path / "clockwatch" / str(n)
                folder.mkdir(parents=True)
                text = (CLOCKWATCH / "bot.py").read_text()
                (folder / "bot.py").write_text(f"{text}\n# version {n}\n")
                reply = alice.submit("clockwatch", pack_folder(folder))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
                assert "against the pool's bots" in reply.validation, reply
                # the next version only once this one's rated tables are played: validation and
                # rated tables alternate in time, and each block is compared within itself
                wait_until(
                    lambda n=n: (
                        len(_detector_games(directory, "clockwatch")) >= 3 * TIMING_RATED * (n + 1)
                    ),
                    timeout=300,
                    what="the detector's rated games",
                    server=server,
                )
    finally:
        assert server.stop() == 0, server.log
    tables = _clock_tables(directory)
    assert len(tables["validation"]) == TIMING_VERSIONS, tables
    found: dict[str, object] = {
        "sandbox": sandbox,
        "tables (validation, rated)": (len(tables["validation"]), len(tables["rated"])),
    }
    blocks = _blocks(tables)
    found["blocks"] = len(blocks)
    outside = []
    for f in FEATURES:
        a = [t[f] for t in tables["validation"]]
        b = [t[f] for t in tables["rated"]]
        figures = [([t[f] for t in v], [t[f] for t in r]) for v, r in blocks]
        # one test per figure: each at 99% / len(FEATURES) (Bonferroni), so that a detector no
        # better than chance fails the test in at most 1% of runs, not in one run of five
        level = 1 - 0.01 / len(FEATURES)
        auc, (low, high) = _blocked_auc(figures), _null_interval(figures, level)
        found[f] = {
            "median validation / rated": (statistics.median(a), statistics.median(b)),
            "AUC over all (not held)": round(_auc(a, b), 3),
            "AUC": round(auc, 3),
            f"chance {100 * level:.2f}%": (round(low, 3), round(high, 3)),
        }
        if not low <= auc <= high:
            outside.append(f)
    print(f"\nclock ({sandbox}):", json.dumps(found))
    print(f"overlap ({sandbox}):", json.dumps(_overlap(tables)))
    assert not outside, found  # no figure tells them apart better than chance

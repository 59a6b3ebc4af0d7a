"""Knockout (take5_arena/referee/tournament/plan/knockout.py and knockout.py): the bracket's
invariants on any field with random results (ties included), checked by hypothesis; a run on a
store stage by stage, killed and resumed, replayed from its games; the command with real bots."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import EXAMPLES, ROOT
from test_swiss import OPTIONS, hashed_runner, make_tournament, scheduled

from take5.shuffle import SplitMix64
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import TournamentError, run_knockout
from take5_arena.referee.tournament.plan.adaptive import PlayedGame
from take5_arena.referee.tournament.plan.knockout import (
    Bracket,
    KnockoutSettings,
    Stage,
    StageKind,
    heats,
    replay,
    seeded,
)
from take5_arena.referee.tournament.plan.schedule import ScheduleError
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.settle import played_games


def _results(stage: Stage, seed: int, tie_every: int) -> list[PlayedGame]:
    """Random places for every game of a stage; ``tie_every`` > 0 makes ties common (places drawn
    from few values)."""
    rng = SplitMix64(seed)
    spread = tie_every if tie_every > 0 else 10
    return [
        PlayedGame(g.game_id, g.seats, tuple(1 + rng.below(spread) for _ in g.seats))
        for g in stage.games
    ]


def _decide(
    entrants: Sequence[str], ks: KnockoutSettings, seed: int, tie_every: int = 0
) -> tuple[Bracket, list[list[PlayedGame]]]:
    results: list[list[PlayedGame]] = []
    while True:
        bracket = replay(entrants, ks, results)
        if bracket.next is None:
            return bracket, results
        results.append(_results(bracket.next, seed * 1000 + len(results), tie_every))


fields = st.tuples(
    st.integers(2, 6),  # k
    st.integers(0, 30),  # entrants beyond 2
    st.integers(0, 2**32),  # seed
    st.integers(0, 3),  # ties: 0 rare, else places from that many values
    st.integers(0, 2),  # tie-break stages at most
)


@settings(max_examples=80, deadline=None)
@given(fields)
def test_every_knockout_is_decided_and_places_everyone_once(
    f: tuple[int, int, int, int, int],
) -> None:
    k, extra, seed, ties, tiebreaks = f
    entrants = [f"e{i}" for i in range(2 + extra)]
    ks = KnockoutSettings(table_size=k, seed=seed, tiebreaks=tiebreaks)
    bracket, results = _decide(entrants, ks, seed, ties)
    assert bracket.outcome is not None
    assert sorted(bracket.outcome.order) == sorted(entrants)
    assert len(bracket.stages) == len(results)
    for stage in bracket.stages:
        seated = [e for h in stage.heats for e in h.entrants]
        alive = {e for e in entrants if bracket.outcome.out_in[e] >= stage.round}
        if stage.kind is StageKind.TIEBREAK:
            assert set(seated) <= alive
            continue
        # every entrant still in plays one heat (or has a bye) of each round
        assert sorted(seated) == sorted(alive)
        assert all(len(h.entrants) <= k for h in stage.heats)
        sizes = [len(h.entrants) for h in stage.heats]
        assert max(sizes) - min(sizes) <= 1
        for h in stage.heats:
            assert 1 <= h.through <= max(1, len(h.entrants) - 1)
        for t in stage.tables:  # each table in every rotation
            games = [g for g in stage.games if g.table == t.index]
            assert sorted(g.rotation for g in games) == list(range(len(t.seats)))
    indices = [t.index for s in bracket.stages for t in s.tables]
    assert indices == list(range(len(indices)))  # numbered on: game ids never repeat
    assert len({g.game_id for s in bracket.stages for g in s.games}) == sum(
        len(s.games) for s in bracket.stages
    )
    # those out later place higher
    rounds = [bracket.outcome.out_in[e] for e in bracket.outcome.order]
    assert rounds == sorted(rounds, reverse=True)


@settings(max_examples=40, deadline=None)
@given(fields)
def test_the_bracket_replays_the_same_from_its_results(f: tuple[int, int, int, int, int]) -> None:
    """A verifier with the games of each stage gets every stage and the outcome again; results
    beyond the outcome are refused."""
    k, extra, seed, ties, tiebreaks = f
    entrants = [f"e{i}" for i in range(2 + extra)]
    ks = KnockoutSettings(table_size=k, seed=seed, tiebreaks=tiebreaks)
    bracket, results = _decide(entrants, ks, seed, ties)
    again = replay(list(reversed(entrants)), ks, results)
    assert again == bracket
    with pytest.raises(ScheduleError, match="decided in"):
        replay(entrants, ks, [*results, []])


def test_a_tie_across_the_cut_is_played_off_then_drawn() -> None:
    """Every game a dead heat: each heat's cut is tied, so the tied play tie-breaks (as many as
    allowed), then the seeded draw decides; ties nobody's progress depends on play no tie-break."""
    entrants = [f"e{i}" for i in range(8)]
    ks = KnockoutSettings(table_size=4, seed=5, tiebreaks=2)
    results: list[list[PlayedGame]] = []
    while (b := replay(entrants, ks, results)).next is not None:
        results.append([PlayedGame(g.game_id, g.seats, (1,) * len(g.seats)) for g in b.next.games])
    tiebreak, heats_, final = StageKind.TIEBREAK, StageKind.HEATS, StageKind.FINAL
    assert [s.kind for s in b.stages] == [heats_, tiebreak, tiebreak, final, tiebreak, tiebreak]
    # both heats' ties in one stage, all four of each heat tied for its two places
    assert [(h.entrants, h.through) for h in b.stages[1].heats] == [
        (h.entrants, 2) for h in b.stages[0].heats
    ]
    assert [h.through for h in b.stages[4].heats] == [1]  # the final: tied for first
    assert b.outcome is not None and len(b.outcome.order) == 8
    # with no tie-breaks, the draw decides at once
    ks0 = KnockoutSettings(table_size=4, seed=5, tiebreaks=0)
    results = []
    while (b := replay(entrants, ks0, results)).next is not None:
        results.append([PlayedGame(g.game_id, g.seats, (1,) * len(g.seats)) for g in b.next.games])
    assert [s.kind for s in b.stages] == [heats_, final]


def test_snake_seeding_balances_heats_and_keeps_an_authors_bots_apart() -> None:
    field = [f"s{i:02d}" for i in range(1, 13)]  # best seed first
    ks = KnockoutSettings(table_size=4, seed=0)
    got = [h.entrants for h in heats(field, ks)]
    assert got == [
        ("s01", "s06", "s07", "s12"),
        ("s02", "s05", "s08", "s11"),
        ("s03", "s04", "s09", "s10"),
    ]
    authors = {e: ("mallory" if e in ("s01", "s06") else e) for e in field}
    apart = heats(field, KnockoutSettings(table_size=4, seed=0, authors=authors))
    assert all(not {"s01", "s06"} <= set(h.entrants) for h in apart)
    # the smaller heats go to the best seeds; a heat of one is a bye
    odd = heats(field[:5], KnockoutSettings(table_size=2))
    assert [len(h.entrants) for h in odd] == [1, 2, 2] and odd[0].entrants == ("s01",)


def test_seeding_must_name_every_entrant_once() -> None:
    entrants = ["a", "b", "c"]
    for seeding, message in (
        (("a", "b"), "leaves out: c"),
        (("a", "b", "c", "d"), "names no entrant: d"),
        (("a", "b", "b", "c"), "names twice: b"),
    ):
        with pytest.raises(ScheduleError, match=message):
            replay(entrants, KnockoutSettings(table_size=2, seeding=seeding), [])
    given_order = KnockoutSettings(table_size=2, seeding=("c", "a", "b"))
    assert seeded(entrants, given_order) == ["c", "a", "b"]


# -- the run loop on a tournament store ------------------------------------------------------------


def test_a_knockout_on_a_store_is_played_stage_by_stage_and_replayed(tmp_path: Path) -> None:
    make_tournament(tmp_path)
    lines: list[str] = []
    report = run_knockout(tmp_path, OPTIONS, runner=hashed_runner, log=lines.append)
    assert report.exit_code == 0 and report.outcome is not None
    assert len(report.outcome.order) == 10
    assert lines[0].startswith("stage 1 (round 1): 3 heats")
    assert "(final)" in lines[-1]
    stored = scheduled(tmp_path)
    assert len(stored) == len(report.stages)
    with Store(tmp_path, readonly=True) as store:
        keys = {v.id: v.key for v in store.versions.current()}
        games = played_games(store, keys)
        context = TournamentSettings.from_json(store.settings.get()).game_context()
    ks = KnockoutSettings(table_size=4, seed=3, context=context)  # public deals: from the seed
    by_stage = [[g for g in games if g.game_id in set(ids)] for _, ids in stored]
    again = replay(sorted(keys.values()), ks, by_stage)
    assert again.outcome == report.outcome
    assert [sorted(g.game_id for g in s.games) for s in again.stages] == [g for _, g in stored]
    same = run_knockout(tmp_path, OPTIONS, runner=hashed_runner)
    assert same.exit_code == 0 and same.played == 0 and same.outcome == report.outcome


KILLER = """
import os, signal, sys
sys.path[:0] = {paths!r}
import tests.test_swiss as t
from take5_arena.referee.tournament import run_knockout
count = [0]
def runner(spec, on_game=None):
    def counted(outcome):
        count[0] += 1
        if count[0] == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
        if on_game:
            on_game(outcome)
    return t.hashed_runner(spec, counted)
run_knockout({directory!r}, t.OPTIONS, runner=runner)
"""


def test_a_killed_knockout_resumes_with_the_stages_an_uninterrupted_one_plays(
    tmp_path: Path,
) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    make_tournament(whole)
    make_tournament(killed)
    expected = run_knockout(whole, OPTIONS, runner=hashed_runner)
    paths = [str(ROOT), str(ROOT / "sdk"), str(ROOT / "tests"), *sys.path]
    for kill_at in (5, 20):
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                KILLER.format(paths=paths, kill_at=kill_at, directory=str(killed)),
            ],
            check=False,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    report = run_knockout(killed, OPTIONS, runner=hashed_runner)
    assert report.exit_code == 0 and report.outcome == expected.outcome
    assert scheduled(killed) == scheduled(whole)


def test_a_seeding_names_who_plays_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    make_tournament(tmp_path)
    for seeding, message in (
        (["bot1", "nobody"], "the seeding names no entrant: nobody"),
        (["bot1", "bot2", "bot1"], "the seeding names twice: bot1"),
        (["bot1"], "two bots at least"),
    ):
        with pytest.raises(TournamentError, match=message):
            run_knockout(tmp_path, OPTIONS, bracket={"seeding": seeding}, runner=hashed_runner)
    with pytest.raises(TournamentError, match="--from-swiss: this tournament has no Swiss"):
        run_knockout(tmp_path, OPTIONS, bracket={"from_swiss": 4}, runner=hashed_runner)
    five = ["bot7", "bot3", "bot9", "bot0", "bot5"]
    report = run_knockout(tmp_path, OPTIONS, bracket={"seeding": five}, runner=hashed_runner)
    assert report.outcome is not None
    assert sorted(report.outcome.order) == sorted(f"{n}@1" for n in five)


def test_a_season_a_qualifying_swiss_then_a_knockout_of_its_top_eight(tmp_path: Path) -> None:
    """The top 8 of a finished Swiss play the knockout, seeded in the Swiss's order; verify pairs
    both again, the knockout's field from the Swiss's results."""
    from take5_arena.referee.tournament import run_swiss
    from take5_arena.referee.tournament.pairings import check_pairings

    make_tournament(tmp_path)
    swiss = run_swiss(tmp_path, OPTIONS, rounds=3, runner=hashed_runner)
    ko = run_knockout(tmp_path, OPTIONS, bracket={"from_swiss": 8}, runner=hashed_runner)
    assert ko.outcome is not None
    first = ko.stages[0]
    seeds = [e for h in first.heats for e in h.entrants]
    assert sorted(seeds) == sorted(swiss.standing[:8])
    assert [h.entrants[0] for h in first.heats] == swiss.standing[:2]  # seeds 1 and 2 lead heats
    with Store(tmp_path, readonly=True) as store:
        checks = check_pairings(store)
    assert len(checks) == 2 and all(c.problem is None and c.unchecked is None for c in checks)
    # an organiser who lets the 9th in instead of the 8th is caught
    import json
    import sqlite3

    from take5_arena.referee.store.schema import DB_NAME

    db = sqlite3.connect(tmp_path / DB_NAME)
    for sid, text in db.execute(
        "SELECT schedule_id, settings FROM schedules WHERE schedule_id LIKE 'knockout-%'"
    ).fetchall():
        settings = json.loads(text)
        settings["format"]["seeding"][7] = swiss.standing[8]
        db.execute(
            "UPDATE schedules SET settings = ? WHERE schedule_id = ?", (json.dumps(settings), sid)
        )
    db.commit()
    db.close()
    with Store(tmp_path, readonly=True) as store:
        wrong = next(c for c in check_pairings(store) if c.prefix.startswith("knockout-"))
    assert wrong.problem == f"its field is not the top 8 of swiss-{swiss.key} in order"


def test_a_withdrawal_between_the_swiss_and_the_knockout_is_not_flagged(tmp_path: Path) -> None:
    """A bot of the Swiss's top 8 withdrawn before the knockout: the run takes the top 8 still
    current, and the check takes the same 8 (it was flagged as a wrong field before), naming whom
    the field passed over; an organiser who claims a bot withdrew that is not the Swiss's is
    caught."""
    import json
    import sqlite3

    from take5_arena.referee.store.schema import DB_NAME
    from take5_arena.referee.tournament import run_swiss
    from take5_arena.referee.tournament.pairings import check_pairings

    make_tournament(tmp_path)
    swiss = run_swiss(tmp_path, OPTIONS, rounds=3, runner=hashed_runner)
    gone = swiss.standing[2]
    with Store(tmp_path) as store:
        assert store.versions.withdraw(gone.split("@")[0])
    ko = run_knockout(tmp_path, OPTIONS, bracket={"from_swiss": 8}, runner=hashed_runner)
    seeds = [e for h in ko.stages[0].heats for e in h.entrants]
    field = [e for e in swiss.standing if e != gone][:8]
    assert sorted(seeds) == sorted(field) and gone not in seeds
    with Store(tmp_path, readonly=True) as store:
        checks = {c.prefix.split("-")[0]: c for c in check_pairings(store)}
    assert checks["knockout"].problem is None and checks["knockout"].unchecked is None
    assert checks["knockout"].passed_over == (gone,)
    assert checks["swiss"].passed_over == ()

    db = sqlite3.connect(tmp_path / DB_NAME)
    for sid, text in db.execute(
        "SELECT schedule_id, settings FROM schedules WHERE schedule_id LIKE 'knockout-%'"
    ).fetchall():
        settings = json.loads(text)
        settings["format"]["qualified"]["passed_over"] = ["nobody@1"]
        db.execute(
            "UPDATE schedules SET settings = ? WHERE schedule_id = ?", (json.dumps(settings), sid)
        )
    db.commit()
    db.close()
    with Store(tmp_path, readonly=True) as store:
        wrong = next(c for c in check_pairings(store) if c.prefix.startswith("knockout-"))
    assert wrong.problem == (
        "its field's Swiss: its entrants passed over are not the Swiss's, each once"
    )


def test_referee_tournament_run_format_knockout_with_local_bots(tmp_path: Path) -> None:
    """The command, real games of the example bots: 5 bots at tables of 2, the best seed's bye
    in round 1, seeded from a file; usage errors are one line, exit 2."""
    from click.testing import CliRunner

    from take5_arena.cli.main import main as cli
    from take5_arena.referee.tournament import submit

    names = ["heuristic0", "lowest1", "random2", "lowest3", "random4"]
    for name in names:
        submit(tmp_path, EXAMPLES / name.rstrip("01234"), name, sandbox="local")
    seeding = tmp_path / "seeding.txt"
    seeding.write_text("\n".join(names) + "\n")
    base = ["tournament", "run", "--tournament", str(tmp_path), "--sandbox", "local"]
    out = CliRunner().invoke(
        cli, [*base, "--players", "2", "--format", "knockout", "--seeding", str(seeding)]
    )
    assert out.exit_code == 0, out.output
    assert re.search(r"Knockout: \d+ stages, \d+ games .*; decided", out.output)
    placed = re.findall(r"^ +\d\. (\w+) +(final|out in round \d)", out.output, re.MULTILINE)
    assert sorted(n for n, _ in placed) == sorted(names)
    assert [how for _, how in placed[:2]] == ["final", "final"]
    assert "bye: heuristic0" in out.output  # the best seed sits out round 1
    out = CliRunner().invoke(cli, ["verify", "--tournament", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert re.search(r"pairings: knockout-\w+: \d+ stages paired again", out.output)
    out = CliRunner().invoke(cli, [*base, "--format", "knockout", "--dry-run"])
    assert out.exit_code == 2 and "no --dry-run" in out.output
    seeding.write_text("heuristic0\nnobody\n")
    out = CliRunner().invoke(cli, [*base, "--format", "knockout", "--seeding", str(seeding)])
    assert out.exit_code == 2 and "the seeding names no entrant: nobody" in out.output
    assert "Traceback" not in out.output
    out = CliRunner().invoke(cli, [*base, "--advance", "1"])
    assert out.exit_code == 2 and "are for --format knockout" in out.output


def test_pairings_are_paired_again_and_a_moved_bot_is_caught(tmp_path: Path) -> None:
    """check_pairings (``referee verify --tournament``) pairs a knockout's and a Swiss's stages
    again from their results; an organiser who swaps two bots between heats after the draw (the
    games then played that way) is caught, naming the stage."""
    import json
    import sqlite3

    from take5_arena.referee.store.schema import DB_NAME
    from take5_arena.referee.tournament import run_swiss
    from take5_arena.referee.tournament.pairings import check_pairings

    make_tournament(tmp_path)
    report = run_knockout(tmp_path, OPTIONS, runner=hashed_runner)
    swiss = run_swiss(tmp_path, OPTIONS, rounds=2, runner=hashed_runner)
    with Store(tmp_path, readonly=True) as store:
        checks = {c.prefix: c for c in check_pairings(store)}
        ids = {v.key: v.id for v in store.versions.all()}
    assert checks[f"knockout-{report.key}"].stages == len(report.stages)
    assert checks[f"swiss-{swiss.key}"].stages == 2
    assert all(c.problem is None for c in checks.values())
    # swap one bot of heat 1 with one of heat 2 in every game of stage 1
    first = report.stages[0]
    a, b = first.heats[0].entrants[0], first.heats[1].entrants[0]
    swap = {ids[a]: ids[b], ids[b]: ids[a]}
    db = sqlite3.connect(tmp_path / DB_NAME)
    rows = db.execute(
        "SELECT g.game_id, g.seats FROM games g JOIN schedule_games s ON s.game_id = g.game_id "
        "WHERE s.schedule_id = ?",
        (f"knockout-{report.key}-0001",),
    ).fetchall()
    for game_id, seats in rows:
        moved = [swap.get(v, v) for v in json.loads(seats)]
        db.execute("UPDATE games SET seats = ? WHERE game_id = ?", (json.dumps(moved), game_id))
    db.commit()
    db.close()
    with Store(tmp_path, readonly=True) as store:
        checks = {c.prefix: c for c in check_pairings(store)}
    wrong = checks[f"knockout-{report.key}"]
    assert wrong.stages == 0 and wrong.problem == (
        f"stage 1 (knockout-{report.key}-0001) is not the pairing its results before it give"
    )
    assert checks[f"swiss-{swiss.key}"].problem is None
    # a stage stored before stages held their definition: reported, not a finding
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute(
        "UPDATE schedules SET settings = json_remove(settings, '$.format') WHERE schedule_id = ?",
        (f"swiss-{swiss.key}-0001",),
    )
    db.commit()
    db.close()
    with Store(tmp_path, readonly=True) as store:
        old = next(c for c in check_pairings(store) if c.prefix == f"swiss-{swiss.key}")
    assert old.problem is None and old.unchecked == "stored without its format's definition"


def test_a_season_from_entries_to_archive_by_the_documented_commands(tmp_path: Path) -> None:
    """docs/organisers/seasons.md, with the example bots in local processes: entries, a qualifying
    Swiss, a knockout of its top 4, the key revealed, the site published; `verify --tournament`
    and `verify --site` pass, and the pairings check names both phases."""
    from click.testing import CliRunner

    from take5_arena.cli.main import main as cli

    t = str(tmp_path / "spring")
    runner = CliRunner()

    def ok(*args: str) -> str:
        out = runner.invoke(cli, list(args))
        assert out.exit_code == 0, (args, out.output)
        return out.output

    for i, bot in enumerate(("heuristic", "lowest", "random", "heuristic", "lowest", "random")):
        ok(
            "submit",
            str(EXAMPLES / bot),
            "--name",
            f"{bot}{i}",
            "--author",
            f"a{i}",
            "--tournament",
            t,
            "--sandbox",
            "local",
        )
    run = ["tournament", "run", "--tournament", t, "--sandbox", "local", "--players", "2"]
    ok(*run, "--format", "swiss", "--rounds", "2")
    final = ok(*run, "--format", "knockout", "--from-swiss", "4", "--final-deals", "2")
    assert "decided" in final
    ok("tournament", "reveal", "--tournament", t)
    site = str(tmp_path / "site")
    ok("publish", "--tournament", t, "--out", site)
    checked = ok("verify", "--tournament", t)
    assert re.search(r"pairings: swiss-\w+: 2 stages paired again", checked)
    assert re.search(r"pairings: knockout-\w+: \d+ stages paired again", checked)
    assert "dealt from revealed keys, every seed checked" in checked
    ok("verify", "--site", site)

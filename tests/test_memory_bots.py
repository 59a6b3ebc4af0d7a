"""The match and table loops with bots in the referee's own process (take5_arena/referee/match/
memory.py): no processes, no gRPC, so each test runs in well under a second.

Everything but the transport is the real thing: the turn protocol, the fault policy and the records
(checked against the rules), and for tables the tournament's own driver, spec builder and store.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from take5 import Settings, View
from take5.bots import HeuristicBot, LowestBot, RandomBot
from take5.clock import ClockKind
from take5.record import verify_record, without_times
from take5_arena.referee.match import CallLimits, Match, MatchConfig, in_memory
from take5_arena.referee.match.faults import FaultKind
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import (
    GameOutcome,
    TableSpec,
    TournamentSettings,
    play_table,
    run_tournament,
    table_specs,
)
from take5_arena.referee.tournament.run import table as table_module


def test_a_match_of_bots_in_memory_writes_records_that_verify() -> None:
    refs, launcher = in_memory([LowestBot(), RandomBot(7), HeuristicBot()])
    with Match(refs, MatchConfig(games=3, seed=11), launcher=launcher) as match:
        result = match.play()
    assert [e.name for e in result.entries] == ["lowest", "random", "heuristic"]
    assert result.fault_count == 0 and result.exit_code == 0
    for game in result.games:
        assert game.document is not None and verify_record(game.document) is None
        assert [s["name"] for s in game.document["seats"]] == ["lowest", "random", "heuristic"]
    # Duplicate deals: one seed, every rotation.
    assert [(g.seed, g.rotation) for g in result.games] == [(11, 0), (11, 1), (11, 2)]


def test_a_match_in_memory_plays_the_same_game_as_the_engine_for_the_same_seed() -> None:
    """The same bots in memory twice: the same records (the transport changes nothing), but for
    the decision times they measured."""
    docs = []
    for _ in range(2):
        refs, launcher = in_memory([LowestBot(), RandomBot(3)])
        with Match(refs, MatchConfig(games=2, seed=5), launcher=launcher) as match:
            docs.append([without_times(g.document or {}) for g in match.play().games])
    assert docs[0] == docs[1]


def test_a_function_is_a_bot() -> None:
    refs, launcher = in_memory([lambda view: max(view.hand), LowestBot()], names=["highest"])
    with Match(refs, MatchConfig(games=2), launcher=launcher) as match:
        result = match.play()
    assert result.fault_count == 0
    first = result.games[0].document
    assert first is not None
    card = next(card for seat, card in first["rounds"][0]["turns"][0]["plays"] if seat == 0)
    assert card == max(first["rounds"][0]["hands"][0])


@pytest.mark.parametrize(
    ("strategy", "kind", "detail"),
    [
        (lambda view: 999, FaultKind.ILLEGAL_CARD, "card 999 is not in the hand"),
        (lambda view: str(min(view.hand)), FaultKind.ERROR, "a str, not an int: return"),
        (lambda view: None, FaultKind.ERROR, "did you forget `return`?"),
        (lambda view: 1 / 0, FaultKind.ERROR, "the bot raised ZeroDivisionError"),
    ],
)
def test_faults_of_a_bot_in_memory_are_the_referees(strategy, kind, detail) -> None:
    """What a bot gets wrong is judged by the referee's code, as over gRPC: a fault with the
    default move played, and a forfeit after max_faults of them."""
    refs, launcher = in_memory([strategy, LowestBot()], names=["faulty"])
    config = MatchConfig(games=1, calls=CallLimits(max_faults=2))
    with Match(refs, config, launcher=launcher) as match:
        result = match.play()
    game = result.games[0]
    assert [f["kind"] for f in game.faults[0]] == [kind, kind]
    assert detail in game.faults[0][0]["detail"]
    assert game.forfeited == (0,) and game.places[0] == 2
    assert game.document is not None and verify_record(game.document) is None
    assert result.exit_code == 1


def test_a_slow_answer_is_a_timeout() -> None:
    """On the wall clock: under the CPU clock a bot that sleeps spends none of its time."""

    def slow(view: View) -> int:
        time.sleep(0.05)  # five times the deadline below: late however loaded the host is
        return min(view.hand)

    refs, launcher = in_memory([slow, LowestBot()], names=["slow"])
    calls = CallLimits(timeout=0.01, max_faults=1, clock=ClockKind.WALL)
    config = MatchConfig(games=1, calls=calls)
    with Match(refs, config, launcher=launcher) as match:
        game = match.play().games[0]
    assert game.faults[0][0]["kind"] == FaultKind.TIMEOUT
    assert game.faults[0][0]["detail"] == "no answer to PickCard within 0.01 s (wall clock)"


def test_the_match_hands_the_settings_it_was_given_to_the_game() -> None:
    """The game's settings and the call limits are the caller's objects, down to take5.Game."""
    rules = Settings(players=2, variant="professional", threshold=20)
    calls = CallLimits(timeout=0.5, max_faults=1)
    refs, launcher = in_memory([LowestBot(), RandomBot(1)])
    config = MatchConfig(games=1, game=rules, calls=calls)
    with Match(refs, config, launcher=launcher) as match:
        assert match.config.settings(2) is rules
        game = match.play().games[0]
    assert game.document is not None
    assert game.document["settings"] == rules.to_dict()
    assert "draft" in game.document["rounds"][0]
    with pytest.raises(ValueError, match="its game settings are for 2"):
        Match([*refs, refs[0]], config, launcher=launcher)


# -- tables: the tournament's driver, spec builder and store, with bots in memory ----------------

BOTS = {"lowest": LowestBot, "random": lambda: RandomBot(1), "heuristic": HeuristicBot}


def memory_runner(spec: TableSpec, on_game=None) -> list[GameOutcome]:
    """run_table's stand-in: the same play_table, with each seat's bot in memory."""
    out: list[GameOutcome] = []

    def emit(outcome: GameOutcome) -> None:
        out.append(outcome)
        if on_game is not None:
            on_game(outcome)

    refs, launcher = in_memory([BOTS[seat.name]() for seat in spec.seats])
    play_table(spec, refs, launcher, emit)
    return out


def entrants(directory: Path) -> None:
    with Store(directory, create=True) as store:
        for name in BOTS:
            store.versions.add(name, source_hash=name, bot_dir=f"/nowhere/{name}", kind="python")


def test_a_tournament_of_bots_in_memory(tmp_path: Path) -> None:
    entrants(tmp_path)
    options = {"players": 3, "games": 6, "sandbox": "local", "concurrency": 2}
    report = run_tournament(tmp_path, options, runner=memory_runner)
    assert report.exit_code == 0 and report.played == 6 and report.total == 6
    with Store(tmp_path) as store:
        sid = store.schedules.current()["schedule_id"]
        versions = {v.id: v for v in store.versions.all()}
        games = {g.game_id: g for g in store.schedules.games(sid)}
        assert set(games) == {gid for gid, _ in store.records.all(sid)}
        for gid, record in store.records.all(sid):
            assert verify_record(record) is None
            seated = [versions[v] for v in games[gid].seats]
            assert [s["entrant"] for s in record["seats"]] == [v.key for v in seated]
            assert [s["bot_name"] for s in record["seats"]] == [v.name for v in seated]
    again = run_tournament(tmp_path, {}, runner=memory_runner)
    assert again.played == 0 and again.done == 6  # nothing twice


def test_the_settings_reach_the_game_unchanged(tmp_path: Path, monkeypatch) -> None:
    """From the stored settings to each table's spec to the match: the same objects."""
    entrants(tmp_path)
    seen: list[tuple[TableSpec, MatchConfig]] = []
    real = table_module.Match

    def recording_match(refs, config, **kw):  # type: ignore[no-untyped-def]
        seen.append((spec_now[0], config))
        return real(refs, config, **kw)

    spec_now: list[TableSpec] = []

    def runner(spec: TableSpec, on_game=None) -> list[GameOutcome]:
        spec_now[:] = [spec]
        return memory_runner(spec, on_game)

    monkeypatch.setattr(table_module, "Match", recording_match)
    options = {"players": 3, "games": 3, "threshold": 30, "timeout": 0.7, "sandbox": "local"}
    assert run_tournament(tmp_path, options, runner=runner).exit_code == 0
    with Store(tmp_path) as store:
        settings = TournamentSettings.from_json(store.settings.get())
        specs = table_specs(store, store.schedules.current()["schedule_id"], settings)
    assert specs == []  # every game recorded
    assert settings.game.threshold == 30 and settings.calls.timeout == 0.7
    for spec, config in seen:
        assert config.game is spec.settings.game and config.calls is spec.settings.calls
        assert config.settings(3) is spec.settings.game

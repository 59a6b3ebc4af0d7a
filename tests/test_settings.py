"""A tournament's settings: one frozen type, read from and written to the store's JSON as before
it existed, checked where it is built (take5_arena/referee/tournament/plan/settings.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from take5 import Settings
from take5.clock import ClockKind
from take5.rules import EndRule, Variant
from take5_arena.referee import defaults
from take5_arena.referee.kinds import DealMode, SandboxKind
from take5_arena.referee.sandbox.limits import SandboxLimits
from take5_arena.referee.tournament import TournamentError, TournamentSettings
from take5_arena.referee.tournament.plan.settings import KEYS

#: The settings JSON a store made before this type existed holds (take5_arena/referee/
#: tournament/settings.py's DEFAULTS at main b3b9801, resolved with a few options, as `tournament
#: run` saved it).
OLD_STORE_JSON = {
    "base_image": "take5/python:3.11",
    "concurrency": 2,
    "cpus": 1.0,
    "duplicate": True,
    "end_rule": "at-or-above",
    "executor": "auto",
    "games": 6,
    "max_faults": 3,
    "memory": "256m",
    "output_budget": 50000000,
    "pids": 64,
    "players": 3,
    "retries": 3,
    "sandbox": "local",
    "seed": 0,
    "start_timeout": 10.0,
    "threshold": 66,
    "timeout": 1.0,
    "variant": "standard",
}


def test_an_old_stores_settings_read_back_the_same() -> None:
    settings = TournamentSettings.from_json(OLD_STORE_JSON)
    saved = settings.to_json()
    # what it holds reads back the same; the keys added since take their defaults (the container
    # runtime: $TAKE5_RUNTIME's; no bank), except its deals and its clock: they were (and stay)
    # from its seed and on the wall clock, the only clock before time controls
    added = {
        "runtime": defaults.RUNTIME,
        "bot_memory": defaults.BOT_MEMORY,
        "deals": "public",
        "separate_authors": True,
        "time_control": None,
        "time_cap": None,
        "clock": "wall",
    }
    assert {key: saved[key] for key in OLD_STORE_JSON} == OLD_STORE_JSON
    assert {key: saved[key] for key in added} == added
    assert settings.deals is DealMode.PUBLIC
    assert TournamentSettings.from_json(saved) == settings
    assert settings.game == Settings(players=3, variant=Variant.STANDARD, threshold=66)
    assert settings.calls.start_timeout == 10.0  # what the store says, not today's default
    assert settings.calls.clock is ClockKind.WALL and "wall clock" in settings.describe()
    assert settings.sandbox is SandboxKind.LOCAL
    assert settings.limits == SandboxLimits(memory="256m", cpus=1.0, pids=64)
    assert json.loads(json.dumps(saved)) == saved


def test_a_new_tournament_deals_secretly_and_a_given_seed_is_public() -> None:
    new = TournamentSettings.from_json({})
    assert new.deals is DealMode.SECRET and "secret deals" in new.describe()
    seeded = new.updated({"seed": 7})
    assert seeded.deals is DealMode.PUBLIC and seeded.seed == 7
    assert "deals from public seed 7 (predictable)" in seeded.describe()
    assert new.updated({"seed": 7, "deals": "secret"}).deals is DealMode.SECRET  # seating only
    assert TournamentSettings.from_json(new.to_json()) == new
    with pytest.raises(TournamentError, match="deals must be secret or public"):
        new.updated({"deals": "maybe"})


def test_missing_keys_take_their_defaults_and_unknown_keys_are_ignored() -> None:
    settings = TournamentSettings.from_json({"players": 5, "from_a_newer_referee": 1})
    assert settings.players == 5
    assert settings.calls.start_timeout == defaults.START_TIMEOUT
    assert settings.sandbox == defaults.TOURNAMENT_SANDBOX
    assert set(settings.to_json()) == set(KEYS)
    assert TournamentSettings.from_json({}) == TournamentSettings()


def test_options_given_now_replace_the_stored_ones() -> None:
    stored = TournamentSettings.from_json(OLD_STORE_JSON)
    same = stored.updated({"players": None, "timeout": None})
    assert same is stored
    changed = stored.updated({"threshold": 40, "end_rule": "above", "cpus": 2, "timeout": 2})
    assert changed.game == Settings(players=3, threshold=40, end_rule=EndRule.ABOVE)
    assert changed.limits.cpus == 2.0 and changed.calls.timeout == 2.0
    assert isinstance(changed.calls.timeout, float)
    with pytest.raises(TypeError, match="not a tournament setting: colour"):
        stored.updated({"colour": "red"})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"players": 11}, "2 to 10 players"),
        ({"variant": "chess"}, "unknown variant"),
        ({"threshold": 0}, "threshold must be a whole number"),
        ({"timeout": "1"}, "timeout must be a number"),
        ({"timeout": 0}, "timeout must be positive"),
        ({"max_faults": 0}, "max_faults must be at least 1"),
        ({"sandbox": "vm"}, "unknown sandbox 'vm'"),
        ({"memory": "lots"}, "expected a size like '256m'"),
        ({"pids": 2}, "pids must be >= 8"),
        ({"games": 0}, "games must be at least 1"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"retries": -1}, "retries must be a whole number"),
        ({"duplicate": "yes"}, "duplicate must be true or false"),
    ],
)
def test_a_bad_setting_is_refused_with_its_name(change: dict[str, object], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        TournamentSettings.from_json({**OLD_STORE_JSON, **change})


def test_the_settings_are_frozen() -> None:
    settings = TournamentSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 1  # type: ignore[misc]
    assert hash(settings.limits) == hash(SandboxLimits(memory="256m", cpus=1.0, pids=64))


def test_the_game_context_is_what_game_ids_were_made_from() -> None:
    """Changing it would change every game id of every stored schedule."""
    context = TournamentSettings.from_json(OLD_STORE_JSON).game_context()
    assert context == {"variant": "standard", "threshold": 66, "end_rule": "at-or-above"}
    assert all(type(v) in (str, int) for v in context.values())


def test_match_and_tournament_build_their_call_limits_alike():
    """One builder of call limits (CallLimits.build) for `referee match`'s options and a
    tournament's settings: the same check, in the same words, whichever command."""
    from click import UsageError

    from take5_arena.cli.options import limits_from_options
    from take5_arena.referee.match.config import CallLimits

    given = {
        "timeout": 1.0,
        "time_control": "10+0.1",
        "time_cap": 0.5,
        "clock": "wall",
        "wall_factor": 3,
        "start_timeout": 30.0,
        "start_wall": 60.0,
        "max_faults": 3,
        "ponder": "charge",  # given: settings saved without it predate the rule and read "allow"
    }
    from_options = limits_from_options(**given)
    settings = TournamentSettings.from_json({"players": 2, **given})
    assert from_options == settings.calls == CallLimits.build(**given)
    no_control = {**given, "time_control": None}
    with pytest.raises(UsageError) as usage:
        limits_from_options(**no_control)
    with pytest.raises(TournamentError) as stored:
        TournamentSettings.from_json({"players": 2, **no_control})
    assert str(usage.value.message) == str(stored.value)

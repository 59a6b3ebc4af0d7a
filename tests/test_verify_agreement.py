"""The engine and the independent checker (take5.audit) agree, on thousands of generated games.

Both must accept every record the engine writes (2-10 players, both variants, both end rules,
thresholds 1-100), and on records with one value changed they must reach the same verdict: a
mutation only one of them notices is a bug in the other. TAKE5_AGREEMENT_EXAMPLES sets the number of
games (2,000 by default; the nightly-style run uses more).
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from take5 import RandomPlayer, Settings, play_game
from take5.audit import audit_record, check_structure
from take5.record import MalformedRecord, replay_record

EXAMPLES = int(os.environ.get("TAKE5_AGREEMENT_EXAMPLES", "2000"))


@st.composite
def records(draw) -> dict[str, Any]:
    variant = draw(st.sampled_from(["standard", "professional"]))
    players = draw(st.integers(2, 10 if variant == "standard" else 6))
    threshold = draw(st.integers(1, 100))
    end_rule = draw(st.sampled_from(["at-or-above", "above"]))
    seed = draw(st.integers(-(2**63), 2**64 - 1))
    rotation = draw(st.integers(0, players - 1))
    decisions = draw(st.integers(0, 2**32))
    game = play_game(
        [RandomPlayer(decisions + i) for i in range(players)],
        Settings(players, variant, threshold, end_rule),
        seed,
        rotation=rotation,
    )
    return json.loads(json.dumps(game.record()))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_both_checkers_accept_every_engine_record(doc):
    assert audit_record(doc) is None
    assert replay_record(doc) is None


def verdict(check, doc) -> str:
    try:
        return "invalid" if check(doc) is not None else "valid"
    except MalformedRecord:
        return "malformed"


def leaves(doc: Any, path: tuple = ()) -> list[tuple]:
    """Paths to every int in a record's rounds and result (what an edit would change)."""
    if isinstance(doc, dict):
        return [p for key, value in doc.items() for p in leaves(value, path + (key,))]
    if isinstance(doc, list):
        return [p for index, value in enumerate(doc) for p in leaves(value, path + (index,))]
    return [path] if isinstance(doc, int) and not isinstance(doc, bool) else []


@settings(
    max_examples=max(EXAMPLES // 4, 50), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(records(), st.data())
def test_both_checkers_reach_the_same_verdict_on_an_edited_record(doc, data):
    paths = [p for p in leaves(doc) if p[0] in ("rounds", "result")]
    path = data.draw(st.sampled_from(paths))
    delta = data.draw(st.sampled_from([-1, 1, 2, 13]))
    edited = copy.deepcopy(doc)
    target = edited
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] += delta
    try:
        check_structure(edited)
    except MalformedRecord:
        return  # out of range: refused by the shared shape check before either checker runs
    assert verdict(audit_record, edited) == verdict(replay_record, edited), path
    assert verdict(audit_record, edited) != "valid", path

"""`referee verify` on generated and mutated JSON: a verdict and exit code 0 or 1, never a
traceback.

Most examples run in-process (`take5.record.judge`, and the click command through CliRunner) so that
the fuzz stays fast enough for CI; a few run the real command in a subprocess, whose timeout is the
bound on time (a hang fails the test; no speed is asserted).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from take5 import RandomPlayer, Settings, play_game
from take5.record import Verdict, judge, parse_record
from take5_arena.cli.main import main


def _record(players: int, variant: str, seed: int) -> dict[str, Any]:
    game = play_game(
        [RandomPlayer(seed + i) for i in range(players)], Settings(players, variant, 12), seed
    )
    return json.loads(json.dumps(game.record(seats=[{"name": f"s{i}"} for i in range(players)])))


BASES = [_record(2, "standard", 1), _record(3, "professional", 2)]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-3, 110)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(
        ["take5-record", "standard", "professional", "low-card", "sixth-card", "above"]
    )
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=25,
)


def _nodes(doc: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _nodes(value, path + (key,))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _nodes(value, path + (index,))
    return out


@st.composite
def mutated_records(draw) -> Any:
    doc = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    for _ in range(draw(st.integers(1, 3))):
        nodes = [p for p in _nodes(doc) if p]
        if not nodes:
            break
        path = draw(st.sampled_from(nodes))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "duplicate", "insert", "nudge"]))
        if action == "replace":
            parent[key] = draw(json_values)
        elif action == "delete":
            del parent[key]
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(parent[key])))
        elif action == "insert" and isinstance(parent[key], (list, dict)):
            target = parent[key]
            if isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(json_values))
            else:
                target[draw(st.text(max_size=8))] = draw(json_values)
        elif (
            action == "nudge" and isinstance(parent[key], int) and not isinstance(parent[key], bool)
        ):
            parent[key] += draw(st.sampled_from([-1, 1, 104, 10**30]))
    return doc


documents = (
    json_values
    | st.fixed_dictionaries(
        {"format": st.just("take5-record"), "version": st.just(1)},
        optional=dict.fromkeys(
            ("settings", "seed", "rotation", "seats", "rounds", "result", "faults", "complete"),
            json_values,
        ),
    )
    | mutated_records()
)


def _text(doc: Any) -> str:
    return json.dumps(doc)  # NaN and Infinity stay in: Python's json reads them back


@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(documents)
def test_judge_never_raises(doc):
    judgement = judge(doc)
    assert judgement.verdict in (Verdict.VALID, Verdict.INVALID, Verdict.MALFORMED)
    assert "\n" not in judgement.reason
    again = judge(parse_record(_text(doc)))
    assert again.verdict in (Verdict.VALID, Verdict.INVALID, Verdict.MALFORMED)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(documents, min_size=1, max_size=3))
def test_cli_verify_exit_code_is_0_or_1(tmp_path_factory, docs):
    folder = tmp_path_factory.mktemp("records")
    for index, doc in enumerate(docs):
        (folder / f"r{index}.json").write_text(_text(doc))
    result = CliRunner().invoke(main, ["verify", str(folder)])
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    assert f"of {len(docs)} records valid" in result.output


@pytest.mark.parametrize(
    "text",
    [
        "[" * 200_000 + "]" * 200_000,
        '{"format": "take5-record", "version": 1, "seed": ' + "9" * 5000 + "}",
        "\x00\xff",
        "",
        '{"format": "take5-record", "version": 1, "settings": {"players": 2}, "seed": 1, "seats": '
        "[{}, {}]}",
    ],
    ids=["deep", "5000-digit-seed", "binary", "empty", "seats-without-names"],
)
def test_cli_verify_subprocess_on_hostile_files(tmp_path, text):
    (tmp_path / "bad.json").write_bytes(text.encode("latin-1"))
    (tmp_path / "good.json").write_text(_text(BASES[0]))
    result = subprocess.run(
        [sys.executable, "-m", "take5_arena", "verify", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert "bad.json: MALFORMED: " in result.stdout and "good.json: ok" in result.stdout

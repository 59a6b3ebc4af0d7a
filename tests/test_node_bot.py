"""The Node.js bot (example_bots/node), written from the .proto alone, plays real matches.

It proves the protocol is language-neutral. Needs Node.js and npm: without them these tests skip and
say so; the bot runs from a temporary copy, whose `npm install` runs when the checkout has no
node_modules (the npm registry must be reachable; in CI a failed install fails the tests instead of
skipping them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from take5.record import load_record, verify_record

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def node_bot(node_example: Path) -> Path:
    node = shutil.which("node")
    assert node is not None  # node_example has made sure
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 18:
        pytest.skip(f"Node.js {version} is too old for @grpc/grpc-js (needs 18 or later)")
    return node_example


def match(*args: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], list[Path]]:
    records = tmp_path / "records"
    proc = subprocess.run(
        [sys.executable, "-m", "take5_arena", "match", *args, "--records", str(records), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    return proc, sorted(records.glob("*.json"))


def test_node_bot_plays_a_clean_match(node_bot: Path, tmp_path: Path) -> None:
    proc, files = match(
        str(node_bot),
        str(ROOT / "example_bots" / "random"),
        str(ROOT / "example_bots" / "heuristic"),
        "--games",
        "3",
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    node = doc["bots"][0]
    assert node["name"] == "node-greedy"
    assert node["protocol_version"] == "1.0" and node["sdk"].startswith("grpc-js")
    assert len(files) == 3
    chose_rows = 0
    for path in files:
        record = load_record(path)
        assert verify_record(record) is None
        assert record["faults"][0] == []
        chose_rows += sum(
            1
            for rnd in record["rounds"]
            for turn in rnd["turns"]
            for take in turn["takes"]
            if take["seat"] == 0 and take["reason"] == "low-card"
        )
    assert chose_rows > 0  # ChooseRow was exercised, and answered without a fault


def test_node_bot_drafts_in_the_professional_variant(node_bot: Path, tmp_path: Path) -> None:
    proc, files = match(
        str(node_bot),
        str(ROOT / "example_bots" / "lowest"),
        "--variant",
        "professional",
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = load_record(files[0])
    assert verify_record(record) is None
    assert any(seat == 0 for seat, _ in record["rounds"][0]["draft"]["picks"])


def test_node_bot_without_address(node_bot: Path) -> None:
    proc = subprocess.run(
        [str(node_bot / "run")],
        capture_output=True,
        text=True,
        timeout=30,
        env={k: v for k, v in os.environ.items() if k != "TAKE5_LISTEN"},
    )
    assert proc.returncode == 2
    assert "TAKE5_LISTEN" in proc.stderr

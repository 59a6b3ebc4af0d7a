"""Bots in other languages in the Docker sandbox: `referee match --sandbox docker` with the Node.js
and Go example bots (bot.toml: runtime "node" and "static") against Python example bots, on the real
engine, and the same limits and faults as Python bots (an out-of-memory Node bot is an OOM fault).

Needs the base images (scripts/setup-docker.sh), npm for example_bots/node's node_modules (installed
with --ignore-scripts when missing) and Go for example_bots/go (scripts/setup-go.sh builds it).
Without them these tests skip with the reason; with CI set they fail.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import docker
import pytest
from docker_images import client_with_base_images
from support import EXAMPLES, ROOT

TOKEN = secrets.token_hex(3)


@pytest.fixture(scope="module")
def engine():
    client = client_with_base_images(timeout=60)
    before = {img.id for img in client.images.list(filters={"label": "take5.bot"})}
    yield client
    for img in client.images.list(filters={"label": "take5.bot"}):
        if img.id not in before and img.labels.get("take5.bot") in OURS:
            try:
                client.images.remove(img.id, force=True)
            except docker.errors.APIError:
                pass
    client.close()


OURS = {"node", "go", "hostile_oom_node", "lowest-anylang", "random-anylang"}
"""Bot names (folder names) of the images these tests build: the Python opponents are copies under
names of their own, so that other test sessions tidying their `lowest` images on this shared engine
do not remove ours in the middle of a match."""


@pytest.fixture(scope="module")
def opponents(engine, tmp_path_factory) -> list[str]:
    where = tmp_path_factory.mktemp("opponents")
    out = []
    for name in ("lowest", "random"):
        shutil.copytree(EXAMPLES / name, where / f"{name}-anylang")
        out.append(str(where / f"{name}-anylang"))
    return out


@pytest.fixture(scope="module")
def node_bot(engine, node_example) -> Path:
    return node_example


@pytest.fixture(scope="module")
def go_bot(engine, go_example) -> Path:
    return go_example


def match(*args: str, tmp_path: Path, timeout: float = 600) -> tuple[int, dict, str, Path]:
    records = tmp_path / "records"
    # --start-timeout 60: containers start slowly on a loaded machine; this is not a speed test.
    argv = [
        sys.executable,
        "-m",
        "take5_arena",
        "match",
        "--sandbox",
        "docker",
        *args,
        "--start-timeout",
        "60",
        "--json",
        "--records",
        str(records),
    ]
    env = {**os.environ, "TAKE5_RUN_PREFIX": f"pytest-{TOKEN}-{secrets.token_hex(2)}"}
    proc = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout), proc.stderr, records


def _record(records: Path, n: int = 1) -> dict:
    from take5.record import load_record

    return load_record(records / f"s0-g{n}.json")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("which", "name"), [("node", "node-greedy"), ("go", "go-greedy")])
def test_other_language_bots_play_in_the_docker_sandbox(which, name, request, opponents, tmp_path):
    folder = request.getfixturevalue(f"{which}_bot")
    code, doc, err, records = match(str(folder), *opponents, "--games", "2", tmp_path=tmp_path)
    assert code == 0, err[-3000:]
    assert doc["games_played"] == 2
    assert all(not any(f) for g in doc["games"] for f in g["faults"]), doc["games"]
    record = _record(records)
    assert record["complete"] is True
    assert name in json.dumps(record)


@pytest.mark.docker
@pytest.mark.slow
def test_an_out_of_memory_node_bot_is_an_oom_fault(node_bot, opponents, tmp_path):
    bot = tmp_path / "hostile_oom_node"
    shutil.copytree(node_bot, bot, symlinks=True)
    for f in (ROOT / "tests" / "docker_bots" / "hostile_oom_node").iterdir():
        shutil.copy(f, bot / f.name)
    # --timeout 10: the kill must be seen as what it is, not as a late answer, on a loaded machine.
    code, _doc, err, records = match(
        str(bot),
        *opponents,
        "--threshold",
        "10",
        "--timeout",
        "10",
        "--max-faults",
        "2",
        "--memory",
        "128m",
        tmp_path=tmp_path,
    )
    assert code == 1, err[-3000:]
    fault = _record(records)["faults"][0][0]
    assert (fault["kind"], fault["round"], fault["turn"]) == ("resource", 1, 2), fault
    assert "OOMKilled" in fault["detail"] and "memory limit 128m" in fault["detail"]
    assert "exit code 137" in fault["detail"]


@pytest.mark.docker
@pytest.mark.slow
def test_node_and_go_bots_play_a_docker_tournament(node_bot, go_bot, opponents, tmp_path):
    tdir = tmp_path / "tournament"
    env = {**os.environ, "TAKE5_RUN_PREFIX": f"pytest-{TOKEN}-{secrets.token_hex(2)}"}

    def referee(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "take5_arena", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
            check=False,
        )

    for folder, name in ((node_bot, "node"), (go_bot, "go"), (Path(opponents[0]), "lowest")):
        done = referee(
            "submit", str(folder), "--name", name, "-t", str(tdir), "--sandbox", "docker"
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = referee("tournament", "run", "-t", str(tdir), "-n", "3", "-g", "3", "--sandbox", "docker")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    standings = referee("standings", "-t", str(tdir))
    assert standings.returncode == 0, standings.stderr[-2000:]
    assert "node" in standings.stdout and "go" in standings.stdout


# -- bot.toml (no engine needed) -------------------------------------------------------------------


def test_manifest_says_runtime_and_command():
    from take5_arena.referee.sandbox.manifest import Runtime, parse_manifest

    m = parse_manifest(
        b'runtime = "static"\ncommand = ["take5-go-bot", "--x"]\n', frozenset({"take5-go-bot"})
    )
    assert (m.runtime, m.command) == (Runtime.STATIC, ("/bot/take5-go-bot", "--x"))
    m = parse_manifest(b'runtime = "node"\ncommand = ["node", "bot.js"]\nname = "n"\n')
    assert (m.runtime, m.command, m.name) == (Runtime.NODE, ("node", "bot.js"), "n")
    assert parse_manifest(b'runtime = "python"\n').command == ("python3", "/bot/bot.py")


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (b'runtime = "ruby"\n', "runtime must be one of"),
        (b'runtime = "node"\ncommand = "node bot.js"\n', "command must be a list"),
        (b'runtime = "node"\ncommand = []\n', "command must be a list"),
        (b'runtime = "node"\ncommand = ["node", "\\u001b[2J"]\n', "printable"),
        (b'runtime = "node"\nimage = "evil"\n', "unknown key 'image'"),
        (b"runtime = \n", "not valid TOML"),
        (b'runtime = "node"\nname = "\\u001b]0;x\\u0007"\n', "name must be printable"),
    ],
)
def test_bad_manifests_are_refused_with_the_reason(text, expect):
    from take5_arena.referee.sandbox.build_errors import BuildRefusedError
    from take5_arena.referee.sandbox.manifest import parse_manifest

    with pytest.raises(BuildRefusedError) as err:
        parse_manifest(text)
    assert expect in str(err.value)


@pytest.mark.docker
def test_node_and_go_bots_submitted_remotely_play_on_the_ladder(node_bot, go_bot, tmp_path):
    """`referee submit --server` packs a Node bot with its node_modules and a Go bot with its
    binary (the function the local submit uses); the arena validates both in Docker and its ladder
    plays them against each other."""
    from arena_support import Server, add_author, cli, wait_until

    directory = tmp_path / "T"
    token = add_author(directory, "polyglot")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")]),
        "TAKE5_RUN_PREFIX": f"pytest-{TOKEN}-{secrets.token_hex(2)}",
    }
    server = Server(
        directory,
        "--sandbox",
        "docker",
        "--players",
        "2",
        "-j",
        "1",
        "--start-timeout",
        "60",
        "--bootstrap",
        "0",
        "--publish-every-games",
        "1",
        env=env,
    )
    try:
        for folder in (node_bot, go_bot):
            done = cli("submit", str(folder), "--server", server.address, token=token, timeout=900)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            assert "new version v1" in done.stdout, done.stdout

        def both_played() -> bool:
            with server.client() as client:
                rows = {r.bot: r.games for r in client.standings().rows}
            return rows.get("node", 0) >= 1 and rows.get("go", 0) >= 1

        wait_until(both_played, timeout=600, what="ladder games of node and go", server=server)
    finally:
        assert server.stop() == 0, server.log


@pytest.mark.docker
@pytest.mark.slow
def test_the_go_bots_output_is_kept_with_each_turn(go_bot, opponents, tmp_path):
    """The Go bot's image has no shell (runtime "static"), so its stderr goes to Docker's log,
    which the referee reads turn by turn: each turn's line ("round R turn T: playing C") is kept
    beside that turn in the record (or, written a moment before the answer, the next one), as a
    Python or Node bot's output is, and an arena shows it to the bot's author beside the replay."""
    code, _doc, err, records = match(
        str(go_bot), opponents[0], "--games", "1", "--threshold", "20", tmp_path=tmp_path
    )
    assert code == 0, err[-3000:]
    record = _record(records)
    turns = [
        (r["round"], t["turn"], t.get("logs") or []) for r in record["rounds"] for t in r["turns"]
    ]
    said = {}
    for index, (_r, _t, logs) in enumerate(turns):
        for seat, text in logs:
            assert seat == 0, logs  # the Python opponent prints nothing
            for line in text.splitlines():
                found = re.search(r"round (\d+) turn (\d+): playing \d+", line)
                if found:
                    said[(int(found.group(1)), int(found.group(2)))] = index
    played = [(r, t) for r, t, _ in turns]
    assert set(said) == set(played), (said, played)
    late = [key for index, key in enumerate(played) if said[key] not in (index, index + 1)]
    assert not late, late
    on_time = sum(1 for index, key in enumerate(played) if said[key] == index)
    print(f"\n{on_time} of {len(played)} turns' lines kept with their own turn")

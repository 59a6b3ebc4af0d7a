"""What the tests share that is not a fixture (fixtures are in conftest.py): the checkout's paths,
whether this is CI, and how to run the `referee` command as a real process.

Imported as ``support`` (pytest puts tests/ on the path, as for docker_images.py and site_games.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

import pytest

#: The checkout: tests run the code of this tree, whatever is installed.
ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk"
EXAMPLES = ROOT / "example_bots"
#: Bots made for tests: local processes (tests/bots) and Docker images (tests/docker_bots).
TEST_BOTS = ROOT / "tests" / "bots"
DOCKER_BOTS = ROOT / "tests" / "docker_bots"


def in_ci() -> bool:
    """``CI`` is set (and not to a false value): a test that cannot run fails instead of
    skipping."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    """Skip for want of something the machine lacks (a Docker engine, a toolchain), or fail in CI,
    whose set-up provides it."""
    if in_ci():
        pytest.fail(f"{reason} -- CI is set, so this test fails instead of skipping")
    pytest.skip(reason)


def referee_env(**extra: str) -> dict[str, str]:
    """The environment of a child that runs this checkout: it and its SDK first on PYTHONPATH."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(SDK), env.get("PYTHONPATH", "")) if p
    )
    return env


def referee(
    *args: str, timeout: float = 120, cwd: Path = ROOT, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`referee ARGS...` as a real process (``python3 -m take5_arena``), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=timeout,
        cwd=cwd,
        input=input,
        check=False,
    )


def node_example(dest: Path) -> Path:
    """example_bots/node copied to ``dest`` (a folder named ``node``), with its node_modules: copied
    from the checkout where a developer installed them, else installed by npm into the copy. The
    checkout is only read."""
    source = EXAMPLES / "node"
    shutil.copytree(source, dest, symlinks=True)
    if (dest / "node_modules" / "@grpc" / "grpc-js").is_dir():
        return dest
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        unavailable("Node.js and npm are not installed (scripts/test.sh installs them with apt)")
    install = subprocess.run(
        [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=dest,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if install.returncode != 0:
        unavailable(f"npm install failed for example_bots/node:\n{install.stderr[-2000:]}")
    return dest


def go_example(dest: Path) -> Path:
    """example_bots/go copied to ``dest`` (a folder named ``go``) and built there by its build.sh
    (the checkout's binary, if any, is not used and the checkout is only read)."""
    shutil.copytree(
        EXAMPLES / "go", dest, ignore=shutil.ignore_patterns("take5-go-bot", "take5-go-bot.tmp")
    )
    if shutil.which("go") is None:
        unavailable("Go is not installed (scripts/setup-go.sh): example_bots/go cannot be built")
    build = subprocess.run(
        ["sh", str(dest / "build.sh")],
        env=dict(os.environ, PROTO_DIR=str(ROOT / "proto")),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if build.returncode != 0:
        unavailable(f"example_bots/go/build.sh failed:\n{build.stderr[-2000:]}")
    return dest


def free_port() -> int:
    """A loopback port free now (the system's pick), for a server that must be told its port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 30) -> tuple[int, str]:
    """The status and text of a GET, an HTTP error's too (a test reads a 404's body as a 200's)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()

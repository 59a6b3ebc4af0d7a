"""What the tests share that is not a fixture (fixtures are in conftest.py): the checkout's paths,
whether this is CI, and how to run the `referee` command as a real process.

Imported as ``support`` (pytest puts tests/ on the path, as for docker_images.py and site_games.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
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
    """``CI`` is set (and not to a false value): a test that cannot run fails instead of skipping."""
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

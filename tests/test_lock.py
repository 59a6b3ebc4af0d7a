"""The lock files in requirements/ (scripts/lock.sh) agree with the ranges the packages declare.

CI and the bot images install the locked versions; a user's `pip install` gets the ranges. A range
tightened in pyproject.toml without a new lock, or a lock edited by hand past a range, would make CI
test versions no user can get: this fails first."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from support import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def pins(lock: Path) -> dict[str, list[Version]]:
    """Every pinned version in a lock file, by canonical package name (several behind markers)."""
    found: dict[str, list[Version]] = {}
    for line in lock.read_text().splitlines():
        match = PIN.match(line)
        if match:
            found.setdefault(canonicalize_name(match[1]), []).append(Version(match[2]))
    return found


def declared(pyproject: Path, extras: tuple[str, ...]) -> list[Requirement]:
    project = tomllib.loads(pyproject.read_text())["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines]


LOCKS = [
    ("ci.txt", ROOT / "pyproject.toml", ("docker", "web", "metrics", "dask", "rl", "test")),
    ("arena.txt", ROOT / "pyproject.toml", ("docker", "web", "metrics", "dask")),
    ("bot-python.txt", ROOT / "sdk" / "pyproject.toml", ("bot", "sim")),
]


@pytest.mark.parametrize(("lock", "pyproject", "extras"), LOCKS, ids=[x[0] for x in LOCKS])
def test_every_locked_version_is_inside_its_range(lock, pyproject, extras):
    locked = pins(ROOT / "requirements" / lock)
    wrong = []
    for req in declared(pyproject, extras):
        if canonicalize_name(req.name) == "take5":
            continue  # the SDK itself: installed from the checkout (sdk/), never from the lock
        versions = locked.get(canonicalize_name(req.name))
        if not versions:
            wrong.append(f"{req}: not in requirements/{lock}")
            continue
        wrong += [f"{req}: locked at {v}" for v in versions if not req.specifier.contains(v, True)]
    assert not wrong, "run scripts/lock.sh: " + "; ".join(wrong)


def test_the_check_sees_a_pin_outside_its_range(tmp_path):
    """The check above is not vacuous: a lock that pins click below the project's floor fails it."""
    lock = tmp_path / "lock.txt"
    lock.write_text("click==8.0.0 \\\n    --hash=sha256:00\nrich==13.0.0\n")
    (req,) = [r for r in declared(ROOT / "pyproject.toml", ()) if r.name == "click"]
    (version,) = pins(lock)["click"]
    assert not req.specifier.contains(version, True)


def test_the_installs_use_the_lock():
    """CI's set-up and the Python bot image install from the lock, with hashes."""
    test_sh = (ROOT / "scripts" / "test.sh").read_text()
    assert "--require-hashes -r requirements/ci.txt" in test_sh
    setup = (ROOT / "scripts" / "setup-docker.sh").read_text()
    assert "requirements/bot-python.txt" in setup and "--require-hashes" in setup

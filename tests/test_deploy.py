"""The systemd units in deploy/: `systemd-analyze verify` accepts them without a word, and
`systemd-analyze security --offline` rates them as hardened (where systemd-analyze exists: the test
skips without it; CI's Debian has it).

The units name /opt/take5/venv/bin/..., which verify requires to exist: the test checks a copy
whose commands point at stand-ins, and nothing else changed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import ROOT, unavailable

UNITS = sorted((ROOT / "deploy").glob("*.service"))
#: systemd's exposure score, 0 (locked down) to 10 (none): "OK" is below 4; the units are at 1.7.
MOST_EXPOSURE = 2.5


def _analyze() -> str:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        unavailable("systemd-analyze is not installed (Debian: apt-get install systemd)")
    return tool


def _copy(unit: Path, tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    text = unit.read_text()
    for command in set(re.findall(r"/opt/take5/venv/bin/([\w-]+)", text)):
        stand_in = bin_dir / command
        stand_in.write_text("#!/bin/sh\nexit 0\n")
        stand_in.chmod(0o755)
    copy = tmp_path / unit.name
    copy.write_text(text.replace("/opt/take5/venv/bin/", f"{bin_dir}/"))
    return copy


def test_the_units_are_there() -> None:
    assert [u.name for u in UNITS] == ["take5-arena.service", "take5-dask-worker.service"]


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_systemd_accepts_the_unit(unit: Path, tmp_path: Path) -> None:
    tool = _analyze()
    done = subprocess.run(
        [tool, "verify", str(_copy(unit, tmp_path))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    # an unknown or misspelt setting is only a warning (exit 0): any output at all fails the test
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), (
        done.stdout + done.stderr
    )


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_the_unit_is_hardened(unit: Path, tmp_path: Path) -> None:
    tool = _analyze()
    done = subprocess.run(
        [tool, "security", "--offline=yes", "--no-pager", str(_copy(unit, tmp_path))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    found = re.search(r"Overall exposure level for \S+: ([\d.]+)", done.stdout + done.stderr)
    if found is None and "--offline" in done.stderr:
        pytest.skip("this systemd-analyze has no --offline (systemd < 250)")
    assert found, done.stdout + done.stderr
    assert float(found.group(1)) <= MOST_EXPOSURE, done.stdout

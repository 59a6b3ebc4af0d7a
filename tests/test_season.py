"""The season rehearsal, short (bench/season.py: a real arena on a local Dask cluster with engines
of its own, authors honest and hostile over gRPC and the pages, visitors, and faults on a
schedule; then its invariants). The hour-long run and its figures: docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support import ROOT, unavailable

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_short_season_keeps_every_invariant(tmp_path):
    if os.geteuid() != 0:
        unavailable("the rehearsal mounts a tmpfs and starts Docker engines: it needs root")
    if shutil.which("dockerd") is None or shutil.which("dask") is None:
        unavailable("needs dockerd (scripts/setup-docker.sh) and the dask command")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "season.py"), "--minutes", "2"]
        + ["--fault-every", "20", "--hold", "10", "--submit-every", "40"]
        + ["--faults", "serve,worker,disk", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    summary = json.loads((out / "season.json").read_text())
    assert not summary["problems"]
    kinds = {f["kind"] for f in summary["faults"] if "error" not in f}
    assert {"serve", "worker"} <= kinds, summary["faults"]
    assert summary["games"] > 0 and summary["acknowledged_uploads"] > 0
    assert summary["workers_back"] == 2

"""`scripts/cluster-local.sh stop` ends even when an engine answers nothing.

Docker 20.10 can deadlock (moby/moby#46661): the engine then accepts connections and never answers,
and ignores SIGTERM. A season rehearsal in CI waited 600 s on such an engine at its cleanup. The
engine here is a stand-in with both traits: a process that ignores SIGTERM, and a socket that
accepts and never answers. No Docker engine is needed.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest
from support import ROOT

SCRIPT = ROOT / "scripts" / "cluster-local.sh"


def test_stop_kills_an_engine_that_answers_nothing(tmp_path: Path) -> None:
    if subprocess.run(["which", "docker"], capture_output=True, check=False).returncode != 0:
        pytest.skip("needs the docker command (scripts/setup-docker.sh)")
    engine = tmp_path / "c" / "engine-1"
    (engine / "exec").mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock_path = engine / "docker.sock"
    listener.bind(str(sock_path))
    listener.listen(16)
    hung = subprocess.Popen(
        ["bash", "-c", f"trap '' TERM; exec -a '{engine}/exec/containerd' sleep 600"],
    )
    # ``exec -a`` names the process as the engine's containerd would be named: stop kills it too.
    stand_in = subprocess.Popen(["bash", "-c", "trap '' TERM; while :; do sleep 1; done"])
    try:
        time.sleep(0.3)
        (engine / "docker.pid").write_text(f"{stand_in.pid}\n")
        started = time.monotonic()
        done = subprocess.run(
            ["bash", str(SCRIPT), "stop", "--root", str(tmp_path / "c")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        took = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert "did not stop in 15 s: killed" in done.stderr, done.stderr
        assert stand_in.wait(timeout=5) == -9
        assert hung.wait(timeout=5) == -9
        assert took < 60, took
    finally:
        for proc in (stand_in, hung):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        listener.close()

"""scripts/setup-docker.sh restarts an engine that is hung.

Docker 20.10 can deadlock in its network layer (moby/moby#46661): ``docker info`` still answers,
but every container start and removal hangs until dockerd is killed. Other hangs leave it answering
nothing at all. The test makes an engine of its own (``TAKE5_DOCKERD_ROOT``, beside the machine's,
which it never touches) and hangs it both ways:
- its default runtime is a wrapper of runc that hangs once, when told to: the engine answers and
  starts nothing;
- its containerd is stopped with SIGSTOP: the engine answers nothing.
Each time setup-docker.sh must say so, kill it with its containerd, start it again, and leave an
engine that runs a container.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from support import ROOT, unavailable

pytestmark = pytest.mark.docker

IMAGE = "take5/static:1"
SETUP = ROOT / "scripts" / "setup-docker.sh"


def _docker(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`docker ARGS` on the test's engine; a call that does not end in `timeout` s is exit -1."""
    try:
        return subprocess.run(
            ["docker", *args],
            env={**os.environ, "DOCKER_HOST": f"unix://{root}/docker.sock"},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(["docker", *args], -1, "", "no answer")


def _setup(root: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TAKE5_DOCKERD_ROOT": str(root),
        "TAKE5_PROBE_TIMEOUT": "10",
        "TAKE5_DOCKERD_TIMEOUT": "15",
    }
    return subprocess.run(
        ["bash", str(SETUP), "--engine-only"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def test_an_engine_that_answers_but_starts_nothing_is_restarted() -> None:
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        unavailable("starts a Docker engine of its own: needs root and dockerd")
    if subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True).returncode:
        unavailable(f"{IMAGE} is missing (run scripts/setup-docker.sh)")
    # A short path: the engine's sockets live under it.
    root = Path(tempfile.mkdtemp(prefix="t5e-", dir="/tmp"))
    try:
        # The runtime every container of this engine gets: runc, except that it hangs once in a
        # container's creation when the file "hang" exists (`docker info` runs it too). It is
        # named as the engine's own processes are, under its exec root, so that setup-docker.sh's
        # kill finds it as it would find a hung shim.
        hang = root / "hang"
        wrapper = root / "runc-once"
        wrapper.write_text(
            "#!/bin/bash\n"
            f'if [ -e {hang} ] && [[ " $* " == *" create "* ]]; then rm -f {hang}; '
            f'exec -a "{root}/exec/hung-runtime" sleep 1000; fi\n'
            'exec runc "$@"\n'
        )
        wrapper.chmod(0o755)
        (root / "daemon.json").write_text(
            json.dumps({"default-runtime": "once", "runtimes": {"once": {"path": str(wrapper)}}})
        )
        first = _setup(root)
        assert first.returncode == 0, first.stderr
        saved = subprocess.run(["docker", "save", IMAGE], capture_output=True, check=True)
        loaded = subprocess.run(
            ["docker", "load"],
            input=saved.stdout,
            env={**os.environ, "DOCKER_HOST": f"unix://{root}/docker.sock"},
            capture_output=True,
            check=False,
        )
        assert loaded.returncode == 0, loaded.stderr
        ran = _docker(root, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", IMAGE)
        assert ran.returncode == 0, ran.stderr
        healthy = _setup(root)
        assert healthy.returncode == 0 and "WARNING" not in healthy.stderr, healthy.stderr

        # Hung the first way: it answers, and starts nothing.
        hang.touch()
        assert _docker(root, "info", timeout=30).returncode == 0
        started = time.monotonic()
        mended = _setup(root)
        assert mended.returncode == 0, mended.stderr
        assert "started no container in 10s" in mended.stderr, mended.stderr
        assert "answers after" in mended.stderr, mended.stderr
        assert time.monotonic() - started < 120
        assert not _pids(f"{root}/exec/hung-runtime")
        ran = _docker(root, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", IMAGE)
        assert ran.returncode == 0, ran.stderr

        # Hung the second way: it answers nothing.
        stopped = _pids(f"{root}/exec/containerd/containerd.toml")
        assert stopped, "no containerd of the test's engine"
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        assert _docker(root, "info", timeout=15).returncode != 0
        started = time.monotonic()
        mended = _setup(root)
        assert mended.returncode == 0, mended.stderr
        assert "did not answer in 15s: killing it" in mended.stderr, mended.stderr
        assert time.monotonic() - started < 120
        for pid in stopped:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "zombie" in Path(f"/proc/{pid}/status").read_text()
            )
        ran = _docker(root, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", IMAGE)
        assert ran.returncode == 0, ran.stderr
    finally:
        pid = (root / "docker.pid").read_text().strip() if (root / "docker.pid").exists() else ""
        if pid:
            subprocess.run(["kill", pid], check=False)
            for _ in range(75):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.2)
        subprocess.run(["pkill", "-9", "-f", "--", f"{root}/"], check=False)
        subprocess.run(["umount", "-R", "-l", str(root / "data")], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)

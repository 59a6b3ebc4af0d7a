"""How fast the engine creates, starts, waits for and removes bot containers, with and without a
part in its network layer.

Every bot container is created through `take5_arena.referee.sandbox.containers` with the flags of
`limits.container_kwargs`, which disable networking (the API's ``NetworkDisabled``) as well as
setting it to none. The baseline is the same path with only ``network_mode="none"``, as bot
containers were made before: the engine then gives each container a sandbox and an endpoint in
its "none" network, and a ``libnetwork-setkey`` hook at its start.

Each run cycles ``true`` in the project's base image from THREADS threads for SECONDS seconds,
through `containers.run_to_completion` (the production create, start, wait, remove); the modes
alternate, REPEAT times each. Printed per run: containers per second, and the CPU of the engine's
own daemons (dockerd and its containerd, from /proc) per container. Shims are not counted: they
live one container each and are reaped by the engine's containerd.

Usage: python3 bench/container_cycle.py [--threads 4] [--seconds 30] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from take5_arena.referee.defaults import BASE_IMAGE
from take5_arena.referee.limits import SandboxLimits
from take5_arena.referee.sandbox import containers, engine
from take5_arena.referee.sandbox import limits as sandbox_limits

TICKS = os.sysconf("SC_CLK_TCK")


def daemons_cpu() -> float:
    """CPU seconds (user + system) used so far by dockerd and the containerd it started."""
    total = 0.0
    for name in ("dockerd", "containerd"):
        found = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True, check=False)
        for pid in found.stdout.split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def cycle(threads: int, seconds: float, with_endpoint: bool) -> tuple[float, float]:
    """(containers per second, daemons' CPU ms per container) of one run."""
    original = sandbox_limits.container_kwargs

    def kwargs(**kw: Any) -> dict[str, Any]:
        made = original(**kw)
        if with_endpoint:
            made["network_disabled"] = False
        return made

    containers.container_kwargs = kwargs  # type: ignore[attr-defined]
    client = engine.client()
    done = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def loop(i: int) -> None:
        while time.monotonic() < end:
            code, _ = containers.run_to_completion(
                client, BASE_IMAGE, ["true"], limits=SandboxLimits(), run_id=f"cycle{i}"
            )
            if code == 0:
                with lock:
                    done[0] += 1

    cpu0, wall0 = daemons_cpu(), time.monotonic()
    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    cpu, wall = daemons_cpu() - cpu0, time.monotonic() - wall0
    containers.container_kwargs = original  # type: ignore[attr-defined]
    return done[0] / wall, 1000 * cpu / max(done[0], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.repeat):
        for with_endpoint in (True, False):
            rate, cpu = cycle(args.threads, args.seconds, with_endpoint)
            results[with_endpoint].append((rate, cpu))
            label = "network none (baseline)" if with_endpoint else "networking disabled"
            print(f"{label:26} {rate:6.1f} containers/s  daemons {cpu:5.1f} ms CPU/container")
    rates = {k: statistics.median(r for r, _ in v) for k, v in results.items()}
    cpus = {k: statistics.median(c for _, c in v) for k, v in results.items()}
    print(
        f"median: {rates[False]:.1f} containers/s against {rates[True]:.1f} "
        f"(x{rates[False] / rates[True]:.2f}); daemons' CPU per container "
        f"{cpus[False]:.1f} ms against {cpus[True]:.1f} (x{cpus[False] / cpus[True]:.2f})"
    )


if __name__ == "__main__":
    main()

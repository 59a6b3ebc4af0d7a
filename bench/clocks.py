"""Fairness under load: the CPU clock against the wall clock, next to a CPU hog.

Two bots that each use a fixed amount of CPU time per decision (bench/bots/cpu_per_decision, on
their own process's CPU clock) play `referee match` with a 0.1 s limit per decision, while
``--hogs`` processes spin on every core of the host. The match is played on each clock:

* ``--clock cpu``: a decision costs the CPU time the bot used; the hog slows the bot down but does
  not charge it for the wait;
* ``--clock wall`` (the baseline, the referee's only clock before): a decision costs the time from
  question to answer, the hog's share of the cores included.

Printed for each clock: the decisions, the timeouts, and the milliseconds the records say the
bots' decisions cost on that clock (mean and largest: CPU time under the CPU clock); then the
same with bots that really overspend (150 ms of CPU against the 100 ms limit), which must fault on
both clocks.

    python bench/clocks.py [--games 2] [--hogs 6] [--spend-ms 50]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
from multiprocessing.synchronize import Event as StopEvent
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPENDER = ROOT / "bench" / "bots" / "cpu_per_decision"
LIMIT = 0.1


def hog(stop: StopEvent) -> None:
    n = 0
    while not stop.is_set():
        for _ in range(100_000):
            n += 1


def match(clock: str, games: int, spend_ms: int) -> dict[str, float]:
    env = dict(os.environ, TAKE5_BENCH_CPU_MS=str(spend_ms))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as records:
        subprocess.run(
            [sys.executable, "-m", "take5_arena", "match", str(SPENDER), str(SPENDER)]
            + ["--games", str(games), "--threshold", "30", "--timeout", str(LIMIT)]
            + ["--clock", clock, "--max-faults", "1000", "--records", records],
            env=env,
            cwd=ROOT,
            capture_output=True,
            check=False,
            timeout=1800,
        )
        used: list[int] = []
        timeouts = 0
        for path in sorted(Path(records).glob("*.json")):
            doc = json.loads(path.read_text())
            timeouts += sum(f["kind"] == "timeout" for seat in doc["faults"] for f in seat)
            for rnd in doc["rounds"]:
                for turn in rnd["turns"]:
                    used += [entry[1] for entry in turn.get("clock", [])]
    return {
        "decisions": len(used),
        "timeouts": timeouts,
        "mean_ms": sum(used) / max(1, len(used)),
        "max_ms": max(used, default=0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--hogs", type=int, default=3 * (os.cpu_count() or 2))
    parser.add_argument("--spend-ms", type=int, default=50)
    args = parser.parse_args()
    stop = multiprocessing.Event()
    hogs = [
        multiprocessing.Process(target=hog, args=(stop,), daemon=True) for _ in range(args.hogs)
    ]
    for process in hogs:
        process.start()
    try:
        print(f"{args.hogs} CPU hogs on {os.cpu_count()} cores; limit {LIMIT:g} s per decision")
        print(
            f"{'bot':<22} {'clock':<6} {'decisions':>9} {'timeouts':>8} {'mean ms':>8} "
            f"{'max ms':>7}  (ms: what the clock measured)"
        )
        for spend in (args.spend_ms, 150):
            for clock in ("cpu", "wall"):
                row = match(clock, args.games, spend)
                print(
                    f"{f'{spend} ms CPU a decision':<22} {clock:<6} {row['decisions']:>9} "
                    f"{row['timeouts']:>8} {row['mean_ms']:>8.1f} {row['max_ms']:>7}"
                )
    finally:
        stop.set()
        for process in hogs:
            process.join(5)
            if process.is_alive():
                process.kill()


if __name__ == "__main__":
    main()

"""How fast the `referee` command starts: wall and CPU time of `referee --help` and `referee play -n 4`.

A bot author runs these commands dozens of times an hour; the target is well under 0.5 s each. The
figures are printed next to a same-run baseline (a bare `python3 -c pass`), so that a loaded machine
shows up in the baseline rather than as a false regression. Also lists which heavy modules
(numpy, scipy, grpc, docker) `referee --help` imports: it should import none of them.

Usage: python3 bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "grpc", "docker", "google.protobuf", "rich")


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return e


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heavy_imports() -> list[str]:
    code = ("import sys; sys.argv=['referee','--help']\n"
            "try:\n    from arena.cli import main\nexcept ImportError:\n    from referee.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True)
    return [m for m in out.stderr.strip().splitlines()[-1].split(",") if m] if out.stderr.strip() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = {
        "python3 -c pass (baseline)": [sys.executable, "-c", "pass"],
        "referee --help": [sys.executable, "-m", "referee.cli", "--help"],
        "referee play -n 4": [sys.executable, "-m", "referee.cli", "play", "-n", "4"],
    }
    base = None
    print(f"{'command':<30} {'wall s':>8} {'cpu s':>8} {'wall - baseline':>16}")
    for label, argv in cases.items():
        timed(argv)  # warm the file cache
        runs = [timed(argv) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        if base is None:
            base = wall
        print(f"{label:<30} {wall:>8.3f} {cpu:>8.3f} {wall - base:>16.3f}")
    print(f"heavy modules imported by `referee --help`: {', '.join(heavy_imports()) or 'none'}")


if __name__ == "__main__":
    main()

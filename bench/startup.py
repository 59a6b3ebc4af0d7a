"""How fast the `referee` command starts: wall and CPU time of `referee --help` and
`referee play -n 4`.

A bot author runs these commands dozens of times an hour; the target is well under 0.5 s each. The
figures are printed next to a same-run baseline (a bare `python3 -c pass`), so that a loaded machine
shows up in the baseline rather than as a false regression. Also lists which heavy modules
(numpy, scipy, grpc, docker) `referee --help` imports: it should import none of them.

With ``--against REV`` the same commands are also timed on the tree of git revision REV (exported
to a temporary folder), and the ratio new/old printed: a before/after in one run.

Usage: python3 bench/startup.py [--repeat N] [--against REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "grpc", "docker", "google.protobuf", "rich")


def env(root: Path = ROOT) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(
        [str(root), str(root / "sdk"), e.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    return e


def timed(argv: list[str], root: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``argv`` with ``root`` first on the
    path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env(root),
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(argv: list[str], repeat: int, root: Path = ROOT) -> tuple[float, float]:
    timed(argv, root)  # warm the file cache
    runs = [timed(argv, root) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def export(rev: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="take5-startup-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def heavy_imports() -> list[str]:
    code = (
        "import sys\n"
        "from take5_arena.cli.main import main\n"
        "try:\n    main(['--help'], prog_name='referee')\nexcept SystemExit:\n    pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env(), capture_output=True, text=True, check=False
    )
    return (
        [m for m in out.stderr.strip().splitlines()[-1].split(",") if m]
        if out.stderr.strip()
        else []
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", metavar="REV", help="also time the tree of this git revision")
    args = parser.parse_args()
    cases = {
        "python3 -c pass (baseline)": [sys.executable, "-c", "pass"],
        "referee --help": [sys.executable, "-m", "take5_arena", "--help"],
        "referee play -n 4": [sys.executable, "-m", "take5_arena", "play", "-n", "4"],
    }
    old_root = export(args.against) if args.against else None
    try:
        header = f"{'command':<30} {'wall s':>8} {'cpu s':>8} {'wall - baseline':>16}"
        if old_root:
            header += f" {'old wall':>9} {'old cpu':>8} {'cpu new/old':>12}"
        print(header)
        base = None
        for label, argv in cases.items():
            wall, cpu = measure(argv, args.repeat)
            if base is None:
                base = wall
            line = f"{label:<30} {wall:>8.3f} {cpu:>8.3f} {wall - base:>16.3f}"
            if old_root:
                old_wall, old_cpu = measure(argv, args.repeat, old_root)
                line += (
                    f" {old_wall:>9.3f} {old_cpu:>8.3f} "
                    f"{cpu / old_cpu if old_cpu else float('nan'):>12.2f}"
                )
            print(line)
    finally:
        if old_root:
            shutil.rmtree(old_root, ignore_errors=True)
    print(f"heavy modules imported by `referee --help`: {', '.join(heavy_imports()) or 'none'}")


if __name__ == "__main__":
    main()

"""The plain C prototype of the rules (bench/proto.c), compiled with cc and run beside a benchmark.

bench/engine.py and bench/sim.py measure take5.core against it in the same run: the figures of a
loaded machine move together, so the ratios stand where the rates do not. It is compiled once per
run (`cc -O2`, into a temporary folder) and measures its own CPU time (clock()), so the start of its
process is not counted, as the Python side's start is not.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "proto.c"
_built: list[Path] = []


def binary() -> Path:
    """The compiled prototype (built on the first call); RuntimeError without a C compiler."""
    if _built:
        return _built[0]
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler (cc, gcc or clang) for the C prototype")
    folder = Path(tempfile.mkdtemp(prefix="take5-proto-"))
    atexit.register(shutil.rmtree, folder, True)
    out = folder / "proto"
    subprocess.run([cc, "-O2", "-o", str(out), str(SOURCE)], check=True, timeout=120)
    _built.append(out)
    return out


def rate(mode: str, players: int, seconds: float, size: int = 1) -> float:
    """Games (mode "games") or rollouts ("rollouts", `size` prepared deals) per CPU-second."""
    done = subprocess.run(
        [str(binary()), mode, str(players), f"{seconds:g}", str(size)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60 + 10 * seconds,
    )
    return float(done.stdout.strip())

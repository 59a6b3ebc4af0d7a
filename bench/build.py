"""Bot image builds and refusals: how long a bot folder takes to become an image, or to be refused.

* refusal: a bot folder holding 100,000 empty files, refused by the folder scan (the limits are
  checked before anything is copied) and by the whole `build_image` call; the baseline is a plain
  `os.walk` of the same folder, the least any check that looks at every file costs.
* builds: the Python, Node.js and Go example bots from scratch (``force=True``) and again with an
  unchanged folder (the image is reused); the baseline is the engine's own build of the Python
  bot's files on the same base image (``FROM`` it, ``COPY`` the folder, nothing checked, no SDK
  installed), the least any build of that bot costs on this engine. The last figures of the
  builder before the current one are kept in docs/benchmarks.md ("Builder").

Run: python bench/build.py [--repeat 2]. Needs a Docker engine and the base images
(scripts/setup-docker.sh), node_modules in example_bots/node and example_bots/go built
(scripts/setup-go.sh). Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))

from take5_arena.referee import defaults
from take5_arena.referee.sandbox import context
from take5_arena.referee.sandbox.build_errors import BuildRefusedError
from take5_arena.referee.sandbox.images import build_image


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def refusal(repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="take5-bench-") as tmp:
        bot = Path(tmp) / "many"
        (bot / "many").mkdir(parents=True)
        shutil.copy(ROOT / "example_bots" / "lowest" / "bot.py", bot)
        for i in range(100_000):
            (bot / "many" / f"f{i:06d}").touch()

        def refused(fn: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                try:
                    fn()
                except BuildRefusedError:
                    return
                raise AssertionError("not refused")

            return run

        walk = [timed(lambda: sum(len(f) for _, _, f in os.walk(bot))) for _ in range(repeat)]
        scan = [timed(refused(lambda: context.scan(bot))) for _ in range(repeat)]
        full = [timed(refused(lambda: build_image(bot))) for _ in range(repeat)]
        base = statistics.median(walk)
        print(f"100,000-file folder (median of {repeat}):")
        print(f"  os.walk of the folder (baseline)   {base:7.3f} s")
        for label, times in (("refused by the scan", scan), ("refused by build_image", full)):
            median = statistics.median(times)
            print(f"  {label:34} {median:7.3f} s   x{median / base:.2f}")


def plain_build(folder: Path) -> None:
    """The baseline: a Dockerfile of two lines, built by the engine with no cache, then removed."""
    import docker

    client = docker.from_env()
    with tempfile.TemporaryDirectory(prefix="take5-bench-") as tmp:
        shutil.copytree(folder, Path(tmp) / "bot")
        (Path(tmp) / "Dockerfile").write_text(f"FROM {defaults.BASE_IMAGE}\nCOPY bot/ /bot/\n")
        image, _ = client.images.build(path=tmp, nocache=True, rm=True, forcerm=True)
    client.images.remove(image.id, force=True)


def builds(repeat: int) -> None:
    bots = {
        "python (lowest)": ROOT / "example_bots" / "lowest",
        "node": ROOT / "example_bots" / "node",
        "go (static)": ROOT / "example_bots" / "go",
    }
    print(f"builds (median of {repeat}, seconds):")
    print(f"  {'bot':18} {'from scratch':>12} {'unchanged':>10}")
    made = []
    for label, folder in bots.items():
        fresh, again = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            info = build_image(folder, force=True)
            fresh.append(time.perf_counter() - t0)
            made.append(info.tag)
            again.append(timed(partial(build_image, folder)))
        print(f"  {label:18} {statistics.median(fresh):12.2f} {statistics.median(again):10.2f}")
    baseline = [timed(lambda: plain_build(bots["python (lowest)"])) for _ in range(repeat)]
    print(f"  {'python, plain build':18} {statistics.median(baseline):12.2f}   (baseline)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    refusal(args.repeat)
    builds(args.repeat)


if __name__ == "__main__":
    main()

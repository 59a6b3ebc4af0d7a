"""The benchmarks that run in parts must give a part's figures whatever else runs with it:
bench/coverage.py's grid (--truth, --seats, --bots) and bench/strength.py's experiments (--bots,
--against). A cell's or an experiment's seed is its own parameters', never its place in a list
(docs/benchmarks.md gives figures of grids run in parts)."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from types import ModuleType

from support import ROOT


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_coverage_cells_seed_is_a_function_of_the_cell_alone() -> None:
    coverage = _bench("coverage")
    full = coverage.grid(False, ["pl", "games"]) + coverage.narrow_grid(False)
    seeds = [tuple(cell.seed(1)) for cell in full]
    assert len(set(seeds)) == len(full)  # no two cells share their tournaments
    part = [c for c in coverage.grid(False, ["pl"]) if c.seats == 4]  # --truth pl --seats 4
    assert part and all(tuple(c.seed(1)) in seeds for c in part)
    assert {tuple(c.seed(1)) for c in part} != {tuple(c.seed(2)) for c in part}  # --seed counts


def test_a_strength_experiments_seed_is_a_function_of_its_bots_alone() -> None:
    strength = _bench("strength")
    bots = strength.example_bots()
    opponents = ["random", "heuristic", "montecarlo"]
    seeds = {(b, o): strength.experiment_seed(1, b, o) for b in bots for o in opponents}
    assert len(set(seeds.values())) == len(seeds)  # no two experiments share their deals
    spacing = sorted(seeds.values())
    assert min(b - a for a, b in itertools.pairwise(spacing)) >= 100_000  # more than its games
    assert strength.experiment_seed(2, bots[0], "random") != seeds[(bots[0], "random")]

"""bench/coverage.py's grid runs in parts (--truth, --seats, --bots): a cell must play the same
tournaments whichever other cells run with it, so its seed is its own parameters', never its place
in the grid (docs/benchmarks.md gives figures of grids run in parts)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support import ROOT


def _coverage() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_coverage", ROOT / "bench" / "coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_cells_seed_is_a_function_of_the_cell_alone() -> None:
    coverage = _coverage()
    full = coverage.grid(False, ["pl", "games"]) + coverage.narrow_grid(False)
    seeds = [tuple(cell.seed(1)) for cell in full]
    assert len(set(seeds)) == len(full)  # no two cells share their tournaments
    part = [c for c in coverage.grid(False, ["pl"]) if c.seats == 4]  # --truth pl --seats 4
    assert part and all(tuple(c.seed(1)) in seeds for c in part)
    assert {tuple(c.seed(1)) for c in part} != {tuple(c.seed(2)) for c in part}  # --seed counts

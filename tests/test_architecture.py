"""The layers import only downwards (docs/architecture.md, take5_arena/__init__.py):

    take5 (the SDK)
      -> take5_arena.referee | take5_arena.leaderboard (never each other)
      -> take5_arena.standings (where the store meets the leaderboard)
      -> take5_arena.service (the arena service)
      -> take5_arena.web (the arena's web pages, beside the service in `referee serve --web`)
      -> take5_arena.cli (the command line)

take5_arena.errors, the platform's error base, sits below every take5_arena layer. Read from the
source with ``ast``, so an import hidden inside a function counts as much as one at the top of a
module.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT

#: layer (a module-name prefix) -> its folder or file
LAYERS = {
    "take5": ROOT / "sdk" / "take5",
    "take5_arena.errors": ROOT / "take5_arena" / "errors.py",
    "take5_arena.referee": ROOT / "take5_arena" / "referee",
    "take5_arena.leaderboard": ROOT / "take5_arena" / "leaderboard",
    "take5_arena.standings": ROOT / "take5_arena" / "standings.py",
    "take5_arena.service": ROOT / "take5_arena" / "service",
    "take5_arena.web": ROOT / "take5_arena" / "web",
    "take5_arena.cli": ROOT / "take5_arena" / "cli",
}
_BASE = {"take5", "take5_arena.errors"}
#: what each layer may import from the others
ALLOWED = {
    "take5": set(),
    "take5_arena.errors": set(),
    "take5_arena.referee": _BASE,
    "take5_arena.leaderboard": _BASE,
    "take5_arena.standings": _BASE | {"take5_arena.referee", "take5_arena.leaderboard"},
    "take5_arena.service": _BASE
    | {"take5_arena.referee", "take5_arena.leaderboard", "take5_arena.standings"},
    "take5_arena.web": _BASE
    | {
        "take5_arena.referee",
        "take5_arena.leaderboard",
        "take5_arena.standings",
        "take5_arena.service",
    },
    "take5_arena.cli": set(LAYERS) - {"take5_arena.cli"},
}
#: the package's own __init__ and __main__ (the entry point): not a layer of their own
TOP = {ROOT / "take5_arena" / "__init__.py", ROOT / "take5_arena" / "__main__.py"}


def layer_of(module: str) -> str | None:
    """The layer a module name belongs to (the longest matching prefix), or None (outside code)."""
    best = None
    for layer in LAYERS:
        if (module == layer or module.startswith(layer + ".")) and (
            best is None or len(layer) > len(best)
        ):
            best = layer
    if best is None and module == "take5_arena":
        return "take5_arena"
    return best


def _module_name(path: Path) -> str:
    base = ROOT / "sdk" if path.is_relative_to(ROOT / "sdk") else ROOT
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str | None = None) -> list[tuple[int, str]]:
    """(line, imported module) for every import statement in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = (module or _module_name(path)).split(".")
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def _files(folder: Path) -> list[Path]:
    if folder.is_file():
        return [folder]
    return [
        p
        for p in sorted(folder.rglob("*.py"))
        if not {"v1", "api"} & set(p.relative_to(folder).parts[:-1])
    ]


def all_imports() -> list[tuple[str, Path, int, str]]:
    out = []
    for layer, folder in LAYERS.items():
        for path in _files(folder):
            for line, name in imports_of(path):
                out.append((layer, path, line, name))
    return out


def test_every_module_is_in_a_layer():
    modules = [
        p for p in (ROOT / "take5_arena").rglob("*.py") if p not in TOP and "api" not in p.parts
    ]
    assert [str(p) for p in modules if layer_of(_module_name(p)) is None] == []


def test_the_walker_sees_imports_inside_functions(tmp_path):
    source = LAYERS["take5_arena.referee"] / "tournament" / "round_robin.py"
    assert any(name == "take5_arena.referee.store" for _, name in imports_of(source))
    probe = tmp_path / "probe.py"  # read as if it were take5_arena/referee/probe.py
    probe.write_text(
        "def f():\n    from ..leaderboard import ratings\n    import "
        "take5_arena.leaderboard.publish\n"
    )
    names = [n for _, n in imports_of(probe, "take5_arena.referee.probe")]
    assert names == ["take5_arena.leaderboard", "take5_arena.leaderboard.publish"]


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_imports_only_the_layers_below_it(layer):
    bad = []
    for own, path, line, name in all_imports():
        other = layer_of(name)
        if own != layer or other is None or other == layer:
            continue
        if other not in ALLOWED[layer]:
            bad.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    assert not bad, "imports across layers:\n" + "\n".join(bad)


def test_no_cycles_between_layers():
    edges: dict[str, set[str]] = {p: set() for p in LAYERS}
    for own, _path, _line, name in all_imports():
        other = layer_of(name)
        if other is not None and other != own and other in LAYERS:
            edges[own].add(other)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = [p for p in LAYERS if reaches(p, p, {p})]
    assert not cycles, f"layers in an import cycle: {cycles} ({edges})"


def test_the_entry_points_import_nothing_before_their_signal_handlers():
    """`import take5_arena` and `import take5_arena.cli` run nothing; the entry module needs only
    signal and sys (already loaded) before it installs its handlers (tests/test_match.py)."""
    for path in (
        ROOT / "take5_arena" / "__init__.py",
        ROOT / "take5_arena" / "cli" / "__init__.py",
    ):
        assert imports_of(path) == [], path
    top_level = [
        n
        for n in ast.parse((ROOT / "take5_arena" / "cli" / "entry.py").read_text()).body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    ]
    assert sorted(a.name for n in top_level for a in n.names) == [
        "FrameType",
        "annotations",
        "signal",
        "sys",
    ]


def module_graph() -> dict[str, set[str]]:
    """take5_arena's modules -> the modules of take5_arena each imports: at any depth (an import
    inside a function or under TYPE_CHECKING is an edge too, so moving an import into a function
    does not hide a loop), ``from package import module`` naming the module itself."""
    paths = {
        _module_name(p): p
        for p in (ROOT / "take5_arena").rglob("*.py")
        if "api" not in p.relative_to(ROOT / "take5_arena").parts[:-1]
    }
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                (base,) = {n for line, n in imports_of(path, module) if line == node.lineno} or {""}
                targets |= {
                    f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names
                }
        graph[module] = {t for t in targets if t in paths and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_sees_a_loop_through_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loop_anywhere_in_the_platform():
    """No module of take5_arena reaches itself through its imports, not even through one inside a
    function: such an import hides a loop, it does not remove it."""
    graph = module_graph()
    assert (
        "take5_arena.referee.tournament.run.launchers"
        in graph["take5_arena.referee.tournament.run.table"]
    )
    found = cycles(graph)
    assert not found, "import loops:\n" + "\n".join(" <-> ".join(c) for c in found)


_TOURNAMENT = "take5_arena.referee.tournament"


def test_the_tournament_plan_imports_nothing_that_plays():
    """plan/ (settings, schedule, deals, adaptive, swiss) is data: it imports nothing of run/ (the
    executors among it) nor the commands above both, and nothing of the sandbox (the limits its
    settings hold are plain data in take5_arena/referee/limits.py)."""
    plan = ROOT / "take5_arena" / "referee" / "tournament" / "plan"
    above = ("round_robin", "settle", "status", "submission", "swiss", "run")
    bad = []
    for path in _files(plan):
        for line, name in imports_of(path):
            playing = any(
                name == f"{_TOURNAMENT}.{m}" or name.startswith(f"{_TOURNAMENT}.{m}.")
                for m in above
            )
            sandbox = name == "take5_arena.referee.sandbox" or name.startswith(
                "take5_arena.referee.sandbox."
            )
            if playing or sandbox or name.split(".")[0] in ("docker", "distributed", "grpc"):
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    assert not bad, "\n".join(bad)


def _loaded_after(code: str) -> set[str]:
    """The modules loaded by ``code`` in a fresh interpreter."""
    probe = code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_reading_a_plan_loads_no_docker_dask_or_run_code():
    loaded = _loaded_after(
        "\n".join(
            f"import {_TOURNAMENT}.plan.{m}"
            for m in ("settings", "schedule", "deals", "adaptive", "swiss")
        )
    )
    bad = {m for m in loaded if m.split(".")[0] in ("docker", "distributed", "grpc")}
    bad |= {m for m in loaded if m.startswith(f"{_TOURNAMENT}.run")}
    assert not bad, sorted(bad)


def test_a_local_tournament_run_loads_no_docker_module(tmp_path):
    """`referee tournament run --sandbox local` plays without the Docker SDK (651 modules a run
    used to load for nothing): the launcher is imported per seat that plays in Docker."""
    from take5_arena.referee.tournament import submit

    for name in ("random", "lowest"):
        submit(tmp_path, EXAMPLES / name, name, sandbox="local")
    args = ["tournament", "run", "-t", str(tmp_path), "-n", "2", "-g", "2", "--sandbox", "local"]
    loaded = _loaded_after(
        "from take5_arena.cli.main import main\n"
        "try:\n"
        f"    main({args!r}, prog_name='referee')\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
    )
    assert "take5_arena.referee.tournament.run.table" in loaded  # it did play
    assert sorted(m for m in loaded if m.split(".")[0] == "docker") == []


#: Modules being restructured elsewhere in the same step (issue 22): checked once that lands.
ALL_PENDING: set[str] = set()


def _isort_key(name: str) -> tuple[int, list[int | str]]:
    """ruff's order for __all__ (RUF022): CONSTANTS, then Classes, then the rest, each natural."""
    kind = 0 if len(name) > 1 and name.upper() == name else 1 if name[:1].isupper() else 2
    return kind, [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return None


def _public_bindings(tree: ast.Module, is_package: bool) -> set[str]:
    """The public names a module binds itself: functions, classes and assignments at its top level,
    and in a package's __init__ what it imports from its own modules. Loggers and type variables
    are public by name only."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, (ast.Name, ast.Attribute))
                and (getattr(value.func, "id", None) or getattr(value.func, "attr", None))
                in ("getLogger", "TypeVar")
            ):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and is_package and node.level:
            names |= {a.asname or a.name for a in node.names}
    return {n for n in names if not n.startswith("_")}


def _modules_with_all() -> list[tuple[str, Path, list[str], ast.Module]]:
    found = []
    for folder in (LAYERS["take5"], ROOT / "take5_arena"):
        for path in _files(folder):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            declared = _declared_all(tree)
            if declared is not None:
                found.append((_module_name(path), path, declared, tree))
    return found


@pytest.mark.parametrize(
    "module, path, declared, tree",
    [m for m in _modules_with_all() if m[0] not in ALL_PENDING],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_all_is_sorted_and_is_what_the_module_exports(module, path, declared, tree):
    """`__all__` lists each public name the module defines (a package's __init__: re-exports), in
    ruff's order, and every name in it exists (also the ones a module loads on first use)."""
    assert declared == sorted(set(declared), key=_isort_key), f"{module}: __all__ is not sorted"
    imported = importlib.import_module(module)
    assert [n for n in declared if not hasattr(imported, n)] == [], f"{module}: missing names"
    unlisted = _public_bindings(tree, path.name == "__init__.py") - set(declared)
    assert not unlisted, f"{module} defines public names not in __all__: {sorted(unlisted)}"


def test_the_sdk_and_the_platform_declare_all():
    """The SDK's package and the platform's package entry points say what they export."""
    modules = {m for m, *_ in _modules_with_all()}
    assert {"take5", "take5.bots", "take5_arena.referee.match"} <= modules


# The tests reach what they check through public names (docs/maintainers/testing.md). The one kind
# of exception: a fault-injection seam, where a test makes one private step fail at a precise point
# (a crash between two writes) that no public call can reach. Each is named here with its reason.
PRIVATE_SEAMS = {
    ("test_accounts.py", "_copy_old_accounts"): "a crash between the copy and the drop of a move",
    ("test_core.py", "_CORE"): "the pure-Python reference and the compiled core in one process",
    ("test_batch.py", "_KEEP"): "every draw of the shuffle rejected, a 1e-16 chance made certain",
    ("test_shipping.py", "_ship_one"): "a worker that says it holds an archive it lacks",
    ("test_shipping.py", "_client"): "the executor's Dask client, to wait for the workers",
    ("test_docker_reuse.py", "_current"): "which container a handle used, warm or cold",
    ("test_docker_reuse.py", "_standby"): "which spare containers wait, and for which image",
    (
        "test_docker_reuse.py",
        "_prune",
    ): "the spares' eviction run now rather than at the next start",
    ("test_docker_sandbox.py", "_current"): "... the same, for the sandbox's own handle",
    ("test_ratings.py", "_fit_logits"): "the fit's inner solve against a deliberately bad start",
    ("test_ratings.py", "_design_scales"): "the LOS's design-effect rule, swapped for the old one",
    ("test_ratings.py", "_spread_grid"): "the LOS's field-spread prior, read for each kind",
    ("test_several_hosts.py", "_fetch"): "each read of an archive out of the database, counted",
}
# Private names of the standard library and of namedtuples, not of this project.
NOT_OURS = {"_replace", "_asdict", "_fields", "_make", "_getframe", "_exit", "_current_frames"}


def private_uses(tree: ast.AST) -> set[str]:
    """The private attributes a test module reads of anything but its own objects (self, cls)."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in NOT_OURS:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.add(name)
    return found


def test_the_tests_use_public_names_but_for_named_seams():
    wrong = [
        f"{path.name}: .{name}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for name in private_uses(ast.parse(path.read_text(), str(path)))
        if (path.name, name) not in PRIVATE_SEAMS
    ]
    assert not wrong, f"tests reaching private names (use a public one, or name a seam): {wrong}"


def test_every_named_seam_is_still_used():
    used = {
        (path.name, name)
        for path in (ROOT / "tests").glob("*.py")
        for name in private_uses(ast.parse(path.read_text(), str(path)))
    }
    assert set(PRIVATE_SEAMS) <= used, set(PRIVATE_SEAMS) - used


#: The size limits of the house (issue 44): a module past 800 lines holds more than one idea, a
#: function past 100 lines more than one step. Counted from the ``def`` line to the last line of the
#: body (decorators apart), over the platform and the SDK; generated code (``*_pb2*``) is exempt.
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100
#: Each exception with its reason. Only what another branch is splitting at this moment belongs
#: here; the entry leaves when that branch lands.
SIZE_EXCEPTIONS = {}


def oversized(path: Path, name: str) -> list[str]:
    """What in one source file is over the limits: ``name`` (its path as written in
    SIZE_EXCEPTIONS) with its length, and ``name::function`` for each long function or method."""
    text = path.read_text(encoding="utf-8")
    found = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{name} ({lines} lines)")
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}::{node.name} ({length} lines)")
    return found


def _sized_files() -> list[tuple[Path, str]]:
    return [
        (path, path.relative_to(ROOT).as_posix())
        for folder in (ROOT / "take5_arena", ROOT / "sdk" / "take5")
        for path in sorted(folder.rglob("*.py"))
        if "_pb2" not in path.name
    ]


def test_the_size_check_counts_modules_and_functions(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    probe = tmp_path / "probe.py"
    probe.write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert oversized(probe, "probe.py") == [f"probe.py::long ({MAX_FUNCTION_LINES + 1} lines)"]
    probe.write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert oversized(probe, "probe.py") == [f"probe.py ({MAX_MODULE_LINES + 1} lines)"]


def test_no_module_over_800_lines_and_no_function_over_100():
    found = [item for path, name in _sized_files() for item in oversized(path, name)]
    over = [item for item in found if item.split(" (")[0] not in SIZE_EXCEPTIONS]
    assert not over, "over the size limits (split it, or give a reason in SIZE_EXCEPTIONS):\n" + (
        "\n".join(over)
    )


def test_every_size_exception_is_still_needed():
    """An exception whose module or function has come under the limits (or gone) leaves the list,
    so the list says only what is still true."""
    found = {item.split(" (")[0] for path, name in _sized_files() for item in oversized(path, name)}
    assert set(SIZE_EXCEPTIONS) <= found, sorted(set(SIZE_EXCEPTIONS) - found)

"""The layers import only downwards (docs/architecture.md, take5_arena/__init__.py):

    take5 (the SDK)
      -> take5_arena.referee | take5_arena.leaderboard (never each other)
      -> take5_arena.standings (where the store meets the leaderboard)
      -> take5_arena.service (the arena service)
      -> take5_arena.cli (the command line)

take5_arena.errors, the platform's error base, sits below every take5_arena layer. Read from the
source with ``ast``, so an import hidden inside a function counts as much as one at the top of a
module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: layer (a module-name prefix) -> its folder or file
LAYERS = {
    "take5": ROOT / "sdk" / "take5",
    "take5_arena.errors": ROOT / "take5_arena" / "errors.py",
    "take5_arena.referee": ROOT / "take5_arena" / "referee",
    "take5_arena.leaderboard": ROOT / "take5_arena" / "leaderboard",
    "take5_arena.standings": ROOT / "take5_arena" / "standings.py",
    "take5_arena.service": ROOT / "take5_arena" / "service",
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
    source = LAYERS["take5_arena.referee"] / "tournament" / "run.py"
    assert any(name == "take5_arena.referee.store" for _, name in imports_of(source))
    probe = tmp_path / "probe.py"  # read as if it were take5_arena/referee/probe.py
    probe.write_text(
        "def f():\n    from ..leaderboard import ratings\n    import take5_arena.leaderboard.publish\n"
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


def test_imports_inside_functions_are_documented_lazy_imports():
    """An import of the project's own code inside a function hides a cycle, unless it is a lazy
    import for start-up time; those say so in a comment ("lazy") in the function, on or above it."""
    bad = []
    for layer, folder in LAYERS.items():
        for path in _files(folder):
            lines = path.read_text(encoding="utf-8").splitlines()
            tree = ast.parse("\n".join(lines), str(path))
            for func in ast.walk(tree):
                if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(func):
                    if not isinstance(node, (ast.Import, ast.ImportFrom)):
                        continue
                    names = (
                        [a.name for a in node.names]
                        if isinstance(node, ast.Import)
                        else [node.module or ""]
                    )
                    ours = (isinstance(node, ast.ImportFrom) and node.level > 0) or any(
                        layer_of(n) is not None for n in names
                    )
                    if not ours:
                        continue
                    context = " ".join(lines[func.lineno - 1 : node.lineno]).lower()
                    if "lazy" not in context:
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "imports inside functions without a 'lazy' reason:\n" + "\n".join(bad)

"""The store split by concern (take5_arena/referee/store/store.py): each table written by one
repository alone, the connection private, no import loop in the package, no module of it over 800
lines. Read from the source with ``ast``, as tests/test_architecture.py reads the layers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from support import ROOT
from test_architecture import imports_of
from test_data_ownership import STORE_TABLES, strings_of

from take5_arena.referee.store import Store
from take5_arena.referee.store.audit import Audit
from take5_arena.referee.store.base import Repository

STORE = ROOT / "take5_arena" / "referee" / "store"
PACKAGE = "take5_arena.referee.store"
MAX_LINES = 800
#: table -> the one module of the store that writes it (``meta``: its helper in base.py, which the
#: schema, the settings and the schedules use, and the notes' deletion; on PostgreSQL the counter
#: of ``results.seq`` too, a function of postgres.py's schema that the results' insert calls;
#: ``entrant_versions``: schema 4's migration, which fills in an older version's author)
WRITERS = {
    "meta": {"base.py", "settings.py", "postgres.py"},
    "entrants": {"versions.py"},
    "entrant_versions": {"versions.py", "schema.py"},
    "schedules": {"schedules.py"},
    "schedule_games": {"schedules.py"},
    "games": {"schedules.py"},
    "deal_keys": {"deal_keys.py"},
    "abandoned_games": {"deal_keys.py"},
    "results": {"results.py"},
    "seat_results": {"results.py"},
    "bot_output": {"results.py"},
    "infra_failures": {"results.py"},
    "runs": {"runs.py"},
}
_WRITE = re.compile(r"\b(?:INSERT(?: OR \w+)? INTO|REPLACE INTO|UPDATE|DELETE FROM)\s+(\w+)")


def written_tables(path: Path) -> list[tuple[int, str]]:
    """(line, table) of every table the module's SQL writes to."""
    return [(line, t) for line, text in strings_of(path) for t in _WRITE.findall(text)]


def module_graph() -> dict[str, set[str]]:
    """store module -> the store modules it imports (at any depth, the package's __init__ aside:
    it only gathers the names)."""
    modules = {p.stem for p in STORE.glob("*.py") if p.name != "__init__.py"}
    graph: dict[str, set[str]] = {}
    for name in modules:
        path = STORE / f"{name}.py"
        graph[name] = set()
        for _, imported in imports_of(path):
            if imported.startswith(PACKAGE + "."):
                graph[name].add(imported[len(PACKAGE) + 1 :].split(".")[0])
    return graph


def a_loop(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop of the graph (its modules in order, the first one again at the end)."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_every_table_has_one_writer() -> None:
    assert set(WRITERS) == STORE_TABLES


def test_the_search_finds_every_kind_of_write(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        'A = "INSERT OR IGNORE INTO games(game_id) VALUES (?)"\n'
        'B = f"UPDATE runs SET done = {1} WHERE run_id = ?"\n'
        'C = "DELETE FROM meta WHERE key = ?"\n'
        'D = "SELECT * FROM results JOIN games"\n'
    )
    assert set(written_tables(probe)) == {(1, "games"), (2, "runs"), (3, "meta")}


#: The copy of a whole store into a new, empty one (backup and restore of a PostgreSQL store,
#: a move between the backends) writes every table row for row, in one transaction, and nothing
#: else: it is no repository's concern to hand its rows to another database.
COPIER = "transfer.py"


def test_each_table_is_written_by_its_repository_alone() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: writes {table}"
        for path in sorted(STORE.glob("*.py"))
        if path.name != COPIER
        for line, table in written_tables(path)
        if table in WRITERS and path.name not in WRITERS[table]
    ]
    assert not bad, "a table written outside its repository:\n" + "\n".join(bad)


def test_the_loop_finder_finds_the_loop_the_store_had() -> None:
    old = {"store": {"backup"}, "backup": {"store", "verify"}, "verify": {"integrity"}}
    old["integrity"] = {"store"}
    assert a_loop(old) == ["backup", "store", "backup"]
    assert a_loop({"store": {"results"}, "results": {"records"}, "records": set()}) is None


def test_no_import_loop_in_the_store() -> None:
    graph = module_graph()
    assert {"store", "results", "versions", "backup"} <= set(graph)
    assert a_loop(graph) is None


def test_the_walker_sees_the_store_modules_imports() -> None:
    assert "base" in module_graph()["results"]


@pytest.mark.parametrize("path", sorted(STORE.glob("*.py")), ids=lambda p: p.name)
def test_no_store_module_is_over_800_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name}: {lines} lines"


def test_the_connection_is_private(tmp_path: Path) -> None:
    """Callers get repositories, never the connection: no public attribute of a store holds it,
    and no code outside the store package reaches for the private one."""
    with Store(tmp_path / "t", create=True) as store:
        public = {k: v for k, v in vars(store).items() if not k.startswith("_")}
        assert not hasattr(store, "db")
        assert {k for k, v in public.items() if isinstance(v, Repository)} == {
            "settings",
            "deal_keys",
            "versions",
            "schedules",
            "records",
            "results",
            "runs",
            "audit",
            "live",
            "archives",
        }
        assert isinstance(store.audit, Audit)
        assert set(public) - {k for k, v in public.items() if isinstance(v, Repository)} == {
            "directory",
            "path",
            "schema",
            "upgrade_backup",
            "url",
        }
    bad = []
    for folder in ("take5_arena", "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.is_relative_to(STORE):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            bad += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Attribute)
                and node.attr == "_db"
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ]
    assert not bad, "the store's connection used outside the store:\n" + "\n".join(bad)

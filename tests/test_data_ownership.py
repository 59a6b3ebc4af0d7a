"""Each SQLite file has one owner, and only the owner's code queries its tables
(docs/architecture.md, "Who owns which data"):

* the tournament's store (``tournament.sqlite``): take5_arena/referee/store/, whose methods every
  other layer calls (the arena service, the standings, the command line);
* the arena's accounts (``accounts.sqlite``): take5_arena/service/authors/.

Read from the source with ``ast``: every string literal of the platform's code (f-strings included)
is searched for SQL naming a table (``FROM``, ``JOIN``, ``INTO``, ``UPDATE``, ``TABLE`` and the
name). Tests may read the files directly: they are independent observers of what was written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from take5_arena.referee.store import schema as store_module
from take5_arena.service import authors

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "take5_arena"
_SQL_TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE(?: IF (?:NOT )?EXISTS)?)\s+(\w+)")
_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")


def tables_of(schema: str) -> set[str]:
    return set(_CREATE.findall(schema))


STORE = PLATFORM / "referee" / "store"
ACCOUNTS = PLATFORM / "service" / "authors"
STORE_TABLES = tables_of(store_module.SCHEMA)
ACCOUNT_TABLES = tables_of(authors.SCHEMA)
#: table -> the files or folders whose code alone may name it in SQL (each file has a `meta`)
OWNERS: dict[str, set[Path]] = {}
for table in STORE_TABLES:
    OWNERS.setdefault(table, set()).add(STORE)
for table in ACCOUNT_TABLES:
    OWNERS.setdefault(table, set()).add(ACCOUNTS)


def strings_of(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal in the file; an f-string as its literal parts joined."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = " ".join(
                v.value
                for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
            found.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


def sql_tables(text: str) -> set[str]:
    return set(_SQL_TABLE.findall(text))


def owned_by(path: Path, owners: set[Path]) -> bool:
    return any(path == o or (o.is_dir() and path.is_relative_to(o)) for o in owners)


def test_the_schemas_are_read() -> None:
    assert {"entrants", "entrant_versions", "games", "results", "seat_results"} <= STORE_TABLES
    assert {"meta", "arena_authors", "arena_bots", "arena_submissions"} == ACCOUNT_TABLES


def test_the_search_finds_sql_in_every_kind_of_string(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        'A = "SELECT name FROM entrants"\nB = (\n    "SELECT r.record FROM results r "\n    "JOIN '
        'games g ON g.game_id = r.game_id"\n)\ndef f(t):\n    return db.execute(f"UPDATE '
        'seat_results SET x = {t} WHERE 1")\nC = "the games from results are rated"  # prose in '
        'lower case is not SQL\nD = """\nINSERT INTO arena_bots(bot_name) VALUES (?)\n"""\n'
    )
    found: dict[int, set[str]] = {}
    for line, text in strings_of(probe):
        found.setdefault(line, set()).update(sql_tables(text))
    assert found[1] == {"entrants"}
    assert found[3] == {"results", "games"}
    assert found[7] == {"seat_results"}
    assert found[8] == set()
    assert found[9] == {"arena_bots"}


def test_only_the_owner_of_a_file_queries_its_tables() -> None:
    bad = []
    for path in sorted(PLATFORM.rglob("*.py")):
        if "api" in path.relative_to(PLATFORM).parts:  # generated gRPC code
            continue
        bad.extend(
            f"{path.relative_to(ROOT)}:{line}: SQL on {table}"
            for line, text in strings_of(path)
            for table in sorted(sql_tables(text) & set(OWNERS))
            if not owned_by(path, OWNERS[table])
        )
    assert not bad, (
        "SQL on a table outside its owner (add a method to the owner instead):\n" + "\n".join(bad)
    )

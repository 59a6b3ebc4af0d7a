"""Suite-wide rules and the shared fixtures (paths and helpers that are not fixtures are in
support.py).

In CI (``CI`` set) a skipped test is a failure, unless its reason is one of the few listed here and
in README.md ("Skips allowed in CI"): CI must not pass by not running."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import support
from click.testing import CliRunner, Result
from hypothesis.configuration import set_hypothesis_home_dir
from support import EXAMPLES, in_ci

from take5_arena.cli.main import main
from take5_arena.referee.store import Store

#: Skips that CI accepts, by a fragment of their reason (README.md lists them with the why).
CI_ALLOWED_SKIPS = (
    # the shared rules text lives beside the team's clones, not in a fresh one
    "../shared/RULES.md",
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not (in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr)
    if any(fragment in reason for fragment in CI_ALLOWED_SKIPS):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped in CI, which the suite does not allow: {reason}"


def pytest_configure(config: pytest.Config) -> None:
    """Commands the tests start get SIGINT as a terminal gives it: at its default.

    CI runners (and shells, for a script's background jobs) start the suite with SIGINT ignored,
    and a child inherits that until its own code installs a handler: a signal that lands while
    the interpreter itself is still starting is then lost, not delivered, which no code of ours
    can change. A Python-level handler here is reset to the default in every child at exec.
    tests/test_match.py checks separately that a command started with SIGINT ignored still stops."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Hypothesis keeps its examples (a failure found is replayed first next time) outside the
    # checkout: no test run writes into the source tree.
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "take5-hypothesis")


@pytest.fixture
def referee_cli() -> Callable[[Sequence[str]], Result]:
    """``referee_cli(["play", "-n", "3"])``: the `referee` group run in-process (click's runner),
    its exit code and output in the result. Tests of a real process use ``support.referee``."""
    return functools.partial(CliRunner().invoke, main)


@pytest.fixture
def example_bots() -> Path:
    """example_bots/ of this checkout (read it; copy a bot into tmp_path to change it)."""
    return EXAMPLES


@pytest.fixture
def empty_tournament(tmp_path: Path) -> Path:
    """A tournament directory with its store created and nothing in it yet."""
    directory = tmp_path / "tournament"
    Store(directory, create=True).close()
    return directory


@pytest.fixture(scope="session")
def node_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Node.js example bot, ready to run, in a temporary copy (support.node_example)."""
    return support.node_example(tmp_path_factory.mktemp("examples") / "node")


@pytest.fixture(scope="session")
def go_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go example bot, built, in a temporary copy (support.go_example)."""
    return support.go_example(tmp_path_factory.mktemp("examples") / "go")


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of a PostgreSQL server for the store's tests: ``TAKE5_TEST_POSTGRES``, else this
    checkout's own cluster when it is up (scripts/setup-postgres.sh starts it; scripts/test.sh
    runs it). Without one the test skips with the reason (fails in CI)."""
    url = os.environ.get("TAKE5_TEST_POSTGRES", "").strip()
    if not url:
        found = subprocess.run(
            ["bash", str(support.ROOT / "scripts" / "setup-postgres.sh"), "--url"],
            capture_output=True,
            text=True,
            check=False,
        )
        url = found.stdout.strip() if found.returncode == 0 else ""
    if not url:
        support.unavailable(
            "no PostgreSQL server (bash scripts/setup-postgres.sh starts one; or set "
            "TAKE5_TEST_POSTGRES=postgresql://...)"
        )
    try:
        import psycopg
    except ImportError:
        support.unavailable("psycopg is not installed (pip install 'take5-arena[postgres]')")
    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as error:
        support.unavailable(f"the PostgreSQL server at {url} does not answer: {error}")
    return url


@pytest.fixture
def new_postgres_database(postgres_server: str) -> Iterator[Callable[[], str]]:
    """``new_postgres_database()``: the URL of a new, empty database on the test server (each
    dropped after the test)."""
    import psycopg

    made: list[str] = []

    def make() -> str:
        name = f"take5_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        made.append(name)
        parts = urlsplit(postgres_server)  # (urlunsplit drops the empty host of a socket's URL)
        query = f"?{parts.query}" if parts.query else ""
        return f"{parts.scheme}://{parts.netloc}/{name}{query}"

    yield make
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        for name in made:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(new_postgres_database: Callable[[], str]) -> str:
    """A new, empty database on the test server, for one test (dropped after it)."""
    return new_postgres_database()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend_url(request: pytest.FixtureRequest) -> str | None:
    """Each store test once per backend: None (SQLite, the file in the tournament directory) and
    the URL of a new PostgreSQL database (``Store(dir, create=True, url=...)``)."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url

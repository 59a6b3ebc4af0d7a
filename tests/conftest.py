"""Suite-wide rules. In CI (``CI`` set) a skipped test is a failure, unless its reason is one of
the few listed here and in README.md ("Skips allowed in CI"): CI must not pass by not running."""

from __future__ import annotations

import os
import signal

import pytest

#: Skips that CI accepts, by a fragment of their reason (README.md lists them with the why).
CI_ALLOWED_SKIPS = (
    "../shared/RULES.md",  # the shared rules text lives beside the team's clones, not in a fresh one
)


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not (_ci() and report.skipped) or hasattr(report, "wasxfail"):
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

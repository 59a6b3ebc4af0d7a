"""A validation that fails for the arena's own reasons once its version is entered, or while it is
being entered, is tried again and the retry passes (issue 46): before, a raise after the store had
the version (the accounts' claim of the name failing: a locked or full disk) left the name in the
store with no claim, so every retry was refused with "the name was taken meanwhile" and the bot
played as the house's. Nothing is stored twice: one version, its validation games once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from arena_support import plain_bot

from take5_arena.referee.archive import ArchiveLimits
from take5_arena.referee.kinds import SandboxKind
from take5_arena.referee.store import Store
from take5_arena.referee.store.versions import Versions
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.submission import VALIDATION_PREFIX
from take5_arena.service.authors import Accounts, SubmissionRow, SubmissionStatus
from take5_arena.service.authors.claims import BotClaims
from take5_arena.service.client import pack_folder
from take5_arena.service.intake import Spool
from take5_arena.service.submissions import SubmissionQueue


class DiskError(OSError):
    """The arena's own failure at one moment of a validation."""


def _send(queue: SubmissionQueue, spool: Spool, author: str, name: str, folder: Path) -> str:
    packed = pack_folder(folder)
    who = queue.accounts.author(author)
    declared = queue.check(who, name, len(packed.data), packed.sha256)
    archive = spool.receive(
        [packed.data], size=len(packed.data), sha256=packed.sha256, max_bytes=declared.max_bytes
    )
    return queue.record(who, declared, archive).id


@pytest.fixture
def arena(tmp_path):
    directory = tmp_path / "T"
    accounts = Accounts(directory, create=True)
    with Store(directory) as store:
        settings = TournamentSettings.from_json({}).updated({"players": 3, "sandbox": "local"})
        store.settings.set(settings.to_json())
    for name in ("alice", "bob", "carol"):
        accounts.add_author(name)
    spool = Spool(directory)
    queue = SubmissionQueue(
        directory,
        accounts,
        spool,
        sandbox=SandboxKind.LOCAL,
        timeout=None,
        limits=ArchiveLimits(),
        workers=1,
        retry_seconds=0.05,
    )
    queue.start()
    for author, pick in (("bob", "-1"), ("carol", "0")):
        sid = _send(queue, spool, author, f"{author}bot", plain_bot(tmp_path, f"{author}bot", pick))
        assert _judged(queue, sid).status == SubmissionStatus.ACCEPTED
    yield directory, queue, spool
    queue.close()


def _judged(queue: SubmissionQueue, sid: str, timeout: float = 180) -> SubmissionRow:
    """The submission once judged (``wait`` returns at each change: its progress, its retry)."""
    end = time.monotonic() + timeout
    row = queue.wait(sid, timeout)
    while not row.status.finished and time.monotonic() < end:
        row = queue.wait(sid, end - time.monotonic())
    return row


def _one_version_rated_once(directory: Path) -> None:
    with Store(directory) as store:
        assert [v.key for v in store.versions.all() if v.name == "alicebot"] == ["alicebot@1"]
        assert [s.description for s in store.schedules.all(VALIDATION_PREFIX)] == [
            "validation alicebot@1"
        ]


@pytest.mark.parametrize(
    "where",
    [
        "after the store entered it",
        "after the store entered it, and on its first look",  # the retry claims it
        "while the store enters it",
    ],
)
def test_a_validation_that_fails_after_entering_its_version_passes_when_retried(
    arena, tmp_path, monkeypatch, where
):
    directory, queue, spool = arena
    failed: list[str] = []
    if where.startswith("after"):
        claim = BotClaims.claim
        failures = 2 if "first look" in where else 1

        def claim_once(self: BotClaims, author: str, bot_name: str) -> None:
            if len(failed) < failures:
                failed.append(bot_name)
                raise DiskError("disk I/O error")
            claim(self, author, bot_name)

        monkeypatch.setattr(BotClaims, "claim", claim_once)
    else:
        add = Versions.add

        def add_once(self: Versions, *args: object, **kwargs: object) -> object:
            got = add(self, *args, **kwargs)  # type: ignore[arg-type]
            if not failed:
                failed.append(str(args[0]))
                raise DiskError("disk I/O error")
            return got

        monkeypatch.setattr(Versions, "add", add_once)
    sid = _send(
        queue, spool, "alice", "alicebot", plain_bot(tmp_path, "alicebot", "len(view.hand) // 2")
    )
    row = _judged(queue, sid)
    assert failed == ["alicebot"] * (2 if "first look" in where else 1)
    assert row.status == SubmissionStatus.ACCEPTED, row
    assert row.attempts == (0 if where == "after the store entered it" else 1)
    assert "against the pool's bots" in row.detail, row.detail
    assert queue.accounts.owner("alicebot") == "alice"
    _one_version_rated_once(directory)

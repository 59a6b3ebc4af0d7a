"""The arena service as its users meet it: the real server process (`referee serve`) and the real
client (`referee submit --server`, `my-bots`, `withdraw`, ...) over loopback.

Most tests share one server (local sandbox, tables of 2) to keep the file's run time modest; TLS,
the SIGKILL cases and the Docker ladder start their own. Hostile archives are sent with the
client library (the CLI's packer would refuse them before upload).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import grpc
import pytest
from arena_support import (
    SLOW_BOT,
    Server,
    add_author,
    cli,
    db_rows,
    games_recorded,
    make_tgz,
    member,
    packed,
    self_signed,
    wait_until,
)
from support import EXAMPLES, ROOT, referee_env, unavailable

from take5_arena.referee.archive import ArchiveLimits
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.client import Packed, pack_folder
from take5_arena.service.errors import ClientError

PROTO = ROOT / "proto" / "take5" / "arena" / "v1" / "arena.proto"


# ------------------------------------------------------------------------------------------------
# The shared arena


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    directory = tmp_path_factory.mktemp("arena") / "T"
    tokens = {
        name: add_author(directory, name, "--per-hour", "100") for name in ("alice", "bob", "carol")
    }
    server = Server(
        directory,
        "--sandbox",
        "local",
        "--players",
        "2",
        "-j",
        "1",
        "--publish-every-games",
        "2",
        "--publish-every-seconds",
        "1",
        "--bootstrap",
        "10",
    )
    yield directory, server, tokens
    assert server.stop() == 0, server.log
    assert "arena stopped" in server.log


def test_generated_code_matches_the_proto(tmp_path):
    """take5_arena/service/api/arena_pb2.py is what protoc makes of the .proto now (else:
    scripts/gen-proto.sh)."""
    from google.protobuf import descriptor_pb2

    out = tmp_path / "arena.desc"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-Itake5_arena/service/api={PROTO.parent}",
            f"--descriptor_set_out={out}",
            str(PROTO),
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    committed = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(committed)
    for message in fresh.message_type:
        for field in message.field:
            field.ClearField("json_name")
    assert committed == fresh, (
        "take5_arena/service/api/arena_pb2.py is stale: run scripts/gen-proto.sh and commit"
    )


def test_every_field_is_documented():
    """Every service, call, message, field and enum value has a comment just above it."""
    lines = PROTO.read_text().splitlines()
    declaration = re.compile(
        r"^\s*(service \w+|rpc \w+|message \w+|enum \w+|oneof \w+|"
        r"(repeated )?[\w.]+ \w+ = \d+;|[A-Z_]+ = \d+;)"
    )
    missing = [
        line.strip()
        for i, line in enumerate(lines)
        if declaration.match(line) and not lines[i - 1].strip().startswith("//")
    ]
    assert not missing, f"undocumented in arena.proto: {missing}"


def test_two_authors_submit_at_once(arena):
    directory, server, tokens = arena
    env = {k: v for k, v in referee_env().items() if k != "TAKE5_TOKEN"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "take5_arena",
                "submit",
                str(EXAMPLES / bot),
                "--server",
                server.address,
                "--token-file",
                str(tf),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for bot, tf in (
            ("random", _token_file(directory, "alice", tokens)),
            ("lowest", _token_file(directory, "bob", tokens)),
        )
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "new version v1" in out and "smoke games without a fault" in out, out
    assert db_rows(directory, "SELECT bot_name, author FROM arena_bots ORDER BY bot_name") == [
        ("lowest", "bob"),
        ("random", "alice"),
    ]


def ensure_pool(arena) -> None:
    """alice's random and bob's lowest are in the arena (submitted by the test above, or here when a
    test runs alone)."""
    directory, server, tokens = arena
    for author, bot in (("alice", "random"), ("bob", "lowest")):
        if not db_rows(directory, "SELECT 1 FROM arena_bots WHERE bot_name = ?", (bot,)):
            with server.client(tokens[author]) as client:
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED


def _token_file(directory: Path, name: str, tokens: dict) -> Path:
    path = directory.parent / f"{name}.token"
    path.write_text(tokens[name] + "\n")
    path.chmod(0o600)
    return path


def test_the_ladder_plays_and_standings_are_public(arena):
    directory, server, _tokens = arena
    ensure_pool(arena)
    wait_until(lambda: games_recorded(directory) >= 4, what="ladder games", server=server)
    server.wait_for(r"ladder: gauntlet for (random|lowest)@1")
    with server.client() as anonymous:  # public: no token

        def has_rows():
            return len(anonymous.standings().rows) >= 2

        wait_until(has_rows, what="standings through the API")
        reply = anonymous.standings()
        assert {r.bot for r in reply.rows} >= {"random", "lowest"}
        assert json.loads(reply.standings_json)["format"] == "take5-standings"
        gid = db_rows(directory, "SELECT game_id FROM results ORDER BY seq LIMIT 1")[0][0]
        record = json.loads(anonymous.record(gid).record_json)
        assert record["complete"] and record["game_id"] == gid
        with pytest.raises(ClientError) as caught:
            anonymous.record("no-such-game")
        assert caught.value.code == grpc.StatusCode.NOT_FOUND
    wait_until((directory / "site" / "standings.json").exists, what="the published site")
    site = json.loads((directory / "site" / "standings.json").read_text())
    assert {r["entrant"] for r in site["rows"]} >= {"random", "lowest"}
    shown = cli("arena-standings", "--server", server.address)
    assert shown.returncode == 0 and "random" in shown.stdout and "lowest" in shown.stdout
    # every game is recorded once, and every one verifies
    ids = [r[0] for r in db_rows(directory, "SELECT game_id FROM results")]
    assert len(ids) == len(set(ids))
    check = cli("verify", "--tournament", str(directory), "--quiet")
    assert check.returncode == 0, check.stdout + check.stderr


def _code(fn) -> tuple[grpc.StatusCode | None, str]:
    try:
        fn()
    except ClientError as error:
        return error.code, str(error)
    return None, ""


def test_wrong_missing_and_revoked_tokens(arena):
    directory, server, tokens = arena
    bad = tokens["alice"][:-4] + ("AAAA" if not tokens["alice"].endswith("AAAA") else "BBBB")
    for token in (bad, "t5a_000000000000_nope", "garbage", None):
        with server.client(token) as client:
            code, message = _code(client.my_bots)
        assert code == grpc.StatusCode.UNAUTHENTICATED, (token, code, message)
        assert ("no token" if token is None else "not valid") in message
    done = cli(
        "my-bots", "--server", server.address, token=bad
    )  # the real client: one line, exit 2
    assert done.returncode == 2 and "not valid" in done.stderr and "Traceback" not in done.stderr, (
        done.stderr
    )
    eve = add_author(directory, "eve")
    with server.client(eve) as client:
        assert client.my_bots().author == "eve"
        assert cli("authors", "revoke", "eve", "-t", str(directory)).returncode == 0
        code, message = _code(client.my_bots)
        assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in message
        code, message = _code(lambda: client.submit("evebot", pack_folder(EXAMPLES / "heuristic")))
        assert code == grpc.StatusCode.UNAUTHENTICATED
    done = cli("submit", str(EXAMPLES / "heuristic"), "--server", server.address, token=eve)
    assert done.returncode == 2 and "revoked" in done.stderr, done.stderr
    # neither the accounts nor the store ever hold a token (the accounts hold a salted hash)
    for name in ("accounts.sqlite", "tournament.sqlite"):
        raw = (directory / name).read_bytes()
        assert (
            tokens["alice"].encode() not in raw
            and tokens["alice"].split("_", 2)[2].encode() not in raw
        )
    listed = cli("authors", "list", "-t", str(directory))
    assert "eve" in listed.stdout and "revoked" in listed.stdout


def test_an_author_cannot_touch_another_authors_bot(arena):
    directory, server, tokens = arena
    ensure_pool(arena)
    with server.client(tokens["bob"]) as bob:
        for call in (
            lambda: bob.withdraw("random"),
            lambda: bob.faults("random"),
            lambda: bob.submit("random", pack_folder(EXAMPLES / "random")),
        ):
            code, message = _code(call)
            assert code == grpc.StatusCode.PERMISSION_DENIED and "another author" in message, (
                message
            )
        assert [b.name for b in bob.my_bots().bots] == ["lowest"]
        code, _ = _code(lambda: bob.withdraw("nosuchbot"))
        assert code == grpc.StatusCode.NOT_FOUND
    done = cli("withdraw", "random", "--server", server.address, token=tokens["bob"])
    assert done.returncode == 2 and "another author" in done.stderr, done.stderr
    assert db_rows(directory, "SELECT active FROM entrants WHERE name = 'random'") == [(1,)]


def _bomb() -> bytes:
    """A gzip bomb: 90 MB of zeros in about 90 KB; the unpacked total passes the limit while
    inflating."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        zeros = b"\0" * (30 * 1024 * 1024)
        for i in range(3):
            info = tarfile.TarInfo(f"blob{i}")
            info.size = len(zeros)
            tar.addfile(info, io.BytesIO(zeros))
    return raw.getvalue()


def _zip() -> bytes:
    import zipfile

    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("bot.py", "print(1)")
    return raw.getvalue()


HOSTILE = {
    "dotdot": lambda: make_tgz([member("bot.py"), member("../../escaped", b"pwned")]),
    "absolute": lambda: make_tgz([member("/tmp/take5-arena-escaped", b"pwned")]),
    "symlink": lambda: make_tgz(
        [member("bot.py"), member("link", None, tarfile.SYMTYPE, linkname="/etc/passwd")]
    ),
    "hardlink": lambda: make_tgz(
        [member("bot.py"), member("h", None, tarfile.LNKTYPE, linkname="bot.py")]
    ),
    "device": lambda: make_tgz(
        [member("bot.py"), member("null", None, tarfile.CHRTYPE, devmajor=1, devminor=3)]
    ),
    "fifo": lambda: make_tgz([member("bot.py"), member("pipe", None, tarfile.FIFOTYPE)]),
    "duplicate": lambda: make_tgz([member("bot.py", b"ok"), member("bot.py", b"evil")]),
    "deep": lambda: make_tgz([member("d/" * 40 + "bot.py")]),
    "many-files": lambda: make_tgz(
        [member(f"f{i}", b"") for i in range(ArchiveLimits().max_entries + 1)]
    ),
    "bomb": _bomb,
    "zip": _zip,
}


def test_hostile_archives_are_refused(arena):
    directory, server, tokens = arena
    spool = directory / "arena"
    with server.client(tokens["carol"]) as carol:
        for kind, build in HOSTILE.items():
            data = build()
            reply = carol.submit(f"hostile-{kind}", packed(data))
            assert reply.outcome == pb.SUBMIT_REFUSED, (kind, reply)
            assert reply.reason.startswith("unsafe archive: ") and "\n" not in reply.reason, (
                reply.reason
            )
            assert not (spool / "bots" / f"hostile-{kind}").exists()
            assert list((spool / "tmp").iterdir()) == []
        assert (
            not Path("/tmp/take5-arena-escaped").exists()
            and not (directory.parent.parent / "escaped").exists()
        )
        # an upload whose bytes do not match what was declared is never recorded
        data = make_tgz([member("bot.py")])
        liar = Packed(data, 1, hashlib.sha256(b"something else").hexdigest())
        with pytest.raises(ClientError) as caught:
            carol.submit("liar", liar)
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT and "SHA-256" in str(
            caught.value
        )
        # a declared size over the limit is refused before the upload
        big = Packed(b"", 1, "0" * 64)
        stub = pb_grpc.ArenaStub(carol.channel)
        request = iter(
            [
                pb.SubmitBotRequest(
                    metadata=pb.SubmitMetadata(
                        bot_name="big", archive_size=10**10, archive_sha256=big.sha256
                    )
                )
            ]
        )
        with pytest.raises(grpc.RpcError) as rpc:
            stub.SubmitBot(request, metadata=carol.metadata, timeout=60)
        assert rpc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert db_rows(
        directory, "SELECT COUNT(*) FROM arena_submissions WHERE bot_name IN ('liar', 'big')"
    ) == [(0,)]
    statuses = {
        r[0]
        for r in db_rows(directory, "SELECT status FROM arena_submissions WHERE author = 'carol'")
    }
    assert statuses == {"refused"}
    assert not list((spool / "uploads").glob(".part-*"))


def test_refused_bot_reason_and_faults(arena, tmp_path):
    """A bot that crashes at start is refused with the reason and its own output, which reaches the
    author's terminal escaped (it tries to clear the screen and retitle the terminal)."""
    _directory, server, tokens = arena
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    (crasher / "bot.py").write_text(
        "import sys\n"
        "print('crasher: missing weights.bin \\x1b[2J\\x1b]0;pwned\\x07', file=sys.stderr)\n"
        "sys.exit(1)\n"
    )
    done = cli("submit", str(crasher), "--server", server.address, token=tokens["carol"])
    assert done.returncode == 3, done.stdout + done.stderr
    assert "REFUSED crasher" in done.stderr and "crash" in done.stderr
    assert "missing weights.bin" in done.stderr and "\\x1b[2J" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    with server.client(tokens["carol"]) as carol:
        assert "missing weights.bin" in carol.faults("crasher").last_refusal_output
        assert any(
            s.bot_name == "crasher" and s.status == "refused" for s in carol.my_bots().submissions
        )
    shown = cli("my-faults", "crasher", "--server", server.address, token=tokens["carol"])
    assert (
        shown.returncode == 0
        and "missing weights.bin" in shown.stdout
        and "\x1b" not in shown.stdout
    )


#: What a hostile arena (or a bot's text it passes on unescaped) sends: bidi overrides and
#: isolates, zero-width characters, a BOM, terminal escapes (CSI, OSC), BEL, CR, a C1 control, DEL.
HOSTILE_TEXT = (
    "\u202egnp.exe\u202c \u2066x\u2069\u200b\u200d\u200f\ufeff \x1b[2J\x1b]0;pwned\x07\r\x9b\x7f"
)
RAW_CONTROLS = tuple("\u202e\u202c\u2066\u2069\u200b\u200d\u200f\ufeff\x1b\x07\r\x9b\x7f")


class HostileArena(pb_grpc.ArenaServicer):
    """An arena whose every string field is HOSTILE_TEXT: the client must show none of it raw."""

    def SubmitBot(self, request_iterator, context):
        for _ in request_iterator:
            pass
        return pb.SubmitBotResponse(
            outcome=pb.SUBMIT_REFUSED,
            submission_id=HOSTILE_TEXT,
            bot_name=HOSTILE_TEXT,
            reason=HOSTILE_TEXT,
            bot_output=f"line 1 {HOSTILE_TEXT}\nline 2 {HOSTILE_TEXT}\n",
        )

    def ListMyBots(self, request, context):
        version = pb.BotVersion(version=1, source_hash=HOSTILE_TEXT, submitted_at=HOSTILE_TEXT)
        return pb.ListMyBotsResponse(
            author=HOSTILE_TEXT,
            bots=[pb.MyBot(name=HOSTILE_TEXT, active=True, versions=[version])],
            submissions=[
                pb.Submission(
                    submission_id=HOSTILE_TEXT,
                    bot_name=HOSTILE_TEXT,
                    received_at=HOSTILE_TEXT,
                    status=HOSTILE_TEXT,
                    version=1,
                    detail=HOSTILE_TEXT,
                )
            ],
            limits=pb.AuthorLimits(max_active_bots=3),
        )

    def WithdrawBot(self, request, context):
        return pb.WithdrawBotResponse(bot_name=HOSTILE_TEXT, was_active=True)

    def Standings(self, request, context):
        row = pb.StandingsRow(rank=1, bot=HOSTILE_TEXT, rating=1500.0)
        return pb.StandingsResponse(
            rows=[row],
            games=1,
            computed_at=HOSTILE_TEXT,
            standings_json=json.dumps({"bot": HOSTILE_TEXT}),
        )

    def MyBotFaults(self, request, context):
        fault = pb.BotFault(
            game_id=HOSTILE_TEXT,
            version=1,
            kind=HOSTILE_TEXT,
            detail=HOSTILE_TEXT,
            log_tail=f"{HOSTILE_TEXT}\n{HOSTILE_TEXT}",
            finished_at=HOSTILE_TEXT,
        )
        return pb.MyBotFaultsResponse(
            bot_name=HOSTILE_TEXT, faults=[fault], last_refusal_output=f"{HOSTILE_TEXT}\n"
        )


def test_the_client_shows_a_hostile_arenas_text_inert(tmp_path):
    """Whatever the arena sends back, the author's terminal gets the SDK's visible escapes
    (take5/text.py) for every control and format character: `referee submit --server`, `my-bots`,
    `my-faults`, `withdraw` and `arena-standings` (also --json), each a real process."""
    from concurrent import futures

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_ArenaServicer_to_server(HostileArena(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hi')\n")
    address = f"127.0.0.1:{port}"
    try:
        runs = {
            "submit": cli("submit", str(bot), "--server", address, token="t"),
            "my-bots": cli("my-bots", "--server", address, token="t"),
            "my-faults": cli("my-faults", "x", "--server", address, token="t"),
            "withdraw": cli("withdraw", "x", "--server", address, token="t"),
            "arena-standings": cli("arena-standings", "--server", address),
            "arena-standings --json": cli("arena-standings", "--json", "--server", address),
        }
    finally:
        server.stop(None)
    assert runs["submit"].returncode == 3, runs["submit"].stderr
    for what, done in runs.items():
        assert "Traceback" not in done.stderr, (what, done.stderr)
        shown = done.stdout + done.stderr
        raw = [hex(ord(c)) for c in RAW_CONTROLS if c in shown]
        assert not raw, (what, raw, shown)
        if what != "arena-standings --json":
            assert "\\u202egnp.exe\\u202c" in shown and "\\x1b[2J" in shown, (what, shown)
    doc = json.loads(runs["arena-standings --json"].stdout)
    assert doc == {"bot": HOSTILE_TEXT}  # the same text, every character outside ASCII escaped


def test_limits_and_withdraw(arena):
    directory, server, _tokens = arena
    ensure_pool(arena)
    dave = add_author(
        directory, "dave", "--max-bots", "1", "--per-hour", "2", "--max-archive-mb", "0.05"
    )
    big = directory.parent / "bigbot"
    big.mkdir()
    (big / "bot.py").write_text((EXAMPLES / "random" / "bot.py").read_text())
    (big / "data.bin").write_bytes(os.urandom(100_000))
    with server.client(dave) as client:
        assert (
            client.submit("dave-1", pack_folder(EXAMPLES / "random")).outcome == pb.SUBMIT_ACCEPTED
        )
        code, message = _code(lambda: client.submit("dave-2", pack_folder(EXAMPLES / "lowest")))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "active bots" in message, message
        code, message = _code(lambda: client.submit("dave-1", pack_folder(big)))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit" in message, message
        done = cli("withdraw", "dave-1", "--server", server.address, token=dave)
        assert done.returncode == 0 and "withdrawn" in done.stdout
        assert db_rows(directory, "SELECT active FROM entrants WHERE name = 'dave-1'") == [(0,)]
        assert client.withdraw("dave-1").was_active is False
        # withdrawn: room for another bot, but the hourly limit (2) stops the third submission
        assert (
            client.submit("dave-2", pack_folder(EXAMPLES / "lowest")).outcome == pb.SUBMIT_ACCEPTED
        )
        code, message = _code(lambda: client.submit("dave-1", pack_folder(EXAMPLES / "random")))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "per hour" in message, message
        shown = cli("my-bots", "--server", server.address, token=dave)
        assert "dave-1 (withdrawn)" in shown.stdout and "dave-2 (active)" in shown.stdout, (
            shown.stdout
        )
        # the ladder leaves a withdrawn bot alone
        client.withdraw("dave-2")
    count = games_recorded(directory)
    wait_until(
        lambda: games_recorded(directory) >= count + 4, what="more ladder games", server=server
    )
    versions = {
        r[0]
        for r in db_rows(
            directory,
            "SELECT v.id FROM entrant_versions v JOIN entrants e "
            "ON e.id = v.entrant_id WHERE e.name LIKE 'dave-%'",
        )
    }
    late = db_rows(
        directory,
        "SELECT sr.version_id FROM seat_results sr JOIN results r ON r.game_id = sr.game_id "
        "WHERE r.seq > (SELECT MAX(seq) FROM results) - 2",
    )
    assert not versions & {r[0] for r in late}


# ------------------------------------------------------------------------------------------------
# Transport


def test_tls_with_a_self_signed_certificate(tmp_path):
    directory = tmp_path / "T"
    token = add_author(directory, "alice")
    cert, key = self_signed(tmp_path)
    server = Server(
        directory, "--cert", str(cert), "--key", str(key), "--no-ladder", "--sandbox", "local"
    )
    try:
        assert "with TLS" in server.log
        done = cli(
            "submit",
            str(EXAMPLES / "random"),
            "--server",
            server.address,
            "--ca",
            str(cert),
            token=token,
        )
        assert done.returncode == 0 and "new version v1" in done.stdout, done.stderr
        with server.client(token, ca=cert) as client:
            assert [b.name for b in client.my_bots().bots] == ["random"]
        plain = cli(
            "my-bots", "--server", server.address, token=token
        )  # plain text to a TLS server
        assert plain.returncode == 4 and "cannot reach" in plain.stderr
    finally:
        assert server.stop() == 0


def test_no_tls_means_loopback_only(tmp_path):
    done = cli("serve", "-t", str(tmp_path / "T"), "--listen", "0.0.0.0:0", "--no-ladder")
    assert (
        done.returncode == 2
        and "loopback only" in done.stderr
        and "--insecure-public" in done.stderr
    )
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------------------------------------
# Restart safety


def test_sigkill_during_upload_validation_and_game(tmp_path):
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100")
    args = (
        "--sandbox",
        "local",
        "--players",
        "2",
        "-j",
        "1",
        "--publish-every-seconds",
        "1",
        "--bootstrap",
        "0",
    )
    server = Server(directory, *args)
    try:
        with server.client(token) as client:
            for bot in ("random", "lowest"):
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
        wait_until(lambda: games_recorded(directory) >= 2, what="ladder games", server=server)

        # 1. killed during an upload: the half-received archive is discarded at the restart
        release = threading.Event()
        data = (
            pack_folder(EXAMPLES / "heuristic").data + b"\0" * 600_000
        )  # several chunks; never completed

        def stream():
            yield pb.SubmitBotRequest(
                metadata=pb.SubmitMetadata(
                    bot_name="half",
                    archive_size=len(data),
                    archive_sha256=hashlib.sha256(data).hexdigest(),
                )
            )
            yield pb.SubmitBotRequest(chunk=data[:200_000])
            release.wait(60)

        channel = grpc.insecure_channel(server.address)
        stub = pb_grpc.ArenaStub(channel)
        call = threading.Thread(
            target=lambda: _swallow(
                lambda: stub.SubmitBot(
                    stream(), metadata=[("authorization", f"Bearer {token}")], timeout=60
                )
            ),
            daemon=True,
        )
        call.start()
        wait_until(
            lambda: list((directory / "arena" / "uploads").glob(".part-*")),
            what="an upload in progress",
        )

        # 2. ... while a game is being played (the ladder never stops), and
        # 3. ... while a submission is being validated
        slow = tmp_path / "slow"
        slow.mkdir()
        (slow / "bot.py").write_text(SLOW_BOT)
        submit = subprocess.Popen(
            [sys.executable, "-m", "take5_arena", "submit", str(slow), "--server", server.address],
            env=referee_env(TAKE5_TOKEN=token),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(
            lambda: (
                db_rows(directory, "SELECT status FROM arena_submissions WHERE bot_name = 'slow'")
                == [("validating",)]
            ),
            what="the validation to start",
        )
        before = games_recorded(directory)
        planned = [r[0] for r in db_rows(directory, "SELECT schedule_id FROM schedules")]
        marks = ",".join("?" * len(planned))
        ids_before = {r[0] for r in db_rows(directory, "SELECT game_id FROM results")}
        server.kill()
        release.set()
        _out, err = submit.communicate(timeout=60)
        assert submit.returncode == 4 and "cannot reach" in err, err
        channel.close()
        assert list((directory / "arena" / "uploads").glob(".part-*")), (
            "the kill left the partial upload"
        )
        versions_before = db_rows(directory, "SELECT COUNT(*) FROM entrant_versions")[0][0]
        assert db_rows(
            directory, "SELECT COUNT(*) FROM arena_submissions WHERE bot_name = 'half'"
        ) == [(0,)]

        server = Server(directory, *args)
        server.wait_for(r"discarded \d+ half-received upload")
        assert not list((directory / "arena" / "uploads").glob(".part-*"))
        server.wait_for(r"validating submission .* \(alice/slow\) recorded before the restart")
        wait_until(
            lambda: (
                db_rows(directory, "SELECT status FROM arena_submissions WHERE bot_name = 'slow'")
                == [("accepted",)]
            ),
            what="the recorded submission to be validated after the restart",
            server=server,
        )
        assert (
            db_rows(directory, "SELECT COUNT(*) FROM entrant_versions")[0][0] == versions_before + 1
        )
        with server.client(token) as client:
            mine = client.my_bots()
        assert {b.name for b in mine.bots} == {"random", "lowest", "slow"}
        assert all(len(b.versions) == 1 for b in mine.bots)
        # no finished game lost or doubled; the ladder goes on (and replays the game cut off)
        wait_until(
            lambda: games_recorded(directory) >= before + 4, what="ladder games after the restart"
        )
        ids = [r[0] for r in db_rows(directory, "SELECT game_id FROM results")]
        assert len(ids) == len(set(ids)) and ids_before <= set(ids)
        wait_until(
            lambda: (
                db_rows(
                    directory,
                    "SELECT COUNT(*) FROM games g JOIN schedule_games s ON s.game_id = g.game_id "
                    f"WHERE g.status = 'pending' AND s.schedule_id IN ({marks})",
                    tuple(planned),
                )[0][0]
                == 0
            ),
            what="the games planned before the kill to be played",
        )
    finally:
        server.stop()


def _swallow(fn) -> None:
    try:
        fn()
    except grpc.RpcError:
        pass


# ------------------------------------------------------------------------------------------------
# Docker


@pytest.mark.docker
@pytest.mark.slow
def test_ladder_in_docker(tmp_path):
    from take5_arena.referee.sandbox.engine import engine_answers as docker_available

    if not docker_available():
        unavailable("no Docker engine")
    directory = tmp_path / "T"
    token = add_author(directory, "alice")
    server = Server(
        directory,
        "--sandbox",
        "docker",
        "--players",
        "2",
        "-j",
        "1",
        "--bootstrap",
        "0",
        "--publish-every-games",
        "1",
    )
    try:
        for bot in ("random", "lowest"):
            done = cli(
                "submit", str(EXAMPLES / bot), "--server", server.address, token=token, timeout=600
            )
            assert done.returncode == 0, done.stderr
        wait_until(
            lambda: games_recorded(directory) >= 2, timeout=300, what="ladder games in Docker"
        )
        record = json.loads(db_rows(directory, "SELECT record FROM results LIMIT 1")[0][0])
        assert record["complete"]
        wait_until((directory / "site" / "standings.json").exists, timeout=120, what="the site")
    finally:
        assert server.stop() == 0, server.log


def test_public_records_leave_out_the_bots_output():
    """Standings and records are public, a bot's own output is its author's: GetGameRecord drops the
    turns' `logs`, MyBotFaults gives the author their seat's lines up to the fault."""
    from take5_arena.service.messages import log_tail, public_record

    record = {
        "game_id": "g",
        "rounds": [
            {
                "round": 1,
                "turns": [
                    {"plays": [1, 2], "logs": [[0, "mine: thinking"], [1, "theirs: secret plan"]]},
                    {"plays": [3, 4], "logs": [[0, "mine: oops"]]},
                    {"plays": [5, 6], "logs": [[0, "mine: after the fault"]]},
                ],
            }
        ],
    }
    public = public_record(record)
    assert "logs" not in json.dumps(public) and public["rounds"][0]["turns"][1]["plays"] == [3, 4]
    assert record["rounds"][0]["turns"][0]["logs"]  # the stored record is untouched
    tail = log_tail(record, 0, {"round": 1, "turn": 2})
    assert tail == "mine: thinking\nmine: oops"


def test_gauntlet_planner():
    """A newcomer meets every other active bot, at a seat drawn for each table; afterwards the
    least-played bot is at every table."""
    from take5.shuffle import SplitMix64
    from take5_arena.service.ladder_planning import GauntletPlanner, PoolView

    planner = GauntletPlanner(gauntlet_tables=2)
    pool = PoolView(("a@1", "b@1", "c@1", "new@1"), {"a@1": 10, "b@1": 4, "c@1": 7, "new@1": 0}, 3)
    rng = SplitMix64(1)
    tables = planner.gauntlet("new@1", pool, rng)
    assert len(tables) == 6 and all("new@1" in t and len(set(t)) == 3 for t in tables)
    for other in ("a@1", "b@1", "c@1"):
        assert sum(other in t for t in tables) >= 2  # met at least once a round
    # the newcomer's seat is drawn: about a third of its gauntlet tables at each seat (it sees
    # its seat, and its validation seats it at random)
    seats = [
        t.index("new@1") for n in range(200) for t in planner.gauntlet("new@1", pool, SplitMix64(n))
    ]
    assert all(300 <= seats.count(s) <= 500 for s in range(3)), [seats.count(s) for s in range(3)]
    small = PoolView(("new@1", "a@1"), {}, 3)
    assert planner.gauntlet("new@1", small, rng) == []  # cannot fill a table
    for _ in range(20):
        table = planner.next_table(pool, rng)
        assert "new@1" in table and len(set(table)) == 3

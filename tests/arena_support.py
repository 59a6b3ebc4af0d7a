"""Helpers for the tests of `referee serve`: the CLI as a child process, a server process whose
log is collected as it comes, the store's rows read straight from its files, and archives built by
hand for the hostile tests. Shared by every test that starts an arena."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from support import EXAMPLES, referee_env

from take5_arena.referee.store import Store
from take5_arena.service.client import ArenaClient, Packed


def cli(
    *args: str, token: str | None = None, stdin: str | None = None, timeout: float = 240
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in referee_env().items() if k not in ("TAKE5_TOKEN", "TAKE5_SERVER")}
    if token is not None:
        env["TAKE5_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        input=stdin,
    )


def add_author(directory: Path, name: str, *extra: str) -> str:
    done = cli("authors", "add", name, "-t", str(directory), *extra)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert re.fullmatch(r"t5a_[0-9a-f]{12}_[A-Za-z0-9_-]{40,}", token), token
    return token


def duel_arena(directory: Path, *entered: str) -> str:
    """An arena in ``directory`` (its first author, alice, makes it; her token is returned) with a
    second competition, ``duel`` (tables of 2), and the example bots ``entered`` submitted into it
    with the local sandbox."""
    token = add_author(directory, "alice")
    made = cli("competition", "add", "duel", "-t", str(directory), "--players", "2")
    assert made.returncode == 0, made.stderr
    for bot in entered:
        done = cli(
            "submit", str(EXAMPLES / bot), "--name", bot, "-t", str(directory),
            "--competition", "duel", "--sandbox", "local",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    return token


class Server:
    """`referee serve` as a child process; its log lines are collected as they come."""

    def __init__(self, directory: Path, *args: str, env: dict[str, str] | None = None):
        self.directory = directory
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "take5_arena",
                "serve",
                "-t",
                str(directory),
                "--listen",
                "127.0.0.1:0",
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env or referee_env(),
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()
        match = self.wait_for(r"on 127\.0\.0\.1:(\d+)")
        self.address = f"127.0.0.1:{match.group(1)}"

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    @property
    def log(self) -> str:
        with self.cond:
            return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    m = re.search(pattern, line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.cond.wait(0.5)):
                    raise AssertionError(
                        f"no {pattern!r} in the server's log:\n" + "\n".join(self.lines)
                    )
                self.cond.wait(min(left, 1.0))

    def client(self, token: str | None = None, **kw) -> ArenaClient:
        return ArenaClient(self.address, token=token, **kw)

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode


class WebServer(Server):
    """`referee serve --web` on a free loopback port with the local sandbox and no ladder: the web
    pages alone, with ``args`` (their limits, trusted proxies) added; ``url`` is where they are."""

    def __init__(self, directory: Path, *args: str) -> None:
        super().__init__(
            directory, "--web", "127.0.0.1:0", "--sandbox", "local", "--no-ladder", *args
        )
        found = self.wait_for(r"web pages on http://127\.0\.0\.1:(\d+)/")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = ""


def web_arena(tmp_path_factory, name: str, *args: str) -> Iterator[WebServer]:
    """A module's web arena (for a fixture to yield from): a new directory with one author, dave
    (his token in ``token``), its pages served by a :class:`WebServer`; stopped after, and its log
    must hold no traceback."""
    directory = tmp_path_factory.mktemp(name) / "T"
    token = add_author(directory, "dave")
    server = WebServer(directory, *args)
    server.token = token
    try:
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.proc.pid, signal.SIGTERM)
        server.proc.wait(30)
        assert "Traceback" not in server.log, server.log


def db_rows(directory: Path, sql: str, args: tuple = (), *, db: str = "") -> list[tuple]:
    """Rows read straight from the tournament's store, or (``arena_*`` tables) the accounts."""
    db = db or ("accounts.sqlite" if "arena_" in sql else "tournament.sqlite")
    con = sqlite3.connect(f"file:{directory / db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def wait_until(
    condition, timeout: float = 120, what: str = "", server: Server | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}"
                + (f"; the server's log:\n{server.log}" if server else "")
            )
        time.sleep(0.3)


def sse_event(url: str, wait: float = 20) -> dict | None:
    """The present state of a web page's live feed at ``url`` (the first event of its stream), or
    None when it has none within ``wait`` seconds (the stream sends keep-alives meanwhile)."""
    deadline = time.monotonic() + wait
    with urllib.request.urlopen(url, timeout=30) as stream:
        for raw in stream:
            line = raw.decode()
            if line.startswith("data: "):
                data: dict = json.loads(line[6:])
                return data
            if time.monotonic() > deadline:
                break
    return None


def games_recorded(directory: Path) -> int:
    return db_rows(directory, "SELECT COUNT(*) FROM results")[0][0]


def games_published(directory: Path) -> int:
    """Recorded games of deals with no rotation left to play (the others are held back)."""
    with Store(directory) as store:
        unfinished = store.records.unfinished_deals()
    rows = db_rows(
        directory,
        "SELECT g.duplicate_set FROM results r JOIN games g ON g.game_id = r.game_id",
    )
    return sum(1 for (deal,) in rows if deal not in unfinished)


def make_tgz(entries) -> bytes:
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def member(name: str, data: bytes | None = b"x", kind: bytes = tarfile.REGTYPE, **attrs) -> tuple:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
    for k, v in attrs.items():
        setattr(info, k, v)
    return info, data if kind == tarfile.REGTYPE else None


def packed(data: bytes) -> Packed:
    return Packed(data, 1, hashlib.sha256(data).hexdigest())


#: The random example bot with a slow start: its validation takes a while.
SLOW_BOT = (
    (EXAMPLES / "random" / "bot.py")
    .read_text()
    .replace(
        'if __name__ == "__main__":',
        'if __name__ == "__main__":\n    import time\n    time.sleep(2.5)  # a slow start: '
        "validation takes a while",
        1,
    )
)


#: A bot that always plays the card at index ``{pick}`` of its sorted hand, named ``{name}``: a
#: distinct, deterministic player for the validation tests (`plain_bot`).
PLAIN_BOT = """from take5 import Bot, run


class Plain(Bot):
    name = "{name}"

    def pick_card(self, view):
        return sorted(view.hand)[{pick}]


if __name__ == "__main__":
    run(Plain())
"""


def bot_folder(tmp_path: Path, name: str, text: str) -> Path:
    """A bot's folder ``tmp_path/bots/name`` holding ``text`` as its bot.py."""
    folder = tmp_path / "bots" / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(text)
    return folder


def plain_bot(tmp_path: Path, name: str, pick: str) -> Path:
    """The folder of a :data:`PLAIN_BOT` called ``name`` playing ``sorted(view.hand)[pick]``."""
    return bot_folder(tmp_path, name, PLAIN_BOT.format(name=name, pick=pick))


def enter_with_a_slow_bot(directory: Path, url: str, scratch: Path) -> None:
    """Enter random, lowest and a bot that thinks slowly (:data:`SLOW_BOT`, written in
    ``scratch``) into the tournament in ``directory`` whose store is at ``url``: games long enough
    to kill a process in the middle of."""
    slow = scratch / "slow"
    slow.mkdir()
    (slow / "bot.py").write_text(SLOW_BOT)
    for name, bot in (
        ("random", EXAMPLES / "random"),
        ("lowest", EXAMPLES / "lowest"),
        ("slow", slow),
    ):
        done = cli(
            "submit", str(bot), "--name", name, "-t", str(directory), "--sandbox", "local",
            "--store", url, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key (PEM files)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path

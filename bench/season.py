"""The season rehearsal: an arena run for N minutes under the faults a season brings, then its
invariants checked.

    python bench/season.py --minutes 60 --out build/season-60     # as root, Docker and Dask there
    python bench/season.py --minutes 2 --fault-every 20 --faults serve,worker,disk   # tests/

What runs, all on loopback, in a temporary root under /tmp:

* a local Dask cluster of 2 workers, each with a Docker engine of its own (scripts/cluster-local.sh,
  its supervisors restarting what ends, as systemd does on real hosts);
* ``referee serve --executor dask:... --sandbox docker --web ...`` on an arena whose folder is a
  size-capped tmpfs (the full disk), restarted 2 s after it ends by this script (systemd's part);
  it validates submissions on this machine's engine, under a run label of its own;
* honest authors submitting example bots over gRPC (``ArenaClient``) and through the web pages
  (signed in, the upload form), each a new version every few minutes; hostile authors submitting
  what must be refused (a bot that crashes, a bot that sleeps past its clock, an archive with a
  path out of its folder), over both; visitors reading the pages, one of them through a spoofed
  ``X-Forwarded-For``;
* faults on a schedule, in turn: SIGKILL of serve, SIGKILL of a Dask worker, SIGKILL of the
  scheduler, a stop of worker 1's Docker engine (the rehearsal's own: the machine's engine is
  shared), a disk that fills (a filler file on the arena's tmpfs until ENOSPC, held, then removed)
  and a network cut (iptables drops the scheduler's port on loopback, then lets it through).

The minutes count from the first game recorded (the cluster's start, the first validations and
image builds come before), and every fault of ``--faults`` is made at least once however short they
are. Checked at the end (exit 1 and the list of what failed, else 0): every
acknowledged upload is in the accounts once; every game seen committed before a fault is still
there, and each game id once; ``referee verify --tournament`` and ``verify --site`` clean; no fault
charged to an honest bot (the infrastructure's failures rate no one); no bot container left on any
engine of the rehearsal nor of its serve on the machine's engine, no process of it left; serve's
memory bounded (its largest RSS in the last third of the run within 1.5x of the first third's,
after warm-up); both workers back with their engines. Printed: games, games a minute, each fault's
recovery (seconds to the next recorded game), and the figures above; ``--out DIR`` keeps the logs
and ``season.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]

import httpx

from take5_arena.service.client import ArenaClient, pack_folder

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")]),
}
EXAMPLES = ROOT / "example_bots"
HOSTILE = ROOT / "tests" / "docker_bots"
FAULTS = ("serve", "worker", "scheduler", "engine", "disk", "network")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log(line: str) -> None:
    print(f"season {time.strftime('%H:%M:%S')} {line}", flush=True)


def children(pid: int) -> list[int]:
    out: list[int] = []
    for f in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for c in f.read_text().split():
                out += [int(c), *children(int(c))]
    return out


def rss_mb(pid: int) -> float:
    total = 0
    for p in [pid, *children(pid)]:
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def referee(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        check=False,
    )


def tgz(folder: Path, extra: dict[str, bytes] | None = None) -> bytes:
    """``folder`` as the web form's .tar.gz (with ``extra`` members, names as given)."""
    import io

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                tar.add(path, arcname=str(path.relative_to(folder)))
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    acknowledged: list[tuple[str, str]] = field(default_factory=list)  # (author, submission id)
    upload_errors: int = 0
    pages_ok: int = 0
    pages_failed: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    rss: list[tuple[float, float]] = field(default_factory=list)  # (seconds in, MB)
    seen_games: set[str] = field(default_factory=set)
    restarts: int = 0


class Season:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.root = Path(tempfile.mkdtemp(prefix="t5s-", dir="/tmp"))
        self.cluster_root = self.root / "c"
        self.disk = self.root / "disk"
        self.arena = self.disk / "arena"
        self.port = free_port()
        self.grpc_port, self.web_port, self.metrics_port = free_port(), free_port(), free_port()
        self.run_prefix = f"season{os.getpid()}"
        self.tally = Tally()
        self.stop = threading.Event()
        self.serve: subprocess.Popen[bytes] | None = None
        self.serve_lock = threading.Lock()
        self.started = time.monotonic()
        self.tokens: dict[str, str] = {}
        self.cut_rule: list[str] | None = None

    # -- the parts --------------------------------------------------------------------------------
    def cluster(self, command: str, *extra: str) -> None:
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "cluster-local.sh"), command, "--root"]
            + [str(self.cluster_root), *extra],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 and command == "start":
            raise RuntimeError(f"cluster-local.sh start: {done.stderr[-2000:]}")

    def setup(self) -> None:
        self.disk.mkdir()
        size = f"{self.args.disk_mb}m"
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(self.disk)], check=True
        )
        log(f"arena on a {size} tmpfs at {self.disk}; cluster root {self.cluster_root}")
        self.cluster("start", "--workers", "2", "--threads", "1", "--port", str(self.port))
        authors = {
            "alice": "grpc",
            "bob": "web",
            "carol": "grpc",
            "mallory": "grpc",
            "trudy": "web",
        }
        for name in authors:
            done = referee("authors", "add", name, "-t", str(self.arena), "--per-hour", "1000")
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            self.tokens[name] = done.stdout.strip()

    def start_serve(self) -> None:
        out = (self.root / "serve.log").open("ab")
        self.serve = subprocess.Popen(
            [sys.executable, "-m", "take5_arena", "serve", "-t", str(self.arena)]
            + ["--listen", f"127.0.0.1:{self.grpc_port}", "--web", f"127.0.0.1:{self.web_port}"]
            + ["--metrics", f"127.0.0.1:{self.metrics_port}", "--sandbox", "docker", "-n", "2"]
            + ["--concurrency", "2", "--executor", f"dask:tcp://127.0.0.1:{self.port}"]
            + ["--publish-every-games", "10", "--validators", "1"],
            stdout=out,
            stderr=out,
            env={**ENV, "TAKE5_RUN_PREFIX": self.run_prefix},
            start_new_session=True,
        )
        out.close()

    def supervise_serve(self) -> None:
        """systemd's part: serve started again 2 s after it ends, until the rehearsal stops."""
        while not self.stop.is_set():
            with self.serve_lock:
                proc = self.serve
            if proc is not None and proc.poll() is not None and not self.stop.is_set():
                code = proc.returncode
                log(f"serve ended (exit {code}): starting it again in 2 s")
                time.sleep(2)
                with self.serve_lock:
                    if not self.stop.is_set():
                        self.start_serve()
                        self.tally.restarts += 1
            time.sleep(0.5)

    # -- the load ---------------------------------------------------------------------------------
    def grpc_author(self, name: str, bots: list[tuple[str, Path]], every: float) -> None:
        i = 0
        while not self.stop.is_set():
            bot_name, folder = bots[i % len(bots)]
            i += 1
            try:
                with ArenaClient(
                    f"127.0.0.1:{self.grpc_port}", token=self.tokens[name], timeout=30
                ) as c:
                    reply = c.upload(bot_name, pack_folder(folder))
                with self.tally.lock:
                    self.tally.acknowledged.append((name, reply.submission_id))
            except Exception:  # noqa: BLE001 - the arena is down or refused: not acknowledged
                with self.tally.lock:
                    self.tally.upload_errors += 1
            self.stop.wait(every)

    def web_author(self, name: str, bots: list[tuple[str, bytes]], every: float) -> None:
        url = f"http://127.0.0.1:{self.web_port}"
        i = 0
        while not self.stop.is_set():
            bot_name, archive = bots[i % len(bots)]
            i += 1
            try:
                with httpx.Client(base_url=url, headers={"origin": url}, timeout=30) as http:
                    if http.post("/signin", data={"token": self.tokens[name]}).status_code != 303:
                        raise RuntimeError("sign-in")
                    page = http.get("/me").text
                    found = re.search(r'name="csrf" value="([^"]+)"', page)
                    if found is None:
                        raise RuntimeError("no csrf")
                    r = http.post(
                        "/me/upload",
                        data={"csrf": found.group(1), "bot_name": bot_name},
                        files={"archive": ("bot.tar.gz", archive, "application/gzip")},
                    )
                    if r.status_code != 303:
                        raise RuntimeError(f"upload {r.status_code}")
                    sid = r.headers["location"].rsplit("/", 1)[1]
                with self.tally.lock:
                    self.tally.acknowledged.append((name, sid))
            except Exception:  # noqa: BLE001 - not acknowledged
                with self.tally.lock:
                    self.tally.upload_errors += 1
            self.stop.wait(every)

    def visitor(self, spoof: bool) -> None:
        url = f"http://127.0.0.1:{self.web_port}"
        paths = ("/", "/games", "/live", "/standings.json")
        i = 0
        while not self.stop.is_set():
            headers = {"x-forwarded-for": f"203.0.113.{i % 250}"} if spoof else {}
            try:
                r = httpx.get(url + paths[i % len(paths)], headers=headers, timeout=10)
                ok = r.status_code in (200, 404)
            except httpx.HTTPError:
                ok = False
            with self.tally.lock:
                if ok:
                    self.tally.pages_ok += 1
                else:
                    self.tally.pages_failed += 1
            i += 1
            self.stop.wait(1.0)

    # -- the store, read as it runs ---------------------------------------------------------------
    def games(self) -> set[str]:
        try:
            db = sqlite3.connect(
                f"file:{self.arena / 'tournament.sqlite'}?mode=ro", uri=True, timeout=5
            )
            try:
                return {r[0] for r in db.execute("SELECT game_id FROM results")}
            finally:
                db.close()
        except sqlite3.Error:
            return set()

    def sample(self) -> None:
        while not self.stop.wait(10):
            with self.serve_lock:
                proc = self.serve
            if proc is not None and proc.poll() is None:
                with self.tally.lock:
                    self.tally.rss.append((time.monotonic() - self.started, rss_mb(proc.pid)))

    # -- the faults -------------------------------------------------------------------------------
    def _pid(self, path: Path) -> int:
        return int(path.read_text().strip())

    def fault(self, kind: str) -> None:
        before = self.games()
        self.tally.seen_games |= before
        t0 = time.monotonic()
        log(f"fault: {kind} ({len(before)} games recorded)")
        if kind == "serve":
            with self.serve_lock:
                if self.serve is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.serve.pid, signal.SIGKILL)
        elif kind in ("worker", "scheduler"):
            pidfile = (
                self.cluster_root / "worker-1" / "worker.pid"
                if kind == "worker"
                else self.cluster_root / "scheduler.pid"
            )
            for pid in children(self._pid(pidfile)):  # the supervisor stays and starts it again
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        elif kind == "engine":
            pid = self._pid(self.cluster_root / "engine-1" / "docker.pid")
            os.kill(pid, signal.SIGTERM)
            self.stop.wait(self.args.hold)
            self.cluster("start", "--workers", "2", "--threads", "1", "--port", str(self.port))
        elif kind == "disk":
            filler = self.disk / "filler"
            with contextlib.suppress(OSError), filler.open("wb") as f:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            self.stop.wait(self.args.hold)
            filler.unlink()
        elif kind == "network":
            self.cut_rule = [
                "INPUT",
                "-i",
                "lo",
                "-p",
                "tcp",
                "--dport",
                str(self.port),
                "-j",
                "DROP",
            ]
            subprocess.run(["iptables", "-I", *self.cut_rule], check=True)
            self.stop.wait(self.args.hold)
            self.uncut()
        recovered = self.wait_for_games(len(before), 300)
        record = {
            "kind": kind,
            "at_s": round(t0 - self.started),
            "recovery_s": None if recovered is None else round(recovered - t0, 1),
        }
        with self.tally.lock:
            self.tally.faults.append(record)
        log(f"fault {kind}: games again after {record['recovery_s']} s")

    def uncut(self) -> None:
        if self.cut_rule is not None:
            subprocess.run(["iptables", "-D", *self.cut_rule], check=False)
            self.cut_rule = None

    def wait_for_games(self, count: int, timeout: float) -> float | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.games()) > count:
                return time.monotonic()
            time.sleep(1)
        return None

    # -- the run ----------------------------------------------------------------------------------
    def load(self) -> list[threading.Thread]:
        work = Path(self.root / "bots")
        crash = work / "crash"
        crash.mkdir(parents=True)
        (crash / "bot.py").write_text("raise SystemExit('crashes at start')\n")
        honest_grpc = [("random", EXAMPLES / "random"), ("lowest", EXAMPLES / "lowest")]
        every = self.args.submit_every
        # hostile uploads less often: a bot that sleeps holds a validator for half a minute
        jobs: list[Callable[[], None]] = [
            lambda: self.grpc_author("alice", [("random", EXAMPLES / "random")], every),
            lambda: self.grpc_author("carol", honest_grpc[1:], every),
            lambda: self.grpc_author(
                "mallory", [("crash", crash), ("sleeper", HOSTILE / "hostile_sleep")], 3 * every
            ),
            lambda: self.web_author("bob", [("heuristic", tgz(EXAMPLES / "heuristic"))], every),
            lambda: self.web_author(
                "trudy",
                [("escape", tgz(EXAMPLES / "random", {"../../escape.txt": b"x"}))],
                3 * every,
            ),
            lambda: self.visitor(False),
            lambda: self.visitor(False),
            lambda: self.visitor(True),
            self.supervise_serve,
            self.sample,
        ]
        threads = [threading.Thread(target=job, daemon=True) for job in jobs]
        for t in threads:
            t.start()
        return threads

    def run(self) -> int:
        self.setup()
        self.started = time.monotonic()  # the minutes count from here: the cluster is up
        self.start_serve()
        threads = self.load()
        warm = self.wait_for_games(0, 600)
        log(f"first game after {0 if warm is None else round(warm - self.started)} s")
        end = time.monotonic() + self.args.minutes * 60  # the season proper: from its first game
        faults = [f.strip() for f in self.args.faults.split(",") if f.strip()]
        i = 0
        # every fault asked for at least once, then in turn while the minutes last
        while i < len(faults) or time.monotonic() + self.args.fault_every + 30 < end:
            self.stop.wait(self.args.fault_every)
            kind = faults[i % len(faults)]
            i += 1
            try:
                self.fault(kind)
            except Exception as error:  # noqa: BLE001 - said, counted, and the season goes on
                log(f"fault {kind} could not be made: {type(error).__name__}: {error}")
                with self.tally.lock:
                    self.tally.faults.append({"kind": kind, "error": str(error)[:300]})
                self.uncut()
        self.stop.wait(max(0.0, end - time.monotonic()))
        self.tally.seen_games |= self.games()
        self.stop.set()
        for t in threads:
            t.join(60)
        with self.serve_lock:
            proc = self.serve
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return self.check()

    # -- the invariants ---------------------------------------------------------------------------
    def check(self) -> int:
        problems: list[str] = []
        t = self.tally
        db = sqlite3.connect(f"file:{self.arena / 'accounts.sqlite'}?mode=ro", uri=True)
        ids = [r[0] for r in db.execute("SELECT id FROM arena_submissions")]
        db.close()
        missing = [sid for _, sid in t.acknowledged if ids.count(sid) != 1]
        if missing:
            problems.append(f"acknowledged uploads not in the accounts once: {missing[:5]}")
        store = sqlite3.connect(f"file:{self.arena / 'tournament.sqlite'}?mode=ro", uri=True)
        final = [r[0] for r in store.execute("SELECT game_id FROM results")]
        if len(final) != len(set(final)):
            problems.append("a game recorded twice")
        lost = t.seen_games - set(final)
        if lost:
            problems.append(f"{len(lost)} committed games lost")
        honest_faults = store.execute(
            "SELECT COUNT(*) FROM seat_results s JOIN entrant_versions v ON v.id = s.version_id "
            "JOIN entrants e ON e.id = v.entrant_id WHERE e.author IN ('alice', 'bob', 'carol') "
            "AND s.faults NOT IN ('[]', '')"
        ).fetchone()[0]
        infra = dict(
            store.execute("SELECT kind, COUNT(*) FROM infra_failures GROUP BY kind").fetchall()
        )
        entrants = store.execute("SELECT name, author FROM entrants").fetchall()
        store.close()
        if honest_faults:
            problems.append(f"{honest_faults} faults charged to honest bots")
        hostile = [n for n, a in entrants if a in ("mallory", "trudy")]
        if hostile:
            problems.append(f"hostile bots admitted: {hostile}")
        verify = referee("verify", "-q", "--tournament", str(self.arena))
        if verify.returncode != 0:
            problems.append(f"verify --tournament: {verify.stdout[-500:]}{verify.stderr[-500:]}")
        site = referee("verify", "-q", "--site", str(self.arena / "site"))
        if site.returncode != 0:
            problems.append(f"verify --site: {site.stdout[-500:]}{site.stderr[-500:]}")
        workers = self.workers_back()
        if workers != 2:
            problems.append(f"{workers} workers back, not 2")
        leaked = self.leaks()
        if leaked:
            problems.append(f"leaked: {leaked}")
        rss = [mb for s, mb in t.rss if s > 120]
        third = max(1, len(rss) // 3)
        first, last = (max(rss[:third]), max(rss[-third:])) if rss else (0.0, 0.0)
        if rss and last > 1.5 * first:
            problems.append(f"serve's memory grew: {first:.0f} MB -> {last:.0f} MB")
        minutes = (time.monotonic() - self.started) / 60
        summary = {
            "minutes": round(minutes, 1),
            "games": len(final),
            "games_per_minute": round(len(final) / minutes, 1),
            "acknowledged_uploads": len(t.acknowledged),
            "uploads_not_acknowledged": t.upload_errors,
            "pages_ok": t.pages_ok,
            "pages_failed": t.pages_failed,
            "serve_restarts": t.restarts,
            "faults": t.faults,
            "infra_failures": infra,
            "serve_rss_mb_first_third_max": round(first),
            "serve_rss_mb_last_third_max": round(last),
            "workers_back": workers,
            "problems": problems,
        }
        print(json.dumps(summary, indent=1), flush=True)
        if self.args.out is not None:
            out = Path(self.args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "season.json").write_text(json.dumps(summary, indent=1) + "\n")
            for p in [self.root / "serve.log", *self.cluster_root.glob("*.log")]:
                shutil.copy(p, out / p.name)
            for p in self.cluster_root.glob("*/*.log"):
                shutil.copy(p, out / f"{p.parent.name}-{p.name}")
        log("invariants: " + ("all hold" if not problems else "; ".join(problems)))
        return 1 if problems else 0

    def workers_back(self) -> int:
        import distributed

        deadline = time.monotonic() + 120
        count = 0
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(Exception),
                distributed.Client(f"tcp://127.0.0.1:{self.port}", timeout=10) as client,  # type: ignore[no-untyped-call]
            ):
                count = len(client.nthreads())
            if count == 2:
                return count
            time.sleep(2)
        return count

    def docker(self, engine: str | None, *args: str) -> str:
        env = dict(os.environ)
        if engine is not None:
            env["DOCKER_HOST"] = f"unix://{self.cluster_root}/{engine}/docker.sock"
        done = subprocess.run(
            ["docker", *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        return done.stdout

    def leaks(self) -> list[str]:
        """Containers and processes of the rehearsal left once serve stopped (after a sweep)."""
        deadline = time.monotonic() + 90  # the lease (15 s), the sweep (20 s) and a start
        found: list[str] = []
        while time.monotonic() < deadline:
            found = []
            for engine in ("engine-1", "engine-2"):
                ids = self.docker(engine, "ps", "-aq", "--filter", "label=take5.arena=1").split()
                found += [f"{engine}:{i}" for i in ids]
            main = self.docker(
                None,
                "ps",
                "-a",
                "--filter",
                "label=take5.arena=1",
                "--format",
                '{{.ID}} {{.Label "take5.run"}}',
            )
            found += [f"main:{line}" for line in main.splitlines() if self.run_prefix in line]
            for proc in Path("/proc").glob("[0-9]*/cmdline"):
                with contextlib.suppress(OSError):
                    if str(self.arena).encode() in proc.read_bytes():
                        found.append(f"process {proc.parent.name}")
            if not found:
                return []
            time.sleep(5)
        return found

    def cleanup(self) -> None:
        self.stop.set()
        self.uncut()
        with self.serve_lock:
            if self.serve is not None and self.serve.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.serve.pid, signal.SIGKILL)
                self.serve.wait()
        self.cluster("stop")
        subprocess.run(["umount", "-l", str(self.disk)], check=False, capture_output=True)
        mounts = [
            line.split()[1]
            for line in Path("/proc/mounts").read_text().splitlines()
            if str(self.root) in line
        ]
        for m in reversed(mounts):
            subprocess.run(["umount", "-l", m], check=False, capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--fault-every", type=float, default=240, help="seconds between faults")
    parser.add_argument(
        "--hold", type=float, default=30, help="seconds a disk, engine or link stays down"
    )
    parser.add_argument(
        "--submit-every", type=float, default=120, help="seconds between an author's uploads"
    )
    parser.add_argument("--disk-mb", type=int, default=256)
    parser.add_argument(
        "--faults", default=",".join(FAULTS), help=f"which, in turn (of {','.join(FAULTS)})"
    )
    parser.add_argument("--out", help="keep the logs and season.json here")
    args = parser.parse_args()
    unknown = set(args.faults.split(",")) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults: {', '.join(sorted(unknown))}")
    if os.geteuid() != 0:
        sys.exit("season: needs root (tmpfs, iptables, Docker engines of its own)")
    season = Season(args)
    try:
        code = season.run()
    except KeyboardInterrupt:
        code = 130
    finally:
        season.cleanup()
    sys.exit(code)


if __name__ == "__main__":
    main()

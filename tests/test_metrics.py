"""`referee serve --metrics HOST:PORT`: the health check and the Prometheus metrics of a real server
(local sandbox, tables of 2), scraped over HTTP on loopback and parsed with prometheus_client's own
parser."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from arena_support import Server, add_author, cli, games_recorded, wait_until
from prometheus_client.parser import text_string_to_metric_families
from support import EXAMPLES, free_port, http_get

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.mark.slow
def test_health_and_metrics_of_a_serving_arena(tmp_path: Path) -> None:
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100")
    add_author(directory, "bob")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = Server(
        directory,
        *("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0"),
        *("--metrics", f"127.0.0.1:{port}", "--publish-every-seconds", "1"),
    )
    try:
        server.wait_for(r"metrics on http://127\.0\.0\.1:\d+/metrics")
        assert http_get(f"{base}/healthz") == (200, "ok\n")
        assert http_get(f"{base}/nothing")[0] == 404
        with server.client(token) as client:
            for bot in ("random", "lowest"):
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
            with pytest.raises(ClientError):
                client.withdraw("no-such-bot")
        with server.client("t5a_000000000000_wrong") as stranger, pytest.raises(ClientError):
            stranger.my_bots()
        wait_until(lambda: games_recorded(directory) >= 3, what="ladder games", server=server)

        status, text = http_get(f"{base}/metrics")
        assert status == 200
        got = _samples(text)
        default = (("competition", ""),)  # the default competition's figures: an empty label
        assert 'take5_arena_games_total{competition=""}' in text
        assert got[("take5_arena_games_total", default)] >= 3
        assert got[("take5_arena_ladder_games_total", default)] >= 3
        assert got[("take5_arena_ladder_up", default)] == 1
        assert got[("take5_arena_ladder_stalled", default)] == 0
        assert got[("take5_arena_competition_served", default)] == 1
        assert got[("take5_arena_store_up", default)] == 1
        assert got[("take5_arena_active_bots", default)] == 2
        assert got[("take5_arena_active_authors", ())] == 2  # the arena's, no competition's
        assert ("take5_arena_games_in_flight", default) in got
        for state in ("received", "validating"):
            assert got[("take5_arena_validation_queue", (*default, ("state", state)))] == 0
        # the RPCs, timed and counted by method; the refused ones by their status code
        submits = got[("take5_arena_rpc_seconds_count", (("method", "SubmitBot"),))]
        assert submits == 2

        def errors(method: str, code: str) -> float | None:
            return got.get(("take5_arena_rpc_errors_total", (("code", code), ("method", method))))

        assert errors("WithdrawBot", "NOT_FOUND") == 1
        assert errors("ListMyBots", "UNAUTHENTICATED") == 1
        assert errors("SubmitBot", "OK") is None
        assert "take5_arena_container_start_seconds" in text  # the local sandbox starts none
        # both submissions validated, each timed
        assert got[("take5_arena_validation_seconds_count", default)] == 2
        assert got[("take5_arena_validation_seconds_sum", default)] > 0

        # a counter only goes up, and a second scrape reads only what is new
        wait_until(
            lambda: games_recorded(directory) > got[("take5_arena_games_total", default)],
            what="one more game",
        )
        again = _samples(http_get(f"{base}/metrics")[1])
        assert (
            again[("take5_arena_games_total", default)] > got[("take5_arena_games_total", default)]
        )
        assert again[("take5_arena_games_total", default)] <= games_recorded(directory)
        # the publisher: publications, and when the last one ended
        published = ("take5_arena_publications_total", default)
        wait_until(
            lambda: _samples(http_get(f"{base}/metrics")[1])[published] >= 1, what="published"
        )
        again = _samples(http_get(f"{base}/metrics")[1])
        assert again[("take5_arena_publication_failures_total", default)] == 0
        assert again[("take5_arena_published_games", default)] >= 1
        assert (
            abs(again[("take5_arena_publication_timestamp_seconds", default)] - time.time()) < 600
        )
    finally:
        assert server.stop() == 0, server.log
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/healthz", timeout=5)


def test_a_bad_metrics_address_is_one_line(tmp_path: Path) -> None:
    done = cli("serve", "-t", str(tmp_path / "T"), "--no-ladder", "--metrics", "nowhere")
    assert done.returncode == 2 and "HOST:PORT" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli(
            "serve", "-t", str(tmp_path / "T"), "--no-ladder", "--sandbox", "local",
            "--metrics", f"127.0.0.1:{port}",
        )  # fmt: skip
    assert done.returncode == 2 and "cannot listen" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def _answers(url: str) -> bool:
    try:
        return http_get(url) == (200, "ok\n")
    except OSError:
        return False


def _threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def test_metrics_bind_to_loopback_and_idle_clients_grow_no_threads(tmp_path: Path) -> None:
    """1,000 idle connections made a thread each (43 -> 1,045 threads); `--metrics 0.0.0.0:P`
    served the counts to any address without being asked to."""
    done = cli("serve", "-t", str(tmp_path / "T"), "--no-ladder", "--metrics", "0.0.0.0:9650")
    assert done.returncode == 2 and "--metrics-public" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    port = free_port()
    server = Server(tmp_path / "T", "--no-ladder", "--sandbox", "local", "--metrics", str(port))
    try:
        server.wait_for(rf"metrics on http://127\.0\.0\.1:{port}/metrics")
        base = f"http://127.0.0.1:{port}"
        assert http_get(f"{base}/healthz") == (200, "ok\n")
        before = _threads(server.proc.pid)
        idle = []
        try:
            idle.extend(  # connect, send nothing
                socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)
            )
            time.sleep(1.0)
            assert _threads(server.proc.pid) <= before + 8 + 2
        finally:
            for sock in idle:
                sock.close()
        # the slots come back (closed by the clients, or dropped after the idle timeout)
        wait_until(lambda: _answers(f"{base}/healthz"), what="a scrape", timeout=30)
    finally:
        assert server.stop() == 0, server.log

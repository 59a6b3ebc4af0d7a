"""Several arenas on one host (docs/operations.md, "Several arenas on one host"): two real
`referee serve` processes, each with its own folder, gRPC port and metrics port, play side by side
on one machine and share nothing but the artifact cache (content-addressed) and the engine; a
third server on a folder or a port already taken is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_support import Server, add_author, cli, db_rows, games_recorded, wait_until
from support import EXAMPLES, free_port, http_get, referee
from test_metrics import _samples

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder


@pytest.mark.slow
def test_two_arenas_on_one_host(tmp_path: Path) -> None:
    arenas = {}
    for name, bots in (("spring", ("random", "lowest")), ("autumn", ("random", "heuristic"))):
        directory = tmp_path / name
        token = add_author(directory, f"{name}-author", "--per-hour", "100")
        port = free_port()
        server = Server(
            directory,
            *("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0"),
            *("--metrics", f"127.0.0.1:{port}"),
        )
        arenas[name] = (directory, server, port)
        with server.client(token) as client:
            for bot in bots:
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
    try:
        for directory, server, _ in arenas.values():
            wait_until(lambda d=directory: games_recorded(d) >= 2, what="games", server=server)
        (spring, spring_server, _), (autumn, autumn_server, _) = arenas.values()
        assert spring_server.address != autumn_server.address

        # a folder and a port already taken: one line each, exit 2
        again = cli("serve", "-t", str(spring), "--sandbox", "local", "--listen", "127.0.0.1:0")
        assert again.returncode == 2 and "another referee is running" in again.stderr, again.stderr
        taken = cli(
            "serve", "-t", str(tmp_path / "third"), "--sandbox", "local",
            "--listen", autumn_server.address,
        )  # fmt: skip
        assert taken.returncode == 2 and "cannot listen" in taken.stderr, taken.stderr
        assert "Traceback" not in again.stderr + taken.stderr

        # each arena counts its own games, bots and authors only
        for directory, _server, port in arenas.values():
            got = _samples(http_get(f"http://127.0.0.1:{port}/metrics")[1])
            default = (("competition", ""),)  # each arena's default competition
            assert got[("take5_arena_active_bots", default)] == 2
            assert got[("take5_arena_active_authors", ())] == 1
            assert 2 <= got[("take5_arena_games_total", default)] <= games_recorded(directory)
        assert db_rows(spring, "SELECT name FROM entrants ORDER BY name") == [
            ("lowest",),
            ("random",),
        ]
        assert db_rows(autumn, "SELECT name FROM entrants ORDER BY name") == [
            ("heuristic",),
            ("random",),
        ]
    finally:
        for _directory, server, _port in arenas.values():
            assert server.stop() == 0, server.log
    for directory, _server, _port in arenas.values():
        done = referee("verify", "--tournament", str(directory), timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr

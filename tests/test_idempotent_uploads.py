"""An upload is stored once, whatever happens to the connection that carried it: the client names
each upload (``SubmitMetadata.upload_key``) and sends it again under that name when the arena cannot
be reached, and the arena answers a name it already stored with the first upload's submission
(take5_arena/service/submissions.py, client.py).

The fault these replay: an upload stored just before `serve` was killed was kept and validated, but
the client was told the arena could not be reached, and sending it again made a second version.
"""

from __future__ import annotations

import grpc
import pytest
from arena_support import Server, add_author, db_rows
from support import EXAMPLES

from take5_arena.service import client as client_module
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError

ARGS = ("--sandbox", "local", "--players", "2", "--no-ladder")


def submissions(directory, author: str) -> list[tuple]:
    return db_rows(
        directory, "SELECT id, upload_key FROM arena_submissions WHERE author = ?", (author,)
    )


def test_a_retry_after_serve_was_killed_gets_the_first_answer(tmp_path):
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "1")  # a second upload would be refused
    packed = pack_folder(EXAMPLES / "random")
    server = Server(directory, *ARGS)
    try:
        with server.client(token) as client:
            first = client.upload("rnd", packed, upload_key="k-1")
        assert first.outcome == pb.SUBMIT_PENDING
        server.kill()  # the answer may have been lost with it: the client sends the upload again
    finally:
        server.stop()
    server = Server(directory, *ARGS)
    try:
        with server.client(token) as client:
            again = client.upload("rnd", packed, upload_key="k-1")
            assert again.submission_id == first.submission_id  # not refused by the hourly limit
            with pytest.raises(ClientError) as other:
                client.upload("other", packed, upload_key="k-1")
            assert other.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert "named another upload" in str(other.value)
            with pytest.raises(ClientError) as bad:
                client.upload("rnd", packed, upload_key="a b")
            assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert submissions(directory, "alice") == [(first.submission_id, "k-1")]
    finally:
        server.stop()


def test_the_client_sends_an_upload_again_when_its_answer_is_lost(tmp_path, monkeypatch):
    """The arena stores the upload and the connection drops before its answer: the client, told
    UNAVAILABLE, sends it again under the same key and is answered the stored submission."""
    directory = tmp_path / "T"
    token = add_author(directory, "bob")
    monkeypatch.setattr(client_module, "RETRY_SECONDS", 0.05)
    server = Server(directory, *ARGS)
    try:
        with server.client(token) as client:
            real = client.stub.SubmitBot
            answers: list[str] = []

            class Cut(grpc.RpcError):
                def code(self) -> grpc.StatusCode:
                    return grpc.StatusCode.UNAVAILABLE

                def details(self) -> str:
                    return "Socket closed"

            def cut_once(request, **kw):
                answer = real(request, **kw)  # stored by the arena...
                answers.append(answer.submission_id)
                if len(answers) == 1:
                    raise Cut()  # ...and the answer lost on the way back
                return answer

            client.stub.SubmitBot = cut_once
            reply = client.upload("rnd", pack_folder(EXAMPLES / "random"))
        assert len(answers) == 2 and answers[0] == answers[1] == reply.submission_id
        rows = submissions(directory, "bob")
        assert [row[0] for row in rows] == [reply.submission_id] and rows[0][1]
    finally:
        server.stop()

"""Answers every line on $TAKE5_LISTEN with {"pong": true, "kind": "dockerfile"}."""

import json
import os
import socket

path = os.environ["TAKE5_LISTEN"].removeprefix("unix:")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(8)
while True:
    conn, _ = srv.accept()
    with conn, conn.makefile("rwb") as f:
        for _ in f:  # one answer per request line
            f.write(json.dumps({"pong": True, "kind": "dockerfile"}).encode() + b"\n")
            f.flush()

"""Hostile SDK bot: in its second PickCard, replaces its socket with a symlink to the Docker
daemon's socket path (/var/run/docker.sock, which the referee's host has); in its third, cuts every
open connection (the one carrying that call too), so that the referee must connect again.

Expected: one `connection` fault (the cut call), then the bot answers again: the referee reconnects
to the socket it pinned when the bot started, never through the symlink. The bot logs each call
answered after the cut."""

import os
import socket

from take5 import Bot, run

LISTEN = os.environ.get("TAKE5_LISTEN", "unix:/run/take5/bot.sock")
PATH = LISTEN.split(":", 1)[1]


def replace_socket():
    os.unlink(PATH)
    os.symlink("/var/run/docker.sock", PATH)
    print("SABOTAGE: socket replaced by a symlink to /var/run/docker.sock", flush=True)


def cut_connections():
    cut = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            s = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        try:
            if s.family == socket.AF_UNIX:
                s.getpeername()  # the listening socket has no peer: OSError
                s.shutdown(socket.SHUT_RDWR)
                cut += 1
        except OSError:
            pass
        finally:
            s.close()
    print(f"SABOTAGE: {cut} connection(s) cut", flush=True)


class Saboteur(Bot):
    name = "hostile_socket"
    version = "1"
    calls = 0
    after = 0

    def pick_card(self, view):
        self.calls += 1
        if self.calls == 2:
            replace_socket()
        elif self.calls == 3:
            cut_connections()
        elif self.calls > 3:
            self.after += 1
            print(f"ANSWERED-AFTER-SABOTAGE {self.after}", flush=True)
        return min(view.hand)


if __name__ == "__main__":
    run(Saboteur())

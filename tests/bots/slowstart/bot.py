"""Never starts serving and ignores SIGTERM: the referee must give up and kill it."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(3600)

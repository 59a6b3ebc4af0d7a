"""What a tournament plays, as data: the settings (settings), the round-robin schedule (schedule),
the deals of its tables (deals), the adaptive scheduler that picks the next tables until the
ranking is settled (adaptive) and the Swiss pairing of k-player tables round by round (swiss).

Nothing here plays a game: the plan imports neither the executors nor the sandbox nor anything of
:mod:`..run`, so reading or checking a tournament's plan (``tournament status``, the settings a
store holds, a schedule's shape) loads no Docker, Dask or gRPC code, and the run side depends on
the plan, never the other way round (tests/test_architecture.py checks both).
"""

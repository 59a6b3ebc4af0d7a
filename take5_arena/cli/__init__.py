"""The `referee` command line and its terminal output (progress, transcripts, live watching).

The top layer: it may import every other part of take5_arena. Its entry point is
:func:`take5_arena.cli.entry.main`; this package's own import costs nothing, so that the entry
point's first line runs before anything heavy loads.
"""

"""The application layer: the ``referee`` command line, its progress display and its services.

It sits above ``referee`` (matches, sandbox, tournaments, store) and ``leaderboard`` (results,
ratings, publishing) and is the only place that imports both; neither of those imports it or each
other. See docs/architecture.md.
"""

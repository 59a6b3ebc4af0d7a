"""take5 arena: the platform around the take5 SDK.

One package, with one sub-package per job, importing only downwards
(tests/test_architecture.py checks it; docs/architecture.md draws it)::

    take5_arena.cli          the `referee` command line and what a person watches in a terminal
        |
    take5_arena.web          the arena's web pages (`referee serve --web`): Starlette on uvicorn
        |
    take5_arena.service      the arena service: `referee serve`, its gRPC API and ladder, accounts
        |
    take5_arena.standings    where a tournament's store meets the leaderboard (one module)
       /          \\
    take5_arena.referee   take5_arena.leaderboard    never import each other
    (matches, sandbox,    (results, ratings,
     tournaments, store)   standings documents, site)
       \\          /
    take5                    the SDK: rules, records, the bot runtime (sdk/take5, installable alone)

Nothing is imported here: ``import take5_arena`` costs nothing, and the `referee` command's entry
point (take5_arena/cli/entry.py) runs its first line before anything heavy loads.
"""

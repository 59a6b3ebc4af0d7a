"""The referee: plays bots against each other (:mod:`take5_arena.referee.match`), in the Docker
sandbox (:mod:`take5_arena.referee.sandbox`), in tournaments (:mod:`take5_arena.referee.tournament`)
kept in a store (:mod:`take5_arena.referee.store`). It never imports the leaderboard, the service
or the command line, which sit beside or above it.
"""

"""The arena service: `referee serve`, where strangers' bots meet.

The gRPC API (proto/take5/arena/v1/arena.proto, generated into :mod:`take5_arena.service.api`),
its servicer and server (:mod:`~take5_arena.service.serve`), authors' accounts and tokens
(:mod:`~take5_arena.service.authors`), the intake of uploads (:mod:`~take5_arena.service.intake`),
the continuous ladder (:mod:`~take5_arena.service.ladder`), and the authors' client
(:mod:`~take5_arena.service.client`) that `referee submit --server` uses.
"""

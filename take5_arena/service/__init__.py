"""The arena service: `referee serve`, where strangers' bots meet.

The gRPC API (proto/take5/arena/v1/arena.proto, generated into :mod:`take5_arena.service.api`),
its methods (:mod:`~take5_arena.service.servicer`) and their replies
(:mod:`~take5_arena.service.messages`), the server's life cycle (:mod:`~take5_arena.service.serve`),
the authors' accounts and tokens (:mod:`~take5_arena.service.authors`), the intake of uploads
(:mod:`~take5_arena.service.intake`), the continuous ladder and its publisher
(:mod:`~take5_arena.service.ladder`), the authors' client (:mod:`~take5_arena.service.client`)
that `referee submit --server` uses, the service's defaults and limits
(:mod:`~take5_arena.service.defaults`) and its errors (:mod:`~take5_arena.service.errors`).
"""

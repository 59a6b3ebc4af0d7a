"""Authors, their tokens, which bots they own, their limits, and their submissions: the arena's
accounts, in their own SQLite file ``DIR/accounts.sqlite`` beside the tournament's store
(``DIR/tournament.sqlite``, take5_arena/referee/store/). One object, :class:`Accounts`, in parts:

- ``storage.py``: the file, its tables and migrations, and the move out of an older store;
- ``base.py``: the open connection and its transactions;
- ``tokens.py``: authors and the check of their tokens;
- ``claims.py``: who holds each bot name;
- ``submitted.py``: the submissions and the author's limits;
- ``sessions.py``: the web pages' sign-ins, which every web process of the arena shares;
- ``model.py``: the values all of them hand out.

Names (take5_arena/referee/names.py): one rule, ASCII only, unique by their case-folded key. A name
is claimed (a row in ``arena_bots``) only when a version of it is accepted, so a refused upload
claims nothing; a name that the tournament's store already has as an entrant and that no author
claimed is the organiser's (a "house" bot, entered with ``referee submit -t``): no author can
submit to it or withdraw it. The organiser's own commands (take5_arena/service/organiser.py) can
withdraw or ban any bot, with a note its author reads.

Why a file of its own (docs/architecture.md, "Who owns which data"): the store is the tournament's
record, which is copied, published and verified (``referee verify --tournament``), while this file
holds token hashes, which never leave the server; the two are written by different owners (the
referee's store methods, this package), and nothing needs a transaction across them: a submission
becomes a version through the store's own ``add_version``, which is idempotent (the same archive
gives the same version), so a server killed between the two writes validates the submission again
at its next start and finds the version there. What this package needs of the store (which
entrants play) it asks the store's methods.
"""

from __future__ import annotations

from .accounts import Accounts
from .model import (
    DEFAULT_LIMITS,
    HOUSE,
    Author,
    BotClaim,
    Limits,
    SubmissionRow,
    SubmissionStatus,
    check_name,
)
from .storage import ACCOUNTS_NAME, MIGRATIONS, SCHEMA, SCHEMA_VERSION, unfinished_uploads
from .tokens import PBKDF2_ITERATIONS, TOKEN_PREFIX

__all__ = [
    "ACCOUNTS_NAME",
    "DEFAULT_LIMITS",
    "HOUSE",
    "MIGRATIONS",
    "PBKDF2_ITERATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TOKEN_PREFIX",
    "Accounts",
    "Author",
    "BotClaim",
    "Limits",
    "SubmissionRow",
    "SubmissionStatus",
    "check_name",
    "unfinished_uploads",
]

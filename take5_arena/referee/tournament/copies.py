"""Code an author already has in the arena is not validated and rated again (issue 46).

Each validation that passes adds rated games (submission.py's ``_rate``), so the same code sent
again and again would be a way to pad an author's games, or to fish for favourable validation
deals, limited only by the hourly limit. Before the arena validates a submission, and again
when it enters the version, the author's versions of the same code (the same archive digest, or,
once the image is built, the same image) are looked up in the store
(``store.versions.of_code``):

* the current version of the same bot: **unchanged**, that version keeps playing; nothing is
  validated, stored or played (:func:`playing_copy` returns it);
* the current version of another of the author's bots: **refused**, naming it: one copy of a bot
  plays (a second copy would also add its validation games and seats);
* an older version of the same bot, replaced since: **refused**, naming both: the store keeps one
  version per code of a bot, so it could only be entered again as that old version, which does
  not play; a rollback is sent as new code (a changed byte will do), validated as any new version;
* the last version of a withdrawn bot: validated again, as any new submission. Its earlier
  verdict is not reused: it was given against another pool, perhaps other limits and another
  season's key, and the bot may have been withdrawn for its faults. Sending it costs an upload of
  the hourly limit, as sending code with a changed byte does, which no digest can tell from new
  code.
"""

from __future__ import annotations

from ..store import EntrantVersion, Store
from .errors import SubmitRefusedError


def playing_copy(
    store: Store,
    name: str,
    author: str,
    *,
    source_hash: str | None = None,
    image_id: str | None = None,
) -> EntrantVersion | None:
    """The version of bot ``name`` that plays now with this code (the submission is then
    unchanged), None when the code is new to ``author``'s playing bots; raises
    :class:`SubmitRefusedError` for a copy of another of their bots or an old version (the module
    text)."""
    same = store.versions.of_code(author, source_hash=source_hash, image_id=image_id)
    if not same:
        return None
    current = {v.name: v for v in store.versions.current()}
    latest = max((v.version for v in store.versions.all() if v.name == name), default=0)
    what = "image" if source_hash is None else "code"
    for version in same:
        playing = current.get(version.name)
        if playing is not None and playing.id == version.id:
            if version.name == name:
                return version
            raise SubmitRefusedError(
                f"the same {what} already plays as your {version.key}: one copy of a bot plays "
                f"(withdraw {version.name} first to enter it as {name})"
            )
        if (
            version.name == name
            and version.source_hash == source_hash
            and version.version != latest
        ):
            raise SubmitRefusedError(
                f"the same {what} as your {version.key}, which {name}@{latest} replaced: a "
                "bot's code is entered once; change something (a comment will do) to enter it "
                "again as a new version"
            )
    return None


__all__ = ["playing_copy"]

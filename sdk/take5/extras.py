"""The SDK's extras. ``pip install take5`` alone installs the rules, the engine, game records and
their checkers (take5.record, take5.audit): the standard library is all they need, so a record can
be checked anywhere. The extras add the rest:

* ``take5[bot]`` (grpcio, protobuf): the bot runtime (``take5.Bot``, ``take5.run``), the protocol's
  messages (take5.convert) and the harness (``take5-harness``);
* ``take5[sim]`` (numpy): the batched simulator (take5.batch), the observation encoder
  (take5.encode) and the vector environment (take5.vector);
* ``take5[rl]`` (numpy, pettingzoo, gymnasium): the PettingZoo environments (take5.env).

A module of an extra that is not installed fails to import with one line that names the extra
(:func:`missing_extra`), not with the name of a package the author never asked for.
"""

from __future__ import annotations


def missing_extra(extra: str, what: str, error: ImportError) -> ImportError:
    """The ImportError to raise from ``what`` (a module of the SDK) when importing a dependency of
    ``extra`` failed with ``error``."""
    return ImportError(
        f"{what} needs the SDK's [{extra}] extra (no module {error.name!r}): pip install "
        f"'take5[{extra}]' (from a clone of the project: pip install './sdk[{extra}]')",
        name=error.name,
    )


__all__ = ["missing_extra"]

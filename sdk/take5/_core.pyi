# The compiled core's interface (take5/_core.c); take5/core.py is its only caller.
from collections.abc import Sequence

from _typeshed import ReadableBuffer

VERSION: int

def random_game(
    players: int,
    professional: bool,
    threshold: int,
    above: bool,
    seed: int,
    rotation: int,
    player_seeds: Sequence[int],
    trace: bool,
    /,
) -> tuple[tuple[int, ...], int, bytes | None]: ...
def rollouts(
    ends: bytes,
    lens: bytes,
    heads: bytes,
    hands: ReadableBuffer,
    deals: int,
    players: int,
    size: int,
    randomness: Sequence[float],
    seed: int,
    first: ReadableBuffer | None,
    /,
) -> bytearray: ...

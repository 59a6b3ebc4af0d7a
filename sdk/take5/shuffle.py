"""The deterministic shuffle behind every deal.

The same seed must give the same deals on every Python version and machine, so the referee does not
use `random` (whose algorithms are not promised to stay the same). The algorithm, in full, so that
any program can reproduce a deal:

- The generator is SplitMix64 (Steele, Lea, Flood 2014). The state is the seed modulo 2**64. Each
  draw: ``state = (state + 0x9E3779B97F4A7C15) mod 2**64; z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 mod 2**64;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB mod 2**64; return z ^ (z >> 31)``.
- A number below n is drawn without bias by rejection: draw x until ``x < 2**64 - (2**64 mod n)``,
  then return ``x mod n``.
- A shuffle is Fisher-Yates from the end: for i from len-1 down to 1, draw j below i+1, swap items i
  and j.
- One generator serves a whole game: round 1 shuffles first, round 2 continues the same stream, and
  so on.
- A float in [0, 1) (``random()``, for the simulators' rollouts, take5.core): the top 53 bits of a
  draw over 2**53, ``(x >> 11) / 2**53``.

Tournaments deal from a secret key (docs/security.md, "Deals"): a game's seed is
:func:`keyed_seed` of the tournament's key and the game's deal identity, and the tournament
publishes :func:`key_commitment` of the key before its first game and the key itself when it is
over. Both are stated here in full too, so that anyone can check a tournament's seeds once its key
is revealed:

- the key is 32 bytes, published as 64 lowercase hex digits; its commitment is the SHA-256 of those
  32 bytes, in hex;
- a seed is the first 8 bytes of HMAC-SHA256(key, identity as UTF-8), read big-endian, shifted right
  by one bit (63 bits: a seed fits a signed 64-bit integer).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_TWO_TO_MINUS_53 = 2.0**-53


class SplitMix64:
    """A small, fully specified random number generator (see the module text)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        self.state = z = (self.state + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """A float in [0, 1): the top 53 bits of a draw over 2**53 (take5.sim's `Rng`)."""
        return (self.next_u64() >> 11) * _TWO_TO_MINUS_53

    def below(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list with the items in shuffled order (Fisher-Yates from the end)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


#: Bytes of a tournament's deal key.
KEY_BYTES = 32


def key_commitment(key: bytes) -> str:
    """The commitment a tournament publishes to its deal key: the key's SHA-256, in hex."""
    return hashlib.sha256(key).hexdigest()


def keyed_seed(key: bytes, identity: str) -> int:
    """The seed of the deal named ``identity`` under ``key`` (see the module text): 63 bits."""
    digest = hmac.new(key, identity.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def parse_key(text: str) -> bytes:
    """A revealed key from its 64 hex digits; ValueError for anything else."""
    if not isinstance(text, str) or len(text) != 2 * KEY_BYTES:
        raise ValueError(f"a deal key is {2 * KEY_BYTES} hex digits")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"a deal key is {2 * KEY_BYTES} hex digits") from None

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


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

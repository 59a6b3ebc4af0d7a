"""lowest: always plays its lowest card (and drafts the lowest card of the pool).

Low cards are the ones that most often undercut every row, so this is a weak but predictable
opponent. When it must take a row it takes the cheapest one (the SDK's default choose_row).
"""

from __future__ import annotations

from take5 import Bot, View


class LowestBot(Bot):
    name = "lowest"
    version = "1.0"
    author = "take5 arena"

    def pick_card(self, view: View) -> int:
        return min(view.hand)

    def draft_card(self, view: View) -> int:
        return min(view.pool)

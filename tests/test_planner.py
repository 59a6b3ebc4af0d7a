"""The planner example bot: legal answers in every kind of game, its exact plans of the last
cards, and how it plans a time bank (it never plans past what the referee allows)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from take5 import RandomPlayer, Settings, Variant, core, play_game
from take5.bot import Bot, CallContext
from take5.clock import Budget, ClockKind, TimeControl
from take5.harness import load_bot

BOT_FILE = Path(__file__).resolve().parent.parent / "example_bots" / "planner" / "bot.py"


def make(**kwargs):
    return load_bot(BOT_FILE, **kwargs)


class Checked:
    """Passes the calls on and checks every answer is legal."""

    def __init__(self, bot):
        self.bot = bot
        self.calls = 0

    def pick_card(self, view):
        self.calls += 1
        card = self.bot.pick_card(view)
        assert card in view.hand
        return card

    def choose_row(self, view):
        self.calls += 1
        row = self.bot.choose_row(view)
        assert isinstance(row, int) and 0 <= row < len(view.rows)
        return row

    def draft_card(self, view):
        self.calls += 1
        card = self.bot.draft_card(view)
        assert card in view.pool
        return card


def test_it_is_an_sdk_bot():
    bot = make()
    assert isinstance(bot, Bot)
    assert bot.name == "planner"


@pytest.mark.parametrize(
    "variant,players,exact,exact_cards",
    [
        ("standard", 4, "deal", None),
        ("standard", 2, "plan", 4),
        ("standard", 2, "deal", None),
        ("standard", 6, "deal", None),
        ("professional", 3, "plan", None),
    ],
)
def test_always_legal(variant, players, exact, exact_cards):
    settings = Settings(players=players, variant=Variant(variant), threshold=10)
    # Seat 0 rolls out on the compiled core where it is built, seat 1 on take5.batch.
    bots = [
        Checked(
            make(seed=seat, rollouts=24, exact=exact, exact_cards=exact_cards, compiled=seat == 0)
        )
        for seat in range(2)
    ]
    assert bots[1].bot.compiled is False and bots[0].bot.compiled is core.COMPILED
    others = [RandomPlayer(seat) for seat in range(players - 2)]
    game = play_game(bots + others, settings, seed=3)
    assert game.is_over
    assert all(b.calls for b in bots)


def test_the_last_cards_are_planned_as_a_whole():
    """With 4 cards or fewer it plays whole orders of its hand: 4! plans per deal."""
    bot = make(seed=1, rollouts=24 * 8)
    seen = []

    class Spy:
        def pick_card(self, view):
            card = bot.pick_card(view)
            seen.append((len(view.hand), bot.last_rollouts))
            return card

        def choose_row(self, view):
            return bot.choose_row(view)

    play_game([Spy(), RandomPlayer(1), RandomPlayer(2)], Settings(players=3, threshold=10), seed=2)
    by_size = dict(seen)
    assert by_size[4] == 24 * 8  # 8 deals of 24 plans
    assert by_size[3] == 6 * 32  # 6 plans a deal, as many deals as fit in the same rollouts
    assert by_size[1] == 0  # the last card is played without thinking


class Watched:
    """Passes the calls on and notes, after each card, what the bot says of its last search
    (`last_planned`, `last_randomness`): the tests read its public account, not its internals."""

    def __init__(self, bot):
        self.bot = bot
        self.seen: list[tuple[int, bool, tuple[float, ...]]] = []
        self.seat = -1

    def pick_card(self, view):
        self.seat = view.seat
        card = self.bot.pick_card(view)
        self.seen.append((len(view.hand), self.bot.last_planned, self.bot.last_randomness))
        self.bot.last_randomness = ()
        return card

    def choose_row(self, view):
        return self.bot.choose_row(view)

    def draft_card(self, view):
        return self.bot.draft_card(view)

    def game_over(self, result):
        return self.bot.game_over(result)


def test_head_to_head_it_plans_no_whole_orders_by_default():
    """At 2 players the exact plans lost (EXACT_CARDS): every card is searched as montecarlo does,
    unless `exact_cards` says otherwise."""

    def planned_hands(**kwargs):
        """The hand sizes at which the bot searched whole orders in a 2-player game."""
        bot = Watched(make(seed=1, rollouts=48, **kwargs))
        play_game([bot, RandomPlayer(1)], Settings(players=2, threshold=10), seed=2)
        return {size for size, planned, _ in bot.seen if planned}

    assert make().exact_cards_at(2) == 0 and make().exact_cards_at(4) == 4
    assert make(exact_cards=3).exact_cards_at(2) == 3
    assert planned_hands() == set()
    assert planned_hands(exact_cards=4) == {2, 3, 4}


def test_its_own_later_cards_in_a_rollout_are_mostly_random():
    """Rollouts play the bot's own later turns at random 70% of the time (OWN_RANDOMNESS: greedy
    ones lost), the opponents by their learned model; `own_randomness=0` is montecarlo's greedy."""
    seen: list[tuple[int, tuple[float, ...]]] = []

    def rollout_randomness(**kwargs):
        bot = Watched(make(seed=1, rollouts=48, **kwargs))
        play_game([bot, RandomPlayer(1)], Settings(players=2, threshold=10), seed=2)
        seen.extend((bot.seat, eps) for _, _, eps in bot.seen if eps)
        return {eps[seat] for seat, eps in seen}

    assert rollout_randomness() == {0.7}
    opponents = {eps[1 - seat] for seat, eps in seen}
    assert opponents and all(0 <= e <= 1 for e in opponents)
    seen.clear()
    assert rollout_randomness(own_randomness=0.0) == {0.0}


def test_deterministic_with_a_fixed_number_of_rollouts():
    def scores(seed):
        bots = [make(seed=seed, rollouts=24), RandomPlayer(1), RandomPlayer(2)]
        return play_game(bots, Settings(players=3, threshold=10), seed=9).scores

    assert scores(5) == scores(5)


class Banked:
    """Gives the bot a referee's bank and charges each decision what the bot planned for it
    (`allowance`), so that the test does not depend on the machine's speed."""

    def __init__(self, bot, control):
        self.bot = bot
        self.control = control
        self.bank = control.start()
        self.plans = []  # (cards in hand, planned seconds, limit in seconds)

    def _ask(self, method, view, cards):
        limit = self.bank.limit_ms / 1000
        budget = Budget(
            limit,
            ClockKind.CPU,
            bank=self.bank.available_ms / 1000,
            increment=self.control.increment,
            cap=self.control.cap,
            wall=30.0,
        )
        self.bot.context = CallContext("g", limit, time.monotonic(), budget)
        planned = self.bot.allowance(view)
        self.plans.append((cards, planned, limit))
        answer = method(view)
        self.bot.context = None
        self.bank.charge(round(planned * 1000))
        return answer

    def pick_card(self, view):
        return self._ask(self.bot.pick_card, view, len(view.hand))

    def choose_row(self, view):
        return self._ask(self.bot.choose_row, view, 0)


@pytest.mark.parametrize("control", ["2+0", "0+0.05"])
def test_a_bank_is_planned_and_never_overdrawn(control):
    bot = make(seed=1, rollouts=8)
    player = Banked(bot, TimeControl.parse(control))
    game = play_game([player, RandomPlayer(1), RandomPlayer(2), RandomPlayer(3)], seed=4)
    assert game.is_over
    assert all(planned <= limit - bot.margin + 1e-9 for _, planned, limit in player.plans)
    assert all(planned == 0 for cards, planned, _ in player.plans if cards == 1)
    first = [planned for cards, planned, _ in player.plans[:10] if cards]
    if control != "0+0.05":  # a bank to save: a full hand gets more than the last choices
        assert first[0] > first[8] > 0
        assert all(planned > 0 for cards, planned, _ in player.plans if cards > 1)


def test_without_a_bank_it_thinks_its_budget():
    bot = make(budget=0.05)
    budget = Budget(1.0, ClockKind.CPU, bank=1.0, increment=1.0, cap=1.0)
    bot.context = CallContext("g", 1.0, time.monotonic(), budget)
    view = play_game.__globals__["Game"](Settings(players=4), 1).view(0)
    assert bot.allowance(view) == 0.05
    bot.context = None
    assert bot.allowance(view) == 0.05


class StepClock:
    """Each read of the clocks returns the time so far and moves it on by `step` seconds: a search
    sees its time pass as it works, the same on a busy host as on an idle one (as in
    tests/test_montecarlo.py)."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def read(self) -> float:
        now = self.now
        self.now += self.step
        return now


def test_it_thinks_its_whole_budget(monkeypatch):
    """Version 1.5 has no early stop (`settle=None`): every card decision with a choice spends its
    budget, within a block of it, where 1.4 stopped once a leader was 4 standard errors ahead."""
    fake = StepClock(0.0002)
    for name in ("monotonic", "thread_time", "process_time"):
        monkeypatch.setattr(time, name, fake.read)
    budget = 0.03
    spent: list[float] = []
    bot = make(seed=3, budget=budget, clock="cpu")

    class Timed:
        def pick_card(self, view):
            start = time.thread_time()
            card = bot.pick_card(view)
            if len(view.hand) > 1:
                spent.append(time.thread_time() - start)
            return card

        def choose_row(self, view):
            return bot.choose_row(view)

    play_game([Timed(), RandomPlayer(1)], Settings(players=2, threshold=20), seed=5)
    assert bot.settle is None and spent
    assert all(0.8 * budget <= s <= budget + 40 * fake.step for s in spent), sorted(spent)[:3]

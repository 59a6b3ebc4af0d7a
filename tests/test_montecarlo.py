"""The Monte Carlo example bot: legal answers, its time budget and the referee's deadline,
determinism, its opponent model, and that it beats random bots clearly (a loose, seeded bound)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from take5 import Game, Phase, Play, RandomPlayer, Settings, Variant, View, core, play_game
from take5.bot import Bot, CallContext
from take5.harness import load_bot
from take5.rules import cheapest_row
from take5.sim import Table, greedy_card

BOT_FILE = Path(__file__).resolve().parent.parent / "example_bots" / "montecarlo" / "bot.py"


def make(**kwargs):
    return load_bot(BOT_FILE, **kwargs)


class StepClock:
    """A deterministic stand-in for the clocks the bot and the SDK read (``time.monotonic``,
    ``time.thread_time``, ``time.process_time``): each read returns the time so far, then moves it
    on by `step` seconds. A search that checks its clock while it works sees its time pass as it
    works, and what it spent is a count of its reads, the same on a busy host as on an idle one: the
    tests assert on that count, never on the machine's speed (bench/strength.py measures the real
    times per decision)."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def read(self) -> float:
        now = self.now
        self.now += self.step
        return now


@pytest.fixture
def clock(monkeypatch):
    fake = StepClock(0.0005)
    for name in ("monotonic", "thread_time", "process_time"):
        monkeypatch.setattr(time, name, fake.read)
    return fake


class Checked:
    """Passes the calls on, checking every answer is legal and timing them."""

    def __init__(self, bot):
        self.bot = bot
        self.times = []

    def _time(self, method, view):
        start = time.monotonic()
        answer = method(view)
        self.times.append(time.monotonic() - start)
        return answer

    def pick_card(self, view):
        card = self._time(self.bot.pick_card, view)
        assert card in view.hand
        return card

    def choose_row(self, view):
        row = self._time(self.bot.choose_row, view)
        assert isinstance(row, int) and 0 <= row < len(view.rows)
        return row

    def draft_card(self, view):
        card = self._time(self.bot.draft_card, view)
        assert card in view.pool
        return card


class GreedyPlayer:
    def pick_card(self, view):
        return greedy_card(Table.from_rows(view.rows), view.hand)

    def choose_row(self, view):
        return cheapest_row(view.rows)

    def draft_card(self, view):
        return view.pool[0]


def test_it_is_an_sdk_bot():
    bot = make()
    assert isinstance(bot, Bot)
    assert bot.name == "montecarlo"


@pytest.mark.parametrize(
    "variant,players", [("standard", 4), ("standard", 2), ("standard", 7), ("professional", 3)]
)
def test_always_legal(variant, players):
    settings = Settings(players=players, variant=Variant(variant))
    # Seat 0 rolls out on the compiled core where it is built, seat 1 on take5.batch.
    bots = [Checked(make(seed=seat, rollouts=40, compiled=seat == 0)) for seat in range(2)]
    assert bots[1].bot.compiled is False and bots[0].bot.compiled is core.COMPILED
    others = [RandomPlayer(seat) for seat in range(players - 2)]
    game = play_game(bots + others, settings, seed=3)
    assert game.is_over
    assert all(b.times for b in bots)


def test_row_choice_looks_at_what_follows():
    """The last turn of a 2-player round: the bot's 5 is lower than every row, the other seat's 25
    is placed next. Rows: (13), (23), (16 17 18 19 21) full, (57). Taking (13), (23) or (57) costs
    the bot 1 bull head either way, but only after taking (23) does 25 become the 6th card of the
    full row, so the opponent takes 5: the bot should take row 1."""
    view = View(
        seat=0,
        settings=Settings(players=2),
        phase=Phase.CHOOSE_ROW,
        round=1,
        turn=10,
        hand=(),
        rows=((13,), (23,), (16, 17, 18, 19, 21), (57,)),
        scores=(0, 0),
        revealed=(Play(0, 5), Play(1, 25)),
        card=5,
    )
    assert make(seed=1, rollouts=50).choose_row(view) == 1
    assert make(seed=1, rollouts=50, relative=0.0).choose_row(view) in (0, 1, 3)


def test_respects_a_small_budget(clock):
    budget = 0.02
    bot = Checked(make(seed=5, budget=budget))
    play_game(
        [bot] + [RandomPlayer(i) for i in range(3)], Settings(players=4, threshold=20), seed=9
    )
    # On the step clock a search that keeps its budget stops within a block of it: one block of
    # deals reads the clock a handful of times. A bot that ignored its budget would be far past.
    assert max(bot.times) <= budget + 20 * clock.step, sorted(bot.times)[-5:]


@pytest.mark.parametrize("kind", ["wall", "cpu"])
def test_answers_before_the_referees_deadline(clock, kind):
    """A 1 s budget, but the referee gives 40 ms: the deadline (on the clock) wins."""
    bot = make(seed=2, budget=1.0, clock=kind)
    game = Game(Settings(players=4), 4)
    view = game.view(0)
    bot.context = CallContext("g", 0.04, time.monotonic())
    start = time.monotonic()
    card = bot.pick_card(view)
    spent = time.monotonic() - start
    bot.context = None
    assert card in view.hand
    assert spent <= 0.04 + 20 * clock.step, spent  # the 40 ms deadline stopped the search
    # no time at all left: still a legal answer, at once (one block at most)
    bot.context = CallContext("g", 0.0, time.monotonic())
    start = time.monotonic()
    assert bot.pick_card(view) in view.hand
    assert time.monotonic() - start <= 20 * clock.step
    bot.context = None


def test_cpu_clock_budget(clock):
    bot = make(seed=2, budget=0.02, clock="cpu")
    view = Game(Settings(players=4), 4).view(0)
    start = time.thread_time()
    assert bot.pick_card(view) in view.hand
    assert time.thread_time() - start <= 0.02 + 20 * clock.step
    with pytest.raises(ValueError):
        make(clock="sundial")


def test_deterministic_with_a_fixed_number_of_rollouts():
    def scores(seed):
        players = [make(seed=seed, rollouts=60)] + [RandomPlayer(i) for i in range(3)]
        return play_game(players, Settings(players=4), seed=11).scores

    assert scores(1) == scores(1)


def test_learns_how_random_its_opponents_are():
    def learned(opponent):
        bot = make(seed=3, rollouts=20)
        players = [bot] + [opponent(i) for i in range(3)]
        play_game(players, Settings(players=4, threshold=1000), seed=2)  # many rounds
        return [bot.model.randomness(seat) for seat in (1, 2, 3)]

    assert all(e > 0.7 for e in learned(RandomPlayer))
    assert all(e < 0.3 for e in learned(lambda i: GreedyPlayer()))


def test_the_professional_variant_uses_the_public_hands():
    """With every hand known and one turn left for all, the bot plays it like an exact search."""
    bot = make(seed=1, rollouts=400)
    game = Game(Settings(players=3, variant=Variant.PROFESSIONAL), 6)
    players = [Checked(bot), RandomPlayer(1), RandomPlayer(2)]
    while game.phase is not Phase.OVER and game.round == 1:
        if game.phase is Phase.DRAFT:
            game.draft(players[game.drafter].draft_card(game.view(game.drafter)))
        elif game.phase is Phase.PLAY:
            game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        else:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
    assert players[0].times


def test_beats_random_bots_clearly():
    wins = 0.0
    games = 24
    points = 0
    for g in range(games):
        seat = g % 4
        players: list = [RandomPlayer(100 * g + i) for i in range(4)]
        players[seat] = make(seed=g, rollouts=120)
        game = play_game(players, Settings(players=4), seed=1000 + g)
        winners = game.result().winners
        if seat in winners:
            wins += 1 / len(winners)
        points += game.scores[seat]
    assert wins / games >= 0.6, wins
    assert points / games < 35


def test_one_opponent_model_per_game():
    """A bot process may serve several games: what it learns stays with each game."""
    bot = make()
    bot.context = CallContext("a", 1.0, time.monotonic())
    a = bot.model
    bot.context = CallContext("b", 1.0, time.monotonic())
    assert bot.model is not a
    bot.context = CallContext("a", 1.0, time.monotonic())
    assert bot.model is a
    bot.context = None

    class Over:
        game_id = "a"

    bot.game_over(Over())
    bot.context = CallContext("a", 1.0, time.monotonic())
    assert bot.model is not a
    bot.context = None

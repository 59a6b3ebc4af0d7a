"""take5.sim, the fast simulator for bots: it must agree with the rules engine, and its sampling
must respect what a seat knows (docs/rules.md 8)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from take5 import Game, Phase, RandomPlayer, Settings, Variant, penalty
from take5.rules import cheapest_row as rules_cheapest_row
from take5.rules import place_card, target_row
from take5.sim import (
    Table,
    card_cost,
    draft_order,
    draft_out,
    greedy_card,
    place,
    play_out,
    play_turn,
    sample_hands,
)
from take5.sim import cheapest_row as sim_cheapest_row
from take5.sim import target_row as sim_target_row


@st.composite
def tables(draw):
    """4 rows of increasing cards (1 to 5 each, all distinct) and a card that is not on them."""
    cards = draw(st.permutations(range(1, 105)))
    lengths = draw(st.lists(st.integers(1, 5), min_size=4, max_size=4))
    rows, start = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[start : start + length])))
        start += length
    return tuple(rows), cards[start], draw(st.integers(0, 3))


@given(tables())
@settings(max_examples=300, deadline=None)
def test_place_agrees_with_rules(case):
    rows, card, chosen = case
    table = Table.from_rows(rows)
    assert sim_target_row(table, card) == (
        -1 if target_row(rows, card) is None else target_row(rows, card)
    )
    assert (
        card_cost(table, card)
        == place_card(
            rows, card, rules_cheapest_row(rows) if target_row(rows, card) is None else None
        ).points
    )
    expected = place_card(rows, card, chosen)
    assert place(table, card, chosen) == expected.points
    assert table == Table.from_rows(expected.rows)


@given(tables())
@settings(max_examples=100, deadline=None)
def test_default_row_is_the_referees_cheapest_row(case):
    rows, _, _ = case
    assert sim_cheapest_row(Table.from_rows(rows)) == rules_cheapest_row(rows)


class CheapestRowRandom(RandomPlayer):
    """Random cards, and the cheapest row like the simulator's default."""

    def choose_row(self, view):
        return rules_cheapest_row(view.rows)


class Greedy:
    """The simulator's rollout policy with randomness 0, as an engine Player."""

    def pick_card(self, view):
        return greedy_card(Table.from_rows(view.rows), view.hand)

    def choose_row(self, view):
        return rules_cheapest_row(view.rows)

    def draft_card(self, view):
        return view.pool[0]


@given(st.integers(0, 2**32), st.integers(2, 10))
@settings(max_examples=40, deadline=None)
def test_play_turn_agrees_with_game(seed, n):
    game = Game(Settings(players=n), seed)
    players = [CheapestRowRandom(seed + i) for i in range(n)]
    while not game.is_over:
        if game.phase is Phase.CHOOSE_ROW:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
            continue
        table = Table.from_rows(game.rows)
        before = list(game.view(0).round_points) if game.turn > 1 else [0] * n
        scores = list(game.scores)
        cards = [p.pick_card(game.view(s)) for s, p in enumerate(players)]
        points = play_turn(table, cards)
        game.play(cards)
        while game.phase is Phase.CHOOSE_ROW:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
        if game.is_over or game.turn == 1:  # the round ended: points went into the scores
            assert [a - b for a, b in zip(game.scores, scores)] == [
                x + y for x, y in zip(before, points)
            ]
            if game.is_over:
                break
        else:
            assert table == Table.from_rows(game.rows)
            after = list(game.view(0).round_points)
            assert [a - b for a, b in zip(after, before)] == points


def test_play_turn_asks_for_low_cards():
    table = Table.from_rows([(10,), (20,), (30,), (40,)])
    asked = []

    def choose(t, card, seat):
        asked.append((card, seat))
        return 3

    assert play_turn(table, [50, 5, 25], choose) == [0, 3, 0]  # 40 holds 3 bull heads
    assert asked == [(5, 1)]
    assert table.ends == [10, 25, 50, 5]  # 5 took row 3, 25 went after 20, 50 after 30
    assert table.lens == [1, 2, 2, 1]


@given(st.integers(0, 2**32), st.integers(2, 10))
@settings(max_examples=40, deadline=None)
def test_play_out_is_the_greedy_round_of_the_engine(seed, n):
    """With randomness 0 every seat plays greedy_card: the round must match the engine's."""
    game = Game(Settings(players=n, threshold=1), seed)  # one round
    table = Table.from_rows(game.rows)
    hands = [list(h) for h in game.hands]
    points = play_out(table, hands, random.Random(0), 0.0)
    players = [Greedy() for _ in range(n)]
    while not game.is_over:
        if game.phase is Phase.PLAY:
            game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        else:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
    assert points == game.scores
    assert hands == [[] for _ in range(n)]
    assert table == Table.from_rows(game.rows)


@given(st.integers(0, 2**32), st.integers(2, 10), st.floats(0, 1))
@settings(max_examples=40, deadline=None)
def test_play_out_plays_every_card_once(seed, n, eps):
    game = Game(Settings(players=n), seed)
    hands = [list(h) for h in game.hands]
    first = [None] * n
    first[0] = hands[0][-1]
    before = sum(penalty(r) for r in game.rows) + sum(penalty(h) for h in hands)
    table = Table.from_rows(game.rows)
    points = play_out(table, hands, random.Random(seed), eps, first)
    assert all(not h for h in hands)
    assert sum(points) + sum(table.heads) == before  # no bull head lost or made
    assert all(1 <= length <= 5 for length in table.lens)


def test_play_out_is_deterministic_given_the_generator():
    game = Game(Settings(players=5), 7)

    def once():
        return play_out(
            Table.from_rows(game.rows), [list(h) for h in game.hands], random.Random(3), 0.5
        )

    assert once() == once()


def walk_views(settings_, seed):
    """Every view of a game with random players, for every seat asked."""
    game = Game(settings_, seed)
    players = [RandomPlayer(seed + i) for i in range(settings_.players)]
    while not game.is_over:
        if game.phase is Phase.DRAFT:
            view = game.view(game.drafter)
            yield game, view
            game.draft(players[view.seat].draft_card(view))
        elif game.phase is Phase.PLAY:
            views = [game.view(s) for s in range(settings_.players)]
            for view in views:
                yield game, view
            game.play([p.pick_card(v) for p, v in zip(players, views)])
        else:
            view = game.view(game.waiting_for[0])
            yield game, view
            game.choose_row(players[view.seat].choose_row(view))


@given(st.integers(0, 2**32), st.integers(2, 10))
@settings(max_examples=15, deadline=None)
def test_sampled_hands_respect_what_the_seat_knows(seed, n):
    rng = random.Random(seed)
    for game, view in walk_views(Settings(players=n, threshold=30), seed):
        hands = sample_hands(view, rng)
        assert len(hands) == n
        assert hands[view.seat] == list(view.hand)
        seen = set(view.hand) | set(view.played_cards)
        for row in view.rows:
            seen.update(row)
        for take in view.takes:
            seen.update(take.cards)
        dealt = [c for seat, h in enumerate(hands) if seat != view.seat for c in h]
        assert len(dealt) == len(set(dealt))  # no card in two hands
        assert not seen & set(dealt)  # never a card the seat has seen
        assert set(dealt) <= set(view.unseen())
        # right sizes: every seat holds as many cards as it really does
        assert [len(h) for h in hands] == [len(h) for h in game.hands]


def test_sampling_is_uniform_enough():
    """Each unseen card lands in some opponent's hand about equally often."""
    game = Game(Settings(players=4), 11)
    view = game.view(0)
    rng = random.Random(1)
    counts = dict.fromkeys(view.unseen(), 0)
    trials = 3000
    for _ in range(trials):
        for seat, hand in enumerate(sample_hands(view, rng)):
            if seat:
                for c in hand:
                    counts[c] += 1
    expected = trials * 30 / len(counts)
    assert all(abs(c - expected) < 0.25 * expected for c in counts.values())


@given(st.integers(0, 2**32), st.integers(2, 6))
@settings(max_examples=10, deadline=None)
def test_professional_sampling_uses_the_real_hands(seed, n):
    rng = random.Random(seed)
    for game, view in walk_views(
        Settings(players=n, variant=Variant.PROFESSIONAL, threshold=20), seed
    ):
        hands = sample_hands(view, rng)
        assert hands == [sorted(h) for h in game.hands]
        if view.phase is Phase.DRAFT:
            order = draft_order(view)
            assert order[0] == view.seat == game.drafter
            assert len(order) == len(view.pool) - 4


def test_draft_order_and_draft_out_follow_the_game():
    n = 3
    game = Game(Settings(players=n, variant=Variant.PROFESSIONAL), 5)
    predicted = draft_order(game.view(game.drafter))
    actual = []
    picker = RandomPlayer(1)
    while game.phase is Phase.DRAFT:
        actual.append(game.drafter)
        game.draft(picker.draft_card(game.view(game.drafter)))
    assert predicted == actual

    game = Game(Settings(players=n, variant=Variant.PROFESSIONAL), 5)
    view = game.view(game.drafter)
    hands = [list(h) for h in view.hands]
    table = draft_out(view.pool, hands, draft_order(view), random.Random(2))
    assert [len(h) for h in hands] == [10] * n
    assert all(h == sorted(h) for h in hands)
    assert sorted(table.ends + [c for h in hands for c in h]) == list(range(1, 10 * n + 5))
    assert table.lens == [1, 1, 1, 1]

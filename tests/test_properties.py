"""Property tests of the engine over seeds, player counts 2..10 and both variants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from take5 import Game, Phase, RandomPlayer, Settings, Variant, penalty


@st.composite
def games(draw):
    variant = draw(st.sampled_from([Variant.STANDARD, Variant.PROFESSIONAL]))
    players = draw(st.integers(2, 10 if variant is Variant.STANDARD else 6))
    threshold = draw(st.integers(1, 80))
    end_rule = draw(st.sampled_from(["at-or-above", "above"]))
    seed = draw(st.integers(0, 2**64 - 1))
    rotation = draw(st.integers(0, players - 1))
    decisions = draw(st.integers(0, 2**32))
    return Settings(players, variant, threshold, end_rule), seed, rotation, decisions


def walk(settings, seed, rotation, decisions, check):
    """Play a game with random decisions, calling check(game, piles) at every decision point."""
    game = Game(settings, seed, rotation=rotation)
    players = [RandomPlayer(decisions + i) for i in range(settings.players)]
    steps = 0
    while not game.is_over:
        check(game)
        if game.phase is Phase.DRAFT:
            game.draft(players[game.drafter].draft_card(game.view(game.drafter)))
        elif game.phase is Phase.PLAY:
            game.play([p.pick_card(game.view(s)) for s, p in enumerate(players)])
        else:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
        steps += 1
        assert steps < 10_000
    check(game)
    return game


def piles(game):
    taken = [[] for _ in range(game.settings.players)]
    for take in game.view(0).takes:
        taken[take.seat].extend(take.cards)
    return taken


@settings(max_examples=60, deadline=None)
@given(games())
def test_every_card_is_in_exactly_one_place(case):
    settings_, seed, rotation, decisions = case
    dealt_this_round = {}

    def check(game):
        if game.is_over or game.phase is Phase.DRAFT:
            return
        rnd = game.round_log[game.round - 1]
        in_play = [c for h in rnd["hands"] for c in h] + [r[0] for r in rnd["rows"]]
        places = [c for h in game.hands for c in h]
        places += [c for r in game.rows for c in r]
        places += [c for pile in piles(game) for c in pile]
        places += [card for card, _ in game.pending]
        assert sorted(places) == sorted(in_play)
        assert len(set(in_play)) == len(in_play) == 10 * settings_.players + 4
        dealt_this_round[game.round] = True

    walk(settings_, seed, rotation, decisions, check)


@settings(max_examples=60, deadline=None)
@given(games())
def test_rows_stay_ascending_and_at_most_five(case):
    def check(game):
        if game.phase is Phase.DRAFT:
            return
        assert len(game.rows) == 4
        for row in game.rows:
            assert 1 <= len(row) <= 5
            assert list(row) == sorted(row) and len(set(row)) == len(row)

    walk(*case, check)


@settings(max_examples=60, deadline=None)
@given(games())
def test_round_points_equal_bull_heads_taken_and_game_ends_by_threshold(case):
    settings_, *_ = case
    game = walk(*case, lambda game: None)
    total = [0] * settings_.players
    for index, rnd in enumerate(game.round_log):
        points = [0] * settings_.players
        for turn in rnd["turns"]:
            for take in turn["takes"]:
                points[take["seat"]] += penalty(take["cards"])
        assert rnd["points"] == points
        assert sum(points) >= 1  # 10n cards cannot all fit in 4 rows of 5
        total = [a + b for a, b in zip(total, points)]
        assert rnd["scores"] == total
        last = index == len(game.round_log) - 1
        assert settings_.game_over(total) == last
    assert list(game.result().scores) == total


@settings(max_examples=60, deadline=None)
@given(games())
def test_standard_views_never_show_another_hand(case):
    settings_, *_ = case

    def check(game):
        if game.is_over:
            return
        for seat in game.waiting_for:
            view = game.view(seat)
            if settings_.variant is Variant.PROFESSIONAL:
                assert view.hands == tuple(tuple(sorted(h)) for h in game.hands)
                continue
            others = {c for s, h in enumerate(game.hands) if s != seat for c in h}
            visible = set(view.hand) | {c for r in view.rows for c in r}
            visible |= {p.card for turn in view.plays for p in turn}
            visible |= {c for t in view.takes for c in t.cards}
            visible |= {p.card for p in view.revealed} | set(view.pool)
            assert view.hands is None
            assert not visible & others
            assert set(view.hand) == set(game.hands[seat])

    walk(*case, check)

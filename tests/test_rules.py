"""One named test per rule of docs/rules.md (test_rule_<section>_<what>)."""

from __future__ import annotations

import pytest

from take5 import (
    BULL_HEADS,
    CardNotInHand,
    CardNotInPool,
    EndRule,
    Game,
    InvalidRow,
    InvalidSettings,
    NeedRowChoice,
    Phase,
    RandomPlayer,
    Settings,
    TakeReason,
    Variant,
    WrongPhase,
    bull_heads,
    deck,
    penalty,
    place_card,
    place_cards,
    play_game,
    rank,
    target_row,
)

# 1. Cards


def test_rule_1_cards_numbered_1_to_104():
    assert deck() == tuple(range(1, 105))
    with pytest.raises(ValueError):
        bull_heads(0)
    with pytest.raises(ValueError):
        bull_heads(105)


def test_rule_1_bull_heads_of_each_kind():
    assert bull_heads(55) == 7
    for card in (11, 22, 33, 44, 66, 77, 88, 99):
        assert bull_heads(card) == 5
    for card in (10, 20, 50, 100):
        assert bull_heads(card) == 3
    for card in (5, 15, 25, 45, 95):
        assert bull_heads(card) == 2
    for card in (1, 2, 13, 54, 56, 104):
        assert bull_heads(card) == 1


def test_rule_1_deck_holds_171_bull_heads():
    values = [bull_heads(c) for c in deck()]
    assert sum(values) == 171
    assert [values.count(v) for v in (1, 2, 3, 5, 7)] == [76, 9, 10, 8, 1]


# 2. Set-up of a round


def test_rule_2_deal_ten_cards_each_and_four_rows():
    for players in range(2, 11):
        game = Game(Settings(players=players), seed=players)
        assert all(len(h) == 10 for h in game.hands)
        assert len(game.rows) == 4 and all(len(r) == 1 for r in game.rows)
        dealt = [c for h in game.hands for c in h] + [r[0] for r in game.rows]
        assert len(set(dealt)) == 10 * players + 4


def test_rule_2_hands_are_private():
    game = Game(Settings(players=4), seed=3)
    view = game.view(1)
    assert view.hand == tuple(game.hands[1])
    assert view.hands is None
    others = {c for s in (0, 2, 3) for c in game.hands[s]}
    assert others <= set(view.unseen())  # other hands are among the unseen cards
    assert not others & set(view.hand)


def test_rule_2_every_round_dealt_from_the_full_deck():
    game = play_game([RandomPlayer(i) for i in range(4)], Settings(players=4), seed=11)
    assert game.round >= 2
    for rnd in game.round_log:
        cards = [c for h in rnd["hands"] for c in h] + [r[0] for r in rnd["rows"]]
        assert len(set(cards)) == 44 and set(cards) <= set(range(1, 105))
    first, second = game.round_log[0], game.round_log[1]
    assert first["hands"] != second["hands"]


def test_rule_2_same_seed_same_deal():
    assert Game(Settings(players=5), seed=42).hands == Game(Settings(players=5), seed=42).hands
    assert Game(Settings(players=5), seed=42).hands != Game(Settings(players=5), seed=43).hands


# 3. A turn


def test_rule_3_cards_are_chosen_together_then_revealed():
    game = Game(Settings(players=3), seed=1)
    assert game.waiting_for == (0, 1, 2)
    with pytest.raises(WrongPhase):
        game.play([game.hands[0][0], game.hands[1][0]])  # one card per seat, all at once
    views = [game.view(s) for s in range(3)]
    assert all(v.revealed == () for v in views)  # nobody sees a choice before choosing


def test_rule_3_revealed_cards_placed_lowest_first():
    rows = ((10,), (20,), (30,), (40,))
    _, placements = place_cards(rows, [45, 41, 42])
    assert [p.card for p in placements] == [41, 42, 45]
    assert placements[-1].rows[3] == (40, 41, 42, 45)


# 4. Placing a card


def test_rule_4_row_accepts_only_higher_cards():
    rows = ((50,), (60,), (70,), (80,))
    assert target_row(rows, 65) == 1
    assert target_row(rows, 49) is None


def test_rule_4_closest_below():
    rows = ((10,), (30,), (25,), (90,))
    assert target_row(rows, 31) == 1
    assert target_row(rows, 29) == 2
    assert target_row(rows, 95) == 3


def test_rule_4_full_row():
    rows = ((1, 2, 3, 4, 5), (20,), (30,), (40,))
    placement = place_card(rows, 6)
    assert placement.taken == (1, 2, 3, 4, 5)
    assert placement.reason is TakeReason.SIXTH_CARD
    assert placement.rows[0] == (6,)
    assert placement.points == 6  # 1+1+1+1, and 2 for the 5


def test_rule_4_low_card_takes_any_chosen_row():
    rows = ((10, 11), (20,), (30,), (40, 55))
    with pytest.raises(NeedRowChoice):
        place_card(rows, 5)
    for chosen in range(4):  # any row, not only the cheapest
        placement = place_card(rows, 5, chosen)
        assert placement.taken == rows[chosen]
        assert placement.rows[chosen] == (5,)
        assert placement.reason is TakeReason.LOW_CARD
    with pytest.raises(InvalidRow):
        place_card(rows, 5, 4)


def test_rule_4_row_choice_sees_rows_as_they_are_then():
    game = Game(Settings(players=2), seed=0)
    game.rows = ((50,), (60,), (70,), (80,))
    game.hands = [[1, 2], [90, 91]]
    game.play([1, 90])
    assert game.phase is Phase.CHOOSE_ROW and game.waiting_for == (0,)
    view = game.view(0)
    assert view.card == 1 and view.rows == ((50,), (60,), (70,), (80,))  # 90 is not placed yet
    assert {p.card for p in view.revealed} == {1, 90}
    game.choose_row(2)
    assert game.rows == ((50,), (60,), (1,), (80, 90))


def test_rule_4_at_most_one_row_choice_per_turn():
    # Only the lowest card of a turn can be below every row: after it is placed, it ends a row.
    rows = ((50,), (60,), (70,), (80,))
    choices = []
    place_cards(rows, [1, 2, 3, 4], choose_row=lambda r, c: choices.append(c) or 0)
    assert choices == [1]


def test_rule_4_invalid_decisions_raise():
    game = Game(Settings(players=2), seed=0)
    not_held = next(c for c in range(1, 105) if c not in game.hands[0])
    with pytest.raises(CardNotInHand) as error:
        game.play([not_held, game.hands[1][0]])
    assert error.value.seat == 0
    with pytest.raises(WrongPhase):
        game.choose_row(0)


# 5. End of a round and scoring


def test_rule_5_round_ends_after_ten_turns():
    game = Game(Settings(players=3), seed=5)
    for turn in range(1, 11):
        assert game.round == 1 and game.turn == turn
        game.play([h[0] for h in game.hands])
        while game.phase is Phase.CHOOSE_ROW:
            game.choose_row(0)
    assert game.is_over or game.round == 2
    assert len(game.round_log[0]["turns"]) == 10


def test_rule_5_score_is_bull_heads_taken():
    game = play_game([RandomPlayer(i) for i in range(4)], Settings(players=4), seed=8)
    totals = [0] * 4
    for rnd in game.round_log:
        points = [0] * 4
        for turn in rnd["turns"]:
            for take in turn["takes"]:
                points[take["seat"]] += penalty(take["cards"])
        assert rnd["points"] == points
        totals = [t + p for t, p in zip(totals, points)]
        assert rnd["scores"] == totals


# 6. End of the game


def test_rule_6_game_ends_at_or_above_threshold():
    settings = Settings(players=2, threshold=66)
    assert settings.game_over([66, 0]) and not settings.game_over([65, 10])
    game = play_game([RandomPlayer(1), RandomPlayer(2)], Settings(players=2, threshold=20), seed=4)
    scores = [r["scores"] for r in game.round_log]
    assert max(scores[-1]) >= 20
    assert all(max(s) < 20 for s in scores[:-1])


def test_rule_6_more_than_threshold_is_a_setting():
    settings = Settings(players=2, threshold=66, end_rule=EndRule.ABOVE)
    assert not settings.game_over([66, 0]) and settings.game_over([67, 0])
    assert Settings(players=2, end_rule="above").end_rule is EndRule.ABOVE


def test_rule_6_threshold_is_a_setting():
    game = play_game([RandomPlayer(1), RandomPlayer(2)], Settings(players=2, threshold=1), seed=4)
    assert game.round == 1
    with pytest.raises(InvalidSettings):
        Settings(threshold=0)


def test_rule_6_fewest_points_wins_and_ties_share_a_place():
    result = rank([30, 12, 30, 70])
    assert result.places == (2, 1, 2, 4)
    assert result.standing == ((1,), (0, 2), (3,))
    assert rank([5, 5]).places == (1, 1)


# 7. Professional variant


def test_rule_7_only_cards_up_to_10n_plus_4():
    assert deck(Variant.PROFESSIONAL, 3) == tuple(range(1, 35))
    game = play_game(
        [RandomPlayer(i) for i in range(3)], Settings(players=3, variant="professional"), seed=0
    )
    for rnd in game.round_log:
        cards = [c for h in rnd["hands"] for c in h] + [r[0] for r in rnd["rows"]]
        assert sorted(cards) == list(range(1, 35))


def test_rule_7_for_two_to_six_players():
    with pytest.raises(InvalidSettings):
        Settings(players=7, variant="professional")
    with pytest.raises(InvalidSettings):
        Settings(players=11)
    with pytest.raises(InvalidSettings):
        Settings(players=1)


def test_rule_7_open_draft_with_rotating_first_drafter():
    game = Game(Settings(players=3, variant="professional"), seed=0)
    assert game.phase is Phase.DRAFT and game.drafter == 0
    view = game.view(0)
    assert view.pool == tuple(range(1, 35))
    with pytest.raises(CardNotInPool):
        game.draft(35)
    order = []
    while game.phase is Phase.DRAFT:
        order.append(game.drafter)
        game.draft(game.view(game.drafter).pool[-1])
    assert order == [0, 1, 2] * 10
    assert game.round_log[0]["draft"]["first"] == 0
    # Round 2 starts with the next seat.
    while game.round == 1:
        game.play([h[0] for h in game.hands])
        while game.phase is Phase.CHOOSE_ROW:
            game.choose_row(0)
    if not game.is_over:
        assert game.drafter == 1


def test_rule_7_undrafted_cards_start_the_rows():
    game = Game(Settings(players=2, variant="professional"), seed=0)
    while game.phase is Phase.DRAFT:
        game.draft(game.view(game.drafter).pool[0])  # everybody takes the lowest
    assert game.rows == ((21,), (22,), (23,), (24,))


def test_rule_7_hands_are_public():
    game = Game(Settings(players=2, variant="professional"), seed=0)
    while game.phase is Phase.DRAFT:
        game.draft(game.view(game.drafter).pool[0])
    view = game.view(0)
    assert view.hands == (tuple(game.hands[0]), tuple(game.hands[1]))
    assert view.unseen() == ()


# 8. Information sets


def test_rule_8_standard_view_holds_what_a_player_may_know():
    game = Game(Settings(players=3), seed=2)
    game.play([h[-1] for h in game.hands])
    view = game.view(2)
    assert view.round == 1 and view.turn == 2 and view.players == 3
    assert view.scores == (0, 0, 0) and view.settings == game.settings
    assert [tuple(p) for p in view.plays[0]] == [
        tuple(p) for p in game.round_log[0]["turns"][0]["plays"]
    ]
    assert view.takes == tuple(game.view(0).takes)
    assert view.hands is None and view.pool == ()
    assert set(view.hand) == set(game.hands[2])


def test_rule_8_view_never_shows_undealt_cards():
    game = Game(Settings(players=2), seed=2)
    dealt = {c for h in game.hands for c in h} | {r[0] for r in game.rows}
    undealt = set(range(1, 105)) - dealt
    view = game.view(0)
    visible = set(view.hand) | {c for r in view.rows for c in r}
    assert not visible & undealt
    assert not visible & set(game.hands[1])


# 9. Worked example


def test_rule_9_worked_example_first_turn():
    rows = ((3,), (2,), (58,), (96,))
    rows, placements = place_cards(rows, [93, 17, 90, 4])
    assert [(p.card, p.row) for p in placements] == [(4, 0), (17, 0), (90, 2), (93, 2)]
    assert rows == ((3, 4, 17), (2,), (58, 90, 93), (96,))
    assert all(p.taken == () for p in placements)
    rows, _ = place_cards(((3,), (30,), (58,), (96,)), [4, 17, 90, 93])
    assert rows == ((3, 4, 17), (30,), (58, 90, 93), (96,))


def test_rule_9_row_of_five_ending_73_receives_74():
    rows = ((5,), (60, 61, 62, 70, 73), (80,), (90,))
    placement = place_card(rows, 74)
    assert placement.taken == (60, 61, 62, 70, 73)
    assert placement.rows[1] == (74,)


def test_rule_9_low_card_2_takes_the_chosen_row_of_96():
    rows = ((10,), (20, 30), (40,), (96,))
    placement = place_card(rows, 2, chosen_row=3)
    assert placement.taken == (96,) and placement.points == 1 == BULL_HEADS[96]
    assert placement.rows[3] == (2,)

"""take5.batch, the batched simulator: it must give exactly the engine's results.

The main property: deal games with Batch.deal and with take5.Game from the same seeds, make the same
decisions in both (cards from the batch's own policies, random or cheapest rows, random drafts), and
compare the whole position after every turn: rows, hands, points, scores, rounds, the end. Both
variants, every table size; more than 100,000 positions in all (STATES_PER_EXAMPLE per example).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import take5._batch_kernel as kernel
import take5.batch as batch_module
import take5.game as game_module
from take5 import EndRule, Game, Phase, RandomPlayer, Settings, Variant, View
from take5.batch import NO_CARD, Batch, EpsilonGreedy, greedy, greedy_cards, revealed_cards
from take5.rules import cheapest_row
from take5.shuffle import SplitMix64
from take5.sim import Table, greedy_card

TABLES = [("standard", n) for n in range(2, 11)] + [("professional", n) for n in range(2, 7)]
STATES_PER_EXAMPLE = 3_700
EXAMPLES = 2  # 14 tables x 2 examples x 3,700 positions > 100,000
GAMES = 48


# -- comparing a batch with engine games --------------------------------------------------------


def engine_position(games: list[Game], n: int) -> dict[str, np.ndarray]:
    """The positions of engine games as the batch's arrays (hands sorted, padded with NO_CARD)."""
    rows = np.zeros((len(games), 4, 5), dtype=np.int16)
    lens = np.zeros((len(games), 4), dtype=np.int16)
    hands = np.full((len(games), n, 10), NO_CARD, dtype=np.int8)
    points = np.zeros((len(games), n), dtype=np.int32)
    for i, game in enumerate(games):
        for r, row in enumerate(game.rows):
            rows[i, r, : len(row)] = row
            lens[i, r] = len(row)
        for seat, hand in enumerate(game.hands):
            hands[i, seat, : len(hand)] = sorted(hand)
        points[i] = game.view(0).round_points
    return {
        "rows": rows,
        "lens": lens,
        "hands": hands,
        "points": points,
        "scores": np.array([g.scores for g in games], dtype=np.int32),
        "round": np.array([g.round for g in games], dtype=np.int32),
    }


def batch_position(batch: Batch, index: np.ndarray) -> dict[str, np.ndarray]:
    rows = np.where(np.arange(5) < batch.lens[:, :, None], batch.rows, 0)
    return {
        "rows": rows[index],
        "lens": batch.lens[index],
        "hands": batch.hands[index],
        "points": batch.points[index],
        "scores": batch.scores[index],
        "round": batch.round[index],
    }


def assert_same(batch: Batch, games: list[Game], index: np.ndarray) -> None:
    if not len(index):
        return
    expected = engine_position([games[i] for i in index], batch.players)
    got = batch_position(batch, index)
    for name, value in expected.items():
        if not np.array_equal(value, got[name]):
            bad = index[np.flatnonzero((value != got[name]).reshape(len(index), -1).any(1))[0]]
            pytest.fail(
                f"{name} differ in game {bad}: engine {games[bad].rows}, {games[bad].hands}"
            )


def replay_drafts(batch: Batch, games: list[Game]) -> None:
    for i, game in enumerate(games):
        if game.phase is Phase.DRAFT:
            for card in batch.picks[i]:
                game.draft(int(card))


def play_both(batch: Batch, games: list[Game], policy, row_mode: str, rng) -> int:
    """Play a batch and its engine games to the end with the same decisions; compare every turn.
    Returns the number of positions compared."""
    n = batch.players
    states = 0
    replay_drafts(batch, games)
    while not batch.over.all():
        index = np.flatnonzero(batch.active)
        assert_same(batch, games, index)
        states += len(index)
        rows = rng.integers(0, 4, size=(len(batch), n)) if row_mode == "random" else None
        taken = batch.play_turn(policy, rows)
        played = batch.played
        for i in index:
            game = games[i]
            before = list(game.view(0).round_points) if game.turn > 1 else [0] * n
            game.play([int(c) for c in played[i]])
            while game.phase is Phase.CHOOSE_ROW:
                seat = game.waiting_for[0]
                game.choose_row(int(rows[i, seat]) if rows is not None else cheapest_row(game.rows))
            if game.turn > 1:
                after = game.view(0).round_points
                assert list(taken[i]) == [a - b for a, b in zip(after, before)]
        assert not played[~batch.active & (batch.held > 0)].any()
        batch.end_round(rng)
        replay_drafts(batch, games)
        assert list(batch.over) == [g.is_over for g in games]
        assert_same(batch, games, np.flatnonzero(~batch.over))
    assert [list(s) for s in batch.scores] == [g.scores for g in games]
    return states


# -- the main property ----------------------------------------------------------------------------


@pytest.mark.parametrize("variant,players", TABLES)
@given(
    seed=st.integers(0, 2**64 - 1),
    randomness=st.sampled_from([0.0, 0.3, 1.0]),
    row_mode=st.sampled_from(["random", "cheapest"]),
)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_turn_agrees_with_the_engine(variant, players, seed, randomness, row_mode):
    settings_ = Settings(players=players, variant=Variant(variant))
    rng = np.random.default_rng(seed)
    states = 0
    first = seed
    while states < STATES_PER_EXAMPLE:
        seeds = [(first + i) % 2**64 for i in range(GAMES)]
        rotation = rng.integers(0, players, size=GAMES)
        batch = Batch.deal(settings_, seeds, rotation, rng=rng)
        games = [Game(settings_, s, rotation=int(r)) for s, r in zip(seeds, rotation)]
        states += play_both(batch, games, EpsilonGreedy(randomness, rng), row_mode, rng)
        first += GAMES
    assert states >= STATES_PER_EXAMPLE


@given(
    seed=st.integers(-(2**63), 2**64 - 1),
    players=st.integers(2, 10),
    threshold=st.integers(1, 120),
    end_rule=st.sampled_from(list(EndRule)),
    professional=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_thresholds_and_end_rules(seed, players, threshold, end_rule, professional):
    variant = Variant.PROFESSIONAL if professional and players <= 6 else Variant.STANDARD
    settings_ = Settings(players=players, variant=variant, threshold=threshold, end_rule=end_rule)
    rng = np.random.default_rng(abs(seed))
    seeds = [seed] + [(seed + i) % 2**64 for i in range(1, 6)]
    batch = Batch.deal(settings_, seeds, rng=rng)
    games = [Game(settings_, s) for s in seeds]
    play_both(batch, games, EpsilonGreedy(0.5, rng), "random", rng)


def test_a_policy_of_our_own_and_the_greedy_one():
    """Any callable gives the cards (the general path), greedy and EpsilonGreedy(0) the same."""
    settings_ = Settings(players=5)
    rng = np.random.default_rng(3)

    def lowest(batch):
        return batch.hands[:, :, 0]

    for policy in (lowest, greedy):
        batch = Batch.deal(settings_, range(30))
        play_both(batch, [Game(settings_, s) for s in range(30)], policy, "cheapest", rng)
    a, b = Batch.deal(settings_, range(30)), Batch.deal(settings_, range(30))
    assert np.array_equal(a.play_game(greedy), b.play_game(EpsilonGreedy(0.0)))


# -- deals ---------------------------------------------------------------------------------------


def unmix(z: int) -> int:
    """The SplitMix64 state whose output is z (every step of the output function is invertible)."""
    mask = 2**64 - 1
    z ^= (z >> 31) ^ (z >> 62)
    z = (z * pow(0x94D049BB133111EB, -1, 2**64)) & mask
    z ^= (z >> 27) ^ (z >> 54)
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 2**64)) & mask
    z ^= (z >> 30) ^ (z >> 60)
    return z


def test_a_rejected_draw_deals_as_the_engine():
    """A draw the generator rejects (a chance of about 1e-16 per shuffle, so made on purpose here):
    the first draw of this seed is 2**64 - 1, above the limit for a bound of 104."""
    seed = (unmix(2**64 - 1) - 0x9E3779B97F4A7C15) % 2**64
    rng = SplitMix64(seed)
    assert rng.next_u64() == 2**64 - 1
    settings_ = Settings(players=4, threshold=200)
    batch = Batch.deal(settings_, [seed, 5])
    games = [Game(settings_, seed), Game(settings_, 5)]
    assert batch.draws.tolist() == [104, 103]  # one draw more for the rejection (later rounds)
    play_both(
        batch,
        games,
        EpsilonGreedy(1.0, np.random.default_rng(1)),
        "cheapest",
        np.random.default_rng(2),
    )


def test_the_plain_shuffle_gives_the_same_decks(monkeypatch):
    """Every game through the plain path (as a rejected draw sends it) deals as the fast one."""
    monkeypatch.setattr(kernel, "_KEEP", np.zeros_like(kernel._KEEP))
    settings_ = Settings(players=3, threshold=40)
    batch = Batch.deal(settings_, range(20))
    play_both(
        batch, [Game(settings_, s) for s in range(20)], greedy, "cheapest", np.random.default_rng(0)
    )


def test_a_game_ends_after_the_last_round(monkeypatch):
    monkeypatch.setattr(batch_module, "MAX_ROUNDS", 2)
    monkeypatch.setattr(game_module, "MAX_ROUNDS", 2)
    settings_ = Settings(players=3, threshold=1000)
    batch = Batch.deal(settings_, range(10))
    play_both(
        batch, [Game(settings_, s) for s in range(10)], greedy, "cheapest", np.random.default_rng(0)
    )
    assert (batch.round == 2).all() and batch.over.all()


# -- positions from views --------------------------------------------------------------------------


def engine_views(settings_: Settings, seed: int):
    """Every view a seat is asked for in a game of random players, with the game."""
    game = Game(settings_, seed)
    players = [RandomPlayer(seed + i) for i in range(settings_.players)]
    while not game.is_over:
        if game.phase is Phase.DRAFT:
            game.draft(players[game.drafter].draft_card(game.view(game.drafter)))
        elif game.phase is Phase.PLAY:
            views = [game.view(s) for s in range(settings_.players)]
            yield game, views[seed % settings_.players]
            game.play([p.pick_card(v) for p, v in zip(players, views)])
        else:
            seat = game.waiting_for[0]
            yield game, game.view(seat)
            game.choose_row(players[seat].choose_row(game.view(seat)))


@pytest.mark.parametrize(
    "variant,players", [("standard", 2), ("standard", 5), ("standard", 10), ("professional", 4)]
)
def test_determinized_hands_respect_what_the_seat_knows(variant, players):
    settings_ = Settings(players=players, variant=Variant(variant), threshold=40)
    rng = np.random.default_rng(players)
    for seed in range(3):
        for _, view in engine_views(settings_, seed):
            batch = Batch.determinize(view, 16, rng)
            extra = 1 if view.phase is Phase.CHOOSE_ROW else 0
            size = len(view.hand) + extra
            assert (batch.held == size).all()
            mine = sorted(view.hand + tuple(p.card for p in view.revealed if p.seat == view.seat))
            assert (batch.hands[:, view.seat, :size] == mine).all()
            dealt = batch.hands[:, :, :size].reshape(16, -1)
            assert all(len(set(row)) == len(row) for row in dealt.tolist())  # no card twice
            hidden = set(view.unseen()) | {p.card for p in view.revealed}
            if view.hands is not None:  # public hands: the real ones
                real = np.array(
                    [
                        sorted(h + tuple(p.card for p in view.revealed if p.seat == s))
                        for s, h in enumerate(view.hands)
                    ]
                )
                assert (batch.hands[:, :, :size] == real).all()
            else:
                assert set(dealt.ravel()) - set(mine) <= hidden
            assert (batch.points == view.round_points).all() and (batch.scores == view.scores).all()
            assert (batch.round == view.round).all()


def sorted_hand(batch: Batch, g: int, seat: int) -> list[int]:
    return [int(c) for c in batch.hands[g, seat, : batch.held[g]]]


@pytest.mark.parametrize("variant,players", [("standard", 3), ("standard", 7), ("professional", 5)])
def test_rollouts_from_views_agree_with_the_engine(variant, players):
    """Determinize a view, give a copy of the engine game the same hidden hands, and play the rest
    of the round greedily in both (after the row choice, for a CHOOSE_ROW view)."""
    settings_ = Settings(players=players, variant=Variant(variant), threshold=30)
    rng = np.random.default_rng(7)
    compared = 0
    for seed in range(6):
        for game, view in engine_views(settings_, seed):
            batch = Batch.determinize(view, 3, rng)
            g = int(rng.integers(3))
            twin = copy.deepcopy(game)
            twin.hands = [sorted_hand(batch, g, s) for s in range(players)]
            if view.phase is Phase.CHOOSE_ROW:
                for play in view.revealed:  # the engine has taken them out of the hands already
                    twin.hands[play.seat].remove(play.card)
                row = int(rng.integers(4))
                batch.play_turn(revealed_cards(view), rows=np.full((3, players), row))
                twin.choose_row(row)
            batch.play_round(greedy)
            while twin.round == view.round and twin.phase is Phase.PLAY:
                twin.play([greedy_card(Table.from_rows(twin.rows), sorted(h)) for h in twin.hands])
                while twin.phase is Phase.CHOOSE_ROW:
                    twin.choose_row(cheapest_row(twin.rows))
            # The batch holds the round's points (not scored yet); the engine has scored them.
            assert list(batch.points[g]) == [a - b for a, b in zip(twin.scores, game.scores)]
            compared += 1
    assert compared > 100


def test_choose_row_views_need_the_revealed_cards():
    view = View(
        seat=0,
        settings=Settings(players=2),
        phase=Phase.CHOOSE_ROW,
        round=1,
        turn=10,
        hand=(),
        rows=((13,), (23,), (16, 17, 18, 19, 21), (57,)),
        scores=(0, 0),
        revealed=(game_module.Play(0, 5), game_module.Play(1, 25)),
        card=5,
    )
    batch = Batch.determinize(view, 4, np.random.default_rng(0)).tile(4)
    rows = np.repeat(np.arange(4), 4)[:, None] * np.ones((1, 2), dtype=int)
    taken = batch.play_turn(revealed_cards(view), rows=rows)
    # Rows 0, 1 and 3 cost 1 bull head, the full row 2 costs 5; only after taking row 1 (23)
    # is 25 the sixth card of the full row, for the other seat.
    assert taken[:, 0].tolist() == [1] * 8 + [5] * 4 + [1] * 4
    assert taken[:, 1].tolist() == [0] * 4 + [5] * 4 + [0] * 8
    assert not batch.active.any()


# -- policies --------------------------------------------------------------------------------------


def test_greedy_is_take5_sim_greedy_card():
    rng = np.random.default_rng(0)
    checked = 0
    for players in (2, 4, 10):
        batch = Batch.deal(Settings(players=players, threshold=100), range(100))
        while not batch.over.all():
            cards = greedy_cards(batch)
            for g in np.flatnonzero(batch.active):
                table = Table(
                    batch.ends[g].tolist(), batch.lens[g].tolist(), batch.heads[g].tolist()
                )
                for seat in range(players):
                    assert cards[g, seat] == greedy_card(table, sorted_hand(batch, g, seat))
                    checked += 1
            batch.play_turn(EpsilonGreedy(0.5, rng))
            batch.end_round()
    assert checked > 50_000


def test_random_cards_are_uniform_and_periods_repeat():
    view = Game(Settings(players=4), 11).view(0)
    rng = np.random.default_rng(1)
    batch = Batch.determinize(view, 4000, rng)
    cards = EpsilonGreedy(1.0, rng)(batch)
    for g in range(3):
        assert all(cards[g, s] in batch.hands[g, s] for s in range(4))
    mine = np.bincount(cards[:, 0], minlength=105)[list(view.hand)]
    assert mine.min() > 0.8 * 400 and mine.max() < 1.2 * 400
    per_seat = EpsilonGreedy([0.0, 1.0, 0.0, 1.0], rng)(batch)
    assert np.array_equal(per_seat[:, 0], greedy_cards(batch)[:, 0])
    tiled = Batch.determinize(view, 50, rng).tile(3)
    paired = EpsilonGreedy(0.5, rng, period=50)
    for _ in range(9):
        cards = paired(tiled)
        assert np.array_equal(cards[:50], cards[50:100]) and np.array_equal(cards[:50], cards[100:])
        tiled.play_turn(cards)
    with pytest.raises(ValueError, match="period"):
        EpsilonGreedy(0.5, rng, period=7)(tiled)
    with pytest.raises(ValueError, match="rng"):
        EpsilonGreedy(0.5)
    with pytest.raises(ValueError, match=r"from 0 to 1"):
        EpsilonGreedy(1.5, rng)


def test_first_cards_are_played_first():
    """`first` forces a seat's first card (a search's candidates, one block of deals each)."""
    view = Game(Settings(players=3), 2).view(1)
    rng = np.random.default_rng(0)
    batch = Batch.determinize(view, 10, rng).tile(len(view.hand))
    first = np.zeros((len(batch), 3), dtype=int)
    first[:, 1] = np.repeat(view.hand, 10)
    by_hand = batch.copy()
    by_hand.play_turn(np.where(first > 0, first, greedy_cards(by_hand)))
    assert np.array_equal(by_hand.played[:, 1], first[:, 1])
    by_hand.play_round(greedy)
    batch.play_round(EpsilonGreedy(0.0), first=first)
    assert (batch.held == 0).all() and np.array_equal(batch.points, by_hand.points)


# -- copies, masks, bad input ----------------------------------------------------------------------


def test_copies_are_independent_and_replace_puts_games_in():
    rng = np.random.default_rng(0)
    batch = Batch.deal(Settings(players=4), range(8))
    copy, part, tiled = batch.copy(), batch.select([1, 3]), batch.tile(2)
    batch.play_round(EpsilonGreedy(1.0, rng))
    assert (copy.held == 10).all() and (part.held == 10).all() and (tiled.held == 10).all()
    assert np.array_equal(part.hands, copy.hands[[1, 3]])
    assert np.array_equal(tiled.hands[:8], tiled.hands[8:])
    copy.replace([0, 5], part)
    assert np.array_equal(copy.hands[[0, 5]], part.hands)
    with pytest.raises(ValueError, match="places"):
        copy.replace([0], part)
    with pytest.raises(ValueError, match="read-only"):
        batch.points[0, 0] = 3


def test_select_works_without_kept_cards():
    """A search draws deals by weight from a batch of rollouts that keeps no cards."""
    batch = Batch.deal(Settings(players=3), range(5), keep_cards=False)
    part = batch.select([4, 4, 0])
    assert np.array_equal(part.hands, batch.hands[[4, 4, 0]])
    part.play_round(greedy)
    assert (part.held == 0).all() and (batch.held == 10).all()


def test_finished_games_take_no_part():
    rng = np.random.default_rng(0)
    batch = Batch.deal(Settings(players=4, threshold=1), range(6))
    batch.play_round(EpsilonGreedy(1.0, rng))
    batch.end_round()
    assert batch.over.all() and not batch.active.any()
    before = batch.scores.copy()
    assert not batch.play_round(greedy).any() and np.array_equal(batch.scores, before)
    mixed = Batch.deal(Settings(players=4), range(4))
    mixed.play_turn(mixed.hands[:, :, 0])
    mixed.replace([1], Batch.deal(Settings(players=4), [9]))
    assert mixed.held.tolist() == [9, 10, 9, 9]
    mixed.play_round(greedy)
    assert (mixed.held == 0).all()


def test_without_cards_the_points_are_the_same():
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    full = Batch.deal(Settings(players=6), range(50))
    lean = Batch.deal(Settings(players=6), range(50), keep_cards=False)
    assert np.array_equal(
        full.play_game(EpsilonGreedy(0.5, rng_a)), lean.play_game(EpsilonGreedy(0.5, rng_b))
    )
    with pytest.raises(ValueError, match="keep_cards"):
        _ = lean.rows


def test_bad_input_is_refused():
    batch = Batch.deal(Settings(players=2), [1])
    other = sorted_hand(batch, 0, 1)
    with pytest.raises(ValueError, match="not in the hand"):
        batch.play_turn([[other[0], other[1]]])
    low = View(
        seat=0,
        settings=Settings(players=2),
        phase=Phase.PLAY,
        round=1,
        turn=10,
        hand=(2,),
        rows=((13,), (23,), (33,), (43,)),
        scores=(0, 0),
    )
    low_batch = Batch.determinize(low, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="row choice"):
        low_batch.play_turn([[2, int(low_batch.hands[0, 1, 0])]], rows=[[7, 7]])
    with pytest.raises(ValueError, match="seeds"):
        Batch.deal(Settings(players=2), [2**64])
    with pytest.raises(ValueError, match="seeds"):
        Batch.deal(Settings(players=2), [True])
    with pytest.raises(ValueError, match="rotations"):
        Batch.deal(Settings(players=2), [1], rotation=2)
    with pytest.raises(ValueError, match="rng"):
        Batch.deal(Settings(players=2, variant=Variant.PROFESSIONAL), [1])
    draft = Game(Settings(players=2, variant=Variant.PROFESSIONAL), 1)
    with pytest.raises(ValueError, match="draft"):
        Batch.determinize(draft.view(draft.drafter), 2, np.random.default_rng(0))
    # Seeds go through Python ints: a list mixing signs and 2**64 - 1 is not turned into floats.
    mixed = Batch.deal(Settings(players=2), [-5, 2**64 - 1])
    assert sorted_hand(mixed, 1, 0) == sorted(Game(Settings(players=2), 2**64 - 1).hands[0])

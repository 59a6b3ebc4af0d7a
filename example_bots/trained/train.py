"""Train the policy of policy.py on take5.vector.VectorEnv with REINFORCE (numpy only), and write
its weights next to the bot (weights.npz).

    python example_bots/trained/train.py --minutes 5          # about 5 CPU-minutes on one core

The games at once are of three kinds, a third each: self-play (every seat plays the policy being
trained, sampling its cards), and one learning seat against 3 heuristic players or against 3
random ones (both computed on the batch, from the same features). Self-play alone drifts: the
policy learns to beat itself and forgets the players it will meet. After each round (10 turns,
the same for every game), each learning decision is credited with the bull heads its seat took
from then to the end of the round, minus the average of the decisions made at the same turn (a
baseline that lowers the variance), and the network takes an Adam step along the policy gradient,
with a learning rate that falls linearly to a tenth. Every --report seconds it plays a quick
evaluation, its best-scored card against random and heuristic players, and prints the win rates.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from policy import FEATURES, Policy, card_features, hand_cards, softmax  # noqa: E402

from take5.rules import HAND_SIZE  # noqa: E402
from take5.vector import VectorEnv  # noqa: E402


class Adam:
    def __init__(self, shapes: list[tuple[int, ...]], lr: float) -> None:
        self.lr, self.t = lr, 0
        self.m = [np.zeros(s, np.float32) for s in shapes]
        self.v = [np.zeros(s, np.float32) for s in shapes]

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            m_hat = m / (1 - 0.9**self.t)
            v_hat = v / (1 - 0.999**self.t)
            p += self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)  # ascent: gradients of the return


def sample(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One slot per row of probabilities (..., K)."""
    cumulative = probs.cumsum(-1)
    draw = rng.random(probs.shape[:-1] + (1,)) * cumulative[..., -1:]
    return np.minimum((cumulative < draw).sum(-1), probs.shape[-1] - 1)


def gradients(
    policy: Policy, feats: np.ndarray, cards: np.ndarray, slots: np.ndarray, advantage: np.ndarray
) -> list[np.ndarray]:
    """The policy gradient of mean(advantage * log pi(slot)), for w1, b1, w2."""
    scores, hidden = policy.scores(feats)  # (B, K), (B, K, H)
    probs = softmax(scores, cards)
    onehot = np.zeros_like(probs)
    onehot[np.arange(len(slots)), slots] = 1.0
    g_scores = advantage[:, None] * (onehot - probs)  # d/d scores
    g_w2 = np.einsum("bk,bkh->h", g_scores, hidden)
    g_z = g_scores[..., None] * policy.w2 * (1 - hidden**2)  # (B, K, H)
    g_w1 = np.einsum("bkf,bkh->fh", feats, g_z)
    g_b1 = g_z.sum((0, 1))
    scale = 1.0 / len(slots)
    return [g_w1 * scale, g_b1 * scale, g_w2 * scale]


def heuristic_slots(feats: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """take5.bots.HeuristicBot's card, from the same features: the smallest expected penalty
    (cost now + the risk of the row filling first); ties to the highest card when that is 0,
    else to the lowest (hands are ascending)."""
    expected = feats[..., FEATURES.index("cost now")] + feats[..., FEATURES.index("fill risk")]
    held = cards > 0
    expected = np.where(held, np.round(expected * 10, 4), np.inf)
    best = expected.min(-1, keepdims=True)
    ties = held & (expected == best)
    highest = ties.shape[-1] - 1 - np.argmax(ties[..., ::-1], -1)
    return np.where(best[..., 0] == 0, highest, np.argmax(ties, -1))


def evaluate(
    policy: Policy, opponent: str, games: int, players: int, seed: int
) -> tuple[float, float]:
    """Seat 0 plays the policy's best card, the others `opponent` ("random" or "heuristic"):
    the win rate of seat 0 (a shared first place counts 1/k) and its mean score."""
    env = VectorEnv(games=games, players=players, seed=seed)
    obs, _ = env.reset()
    rng = np.random.default_rng(seed)
    wins, scores, finished = 0.0, 0.0, 0
    played = np.zeros(games, bool)
    while finished < games:
        cards = hand_cards(obs)
        feats = card_features(obs, cards)
        scores_now, _ = policy.scores(feats[:, 0])
        slots = np.empty((games, players), dtype=np.intp)
        slots[:, 0] = np.argmax(np.where(cards[:, 0] > 0, scores_now, -np.inf), -1)
        if opponent == "random":
            slots[:, 1:] = sample((cards[:, 1:] > 0).astype(float), rng)
        else:
            slots[:, 1:] = heuristic_slots(feats[:, 1:], cards[:, 1:])
        actions = np.take_along_axis(cards, slots[..., None], -1)[..., 0] - 1
        step = env.step(actions)
        obs = step.observations
        for g in np.flatnonzero(step.done & ~played):
            final = step.scores[g]
            low = final.min()
            wins += (final[0] == low) / (final == low).sum()
            scores += final[0]
            finished += 1
            played[g] = True  # one game per slot: the first that ends there
    return wins / games, scores / games


def opponent_slots(
    kind: np.ndarray, feats: np.ndarray, cards: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The slots the fixed players choose: heuristic where kind is 1, random where it is 2."""
    random_slots = sample((cards > 0).astype(float), rng)
    return np.where(kind == 1, heuristic_slots(feats, cards), random_slots)


def imitate(policy: Policy, seconds: float, games: int, players: int, lr: float, seed: int) -> None:
    """Fit the policy to the heuristic's choices (cross-entropy), on the positions of games in
    which every seat plays the heuristic, or a random card a fifth of the time (so that the
    positions vary): a head start for the policy gradient, which then only has to improve."""
    params = [policy.w1, policy.b1, policy.w2]
    adam = Adam([p.shape for p in params], lr)
    env = VectorEnv(games=games, players=players, seed=seed)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset()
    start = time.process_time()
    while time.process_time() - start < seconds:
        cards = hand_cards(obs)
        feats = card_features(obs, cards)
        labels = heuristic_slots(feats, cards)
        flat = feats.reshape((-1,) + feats.shape[2:])
        grads = gradients(
            policy,
            flat,
            cards.reshape(-1, cards.shape[-1]),
            labels.reshape(-1),
            np.ones(labels.size, dtype=np.float32),
        )
        adam.step(params, grads)
        noisy = rng.random(labels.shape) < 0.2
        slots = np.where(noisy, sample((cards > 0).astype(float), rng), labels)
        obs = env.step(np.take_along_axis(cards, slots[..., None], -1)[..., 0] - 1).observations


def train(args: argparse.Namespace) -> Policy:
    policy = Policy.load(args.start) if args.start else Policy.new(args.hidden, args.seed)
    if args.imitate > 0:
        imitate(policy, args.imitate, args.games, args.players, args.lr, args.seed)
        print(f"imitated the heuristic for {args.imitate:.0f} CPU-s", flush=True)
    params = [policy.w1, policy.b1, policy.w2]
    adam = Adam([p.shape for p in params], args.lr)
    games, players = args.games, args.players
    env = VectorEnv(games=games, players=players, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    # Each game slot keeps its kind: 0 self-play, 1 against heuristics, 2 against random players;
    # in kinds 1 and 2 the learning seat is the slot's index modulo the table size.
    kind = np.arange(games) % 3
    learner = np.ones((games, players), dtype=bool)
    learner[kind > 0] = False
    learner[np.flatnonzero(kind > 0), np.flatnonzero(kind > 0) % players] = True
    fixed = np.where(learner, 0, kind[:, None])  # (G, n): 0 learner, 1 heuristic, 2 random
    obs, _ = env.reset()
    start = time.process_time()
    budget = args.minutes * 60
    last_report = -args.report
    rounds = 0
    while (used := time.process_time() - start) < budget:
        adam.lr = args.lr * (1 - 0.9 * used / budget)
        trajectory = []
        for _ in range(HAND_SIZE):  # one round: every game plays its 10 turns in step
            cards = hand_cards(obs)  # (G, n, 10)
            feats = card_features(obs, cards)  # (G, n, 10, F)
            scores, _ = policy.scores(feats)
            slots = sample(softmax(scores, cards), rng)
            slots = np.where(learner, slots, opponent_slots(fixed, feats, cards, rng))
            step = env.step(np.take_along_axis(cards, slots[..., None], -1)[..., 0] - 1)
            trajectory.append((feats[learner], cards[learner], slots[learner], step.rewards))
            obs = step.observations
        rewards = np.stack([t[3] for t in trajectory])  # (10, G, n)
        to_go = np.cumsum(rewards[::-1], 0)[::-1][:, learner]  # bull heads to the round's end
        advantage = to_go - to_go.mean(1, keepdims=True)
        advantage /= advantage.std() + 1e-6
        grads = [np.zeros_like(p) for p in params]
        for (feats, cards, slots, _), adv in zip(trajectory, advantage):
            for g, part in zip(grads, gradients(policy, feats, cards, slots, adv)):
                g += part / HAND_SIZE
        adam.step(params, grads)
        rounds += 1
        if used - last_report >= args.report:
            last_report = used
            vs_random = evaluate(policy, "random", 256, players, 10_000 + rounds)
            vs_heuristic = evaluate(policy, "heuristic", 256, players, 20_000 + rounds)
            print(
                f"{used:6.0f} CPU-s, {rounds:5d} updates ({rounds * int(learner.sum()) * 10:,}"
                f" decisions): vs 3 random {vs_random[0]:.0%} (mean score {vs_random[1]:.1f}),"
                f" vs 3 heuristic {vs_heuristic[0]:.0%} ({vs_heuristic[1]:.1f})",
                flush=True,
            )
    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="CPU minutes of training")
    parser.add_argument("--games", type=int, default=192, help="games played at once")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=16, help="hidden units")
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report", type=float, default=30.0, help="CPU seconds between reports")
    parser.add_argument("--start", type=Path, help="continue from these weights")
    parser.add_argument(
        "--imitate",
        type=float,
        default=0.0,
        help="CPU seconds of imitating the heuristic first (0: learn from scratch)",
    )
    parser.add_argument("--out", type=Path, default=HERE / "weights.npz")
    args = parser.parse_args()
    policy = train(args)
    policy.save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

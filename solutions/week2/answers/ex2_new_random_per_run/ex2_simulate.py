import random


def simulate(p, n, runs=10_000, seed=0):
    wins = 0
    for run in range(runs):
        rng = random.Random(seed + run)
        wins += all(rng.random() < p for _ in range(n))
    return wins / runs

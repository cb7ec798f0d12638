import random


def simulate(p, n, runs=10_000, seed=0):
    rng = random.Random(seed)
    return sum(rng.random() < p for _ in range(runs)) / runs

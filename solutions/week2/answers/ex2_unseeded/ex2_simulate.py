import random


def simulate(p, n, runs=10_000, seed=0):
    wins = sum(all(random.random() < p for _ in range(n)) for _ in range(runs))
    return wins / runs

def simulate(p, n, runs=10_000, seed=0):
    return p ** n

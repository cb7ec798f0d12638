from course.classroom import simulate_success


def simulate(p, n, runs=10_000, seed=0):
    return simulate_success(p, n, runs, seed)

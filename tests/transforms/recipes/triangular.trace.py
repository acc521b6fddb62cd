"""triangular: i in 0..5, j in 0..i (21 instances)."""

PARAMS = {}


def expected():
    for i in range(0, 6):
        for j in range(0, i + 1):
            yield ("S0", {"i": i, "j": j})

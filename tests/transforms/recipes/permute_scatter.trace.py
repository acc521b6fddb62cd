"""permute_scatter: permute(i, j, k) [1, 2, 0] gives the order k, i, j."""

PARAMS = {}


def expected():
    for k in range(0, 4):
        for i in range(0, 2):
            for j in range(0, 3):
                yield ("S0", {"i": i, "j": j, "k": k})

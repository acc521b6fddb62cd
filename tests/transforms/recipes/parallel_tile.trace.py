"""parallel_tile: ib (parallel) 0 to 8 step 4, il, j 0 to 5; sequential order."""

PARAMS = {}


def expected():
    for ib in range(0, 8, 4):
        for il in range(ib, ib + 4):
            for j in range(0, 5):
                yield ("S0", {"i": il, "j": j})

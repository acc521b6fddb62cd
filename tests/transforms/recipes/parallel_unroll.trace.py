"""parallel_unroll: ib (parallel) 0 to 10 step 4, il, j 0 to 4 (unrolled)."""

PARAMS = {}


def expected():
    for ib in range(0, 10, 4):
        for il in range(ib, min(ib + 4, 10)):
            for j in range(0, 4):
                yield ("S0", {"i": il, "j": j})

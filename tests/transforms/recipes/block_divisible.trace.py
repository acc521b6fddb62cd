"""block_divisible: 0 to 8 blocked by 4 (4 divides the trip count 8)."""

PARAMS = {}


def expected():
    for ib in range(0, 8, 4):
        for il in range(ib, ib + 4):
            yield ("S0", {"i": il})

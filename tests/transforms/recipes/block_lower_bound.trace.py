"""block_lower_bound: 2 to 11 blocked by 4 (tiles start at 2, 6, 10)."""

PARAMS = {}


def expected():
    for ib in range(2, 11, 4):
        for il in range(ib, min(ib + 4, 11)):
            yield ("S0", {"i": il})

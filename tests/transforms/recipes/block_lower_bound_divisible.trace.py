"""block_lower_bound_divisible: 2 to 10 blocked by 4 (tiles 2..5 and 6..9)."""

PARAMS = {}


def expected():
    for ib in range(2, 10, 4):
        for il in range(ib, ib + 4):
            yield ("S0", {"i": il})

"""block_partial: 0 to 10 blocked by 4 (partial last tile 8..9)."""

PARAMS = {}


def expected():
    for ib in range(0, 10, 4):
        for il in range(ib, min(ib + 4, 10)):
            yield ("S0", {"i": il})

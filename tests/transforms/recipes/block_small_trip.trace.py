"""block_small_trip: 0 to 3 blocked by 4 (trip count smaller than the tile)."""

PARAMS = {}


def expected():
    for ib in range(0, 3, 4):
        for il in range(ib, ib + 3):
            yield ("S0", {"i": il})

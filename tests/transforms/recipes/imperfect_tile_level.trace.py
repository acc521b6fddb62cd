"""imperfect_tile_level: S0/S2 once per tile of i (key "ib"), S1 per (i, j)."""

PARAMS = {}


def expected():
    for ib in range(0, 10, 4):
        yield ("S0", {"ib": ib})
        for il in range(ib, min(ib + 4, 10)):
            for j in range(0, 8):
                yield ("S1", {"i": il, "j": j})
        yield ("S2", {"ib": ib})

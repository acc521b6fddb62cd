"""reblock_point: 0 to 10 by 4, then the point loop by 2."""

PARAMS = {}


def expected():
    for ib in range(0, 10, 4):
        for ilb in range(ib, min(ib + 4, 10), 2):
            for ill in range(ilb, min(ilb + 2, ib + 4, 10)):
                yield ("S0", {"i": ill})

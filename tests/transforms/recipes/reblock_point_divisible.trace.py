"""reblock_point_divisible: 0 to 8 by 4, then the point loop by 2."""

PARAMS = {}


def expected():
    for ib in range(0, 8, 4):
        for ilb in range(ib, ib + 4, 2):
            for ill in range(ilb, ilb + 2):
                yield ("S0", {"i": ill})

"""strided_unused_point: tile loop 0 to 10 step 3; the unused point loop is empty.

S0 sits at tile level (no point loop of i around it), so its key is the tile
loop name "ib" with the tile start as value.
"""

PARAMS = {}


def expected():
    for ib in range(0, 10, 3):
        yield ("S0", {"ib": ib})
        for _il in range(0, 1):  # the unused point loop: no statement inside
            pass

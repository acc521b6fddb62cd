"""block_tile_again: 10 by 2, then the tile loop by 2 (tiles of 4 made of pairs)."""

PARAMS: dict[str, int] = {}


def expected():
    for ibb in range(0, 10, 4):
        for ibp in range(ibb, min(ibb + 4, 10), 2):
            for il in range(ibp, ibp + 2):
                yield ("S0", {"i": il})

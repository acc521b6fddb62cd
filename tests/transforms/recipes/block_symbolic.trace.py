"""block_symbolic: 0 to N blocked by 4; N = 13 leaves a partial last tile (12)."""

PARAMS = {"N": 13}


def expected():
    N = PARAMS["N"]
    for ib in range(0, N, 4):
        for il in range(ib, min(ib + 4, N)):
            yield ("S0", {"i": il})

"""block_symbolic_multiple: 0 to 8 * N blocked by 8 (no partial tile for any N)."""

PARAMS = {"N": 3}


def expected():
    N = PARAMS["N"]
    for ib in range(0, N * 8, 8):
        for il in range(ib, ib + 8):
            yield ("S0", {"i": il})

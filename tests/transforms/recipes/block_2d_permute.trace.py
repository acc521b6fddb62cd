"""block_2d_permute: i (0 to 10) and j (0 to 12) blocked by 4, order ib, jb, il, jl."""

PARAMS = {}


def expected():
    for ib in range(0, 10, 4):
        for jb in range(0, 12, 4):
            for il in range(ib, min(ib + 4, 10)):
                for jl in range(jb, jb + 4):
                    yield ("S0", {"i": il, "j": jl})

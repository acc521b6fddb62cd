"""tile_3d_permute: i 0..6, j 0..8, k 0..3, each by 4; order ib, jb, kb, il, jl, kl."""

PARAMS = {}


def expected():
    for ib in range(0, 6, 4):
        for jb in range(0, 8, 4):
            for kb in range(0, 3, 4):
                for il in range(ib, min(ib + 4, 6)):
                    for jl in range(jb, jb + 4):
                        for kl in range(kb, kb + 3):
                            yield ("S0", {"i": il, "j": jl, "k": kl})

"""unroll_point: i 0..3, j 0..8 by 4 with the point loop unrolled (order unchanged)."""

PARAMS = {}


def expected():
    for i in range(0, 3):
        for jb in range(0, 8, 4):
            for jl in range(jb, jb + 4):
                yield ("S0", {"i": i, "j": jl})

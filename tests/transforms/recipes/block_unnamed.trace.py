"""block_unnamed: 0 to 10 blocked by 4 through unnamed handles (%0#0, %0#1)."""

PARAMS = {}


def expected():
    for i_t in range(0, 10, 4):
        for i in range(i_t, min(i_t + 4, 10)):
            yield ("S0", {"i": i})

"""imperfect_untransformed: S0 before and S2 after the j loop, once per i."""

PARAMS = {}


def expected():
    for i in range(0, 4):
        yield ("S0", {"i": i})
        for j in range(0, 5):
            yield ("S1", {"i": i, "j": j})
        yield ("S2", {"i": i})

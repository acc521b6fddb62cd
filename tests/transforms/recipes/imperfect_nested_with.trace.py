"""imperfect_nested_with: S0, S1 before and S3 after the inner j loop, per i."""

PARAMS = {}


def expected():
    for i in range(0, 4):
        yield ("S0", {"i": i})
        yield ("S1", {"i": i})
        for j in range(0, 5):
            yield ("S2", {"i": i, "j": j})
        yield ("S3", {"i": i})

"""reduction_iter_args: per row i, acc = 0; acc += A[i, j] for j in 0..4; B[i] = acc.

The loop structure (i outside, j inside, the init before and the store after the
j loop) is certain. The statement NAMES are not: they assume the convention of
README.md (the iter_args init is a statement at the krnl.iterate, the update a
statement at the krnl.yield, numbered with the stores in textual order). Adjust
STMT below to the implementation's numbering after review; the order of the
instances does not depend on it.
"""

PARAMS = {}

# ? reviewer: check against the implementation (see README.md, iter_args).
STMT = {"init": "S0", "update": "S1", "store": "S2"}


def expected():
    for i in range(0, 4):
        yield (STMT["init"], {"i": i})
        for j in range(0, 5):
            yield (STMT["update"], {"i": i, "j": j})
        yield (STMT["store"], {"i": i})


def expected_stores():
    """Only the krnl.store instances (certain apart from the name)."""
    for i in range(0, 4):
        yield (STMT["store"], {"i": i})

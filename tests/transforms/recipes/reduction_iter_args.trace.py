"""reduction_iter_args: per row i, acc = 0; acc += A[i, j] for j in 0..4; B[i] = acc.

The iter_args init is a statement at the krnl.iterate (S0), the update a
statement at the krnl.yield that also computes the yielded value (S1), the
store after the j loop S2 (statements numbered in textual order; reviewed
against the implementation's loop tree).
"""

PARAMS = {}

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

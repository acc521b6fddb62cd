"""The in-place rewrite of array updates (`updates.in_place`), on hand-written bodies.

Each case is a body as the vectorizer writes it; the expected result was worked
out by hand. Refused cases must come back unchanged.
"""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

from polykrnl.codegen.updates import in_place


def _rewrite(code: str) -> str:
    body = ast.parse(textwrap.dedent(code)).body
    return ast.unparse(ast.Module(in_place(body), []))


def test_a_chain_of_updates_becomes_augmented_assignments() -> None:
    code = """
        a = A[0:4, 0:5]
        u = U[0:4][:, None]
        p1 = u * V
        s1 = a + p1
        p2 = u * W
        s2 = s1 - p2
        A[0:4, 0:5] = s2
    """
    assert _rewrite(code) == textwrap.dedent(
        """\
        u = U[0:4][:, None]
        p1 = u * V
        A[0:4, 0:5] += p1
        p2 = u * W
        A[0:4, 0:5] -= p2"""
    )


def test_the_rewrite_computes_the_same_values() -> None:
    rng = np.random.default_rng(0)
    env = {"U": rng.random(4), "V": rng.random(5), "W": rng.random(5)}
    code = textwrap.dedent(
        """
        a = A[0:4, 0:5]
        u = U[0:4][:, None]
        p1 = u * V
        s1 = p1 + a
        p2 = u * W
        s2 = s1 / p2
        A[0:4, 0:5] = s2
        """
    )
    start = rng.random((4, 5))
    results = []
    for text in (code, _rewrite(code)):
        space = {**env, "A": start.copy()}
        exec(text, space)
        results.append(space["A"])
    assert "+=" in _rewrite(code) and "/=" in _rewrite(code)
    assert np.array_equal(results[0], results[1])  # bit for bit


@pytest.mark.parametrize(
    "code",
    [
        # a temporary used twice
        """
        a = A[0:4]
        s1 = a + b
        t = s1 * 2.0
        s2 = s1 + t
        A[0:4] = s2
        """,
        # a statement between the load and the store reads A
        """
        a = A[0:4]
        s1 = a + b
        n = A[1:5]
        s2 = s1 + n
        A[0:4] = s2
        """,
        # a view of A taken before the load is read after it
        """
        v = A[1:5]
        a = A[0:4]
        s1 = a + v
        A[0:4] = s1
        """,
        # e - old is not an update of old
        """
        a = A[0:4]
        s1 = b - a
        A[0:4] = s1
        """,
        # the stored value is not computed from the old one
        """
        a = B[0:4]
        s1 = a + b
        A[0:4] = s1
        """,
    ],
)
def test_refused_bodies_stay_as_they_are(code: str) -> None:
    body = ast.parse(textwrap.dedent(code)).body
    assert ast.unparse(ast.Module(in_place(body), [])) == ast.unparse(ast.Module(body, []))

"""Legality verdicts for the kernels of this directory, derived by hand.

Each case names a kernel (``NAME.mlir`` holds ``func.func @NAME``) and a list of
steps. A test replays the steps as method calls on
``pk.Schedule.from_function(fn, recipe=False)``, each with ``force=True``::

    s = pk.Schedule.from_function(fn, recipe=False)
    for name, *args in case["steps"]:
        s = getattr(s, name)(*args, force=True)
    assert s.check().legal == case["legal"]

so the verdict is about the final schedule, not about the intermediate ones.
Step spellings: ``["reorder", [outermost, ..., innermost]]`` (gather),
``["permute", [loops...], [positions...]]`` (Krnl scatter: loop k goes to
position map[k]), ``["block", loop, size]`` (tile loop ``<loop>_t``, the point
loop keeps ``<loop>``), ``["parallel", loop, ...]`` (one call with all the
loops), ``["unroll", loop]``, ``["skew", loop, by, factor]`` (``loop`` runs over
``loop + factor * by``).

Fields:

- ``id``: unique, for test ids.
- ``legal``: what an exact dependence analysis gives: all RAW, WAR and WAW
  dependences between statement instances (memory-based, from the access
  relations only, no knowledge of the values), a schedule is legal iff every
  dependence source still runs before its sink, and a parallel loop is legal
  iff it carries no dependence (source and sink in the same iteration of every
  enclosing loop, different iterations of the parallel loop).
- ``why``: one sentence of dependence reasoning (distances in the original loop
  order of the kernel).
- For illegal cases:
  - ``kind`` / ``array``: one violated dependence that surely exists (the one of
    the witness); ``kind`` is ``"RAW"``, ``"WAR"``, ``"WAW"`` or ``"any"``.
  - ``kinds``: every kind of dependence the schedule violates (at least one
    instance pair of each kind listed, and none of the kinds not listed).
  - ``witness_hint``: a concrete pair checked by hand, written
    ``SRC writes|reads ARRAY[idx] read by|overwritten by SNK`` (``writes ... read
    by`` is RAW, ``reads ... overwritten by`` WAR, ``writes ... overwritten by``
    WAW). The source runs before the sink in the original order; the final
    schedule runs the sink first, or (for a parallel loop) runs them in
    different iterations of that parallel loop inside the same iterations of
    the loops around it. Instances are named by statement (``S0``, ``S1``, ...,
    one per krnl.store / iter_args init / krnl.yield in textual order) and the
    original induction variables. ``acc`` is the virtual array of an iter_args
    value (``acc[0]``: indexed by the enclosing loop ``i``; ``acc[]``: one scalar).
  - ``reduction``: present and True when every violated dependence comes from a
    ``X = X + e`` update of one element (a + reduction, also through iter_args),
    so that a reduction-aware report may say "parallel only as a reduction".
    Absent for the ``X = X - e`` updates of lu and cholesky (not in the
    reduction list of issue 4) and for min-updates that also carry other
    dependences (floyd_warshall).

The verdicts were re-checked by a brute-force oracle (scratch script, not part
of the test suite): see README.md.
"""

from __future__ import annotations

from typing import Any

CASES: list[dict[str, Any]] = [
    # ------------------------------------------------------------------ gemm
    # S0(i, j, k): C[i][j] += A[i][k] * B[k][j]; only dependences: C[i][j] between
    # S0(i, j, k) and S0(i, j, k') with k < k', distance (0, 0, +).
    {
        "id": "gemm-order-ikj",
        "kernel": "gemm",
        "steps": [["reorder", ["i", "k", "j"]]],
        "legal": True,
        "why": (
            "the only distance (0, 0, +) becomes (0, +, 0) in i, k, j order: still "
            "lexicographically positive"
        ),
    },
    {
        "id": "gemm-order-jik",
        "kernel": "gemm",
        "steps": [["reorder", ["j", "i", "k"]]],
        "legal": True,
        "why": "(0, 0, +) stays (0, 0, +) in j, i, k order",
    },
    {
        "id": "gemm-order-jki",
        "kernel": "gemm",
        "steps": [["reorder", ["j", "k", "i"]]],
        "legal": True,
        "why": "(0, 0, +) becomes (0, +, 0) in j, k, i order",
    },
    {
        "id": "gemm-order-kij",
        "kernel": "gemm",
        "steps": [["reorder", ["k", "i", "j"]]],
        "legal": True,
        "why": (
            "(0, 0, +) becomes (+, 0, 0) in k, i, j order: every dependence is carried by k, "
            "forward"
        ),
    },
    {
        "id": "gemm-order-kji",
        "kernel": "gemm",
        "steps": [["reorder", ["k", "j", "i"]]],
        "legal": True,
        "why": "(0, 0, +) becomes (+, 0, 0) in k, j, i order",
    },
    {
        "id": "gemm-permute-scatter-kij",
        "kernel": "gemm",
        "steps": [["permute", ["i", "j", "k"], [1, 2, 0]]],
        "legal": True,
        "why": "permute [1, 2, 0] scatters to k, i, j; (0, 0, +) becomes (+, 0, 0)",
    },
    {
        "id": "gemm-tile-ijk",
        "kernel": "gemm",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["block", "k", 4],
            ["reorder", ["i_t", "j_t", "k_t", "i", "j", "k"]],
        ],
        "legal": True,
        "why": (
            "the i, j, k band is permutable (the only distance (0, 0, +) has no negative "
            "component), so rectangular tiling is legal"
        ),
    },
    {
        "id": "gemm-tile-ij-parallel-tiles",
        "kernel": "gemm",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["i_t", "j_t", "i", "j", "k"]],
            ["parallel", "i_t", "j_t"],
        ],
        "legal": True,
        "why": (
            "(0, 0, +) has equal i and j, so it stays inside one (i_t, j_t) tile and no tile loop "
            "carries it"
        ),
    },
    {
        "id": "gemm-parallel-i",
        "kernel": "gemm",
        "steps": [["parallel", "i"]],
        "legal": True,
        "why": "the only distance (0, 0, +) is zero on i",
    },
    {
        "id": "gemm-parallel-j",
        "kernel": "gemm",
        "steps": [["parallel", "j"]],
        "legal": True,
        "why": "the only distance (0, 0, +) is zero on j",
    },
    {
        "id": "gemm-parallel-i-j",
        "kernel": "gemm",
        "steps": [["parallel", "i", "j"]],
        "legal": True,
        "why": "(0, 0, +) is zero on both i and j",
    },
    {
        "id": "gemm-parallel-k",
        "kernel": "gemm",
        "steps": [["parallel", "k"]],
        "legal": False,
        "why": "k carries the + reduction on C[i][j], distance (0, 0, +)",
        "kind": "RAW",
        "array": "C",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S0(i=0,j=0,k=0) writes C[0][0] read by S0(i=0,j=0,k=1)",
    },
    {
        "id": "gemm-order-kij-parallel-i",
        "kernel": "gemm",
        "steps": [["reorder", ["k", "i", "j"]], ["parallel", "i"]],
        "legal": True,
        "why": (
            "in k, i, j order the distance is (+, 0, 0): carried by k, so i inside it is parallel"
        ),
    },
    {
        "id": "gemm-order-kij-parallel-k",
        "kernel": "gemm",
        "steps": [["reorder", ["k", "i", "j"]], ["parallel", "k"]],
        "legal": False,
        "why": "in k, i, j order the reduction distance is (+, 0, 0): k carries it",
        "kind": "RAW",
        "array": "C",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S0(i=0,j=0,k=0) writes C[0][0] read by S0(i=0,j=0,k=1)",
    },
    {
        "id": "gemm-block-k-parallel-k-tile",
        "kernel": "gemm",
        "steps": [["block", "k", 4], ["parallel", "k_t"]],
        "legal": False,
        "why": "(0, 0, +) with k and k + 1 in different tiles of 4 is carried by the tile loop k_t",
        "kind": "RAW",
        "array": "C",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S0(i=0,j=0,k=3) writes C[0][0] read by S0(i=0,j=0,k=4)",
    },
    {
        "id": "gemm-block-k-parallel-k-point",
        "kernel": "gemm",
        "steps": [["block", "k", 4], ["parallel", "k"]],
        "legal": False,
        "why": "(0, 0, 1) inside one tile of k is carried by the point loop k",
        "kind": "RAW",
        "array": "C",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S0(i=0,j=0,k=0) writes C[0][0] read by S0(i=0,j=0,k=1)",
    },
    {
        "id": "gemm-unroll-k",
        "kernel": "gemm",
        "steps": [["unroll", "k"]],
        "legal": True,
        "why": "unrolling keeps the order of the instances, so (0, 0, +) is untouched",
    },
    # ------------------------------------------------------------- transpose
    {
        "id": "transpose-interchange",
        "kernel": "transpose",
        "steps": [["reorder", ["j", "i"]]],
        "legal": True,
        "why": "no dependence: A is only read and each B[j][i] is written once",
    },
    {
        "id": "transpose-tile-parallel",
        "kernel": "transpose",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["j_t", "i_t", "j", "i"]],
            ["parallel", "j_t", "i_t"],
        ],
        "legal": True,
        "why": "no dependence, so any tiling and any parallel loop is legal",
    },
    {
        "id": "transpose-parallel-both",
        "kernel": "transpose",
        "steps": [["parallel", "i", "j"]],
        "legal": True,
        "why": "no dependence: nothing is carried by i or j",
    },
    {
        "id": "transpose-permute-parallel-inner",
        "kernel": "transpose",
        "steps": [["permute", ["i", "j"], [1, 0]], ["parallel", "i"]],
        "legal": True,
        "why": "no dependence, whatever the order",
    },
    # ------------------------------------------------------------- jacobi_1d
    # S0(t, i): A[t + 1][i] = f(A[t][i - 1], A[t][i], A[t][i + 1]); RAW only,
    # distances (1, -1), (1, 0), (1, 1).
    {
        "id": "jacobi1d-interchange",
        "kernel": "jacobi_1d",
        "steps": [["reorder", ["i", "t"]]],
        "legal": False,
        "why": "distance (1, -1) becomes (-1, 1) in i, t order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=2) writes A[1][2] read by S0(t=1,i=1)",
    },
    {
        "id": "jacobi1d-permute-interchange",
        "kernel": "jacobi_1d",
        "steps": [["permute", ["t", "i"], [1, 0]]],
        "legal": False,
        "why": "permute [1, 0] is the interchange: (1, -1) becomes (-1, 1)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=2) writes A[1][2] read by S0(t=1,i=1)",
    },
    {
        "id": "jacobi1d-tile-t-i",
        "kernel": "jacobi_1d",
        "steps": [
            ["block", "t", 2],
            ["block", "i", 4],
            ["reorder", ["t_t", "i_t", "t", "i"]],
        ],
        "legal": False,
        "why": (
            "the t, i band is not permutable: (1, -1) crosses an i-tile boundary backwards inside "
            "one t tile"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=5) writes A[1][5] read by S0(t=1,i=4)",
    },
    {
        "id": "jacobi1d-i-tile-outside-t",
        "kernel": "jacobi_1d",
        "steps": [["block", "i", 4], ["reorder", ["i_t", "t", "i"]]],
        "legal": False,
        "why": (
            "with the i tile loop outside t, (1, -1) from the first i of a tile to the last i of "
            "the previous tile runs backwards"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=5) writes A[1][5] read by S0(t=1,i=4)",
    },
    {
        "id": "jacobi1d-strip-mine",
        "kernel": "jacobi_1d",
        "steps": [["block", "t", 2], ["block", "i", 4]],
        "legal": True,
        "why": "strip-mining without a reorder keeps the original order of all instances",
    },
    {
        "id": "jacobi1d-parallel-i",
        "kernel": "jacobi_1d",
        "steps": [["parallel", "i"]],
        "legal": True,
        "why": "every distance (1, -1), (1, 0), (1, 1) is carried by t, none by i",
    },
    {
        "id": "jacobi1d-block-i-parallel-tiles",
        "kernel": "jacobi_1d",
        "steps": [["block", "i", 4], ["parallel", "i_t"]],
        "legal": True,
        "why": (
            "t stays outermost and carries every dependence, so the i tile loop inside it carries "
            "none"
        ),
    },
    {
        "id": "jacobi1d-parallel-t",
        "kernel": "jacobi_1d",
        "steps": [["parallel", "t"]],
        "legal": False,
        "why": "t carries every dependence, e.g. (1, 0)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=1) writes A[1][1] read by S0(t=1,i=1)",
    },
    {
        "id": "jacobi1d-block-t-parallel-t-tile",
        "kernel": "jacobi_1d",
        "steps": [["block", "t", 2], ["parallel", "t_t"]],
        "legal": False,
        "why": "(1, 0) from t = 1 to t = 2 crosses a t tile boundary, so t_t carries it",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=1,i=1) writes A[2][1] read by S0(t=2,i=1)",
    },
    # ---------------------------------------------------- jacobi_1d_pingpong
    # S0(t, i): B[i] = f(A[i-1..i+1]); S1(t, i2): A[i2] = f(B[i2-1..i2+1]).
    # Inside t, S0 -> S1 dependences are ordered by the sequence; across t: RAW,
    # WAR, WAW on A and B, all carried by t.
    {
        "id": "pingpong-parallel-i",
        "kernel": "jacobi_1d_pingpong",
        "steps": [["parallel", "i"]],
        "legal": True,
        "why": (
            "S0 instances of one t write distinct B[i] and only read A, which no S0 writes: the i "
            "loop carries nothing"
        ),
    },
    {
        "id": "pingpong-parallel-both-i",
        "kernel": "jacobi_1d_pingpong",
        "steps": [["parallel", "i", "i2"]],
        "legal": True,
        "why": (
            "neither sibling loop carries a dependence: S0 -> S1 (RAW on B, WAR on A) is between "
            "the loops, ordered by the sequence in t"
        ),
    },
    {
        "id": "pingpong-block-parallel-tiles",
        "kernel": "jacobi_1d_pingpong",
        "steps": [["block", "i", 4], ["block", "i2", 4], ["parallel", "i_t", "i2_t"]],
        "legal": True,
        "why": "the loops of i and i2 carry no dependence, so neither do their tile loops",
    },
    {
        "id": "pingpong-parallel-t",
        "kernel": "jacobi_1d_pingpong",
        "steps": [["parallel", "t"]],
        "legal": False,
        "why": (
            "t carries S1(t) -> S0(t + 1) on A (RAW, distance 1 in t) and the WAR/WAW on A and B"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S1(t=0,i2=1) writes A[1] read by S0(t=1,i=1)",
    },
    {
        "id": "pingpong-block-t-parallel-t-point",
        "kernel": "jacobi_1d_pingpong",
        "steps": [["block", "t", 2], ["parallel", "t"]],
        "legal": False,
        "why": (
            "S1(t = 0) -> S0(t = 1) lies inside the first t tile, so the point loop t carries it"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S1(t=0,i2=1) writes A[1] read by S0(t=1,i=1)",
    },
    # ------------------------------------------------------------- jacobi_2d
    # S0(t, i, j): RAW only, distances (1, 0, 0), (1, +-1, 0), (1, 0, +-1).
    {
        "id": "jacobi2d-interchange-i-j",
        "kernel": "jacobi_2d",
        "steps": [["reorder", ["t", "j", "i"]]],
        "legal": True,
        "why": (
            "t stays outermost and every distance has t = 1, so any order of i and j inside it is "
            "legal"
        ),
    },
    {
        "id": "jacobi2d-i-outside-t",
        "kernel": "jacobi_2d",
        "steps": [["reorder", ["i", "t", "j"]]],
        "legal": False,
        "why": "distance (1, -1, 0) becomes (-1, 1, 0) in i, t, j order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=2,j=1) writes A[1][2][1] read by S0(t=1,i=1,j=1)",
    },
    {
        "id": "jacobi2d-j-outermost",
        "kernel": "jacobi_2d",
        "steps": [["reorder", ["j", "t", "i"]]],
        "legal": False,
        "why": "distance (1, 0, -1) becomes (-1, 1, 0) in j, t, i order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=1,j=2) writes A[1][1][2] read by S0(t=1,i=1,j=1)",
    },
    {
        "id": "jacobi2d-tile-t-i-j",
        "kernel": "jacobi_2d",
        "steps": [
            ["block", "t", 2],
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["t_t", "i_t", "j_t", "t", "i", "j"]],
        ],
        "legal": False,
        "why": (
            "the t, i, j band is not permutable: (1, -1, 0) goes backwards across an i-tile "
            "boundary inside one t tile"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=5,j=1) writes A[1][5][1] read by S0(t=1,i=4,j=1)",
    },
    {
        "id": "jacobi2d-tile-i-j-under-t",
        "kernel": "jacobi_2d",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["t", "i_t", "j_t", "i", "j"]],
            ["parallel", "i_t", "j_t"],
        ],
        "legal": True,
        "why": (
            "t outermost carries every dependence (t distance 1), so tiling i and j inside it and "
            "running the tiles in parallel is legal"
        ),
    },
    {
        "id": "jacobi2d-parallel-i-j",
        "kernel": "jacobi_2d",
        "steps": [["parallel", "i", "j"]],
        "legal": True,
        "why": "every distance has t = 1: nothing is carried by i or j",
    },
    {
        "id": "jacobi2d-parallel-t",
        "kernel": "jacobi_2d",
        "steps": [["parallel", "t"]],
        "legal": False,
        "why": "t carries every dependence, e.g. (1, 0, 0)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(t=0,i=1,j=1) writes A[1][1][1] read by S0(t=1,i=1,j=1)",
    },
    # ------------------------------------------------------------- seidel_2d
    # In-place 9-point: (0, 1, -1), (0, 1, 0), (0, 1, 1), (0, 0, 1) inside one t
    # (RAW and WAR), (1, 0, 0) (RAW, WAR, WAW), (1, -1, *), (1, 0, -1) (RAW, WAR).
    {
        "id": "seidel2d-interchange-i-j",
        "kernel": "seidel_2d",
        "steps": [["reorder", ["t", "j", "i"]]],
        "legal": False,
        "why": "distance (0, 1, -1) becomes (0, -1, 1) in t, j, i order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=2) writes A[1][2] read by S0(t=0,i=2,j=1)",
    },
    {
        "id": "seidel2d-i-outside-t",
        "kernel": "seidel_2d",
        "steps": [["reorder", ["i", "t", "j"]]],
        "legal": False,
        "why": "distance (1, -1, 0) becomes (-1, 1, 0) in i, t, j order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=2,j=1) writes A[2][1] read by S0(t=1,i=1,j=1)",
    },
    {
        "id": "seidel2d-j-outermost",
        "kernel": "seidel_2d",
        "steps": [["reorder", ["j", "t", "i"]]],
        "legal": False,
        "why": "distance (1, 0, -1) becomes (-1, 1, 0) in j, t, i order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=2) writes A[1][2] read by S0(t=1,i=1,j=1)",
    },
    {
        "id": "seidel2d-tile-i-j",
        "kernel": "seidel_2d",
        "steps": [
            ["block", "i", 2],
            ["block", "j", 2],
            ["reorder", ["t", "i_t", "j_t", "i", "j"]],
        ],
        "legal": False,
        "why": (
            "the i, j band carries (0, 1, -1), which has a negative j component: inside one i "
            "tile it crosses a j-tile boundary backwards"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=3) writes A[1][3] read by S0(t=0,i=2,j=2)",
    },
    {
        "id": "seidel2d-strip-mine",
        "kernel": "seidel_2d",
        "steps": [["block", "i", 2], ["block", "j", 2]],
        "legal": True,
        "why": "strip-mining i and j without a reorder keeps the original order",
    },
    {
        "id": "seidel2d-unroll-j",
        "kernel": "seidel_2d",
        "steps": [["unroll", "j"]],
        "legal": True,
        "why": "unrolling j (constant trip count 5) keeps the order of the instances",
    },
    {
        "id": "seidel2d-parallel-t",
        "kernel": "seidel_2d",
        "steps": [["parallel", "t"]],
        "legal": False,
        "why": "t carries (1, 0, 0) on the element each instance updates",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S0(t=0,i=1,j=1) writes A[1][1] read by S0(t=1,i=1,j=1)",
    },
    {
        "id": "seidel2d-parallel-i",
        "kernel": "seidel_2d",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": "i carries (0, 1, 0): row i - 1 updated in this sweep is read by row i",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=1) writes A[1][1] read by S0(t=0,i=2,j=1)",
    },
    {
        "id": "seidel2d-parallel-j",
        "kernel": "seidel_2d",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": "j carries (0, 0, 1): A[i][j - 1] updated just before is read",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=1) writes A[1][1] read by S0(t=0,i=1,j=2)",
    },
    {
        "id": "seidel2d-parallel-j-war",
        "kernel": "seidel_2d",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": (
            "j also carries the WAR (0, 0, 1): A[i][j + 1] is read before S0(t, i, j + 1) "
            "overwrites it"
        ),
        "kind": "WAR",
        "array": "A",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(t=0,i=1,j=1) reads A[1][2] overwritten by S0(t=0,i=1,j=2)",
    },
    # ---------------------------------------------------------- stencil_skew
    # S0(i, j): A[i][j] = A[i - 1][j + 1] + 1; one RAW, distance (1, -1).
    {
        "id": "skew-interchange",
        "kernel": "stencil_skew",
        "steps": [["reorder", ["j", "i"]]],
        "legal": False,
        "why": "distance (1, -1) becomes (-1, 1) in j, i order",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1,j=1) writes A[1][1] read by S0(i=2,j=0)",
    },
    {
        "id": "skew-permute-interchange",
        "kernel": "stencil_skew",
        "steps": [["permute", ["i", "j"], [1, 0]]],
        "legal": False,
        "why": "permute [1, 0] interchanges: (1, -1) becomes (-1, 1)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1,j=1) writes A[1][1] read by S0(i=2,j=0)",
    },
    {
        "id": "skew-tile-i-j",
        "kernel": "stencil_skew",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["i_t", "j_t", "i", "j"]],
        ],
        "legal": False,
        "why": (
            "the band is not permutable ((1, -1) has a negative j component), so inside one i "
            "tile the dependence crosses a j-tile boundary backwards; MLIR's affine tiling check "
            "misses this"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1,j=4) writes A[1][4] read by S0(i=2,j=3)",
    },
    {
        "id": "skew-tile-j-outside-i",
        "kernel": "stencil_skew",
        "steps": [["block", "j", 4], ["reorder", ["j_t", "i", "j"]]],
        "legal": False,
        "why": (
            "with the j tile loop outside i, (1, -1) from the first j of a tile to the last j of "
            "the previous tile runs backwards"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1,j=4) writes A[1][4] read by S0(i=2,j=3)",
    },
    {
        "id": "skew-strip-mine",
        "kernel": "stencil_skew",
        "steps": [["block", "i", 4], ["block", "j", 4]],
        "legal": True,
        "why": "strip-mining i and j without a reorder (i_t, i, j_t, j) keeps the original order",
    },
    {
        "id": "skew-parallel-j",
        "kernel": "stencil_skew",
        "steps": [["parallel", "j"]],
        "legal": True,
        "why": "(1, -1) is carried by i, so for a fixed i the j iterations are independent",
    },
    {
        "id": "skew-block-j-parallel-j-tile",
        "kernel": "stencil_skew",
        "steps": [["block", "j", 4], ["parallel", "j_t", "j"]],
        "legal": True,
        "why": "(1, -1) is carried by i, which stays outside both loops of j",
    },
    {
        "id": "skew-parallel-i",
        "kernel": "stencil_skew",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": "i carries (1, -1)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1,j=1) writes A[1][1] read by S0(i=2,j=0)",
    },
    {
        "id": "skew-block-i-parallel-i-tile",
        "kernel": "stencil_skew",
        "steps": [["block", "i", 4], ["parallel", "i_t"]],
        "legal": False,
        "why": (
            "(1, -1) from i = 4 to i = 5 crosses the i-tile boundary (tiles start at 1, 5), so "
            "i_t carries it"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=4,j=1) writes A[4][1] read by S0(i=5,j=0)",
    },
    # -------------------------------------------------------------------- lu
    # S0(i, j, k) (k < j < i), S1(i, j), S2(i, j2, k2) (k2 < i <= j2). Row r of A is
    # written only in iteration i = r; iteration i reads rows <= i.
    {
        "id": "lu-interchange-second-nest",
        "kernel": "lu",
        "steps": [["reorder", ["k2", "j2"]]],
        "legal": True,
        "why": (
            "inside one i the (j2, k2) nest only has the update of A[i][j2], distance (0, +), "
            "which becomes (+, 0)"
        ),
    },
    {
        "id": "lu-tile-second-nest",
        "kernel": "lu",
        "steps": [
            ["block", "j2", 2],
            ["block", "k2", 2],
            ["reorder", ["j2_t", "k2_t", "j2", "k2"]],
        ],
        "legal": True,
        "why": (
            "the (j2, k2) band has only (0, +) inside one i: it is permutable, so the triangular "
            "tiling is legal"
        ),
    },
    {
        "id": "lu-parallel-j2",
        "kernel": "lu",
        "steps": [["parallel", "j2"]],
        "legal": True,
        "why": (
            "S2 instances of one i with different j2 write different A[i][j2] and read A[i][k2] "
            "(k2 < i <= j2) and rows k2 < i, which the j2 loop does not write"
        ),
    },
    {
        "id": "lu-interchange-parallel-j2",
        "kernel": "lu",
        "steps": [["reorder", ["k2", "j2"]], ["parallel", "j2"]],
        "legal": True,
        "why": "after the interchange k2 carries (+, 0) and j2 (now inner) carries nothing",
    },
    {
        "id": "lu-parallel-k2",
        "kernel": "lu",
        "steps": [["parallel", "k2"]],
        "legal": False,
        "why": "k2 carries the update A[i][j2] -= ..., distance (0, 0, +)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S2(i=2,j2=2,k2=0) writes A[2][2] read by S2(i=2,j2=2,k2=1)",
    },
    {
        "id": "lu-parallel-j",
        "kernel": "lu",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": (
            "S1(i, j) writes A[i][j], which S0(i, j', k = j) reads for every j' > j: the j loop "
            "carries a RAW"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S1(i=2,j=0) writes A[2][0] read by S0(i=2,j=1,k=0)",
    },
    {
        "id": "lu-block-j-parallel-j-tile",
        "kernel": "lu",
        "steps": [["block", "j", 2], ["parallel", "j_t"]],
        "legal": False,
        "why": (
            "S1(i, j = 1) -> S0(i, j = 2, k = 1) crosses a j tile boundary (tiles start at 0, 2, "
            "...), so j_t carries it"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S1(i=3,j=1) writes A[3][1] read by S0(i=3,j=2,k=1)",
    },
    {
        "id": "lu-parallel-k",
        "kernel": "lu",
        "steps": [["parallel", "k"]],
        "legal": False,
        "why": "k carries the update A[i][j] -= ..., distance (0, 0, +)",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S0(i=3,j=2,k=0) writes A[3][2] read by S0(i=3,j=2,k=1)",
    },
    {
        "id": "lu-parallel-i",
        "kernel": "lu",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": (
            "row r is written in iteration i = r and read as A[k2][j2] (and A[k][j], A[j][j]) by "
            "later i: i carries RAW only"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        "witness_hint": "S2(i=1,j2=2,k2=0) writes A[1][2] read by S2(i=2,j2=2,k2=1)",
    },
    {
        "id": "lu-strip-mine-i",
        "kernel": "lu",
        "steps": [["block", "i", 2]],
        "legal": True,
        "why": "strip-mining i keeps the original order",
    },
    # -------------------------------------------------------------- cholesky
    # Right-looking: S0(k), S1(k, i), S2(k, i2, j); inside one k the i, i2, j loops
    # carry nothing; k carries RAW, WAR and WAW.
    {
        "id": "cholesky-parallel-i",
        "kernel": "cholesky",
        "steps": [["parallel", "i"]],
        "legal": True,
        "why": (
            "S1(k, i) writes A[i][k] and reads A[i][k], A[k][k]; different i touch different "
            "A[i][k] and A[k][k] is not written in the i loop"
        ),
    },
    {
        "id": "cholesky-parallel-i2-j",
        "kernel": "cholesky",
        "steps": [["parallel", "i2", "j"]],
        "legal": True,
        "why": (
            "S2(k, i2, j) writes A[i2][j] with j > k and reads column k, which S2 never writes in "
            "the same k: no dependence inside one k"
        ),
    },
    {
        "id": "cholesky-parallel-all-inner",
        "kernel": "cholesky",
        "steps": [["parallel", "i", "i2"]],
        "legal": True,
        "why": (
            "S0 -> S1 -> S2 of one k are ordered by the sequence, and neither i nor i2 carries a "
            "dependence"
        ),
    },
    {
        "id": "cholesky-block-i2-parallel-tiles",
        "kernel": "cholesky",
        "steps": [["block", "i2", 2], ["parallel", "i2_t"]],
        "legal": True,
        "why": "the i2 loop carries nothing, so neither does its tile loop",
    },
    {
        "id": "cholesky-strip-mine-j",
        "kernel": "cholesky",
        "steps": [["block", "j", 2]],
        "legal": True,
        "why": "strip-mining the triangular j loop keeps the original order",
    },
    {
        "id": "cholesky-parallel-k",
        "kernel": "cholesky",
        "steps": [["parallel", "k"]],
        "legal": False,
        "why": (
            "k carries S2(k, i2, j) -> S0(k + 1) on the next diagonal element and the update of "
            "A[i2][j] across k"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S2(k=0,i2=1,j=1) writes A[1][1] read by S0(k=1)",
    },
    {
        "id": "cholesky-block-k-parallel-k-tile",
        "kernel": "cholesky",
        "steps": [["block", "k", 2], ["parallel", "k_t"]],
        "legal": False,
        "why": "S2(k = 1) -> S0(k = 2) crosses a k tile boundary, so k_t carries it",
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S2(k=1,i2=2,j=2) writes A[2][2] read by S0(k=2)",
    },
    # -------------------------------------------------------- floyd_warshall
    # From the accesses alone, inside one k: RAW S0(k, i, k) -> S0(k, i, j > k) and
    # S0(k, k, j) -> S0(k, i > k, j), WAR towards them (j < k, i < k); across k:
    # (1, *, *) with negative i or j components, e.g. (1, -1, 0), (1, 0, -1).
    {
        "id": "floyd-k-inward-ikj",
        "kernel": "floyd_warshall",
        "steps": [["reorder", ["i", "k", "j"]]],
        "legal": False,
        "why": (
            "distance (1, -1, 0) (row k + 1 written in sweep k, read by every i in sweep k + 1) "
            "becomes (-1, 1, 0) in i, k, j order"
        ),
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=0,i=1,j=1) writes P[1][1] read by S0(k=1,i=0,j=1)",
    },
    {
        "id": "floyd-k-innermost",
        "kernel": "floyd_warshall",
        "steps": [["reorder", ["i", "j", "k"]]],
        "legal": False,
        "why": "distance (1, -1, 0) becomes (-1, 0, 1) in i, j, k order",
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=0,i=1,j=1) writes P[1][1] read by S0(k=1,i=0,j=1)",
    },
    {
        "id": "floyd-interchange-i-j",
        "kernel": "floyd_warshall",
        "steps": [["reorder", ["k", "j", "i"]]],
        "legal": True,
        "why": (
            "inside one k every distance is (0, +, 0) or (0, 0, +), which stay positive with i "
            "and j swapped; k carries the rest"
        ),
    },
    {
        "id": "floyd-tile-i-j-under-k",
        "kernel": "floyd_warshall",
        "steps": [
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["k", "i_t", "j_t", "i", "j"]],
        ],
        "legal": True,
        "why": (
            "inside one k the distances (0, +, 0), (0, 0, +) have no negative component: the i, j "
            "band is permutable, so tiling it is legal"
        ),
    },
    {
        "id": "floyd-tile-k-i-j",
        "kernel": "floyd_warshall",
        "steps": [
            ["block", "k", 2],
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["k_t", "i_t", "j_t", "k", "i", "j"]],
        ],
        "legal": False,
        "why": "(1, -1, 0) inside one k tile goes backwards across an i-tile boundary",
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=4,i=5,j=0) writes P[5][0] read by S0(k=5,i=0,j=0)",
    },
    {
        "id": "floyd-parallel-k",
        "kernel": "floyd_warshall",
        "steps": [["parallel", "k"]],
        "legal": False,
        "why": "k carries (1, 0, 0) on P[i][j] and the row/column reads across sweeps",
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR", "WAW"],
        "witness_hint": "S0(k=0,i=1,j=1) writes P[1][1] read by S0(k=1,i=1,j=1)",
    },
    {
        "id": "floyd-parallel-i",
        "kernel": "floyd_warshall",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": (
            "from the accesses alone row k is written in sweep k (i = k) and read as P[k][j] by "
            "the other i of the same sweep: (0, +, 0) is carried by i (that the value does not "
            "change needs P[k][k] >= 0, which the analysis does not know)"
        ),
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=0,i=0,j=1) writes P[0][1] read by S0(k=0,i=1,j=1)",
    },
    {
        "id": "floyd-parallel-j",
        "kernel": "floyd_warshall",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": (
            "column k is written in sweep k (j = k) and read as P[i][k] by the other j of the "
            "same i: (0, 0, +) is carried by j"
        ),
        "kind": "RAW",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=0,i=1,j=0) writes P[1][0] read by S0(k=0,i=1,j=1)",
    },
    {
        "id": "floyd-parallel-j-war",
        "kernel": "floyd_warshall",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": (
            "the j loop also carries a WAR: P[i][k] is read by the j < k iterations before S0(k, "
            "i, k) overwrites it"
        ),
        "kind": "WAR",
        "array": "P",
        "kinds": ["RAW", "WAR"],
        "witness_hint": "S0(k=1,i=0,j=0) reads P[0][1] overwritten by S0(k=1,i=0,j=1)",
    },
    # ----------------------------------------------------------------- two_mm
    # S0(i, j, k) on T, then S1(i2, j2, k2) on D reading T: each nest has only its
    # (0, 0, +) reduction; S0 -> S1 is ordered by the top-level sequence.
    {
        "id": "2mm-tile-first-nest",
        "kernel": "two_mm",
        "steps": [
            ["block", "i", 2],
            ["block", "j", 4],
            ["block", "k", 4],
            ["reorder", ["i_t", "j_t", "k_t", "i", "j", "k"]],
        ],
        "legal": True,
        "why": (
            "the first nest only has (0, 0, +): permutable, tiling legal; the RAW on T to the "
            "second nest stays ordered by the sequence"
        ),
    },
    {
        "id": "2mm-tile-both-nests",
        "kernel": "two_mm",
        "steps": [
            ["block", "i", 2],
            ["block", "j", 4],
            ["block", "k", 4],
            ["reorder", ["i_t", "j_t", "k_t", "i", "j", "k"]],
            ["block", "i2", 2],
            ["block", "j2", 4],
            ["block", "k2", 4],
            ["reorder", ["i2_t", "j2_t", "k2_t", "i2", "j2", "k2"]],
        ],
        "legal": True,
        "why": (
            "each nest only has its own (0, 0, +), and no primitive moves an instance of the "
            "second nest before the first"
        ),
    },
    {
        "id": "2mm-reorder-both-nests",
        "kernel": "two_mm",
        "steps": [["reorder", ["k", "i", "j"]], ["reorder", ["j2", "k2", "i2"]]],
        "legal": True,
        "why": "(0, 0, +) stays lexicographically positive in any order of each nest",
    },
    {
        "id": "2mm-parallel-outer-loops",
        "kernel": "two_mm",
        "steps": [["parallel", "i", "j", "i2", "j2"]],
        "legal": True,
        "why": (
            "(0, 0, +) is zero on i, j (and on i2, j2); the T dependence is between the nests, "
            "not inside a loop"
        ),
    },
    {
        "id": "2mm-parallel-k",
        "kernel": "two_mm",
        "steps": [["parallel", "k"]],
        "legal": False,
        "why": "k carries the + reduction on T[i][j]",
        "kind": "RAW",
        "array": "T",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S0(i=0,j=0,k=0) writes T[0][0] read by S0(i=0,j=0,k=1)",
    },
    {
        "id": "2mm-parallel-k2",
        "kernel": "two_mm",
        "steps": [["parallel", "k2"]],
        "legal": False,
        "why": "k2 carries the + reduction on D[i2][j2]",
        "kind": "RAW",
        "array": "D",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i2=0,j2=0,k2=0) writes D[0][0] read by S1(i2=0,j2=0,k2=1)",
    },
    # -------------------------------------------------------------- imperfect
    # S0(i): r[i] = r[i - 1] + b[i] (RAW on r, distance 1); S1(i, j) reads r[i]
    # after S0(i) in the same i (sequence) and updates its own A[i][j].
    {
        "id": "imperfect-parallel-j",
        "kernel": "imperfect",
        "steps": [["parallel", "j"]],
        "legal": True,
        "why": (
            "S1 instances of one i touch distinct A[i][j] and only read r[i], which S0 wrote "
            "before the j loop"
        ),
    },
    {
        "id": "imperfect-block-j-parallel-tiles",
        "kernel": "imperfect",
        "steps": [["block", "j", 4], ["parallel", "j_t"]],
        "legal": True,
        "why": (
            "the j loop carries nothing, so neither does its tile loop; S0 -> S1 stays ordered by "
            "the sequence inside i"
        ),
    },
    {
        "id": "imperfect-unroll-j",
        "kernel": "imperfect",
        "steps": [["unroll", "j"]],
        "legal": True,
        "why": "unrolling keeps the order of the instances",
    },
    {
        "id": "imperfect-strip-mine-i",
        "kernel": "imperfect",
        "steps": [["block", "i", 2]],
        "legal": True,
        "why": "strip-mining i keeps the original order (S0 stays before the j loop in every i)",
    },
    {
        "id": "imperfect-parallel-i",
        "kernel": "imperfect",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": "the statement before the inner loop makes i carry a RAW on r, distance 1",
        "kind": "RAW",
        "array": "r",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1) writes r[1] read by S0(i=2)",
    },
    {
        "id": "imperfect-block-i-parallel-i-tile",
        "kernel": "imperfect",
        "steps": [["block", "i", 2], ["parallel", "i_t"]],
        "legal": False,
        "why": (
            "r[i] -> r[i + 1] from i = 2 to i = 3 crosses a tile boundary (tiles start at 1, 3, "
            "5), so i_t carries it"
        ),
        "kind": "RAW",
        "array": "r",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=2) writes r[2] read by S0(i=3)",
    },
    {
        "id": "imperfect-block-i-parallel-i-point",
        "kernel": "imperfect",
        "steps": [["block", "i", 2], ["parallel", "i"]],
        "legal": False,
        "why": "r[1] -> r[2] lies inside the first tile of i, so the point loop i carries it",
        "kind": "RAW",
        "array": "r",
        "kinds": ["RAW"],
        "witness_hint": "S0(i=1) writes r[1] read by S0(i=2)",
    },
    # ---------------------------------------------------------- iter_args_sum
    # S0(i) init acc[i], S1(i, j) acc[i] += A[i][j] (krnl.yield), S2(i) B[i] = acc[i].
    {
        "id": "iterargs-parallel-i",
        "kernel": "iter_args_sum",
        "steps": [["parallel", "i"]],
        "legal": True,
        "why": (
            "the iter_args value is private to one i (virtual array acc[i]): no dependence "
            "crosses rows"
        ),
    },
    {
        "id": "iterargs-block-i-parallel-tiles",
        "kernel": "iter_args_sum",
        "steps": [["block", "i", 2], ["parallel", "i_t"]],
        "legal": True,
        "why": "nothing is carried by i, so nothing by its tile loop",
    },
    {
        "id": "iterargs-unroll-j",
        "kernel": "iter_args_sum",
        "steps": [["unroll", "j"]],
        "legal": True,
        "why": "unrolling j keeps the order of the reduction steps",
    },
    {
        "id": "iterargs-parallel-j",
        "kernel": "iter_args_sum",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": (
            "j carries the + reduction through iter_args, distance (0, 1) on acc[i]: parallel "
            "only as a reduction"
        ),
        "kind": "RAW",
        "array": "acc",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i=0,j=0) writes acc[0] read by S1(i=0,j=1)",
    },
    {
        "id": "iterargs-block-j-parallel-j-tile",
        "kernel": "iter_args_sum",
        "steps": [["block", "j", 4], ["parallel", "j_t"]],
        "legal": False,
        "why": "the reduction step from j = 3 to j = 4 crosses a tile boundary, so j_t carries it",
        "kind": "RAW",
        "array": "acc",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i=0,j=3) writes acc[0] read by S1(i=0,j=4)",
    },
    # ----------------------------------------------------------- iter_args_2d
    # One scalar acc[] carried through the whole i, j nest: S1(i, j) depends on every
    # earlier S1, e.g. (0, 1) and (1, -7).
    {
        "id": "iterargs2d-interchange",
        "kernel": "iter_args_2d",
        "steps": [["reorder", ["j", "i"]]],
        "legal": False,
        "why": (
            "the chain of updates of the one scalar has distance (1, -7) from S1(i, 7) to S1(i + "
            "1, 0), which becomes (-7, 1) in j, i order (legal only by reassociating the + "
            "reduction)"
        ),
        "kind": "RAW",
        "array": "acc",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i=0,j=7) writes acc[] read by S1(i=1,j=0)",
    },
    {
        "id": "iterargs2d-parallel-i",
        "kernel": "iter_args_2d",
        "steps": [["parallel", "i"]],
        "legal": False,
        "why": (
            "the scalar acc is carried across rows, distance (1, -7), so i carries the reduction "
            "too"
        ),
        "kind": "RAW",
        "array": "acc",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i=0,j=7) writes acc[] read by S1(i=1,j=0)",
    },
    {
        "id": "iterargs2d-parallel-j",
        "kernel": "iter_args_2d",
        "steps": [["parallel", "j"]],
        "legal": False,
        "why": "j carries the reduction step (0, 1) on the scalar acc",
        "kind": "RAW",
        "array": "acc",
        "kinds": ["RAW", "WAR", "WAW"],
        "reduction": True,
        "witness_hint": "S1(i=0,j=0) writes acc[] read by S1(i=0,j=1)",
    },
    {
        "id": "iterargs2d-strip-mine",
        "kernel": "iter_args_2d",
        "steps": [["block", "i", 2], ["block", "j", 4]],
        "legal": True,
        "why": "strip-mining keeps the original order of the reduction steps",
    },
    {
        "id": "iterargs2d-unroll-j",
        "kernel": "iter_args_2d",
        "steps": [["unroll", "j"]],
        "legal": True,
        "why": "unrolling keeps the original order of the reduction steps",
    },
    # ------------------------------------------------------------------ skew
    # Skews rewrite a distance (.., d_o, .., d_x, ..) as d_x + f * d_o (with the
    # already skewed d_o); tiling is legal once every component is >= 0.
    {
        "id": "jacobi1d-skew-tile",
        "kernel": "jacobi_1d",
        "steps": [
            ["skew", "i", "t", 1],
            ["block", "t", 2],
            ["block", "i", 4],
            ["reorder", ["t_t", "i_t", "t", "i"]],
        ],
        "legal": True,
        "why": (
            "i + t turns (1, -1), (1, 0), (1, 1) into (1, 0), (1, 1), (1, 2): the band is "
            "permutable, so any rectangular tiling of it is legal"
        ),
    },
    {
        "id": "jacobi1d-skew-interchange",
        "kernel": "jacobi_1d",
        "steps": [["skew", "i", "t", 1], ["reorder", ["i", "t"]]],
        "legal": True,
        "why": (
            "after i + t the distances are (1, 0), (1, 1), (1, 2); in (i, t) order (0, 1), "
            "(1, 1), (2, 1) are all lexicographically positive"
        ),
    },
    {
        "id": "jacobi2d-skew-tile",
        "kernel": "jacobi_2d",
        "steps": [
            ["skew", "i", "t", 1],
            ["skew", "j", "t", 1],
            ["block", "t", 2],
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["t_t", "i_t", "j_t", "t", "i", "j"]],
        ],
        "legal": True,
        "why": (
            "i + t and j + t map (1, 0, 0), (1, +-1, 0), (1, 0, +-1) to (1, 1, 1), (1, 2, 1), "
            "(1, 0, 1), (1, 1, 2), (1, 1, 0): all components >= 0"
        ),
    },
    {
        "id": "jacobi2d-skew-i-only-tile",
        "kernel": "jacobi_2d",
        "steps": [
            ["skew", "i", "t", 1],
            ["block", "t", 2],
            ["block", "i", 4],
            ["block", "j", 4],
            ["reorder", ["t_t", "i_t", "j_t", "t", "i", "j"]],
        ],
        "legal": False,
        "why": (
            "without skewing j, (1, 0, -1) becomes (1, 1, -1): it crosses a j-tile boundary "
            "backwards inside one t tile and one i tile"
        ),
        "kind": "RAW",
        "array": "A",
        "kinds": ["RAW"],
        # j tiles start at 1: [1, 5), [5, 7); both instances are in t tile 0 and in the
        # i tile [1, 5) of the skewed i (1 + 0 and 1 + 1).
        "witness_hint": "S0(t=0,i=1,j=5) writes A[1][1][5] read by S0(t=1,i=1,j=4)",
    },
    {
        "id": "seidel2d-skew-tile",
        "kernel": "seidel_2d",
        "steps": [
            ["skew", "i", "t", 1],
            ["skew", "j", "t", 1],
            ["skew", "j", "i", 1],
            ["block", "t", 2],
            ["block", "i", 2],
            ["block", "j", 4],
            ["reorder", ["t_t", "i_t", "j_t", "t", "i", "j"]],
        ],
        "legal": True,
        "why": (
            "(dt, di, dj) becomes (dt, di + dt, dj + di + 2 dt): (0, 1, -1) -> (0, 1, 0), "
            "(1, -1, -1) -> (1, 0, 0), (1, 0, -1) -> (1, 1, 1), the others likewise >= 0"
        ),
    },
    {
        "id": "stencil-skew-interchange",
        "kernel": "stencil_skew",
        "steps": [["skew", "j", "i", 1], ["reorder", ["j", "i"]]],
        "legal": True,
        "why": "j + i turns (1, -1) into (1, 0), which is (0, 1) in (j, i) order",
    },
    {
        "id": "stencil-skew-tile",
        "kernel": "stencil_skew",
        "steps": [
            ["skew", "j", "i", 1],
            ["block", "i", 2],
            ["block", "j", 2],
            ["reorder", ["i_t", "j_t", "i", "j"]],
        ],
        "legal": True,
        "why": "after j + i the only distance is (1, 0): the band is permutable",
    },
]

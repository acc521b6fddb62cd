"""A vector accumulator's lanes, one statement each (Numba kernels).

onnx-mlir's -O3 reductions carry a `vector<8xf32>` through a loop's iter_args; the
kernel holds it in an array of 8 elements that it updates lane by lane:

    m_0 = zv.copy()
    for ct in range(0, 1024, 8):
        m = m_0
        for lane in range(8):
            v = x[i, ct + lane]
            m_1 = m[lane]
            m[lane] = np.float32(m_1 + v)

The elements stay in memory: each add of a lane waits for the store of its last one
(ReduceSum over the last axis, 8192x1024: 5.5 ms, NumPy 1.4).
:func:`unroll_accumulator_lanes` writes such a lane loop as its copies, one per lane
with the lane a constant (`m[0]`, ..., `m[7]`), so that promote.py keeps each element
in a local over the enclosing loop (1.9 ms: eight independent sums per column tile,
reading the rows at close to memory speed). The same statements run in the same order
on the same values: exact.

A lane loop qualifies when it is inside another loop (the one that carries the
vector), its range is a constant of at most `MAX_LANES`, its body is a few
single-target assignments (`MAX_STATEMENTS`) that load and store an element
subscripted by the lane alone (`m[lane]`: an update of the accumulator), and the lane
is read nowhere after the loop.
"""

from __future__ import annotations

import ast
import copy

from polykrnl.targets.numba.loop_shape import read_outside, replace_loops, straight_line

#: the widest vector whose lanes are written out (AVX-512's 16 floats)
MAX_LANES = 16
#: the longest lane body written out once per lane (code size)
MAX_STATEMENTS = 8


def unroll_accumulator_lanes(fn: ast.FunctionDef) -> int:
    """Write each vector accumulator's lane loop of `fn` out (see the module); how many."""
    nested = {
        id(n)
        for outer in ast.walk(fn)
        if isinstance(outer, ast.For)
        for n in ast.walk(outer)
        if n is not outer
    }
    return replace_loops(fn, lambda loop: _unrolled(loop, fn) if id(loop) in nested else None)


def _unrolled(loop: ast.For, fn: ast.FunctionDef) -> list[ast.stmt] | None:
    width = _constant_range(loop)
    if width is None or not straight_line(loop) or len(loop.body) > MAX_STATEMENTS:
        return None
    assert isinstance(loop.target, ast.Name)  # straight_line's
    lane = loop.target.id
    updated = _at_lane(loop.body, lane, ast.Store) & _at_lane(loop.body, lane, ast.Load)
    if not updated or lane in read_outside(fn, loop):
        return None
    if any(isinstance(t, ast.Name) and t.id == lane for st in loop.body for t in _targets(st)):
        return None  # the body moves its own lane: not a copy per lane
    out: list[ast.stmt] = []
    for k in range(width):
        out += [_Lane(lane, k).visit(copy.deepcopy(st)) for st in loop.body]
    return out


def _constant_range(loop: ast.For) -> int | None:
    """n for `range(n)` or `range(0, n)`, 0 < n <= MAX_LANES."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    values = [a.value if isinstance(a, ast.Constant) else None for a in it.args]
    if len(values) == 2 and values[0] == 0:
        values = values[1:]
    n = values[0] if len(values) == 1 else None
    return n if type(n) is int and 0 < n <= MAX_LANES and not it.keywords else None


def _targets(st: ast.stmt) -> list[ast.expr]:
    return list(st.targets) if isinstance(st, ast.Assign) else []


def _at_lane(body: list[ast.stmt], lane: str, ctx: type[ast.expr_context]) -> set[str]:
    """The arrays `body` loads (or stores, as `ctx` says) at the lane alone: `A[lane]`
    or `A[np.uint64(lane)]`, a vector accumulator's element."""
    out: set[str] = set()
    for n in ast.walk(ast.Module(body, [])):
        if not (
            isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ctx)
            and isinstance(n.value, ast.Name)
        ):
            continue
        s = n.slice
        if isinstance(s, ast.Call) and ast.unparse(s.func) == "np.uint64" and len(s.args) == 1:
            s = s.args[0]
        if isinstance(s, ast.Name) and s.id == lane:
            out.add(n.value.id)
    return out


class _Lane(ast.NodeTransformer):
    """Every read of the lane's name as the constant `k`."""

    def __init__(self, lane: str, k: int) -> None:
        self.lane, self.k = lane, k

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.lane:
            return ast.copy_location(ast.Constant(self.k), node)
        return node

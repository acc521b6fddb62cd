"""Vector values under loops that run as array code, and as lane loops in compiled code.

onnx-mlir's SIMD form (-O3) is a tile loop whose body loads, computes and stores whole
vectors at the tile's index: `vector.load %a[%t]` with tiles of the vector's width.

- **Array code** (NumPy): when the vectorizer runs such a tile loop as an axis, a vector
  value over all its iterations is an array of the loops' axes followed by the vector's
  own (its lanes, last): `a[0:main].reshape(n_t, 8)`. Contiguous tiles (the loop's step
  is the vector's width) make a run at `t + c` over all tiles one slice, split into
  (tiles, lanes); lanewise ops apply to those arrays as they are, a broadcast of a value
  over the loops gives it its lanes, a reduction folds the lanes axis first to last.
  Every vector value has its whole lanes axes (never a size-1 one), so a lane is
  `v[..., p]`.
- **Lane loops** (Numba): a statement whose vector ops are all lanewise runs them as
  one loop over the lanes on scalars, `for l in range(8): out[t + l] = a[t + l] + b[t + l]`,
  which LLVM vectorizes; an array per vector value and tile would be allocated each time.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, VectorType
from xdsl.ir import Operation

from polykrnl.codegen import numpy_ops
from polykrnl.codegen.destination import view_reshaped
from polykrnl.codegen.numpy_ops.core import dt, float_const
from polykrnl.codegen.pyast import add_constant, call, const, iterator_plus_constant, name
from polykrnl.dialect import krnl as k
from polykrnl.dialect.std_vector import FromElementsOp, ShapeCastOp, SplatOp, ToElementsOp
from polykrnl.interpreter import scalar_dtype
from polykrnl.interpreter.memory import dense_array
from polykrnl.poly import Statement, is_pure

#: vector ops that move values between lanes or change the vector's shape: not lanewise
LANE_MOVING: tuple[type[Operation], ...] = (
    vector.BroadcastOp,
    SplatOp,
    vector.ReductionOp,
    vector.ExtractOp,
    vector.InsertOp,
    vector.ShuffleOp,
    vector.BitcastOp,
    vector.CreateMaskOp,
    ShapeCastOp,
    ToElementsOp,
    FromElementsOp,
)

#: vector.reduction kinds folded over the lanes axis in array code (NumPy's ufunc); the
#: unsigned ones would need views of the lanes as unsigned integers: refused
FOLD = {
    "add": "np.add",
    "mul": "np.multiply",
    "maxnumf": "np.fmax",
    "minnumf": "np.fmin",
    "maximumf": "np.maximum",
    "minimumf": "np.minimum",
    "maxsi": "np.maximum",
    "minsi": "np.minimum",
    "and": "np.bitwise_and",
    "or": "np.bitwise_or",
    "xor": "np.bitwise_xor",
}


class VecLike(Protocol):
    """What run_window reads of a vectorized loop (statements.VecIter)."""

    @property
    def start(self) -> ast.expr: ...
    @property
    def stop(self) -> ast.expr: ...
    @property
    def axis(self) -> int: ...
    @property
    def step(self) -> int: ...
    @property
    def length(self) -> str: ...


class LaneError(Exception):
    """What has no form over the vectorized loops (the message says why)."""


def vector_shape(op: Operation) -> tuple[int, ...] | None:
    """The shape of the vectors `op` computes or takes; None when it has no vector
    operand or result; () when they differ (not lanewise)."""
    shapes = {
        tuple(v.type.get_shape())
        for v in (*op.operands, *op.results)
        if isinstance(v.type, VectorType)
    }
    if not shapes:
        return None
    return shapes.pop() if len(shapes) == 1 else ()


def lanewise(op: Operation) -> bool:
    """Whether `op` computes lane k of its results from lane k of its operands alone: an
    op of the NUMPY table whose operands and results are all vectors of one shape."""
    shape = vector_shape(op)
    return (
        bool(shape)
        and not isinstance(op, LANE_MOVING)
        and all(isinstance(v.type, VectorType) for v in (*op.operands, *op.results))
        and numpy_ops.supported_lanes(op)
    )


def array_refusal(op: Operation) -> str | None:
    """Why `op`, an op on vectors, has no array form over vectorized loops (None: it has)."""
    if isinstance(op, vector.LoadOp | vector.StoreOp) or lanewise(op):
        return None
    if isinstance(op, vector.BroadcastOp | SplatOp):
        if isinstance(op.operands[0].type, VectorType):
            return "a vector.broadcast of a vector over a vectorized loop"
        return None
    if isinstance(op, vector.ReductionOp):
        kind = op.properties["kind"]
        assert isinstance(kind, vector.CombiningKindAttr)
        t = op.operands[0].type
        if kind.data.value in FOLD and isinstance(t, VectorType) and len(t.get_shape()) == 1:
            return None
        return f"a vector.reduction <{kind.data.value}> over a vectorized loop"
    if isinstance(op, vector.ExtractOp) and not isinstance(op.results[0].type, VectorType):
        return None
    return f"{op.name} in the loop body"


@dataclass(frozen=True)
class RunDim:
    """A dimension of the window a vector run covers over all vectorized iterations: a
    loop axis (`axis`), a vector dimension's lanes (`lanes`, its index), or both (a tile
    loop whose step is the vector's width: tiles x lanes once reshaped)."""

    axis: int | None
    lanes: int | None
    width: int = 1


@dataclass(frozen=True)
class Window:
    """The subscript of a run over the vectorized loops and what each of its dims holds."""

    index: list[ast.expr]
    dims: list[RunDim]

    def keys(self) -> list[tuple[int, int]]:
        """The axes of the reshaped window in its order: (0, loop axis), (1, vector dim)."""
        out: list[tuple[int, int]] = []
        for d in self.dims:
            if d.axis is not None:
                out.append((0, d.axis))
            if d.lanes is not None:
                out.append((1, d.lanes))
        return out

    def loop_axes(self) -> list[int]:
        return [d.axis for d in self.dims if d.axis is not None]

    def tiled(self) -> bool:
        return any(d.axis is not None and d.lanes is not None for d in self.dims)


def run_window(
    op: Operation,
    subs: list[ast.expr],
    vec: Mapping[str, VecLike],
    varies: Callable[[ast.expr], bool],
) -> Window:
    """The window of the vector.load / vector.store `op` at `subs` over the vectorized
    loops `vec` (`varies`: whether a subscript uses them)."""
    t = (op.results[0] if isinstance(op, vector.LoadOp) else op.operands[0]).type
    assert isinstance(t, VectorType)
    shape = list(t.get_shape())
    lead = len(subs) - len(shape)
    index: list[ast.expr] = []
    dims: list[RunDim] = []
    seen: set[int] = set()
    for d, e in enumerate(subs):
        k = d - lead
        width = shape[k] if k >= 0 else 1
        if not varies(e):
            index.append(ast.Slice(e, add_constant(e, width)) if k >= 0 else e)
            if k >= 0:
                dims.append(RunDim(None, k, width))
            continue
        found = iterator_plus_constant(e)
        if found is None or found[0] not in vec:
            raise LaneError("a vector run at a subscript that is not a vectorized loop + c")
        it, c = vec[found[0]], found[1]
        if it.axis in seen:
            raise LaneError("a vector run with one loop in two subscripts")
        seen.add(it.axis)
        start = add_constant(it.start, c)
        if k < 0:
            step = const(it.step) if it.step != 1 else None
            index.append(ast.Slice(start, add_constant(it.stop, c), step))
            dims.append(RunDim(it.axis, None))
            continue
        if it.step != width:
            raise LaneError(
                f"a vector of {width} lanes at a loop of step {it.step}: its tiles "
                f"{'overlap' if it.step < width else 'leave gaps'}"
            )
        count: ast.expr = ast.BinOp(name(it.length), ast.Mult(), const(width))
        if not (isinstance(start, ast.Constant) and start.value == 0):
            count = ast.BinOp(start, ast.Add(), count)
        index.append(ast.Slice(start, count))
        dims.append(RunDim(it.axis, k, width))
    return Window(index, dims)


def window_shape(w: Window, lengths: dict[int, str], split: bool) -> ast.expr:
    """The shape of the window: a tile dimension as (tiles, lanes) when `split`, else as
    one dimension of tiles x lanes elements."""
    parts: list[ast.expr] = []
    for d in w.dims:
        n = name(lengths[d.axis]) if d.axis is not None else None
        if n is not None and d.lanes is not None:
            parts += [n, const(d.width)] if split else [ast.BinOp(n, ast.Mult(), const(d.width))]
        else:
            parts.append(n if n is not None else const(d.width))
    return ast.Tuple(parts, ast.Load())


def read_window(mem: ast.expr, w: Window, lengths: dict[int, str], rank: int) -> ast.expr:
    """The run over all vectorized iterations as an array of the loops' axes (from the
    first present one on, size 1 where the run does not vary) and then its lanes."""
    e: ast.expr = ast.Subscript(mem, _tuple(w.index), ast.Load())
    if w.tiled():
        e = call("np.reshape", e, window_shape(w, lengths, True))
    keys = w.keys()
    order = sorted(keys)
    if keys != order:
        perm = [keys.index(x) for x in order]
        e = call("np.transpose", e, ast.Tuple([const(p) for p in perm], ast.Load()))
    present = sorted(w.loop_axes())
    if present:
        parts: list[ast.expr] = [
            ast.Slice() if a in present else const(None) for a in range(present[0], rank)
        ]
        parts += [ast.Slice() for x in order if x[0] == 1]
        if any(isinstance(p, ast.Constant) for p in parts):
            e = ast.Subscript(e, ast.Tuple(parts, ast.Load()), ast.Load())
    return e


def write_window(
    mem: ast.expr,
    w: Window,
    val: ast.expr,
    lengths: dict[int, str],
    shape: tuple[int, ...],
    full: bool,
) -> ast.stmt:
    """The store of `val` (an array of the loops' axes, then its lanes; `full`: along
    every loop axis, else broadcast to them) to the window."""
    rank = len(lengths)
    if sorted(w.loop_axes()) != list(range(rank)):
        # Not every vectorized loop writes its own elements: not parallel.
        raise LaneError("a vector store that does not depend on every vectorized loop")
    keys = w.keys()
    canonical = sorted(keys)
    if w.tiled() or keys != canonical:
        sizes: list[ast.expr] = [name(lengths[a]) for a in range(rank)]
        sizes += [const(n) for n in shape]
        if not full:
            val = call("np.broadcast_to", val, ast.Tuple(sizes, ast.Load()))
        if keys != canonical:
            perm = [canonical.index(x) for x in keys]
            val = call("np.transpose", val, ast.Tuple([const(p) for p in perm], ast.Load()))
        if w.tiled():
            val = call("np.reshape", val, window_shape(w, lengths, False))
    return ast.Assign([ast.Subscript(mem, _tuple(w.index), ast.Store())], val)


def window_destination(mem: ast.expr, w: Window, lengths: dict[int, str]) -> ast.expr | None:
    """The window as a view with the value's axes (the loops', then the lanes), to compute
    a value into (destination.py); None when its axes are in another order."""
    keys = w.keys()
    if keys != sorted(keys) or sorted(w.loop_axes()) != list(range(len(lengths))):
        return None
    dest: ast.expr = ast.Subscript(mem, _tuple(w.index), ast.Load())
    return view_reshaped(dest, window_shape(w, lengths, True)) if w.tiled() else dest


def broadcast_lanes(x: ast.expr, dtype: ast.expr, shape: tuple[int, ...]) -> ast.expr:
    """A value over the vectorized loops (or fixed) with the lanes of `shape`, all equal."""
    arr = call("np.asarray", x)
    arr.keywords = [ast.keyword("dtype", dtype)]
    more = ast.Tuple([ast.Constant(...), *[const(None)] * len(shape)], ast.Load())
    lanes = ast.Tuple([const(n) for n in shape], ast.Load())
    full = ast.BinOp(call("np.shape", x), ast.Add(), lanes)
    return call("np.broadcast_to", ast.Subscript(arr, more, ast.Load()), full)


def fold_lanes(fn: str, v: ast.expr, width: int, acc: ast.expr | None) -> ast.expr:
    """vector.reduction over the lanes axis: lanes combined first to last, each step in
    their type, as the interpreter does (never NumPy's pairwise sums)."""
    func = ast.parse(fn, mode="eval").body

    def lane(i: int) -> ast.expr:
        return ast.Subscript(v, ast.Tuple([ast.Constant(...), const(i)], ast.Load()), ast.Load())

    r: ast.expr = lane(0) if acc is None else ast.Call(func, [acc, lane(0)], [])
    for i in range(1, width):
        r = ast.Call(func, [r, lane(i)], [])
    return r


def lane_statement(s: Statement) -> int | None:
    """The width of the lane loop that runs the vector ops of `s` in compiled code: every
    vector op lanewise on 1-D vectors of one width, loads and stores of runs, broadcasts of
    scalars; no vector value kept for another statement but the iter_args a yield updates
    (its accumulators, of the same width); every memory op that is no vector op before the
    first one that is (they run before the lane loop). None when not."""
    width: int | None = None
    vector_memory = False
    for op in s.ops:
        shape = vector_shape(op)
        if isinstance(op, k.YieldOp):
            continue  # what it yields is the writer's to keep (an accumulator, below)
        if shape is None:
            if vector_memory and _touches_memory(op):
                return None
            continue
        if len(shape) != 1 or (width is not None and shape[0] != width):
            return None
        width = shape[0]
        if isinstance(op, vector.LoadOp | vector.StoreOp):
            vector_memory = True
        elif isinstance(op, vector.BroadcastOp | SplatOp):
            if isinstance(op.operands[0].type, VectorType):
                return None
        elif not lanewise(op):
            return None
    kept = [v.type for v, _ in s.exports] + [v.type for v, _ in s.imports]
    vectors = [t for t in kept if isinstance(t, VectorType)]
    if vectors and (
        s.kind != "yield" or width is None or any(t.get_shape() != (width,) for t in vectors)
    ):
        # A yield updates its iter_args' arrays lane by lane (an accumulator); any other
        # vector kept between statements is a whole value the lane loop cannot make.
        return None
    return width


def splat_lane(op: Operation) -> ast.expr | None:
    """The value of every lane of a constant vector whose lanes are all equal (bit for
    bit): a lane loop reads it as a scalar instead of an array made per tile. None for
    other ops."""
    attr = op.properties.get("value")
    t = op.results[0].type if isinstance(op, arith.ConstantOp) else None
    if not isinstance(attr, DenseIntOrFPElementsAttr) or not isinstance(t, VectorType):
        return None
    dtype = scalar_dtype(t.element_type)
    data = dense_array(attr, dtype, tuple(t.get_shape())).reshape(-1)
    if len({x.tobytes() for x in data}) != 1:
        return None
    x = data[0]
    literal = float_const(float(x), dtype) if dtype.kind == "f" else const(x.item())
    return ast.Call(dt(dtype), [literal], [])


def _touches_memory(op: Operation) -> bool:
    """Whether `op` may read or write memory (it may not move past a vector access)."""
    return not is_pure(op) and not isinstance(op, _NO_MEMORY)


#: impure ops that touch no memory an access could alias (loop handles and their values)
_NO_MEMORY = (k.GetInductionVarValueOp, k.DefineLoopsOp, k.BlockOp, k.PermuteOp)


def _tuple(subs: list[ast.expr]) -> ast.expr:
    return ast.Tuple(subs, ast.Load()) if len(subs) != 1 else subs[0]

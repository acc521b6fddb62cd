"""A SIMD run and its scalar remainder that compute one box, as one statement.

onnx-mlir's SIMD form (-O3) runs an elementwise op as two loops: a tile loop whose body
loads, computes and stores vectors at the tile's index (up to n - (VL - 1)), then a scalar
remainder loop over the last n mod VL elements. As array code they are two statements,
and the remainder's, over rows, is a (rows x n mod VL) strided operation: NumPy runs one
tiny inner loop per row (add_row ran 1.7x hand NumPy). When the remainder's statement,
applied to every element of both loops, computes what the vector statement computes lane
by lane, array code writes the remainder's statement once over the union.

`run_remainder` decides it, exactly:

* **the same value per element**: the vector statement's ops, from its store back, are
  the remainder's ops lane by lane: the same op classes with the same properties, lanewise
  (never lane-moving), loads of the same memrefs, constants whose lanes all equal the
  scalar constant bit for bit, broadcasts of the scalar the remainder uses; nothing else
  touches memory in either statement;
* **the same elements**: with a lane l of the vector statement's instance (o, t) at the
  remainder's instance (o, t + l), every access of the pair addresses the same element
  (isl: each vector access's lanes, from the first element it addresses, against the
  remainder's subscripts extended beyond its loop's range);
* **one box**: the lanes' positions and the remainder's instances neither overlap nor
  leave a gap, and their union is (the outer loops' values) x [start, end) with start and
  end functions of the parameters alone (so the loops around run the same range for every
  outer value: `simple_bounds` checks isl's loops do);
* **no dependence between the two statements** in either direction (the merged statement
  reads all its operands before it stores, as each of the two did alone, since each ran
  as array code; between them nothing may flow).

The interpreter computes a lanewise vector op lane by lane with the scalar op's semantics
(interpreter/values.py: lanewise), so the merged kernel is bit for bit the two loops'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import islpy as isl
import numpy as np
from xdsl.dialects import affine, arith, memref, vector
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, VectorType
from xdsl.ir import Operation, OpResult, SSAValue

from polykrnl.codegen.vector_lanes import lanewise
from polykrnl.dialect import krnl as k
from polykrnl.dialect.std_vector import SplatOp
from polykrnl.interpreter import scalar_dtype
from polykrnl.interpreter.memory import dense_array
from polykrnl.poly import Access, Statement, is_pure

_SCALAR_LOADS = (k.LoadOp, memref.LoadOp, affine.LoadOp)
_SCALAR_STORES = (k.StoreOp, memref.StoreOp, affine.StoreOp)
# Impure ops that touch no memory (loop handles and their values).
_NO_MEMORY = (k.GetInductionVarValueOp, k.DefineLoopsOp, k.BlockOp, k.PermuteOp)
_SET = isl.dim_type.set
_IN = isl.dim_type.in_
_OUT = isl.dim_type.out


@dataclass(frozen=True)
class RunRemainder:
    """The box a SIMD run and its remainder cover: [start, end) along the remainder's
    loop, functions of the parameters (0-dimensional domains)."""

    start: isl.PwAff
    end: isl.PwAff


def run_remainder(
    run: Statement, rem: Statement, related: Callable[[str, str], bool], context: isl.Set
) -> RunRemainder | str:
    """The box over which `rem`'s statement computes what `run` and `rem` compute, or why
    not. `run` is the vector statement of a tile loop (its last dimension), `rem` the
    scalar statement of the remainder loop (its last dimension), the dimensions before
    the last ones the same loops; `related(a, b)`: a dependence between them; `context`:
    the parameter values a call can have (the box's ends are simplified there)."""
    if run.dim_loops[:-1] != rem.dim_loops[:-1] or len(run.dims) != len(rem.dims):
        return "the two loops are not inside the same loops"
    if run.exports or run.imports or rem.exports or rem.imports:
        return "a value is kept between statements"
    pairs = same_value(run, rem)
    if isinstance(pairs, str):
        return pairs
    lanes, pairs_ = pairs
    box = _box(run, rem, lanes, pairs_)
    if isinstance(box, str):
        return box
    # Where the loops around run nothing, the ends may be anything.
    runs = context.align_params(run.domain.get_space()).params()
    runs = runs.intersect(_outer_runs(run).union(_outer_runs(rem)))
    box = RunRemainder(*(_simplified(pa, runs) for pa in (box.start, box.end)))
    if related(run.name, rem.name):
        return f"a dependence between {run.name} and {rem.name}"
    return box


def same_value(run: Statement, rem: Statement) -> tuple[int, list[tuple[Access, Access]]] | str:
    """The lanes of `run`'s vectors and its accesses paired with `rem`'s, when `rem`
    computes lane by lane what `run` computes; else why not."""
    stores = [op for op in run.ops if isinstance(op, vector.StoreOp)]
    scalar = [op for op in rem.ops if isinstance(op, _SCALAR_STORES)]
    if len(stores) != 1 or len(scalar) != 1:
        return "not one vector store and one scalar store"
    t = stores[0].operands[0].type
    if not isinstance(t, VectorType) or len(t.get_shape()) != 1:
        return "not a run of a 1-D vector"
    match = _Match(set(run.ops), set(rem.ops), t.get_shape()[0])
    if stores[0].operands[1] is not scalar[0].operands[1]:
        return "the two loops store into different memrefs"
    match.memory.append((stores[0], scalar[0]))
    why = match.values(stores[0].operands[0], scalar[0].operands[0])
    if why is not None:
        return why
    for s, seen in ((run, match.seen1), (rem, match.seen2)):
        extra = [
            op for op in s.ops if op not in seen and _counts(op) and op not in (*stores, *scalar)
        ]
        if extra:
            return f"{extra[0].name} in {s.name} has no counterpart in the other loop"
    pairs = [(_access(run, a), _access(rem, b)) for a, b in match.memory]
    return match.lanes, pairs


def _counts(op: Operation) -> bool:
    """Whether `op` must have a counterpart: it touches memory or vectors."""
    if any(isinstance(v.type, VectorType) for v in (*op.operands, *op.results)):
        return True
    return not is_pure(op) and not isinstance(op, _NO_MEMORY)


def _access(s: Statement, op: Operation) -> Access:
    return next(a for a in s.accesses if a.op is op)


@dataclass
class _Match:
    """Pairs the values of the vector statement with the remainder's, lane by lane."""

    ops1: set[Operation]
    ops2: set[Operation]
    lanes: int
    memory: list[tuple[Operation, Operation]] = field(default_factory=list)
    seen1: set[Operation] = field(default_factory=set)
    seen2: set[Operation] = field(default_factory=set)

    def values(self, v1: SSAValue, v2: SSAValue) -> str | None:
        """None when vector value `v1` is `v2` at every lane, else why not."""
        if not isinstance(v1, OpResult) or not isinstance(v2, OpResult):
            return "a block argument in a computed value"
        op1, op2 = v1.op, v2.op
        c1, c2 = _constant_lanes(op1), _constant_lanes(op2)
        if c1 is not None or c2 is not None:
            self.seen1.add(op1)
            self.seen2.add(op2)
            return None if c1 is not None and c1 == c2 else "constants that differ"
        if isinstance(op1, vector.BroadcastOp | SplatOp):
            # A scalar spread over the lanes: the remainder's value itself.
            self.seen1.add(op1)
            x = op1.operands[0]
            if isinstance(x.type, VectorType):
                return "a broadcast of a vector"
            if x is v2:
                return None
            cx = _constant_lanes(x.op) if isinstance(x, OpResult) else None
            if cx is not None and cx == _constant_lanes(op2):
                self.seen2.add(op2)
                return None
            return "a broadcast of another value"
        if op1 not in self.ops1 or op2 not in self.ops2:
            return "a value computed outside the loops"
        if not isinstance(v1.type, VectorType) or isinstance(v2.type, VectorType):
            return "a value that is not a vector in the run and a scalar in the remainder"
        self.seen1.add(op1)
        self.seen2.add(op2)
        if isinstance(op1, vector.LoadOp):
            if not isinstance(op2, _SCALAR_LOADS):
                return f"a vector.load against {op2.name}"
            if op1.operands[0] is not op2.operands[0]:
                return "loads of different memrefs"
            self.memory.append((op1, op2))
            return None
        if type(op1) is not type(op2) or not lanewise(op1) or op1.properties != op2.properties:
            return f"{op1.name} in the run, {op2.name} in the remainder"
        if v1.index != v2.index or len(op1.operands) != len(op2.operands):
            return f"{op1.name} with other operands"
        for a, b in zip(op1.operands, op2.operands, strict=True):
            why = self.values(a, b)
            if why is not None:
                return why
        return None


def _constant_lanes(op: Operation) -> bytes | None:
    """The bytes of the one value every lane of a constant holds (a scalar constant's
    own), or None when `op` is no such constant."""
    if not isinstance(op, arith.ConstantOp):
        return None
    attr = op.properties.get("value")
    t = op.results[0].type
    if isinstance(t, VectorType) and isinstance(attr, DenseIntOrFPElementsAttr):
        data = dense_array(attr, scalar_dtype(t.element_type), tuple(t.get_shape())).reshape(-1)
        values = {x.tobytes() for x in data}
        return values.pop() if len(values) == 1 else None
    if isinstance(attr, FloatAttr | IntegerAttr):
        return bytes(np.array(attr.value.data, dtype=scalar_dtype(t)).tobytes())
    return None


def _anonymous(m: isl.Map) -> isl.Map:
    return m.reset_tuple_id(_IN).reset_tuple_id(_OUT)


def _formula(m: isl.Map) -> isl.Map | None:
    """The affine function a single-valued access relation is, over every instance (its
    subscripts beyond the statement's domain); None when piecewise or not a function."""
    if not m.is_single_valued():
        return None
    pma = m.as_pw_multi_aff()
    if pma.n_piece() != 1:
        return None
    found: list[isl.MultiAff] = []
    pma.foreach_piece(lambda _s, ma: found.append(ma))
    return _anonymous(isl.Map.from_multi_aff(found[0]))


def _box(
    run: Statement, rem: Statement, lanes: int, pairs: list[tuple[Access, Access]]
) -> RunRemainder | str:
    """The box the lanes of `run` and the instances of `rem` cover, when each access pair
    addresses the same element at a lane and its position, and they cover a box."""
    n = len(run.dims) - 1
    outer = ", ".join(f"o{i}" for i in range(n))
    o = f"{outer}, " if n else ""
    at = isl.Map(f"{{ [{o}t, l] -> [{o}t + l] }}")  # lane l of tile t: the position t + l
    lane_set = isl.Set(f"{{ [{o}t, l] : 0 <= l < {lanes} }}")
    d1 = run.domain.reset_tuple_id().insert_dims(_SET, n + 1, 1)
    d1 = d1.intersect(lane_set.align_params(d1.get_space()))
    at = at.align_params(d1.get_space()).intersect_domain(d1)
    for a1, a2 in pairs:
        if a1.may or a1.approximation or a2.may or a2.approximation:
            return f"an access to {a1.array} that the model approximates"
        scalar = _formula(_anonymous(a2.relation))
        if scalar is None:
            return f"the remainder's access to {a1.array} is not one affine function"
        start = _formula(_anonymous(a1.addressed.lexmin()))
        if start is None:
            return f"the run's access to {a1.array} starts at no affine function"
        rank = start.dim(_OUT)
        shift = ", ".join(["0"] * (rank - 1) + ["l"])
        step = isl.Map(f"{{ [{o}t, l] -> [{shift}] }}").align_params(start.get_space())
        first = isl.Map(f"{{ [{o}t, l] -> [{o}t] }}").apply_range(start)
        lane_elements = first.sum(step).intersect_domain(d1)
        if not lane_elements.is_equal(at.apply_range(scalar)):
            return f"a lane of the run and the remainder at it access other elements of {a1.array}"
    if not at.is_injective():
        return "two lanes of the run at one element"
    positions = at.range()
    d2 = rem.domain.reset_tuple_id()
    if not positions.intersect(d2).is_empty():
        return "the run and the remainder overlap"
    both = positions.union(d2).coalesce()
    # outer values -> positions along the loop
    covered = isl.Map.from_range(both).move_dims(_IN, 0, _OUT, 0, n)
    along = covered.range()
    if not covered.is_equal(isl.Map.from_domain_and_range(covered.domain(), along)):
        return "the run and the remainder cover other ranges for other outer loop values"
    before = isl.Map("{ [p] -> [p - 1] }").align_params(along.get_space())
    if not along.subtract(along.apply(before)).is_equal(along.lexmax()):
        return "a gap between the run and the remainder"
    lo = along.lexmin_pw_multi_aff().get_pw_aff(0)
    hi = along.lexmax_pw_multi_aff().get_pw_aff(0).add_constant_val(1)
    return RunRemainder(_total(lo), _total(hi))


def _total(pa: isl.PwAff) -> isl.PwAff:
    """`pa`, and 0 where it is undefined (no element: the range [0, 0) is empty)."""
    rest = pa.domain().complement()
    zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(rest.get_space()))
    return pa.union_max(zero.intersect_domain(rest)).coalesce()


def _simplified(pa: isl.PwAff, context: isl.Set) -> isl.PwAff:
    """`pa` where the parameters take values of `context` (sizes are not negative)."""
    return pa.gist_params(context.align_params(pa.get_space()).params()).coalesce()


def _outer_runs(s: Statement) -> isl.Set:
    """The parameter values for which the loops around the last one of `s` run (a
    superset: the bounds of the last loop left out)."""
    d = s.domain
    last = d.dim(_SET) - 1
    return d.drop_constraints_involving_dims(_SET, last, 1).project_out(_SET, last, 1).params()

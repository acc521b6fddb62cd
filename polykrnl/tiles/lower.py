"""Krnl schedule -> PTO tile program: the patterns the PTO emitter recognizes.

A top-level loop nest of the schedule becomes a loop over tiles: its tile loops
(from krnl.block, in the schedule's order) become C++ loops over global offsets,
and everything inside them (the point loops and their statements) runs as whole
tiles, statement after statement. A nest without a block recipe is one tile.

The point loops of a nest are the tile's axes: the outer one its rows, the
inner one its columns (a matmul has three: rows, columns and the reduction).
Running statement after statement over the whole tile is the loop
distribution the legality analysis allows when the row loop carries no
dependence and each column loop carries none or only the reduction its
statement performs. What is recognized, per statement:

- a load ``X[r, c]`` (a tile, TLOAD of the window), ``X[c, r]`` (TLOAD of the
  transposed window, then TTRANS), ``X[r]`` (a column of one value per row);
- elementwise arith/math ops on tiles (TADD, TSUB, TMUL, TDIV, TMAX, TMIN, TEXP,
  TSQRT, TABS, TNEG, TLOG, TRELU for ``max(x, 0)``), with a constant (TADDS,
  TMULS, ...), or with a per-row value (TROWEXPANDADD/SUB/MUL/DIV/MAX/MIN);
- a store ``Y[r, c] = tile`` (TSTORE) or ``Y[c, r] = tile`` (TTRANS, TSTORE);
- a reduction along the columns carried by iter_args (``krnl.yield old op e``
  with +, max, min): TROWSUM, TROWMAX, TROWMIN into a column of per-row values,
  combined with the initial value unless it is the identity;
- ``C[i, j] = C[i, j] + A[i, k] * B[k, j]`` over a k loop, C zero-initialized
  in the same (i, j) iteration: TLOAD to Mat tiles, TMOV to Left/Right, TMATMUL
  for the first k tile then TMATMUL_ACC, TSTORE from Acc.

Anything else is refused with a PtoError naming the statement and the reason;
nothing is emitted wrongly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import islpy as isl
import sympy  # type: ignore[import-untyped]
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.errors import PtoError
from polykrnl.model import dialect as k
from polykrnl.model.poly import Statement
from polykrnl.tiles import symbolic, tmp_rules
from polykrnl.tiles.dtypes import ALIGN_BYTES, DType, dtype
from polykrnl.tiles.program import (
    GlobalView,
    Instr,
    Item,
    Loop,
    Program,
    Scalar,
    SetValid,
    TensorParam,
    plan_offsets,
)
from polykrnl.tiles.sync import insert_sync
from polykrnl.tiles.types import (
    Arch,
    BLayout,
    Loc,
    SLayout,
    TileType,
    acc_tile,
    arch,
    left_tile,
    right_tile,
)
from polykrnl.transforms.schedule import Bound, LoopInfo, Schedule, SLoop, SNode, SStmt

__all__ = ["Lowered", "lower"]


@dataclass(frozen=True)
class Lowered:
    """A PTO tile program for a schedule, and what the kernel object needs around it."""

    program: Program
    # tmp tile -> the bytes it needs, as a function of the problem sizes (max over tiles)
    tmp_sizes: Mapping[str, symbolic.SymbolicSize]
    # problem-size parameter (isl name) -> how it is given: an index argument's name,
    # or `A.0` for a dimension of a memref argument
    param_sources: Mapping[str, str]
    # the Krnl function's arguments in order (memrefs are the program's tensors)
    arguments: tuple[str, ...]
    # sizes given in `params` that static tile shapes were derived from (isl name ->
    # value): the kernel is only correct for these values
    fixed: Mapping[str, int] = field(default_factory=dict)


_UNARY = {
    "math.exp": "TEXP",
    "math.sqrt": "TSQRT",
    "math.absf": "TABS",
    "arith.negf": "TNEG",
    "math.log": "TLOG",
    "math.rsqrt": "TRSQRT",
}
_BINARY = {
    "arith.addf": "TADD",
    "arith.subf": "TSUB",
    "arith.mulf": "TMUL",
    "arith.divf": "TDIV",
    "arith.maximumf": "TMAX",
    "arith.minimumf": "TMIN",
}
_COMMUTES = {"TADD", "TMUL", "TMAX", "TMIN"}
_ROW_REDUCE = {"arith.addf": "TROWSUM", "arith.maximumf": "TROWMAX", "arith.minimumf": "TROWMIN"}
_IDENTITY = {"TROWSUM": 0.0, "TROWMAX": float("-inf"), "TROWMIN": float("inf")}


def _fail(s: Statement | None, message: str, hint: str | None = None) -> PtoError:
    where = f"{s.label}: " if s is not None else ""
    return PtoError(
        f"PTO code generation: {where}{message}",
        location=s.location if s is not None else None,
        hint=hint or "run it with to_numpy() or pk.run_reference, or rewrite the nest",
    )


# ------------------------------------------------------------------ the nest's axes


@dataclass
class _Axis:
    """One original loop of the nest, as a tile axis."""

    origin: str
    start: sympy.Expr  # global index of the tile's first element along the axis
    extent: sympy.Expr  # elements of this tile along the axis (partial at the edges)
    size: int  # static extent of tiles along the axis (the block size, or the whole range)
    tile_loop: LoopInfo | None  # None: not blocked, the tile covers the whole range


@dataclass
class _Tile:
    name: str
    type: TileType
    kind: str  # "tile", "col" (one value per row), "mat", "left", "right", "acc"


@dataclass
class _Builder:
    sched: Schedule
    arch: Arch
    params: Mapping[str, int]
    tensors: dict[str, TensorParam]
    tensor_of_value: dict[SSAValue, str]
    tiles: list[_Tile] = field(default_factory=list)
    tmp_needs: dict[str, tuple[str, DType, Statement, str, str]] = field(default_factory=dict)
    tmp_static: dict[str, tuple[int, int]] = field(default_factory=dict)  # static rows, cols
    shaping: set[str] = field(default_factory=set)  # params that fixed a static tile extent
    counter: int = 0

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}{self.counter}"

    def tile(self, base: str, tt: TileType, kind: str) -> str:
        name = self.fresh(base)
        self.tiles.append(_Tile(name, tt, kind))
        return name


def _sym(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True)


def _affine(e: AffineExpr, operands: Sequence[sympy.Expr]) -> sympy.Expr:
    if isinstance(e, AffineConstantExpr):
        return sympy.Integer(e.value)
    if isinstance(e, AffineDimExpr | AffineSymExpr):
        return operands[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = _affine(e.lhs, operands), _affine(e.rhs, operands)
    if e.kind == AffineBinaryOpKind.Add:
        return a + b
    if e.kind == AffineBinaryOpKind.Mul:
        return a * b
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return sympy.floor(a / b)
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return sympy.ceiling(a / b)
    return sympy.Mod(a, b)


def _bound(b: Bound, values: Mapping[str, sympy.Expr], what: str) -> sympy.Expr:
    ops: list[sympy.Expr] = []
    for r in b.operands:
        if r.kind == "const":
            ops.append(sympy.Integer(r.value))
        elif r.kind == "param":
            ops.append(_sym(r.name))
        elif r.name in values:
            ops.append(values[r.name])
        else:
            raise _fail(
                None,
                f"the {what} uses the value of loop {r.name}, which is not a tile loop",
                hint="PTO tiles are rectangular: use bounds of constants and sizes",
            )
    return _affine(b.expr, ops)


def _bounds(bs: Sequence[Bound], values: Mapping[str, sympy.Expr], what: str, lo: bool) -> Any:
    xs = [_bound(b, values, what) for b in bs]
    return (sympy.Max if lo else sympy.Min)(*xs) if len(xs) > 1 else xs[0]


def _static(e: sympy.Expr, params: Mapping[str, int]) -> int | None:
    v = sympy.sympify(e).subs({_sym(p): n for p, n in params.items()})
    return int(v) if v.is_Integer else None


# ------------------------------------------------------------------ lowering


def lower(
    sched: Schedule, arch_name: str | Arch = "a2a3", params: Mapping[str, int] | None = None
) -> Lowered:
    """The PTO tile program of `sched` (see the module docstring for what is recognized).

    `params` fixes problem sizes (isl names: `N`, `A_d0`) that the static tile shapes
    need when a loop that is not blocked has a symbolic range.
    """
    a = arch(arch_name)
    program = sched.program
    fn = program.function
    given = dict(params or {})
    tensors: dict[str, TensorParam] = {}
    tensor_of_value: dict[SSAValue, str] = {}
    sources: dict[str, str] = {}
    block_args = fn.op.body.block.args
    for argument, value in zip(fn.arguments, block_args, strict=True):
        if isinstance(argument.type, MemRefType):
            shape: list[sympy.Expr] = []
            for n, d in enumerate(argument.type.get_shape()):
                if d >= 0:
                    shape.append(sympy.Integer(d))
                    continue
                pname = next(
                    (
                        p
                        for p, disp in program.param_display.items()
                        if disp == f"{argument.name}.{n}"
                    ),
                    f"{argument.name}_d{n}",
                )
                sources[pname] = f"{argument.name}.{n}"
                shape.append(_sym(pname))
            try:
                dt = dtype(str(argument.type.element_type))
            except Exception as e:
                raise PtoError(
                    f"PTO code generation: @{fn.name} argument {argument.name} has element "
                    f"type {argument.type.element_type}, which PTO tiles do not hold",
                    location=fn.location(fn.op),
                    hint="use f32, f16, bf16 or an integer type",
                ) from e
            tensors[argument.name] = TensorParam(argument.name, dt, shape)
            tensor_of_value[value] = argument.name
        elif value in program.symbols:
            sources[program.symbols[value]] = argument.name
        else:
            raise PtoError(
                f"PTO code generation: @{fn.name} takes the scalar argument {argument.name} "
                f"({argument.type}); PTO kernels here take tensors and index sizes only",
                location=fn.location(fn.op),
                hint="make it a constant in the Krnl function, or a 1-element memref",
            )
    b = _Builder(sched, a, given, tensors, tensor_of_value)
    body: list[Item] = []
    owner: dict[str, Statement] = {}  # tile -> first statement of the nest declaring it
    for node in _nodes(sched):
        before = len(b.tiles)
        try:
            body += _nest(b, node)
        except PtoError as e:
            if e.location is not None:
                raise
            # Raised where no statement was at hand (a loop bound): the nest's first one.
            prefix = "PTO code generation: "
            message = e.message[len(prefix) :] if e.message.startswith(prefix) else e.message
            raise _fail(_first_statement(sched, node), message, e.hint) from None
        owner.update({t.name: _first_statement(sched, node) for t in b.tiles[before:]})
    used_params = sorted(
        {str(s) for t in tensors.values() for d in t.shape for s in sympy.sympify(d).free_symbols}
        | {str(s) for it in body for s in _free(it)}
    )
    for p in used_params:
        if p not in sources:
            raise _fail(None, f"the size {p} is computed inside the function")
    try:
        decls = plan_offsets([(t.name, t.type) for t in b.tiles], a)
    except PtoError as e:
        # Name the nest of the largest tile (the one to block more finely) and point at it.
        largest = max(b.tiles, key=lambda t: t.type.bytes)
        raise _fail(
            owner[largest.name],
            f"{e.message}; the largest tile is {largest.name} of this nest",
            hint="block the loops (krnl.block) so that one tile holds fewer elements",
        ) from None
    prog = Program(
        fn.name,
        tuple(tensors[x.name] for x in fn.arguments if x.name in tensors),
        tuple(used_params),
        decls,
        tuple(body),
        a,
    )
    prog = insert_sync(prog)
    return Lowered(
        prog,
        _tmp_sizes(b),
        {p: sources[p] for p in used_params},
        tuple(x.name for x in fn.arguments),
        {p: v for p, v in given.items() if p in b.shaping},
    )


def _free(item: Item) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    if isinstance(item, Loop):
        for e in (item.start, item.stop, item.step):
            out |= sympy.sympify(e).free_symbols
        for x in item.body:
            out |= _free(x)
        out = {s for s in out if s.name != item.var}
    elif isinstance(item, SetValid):
        for e in (item.rows, item.cols):
            if e is not None:
                out |= sympy.sympify(e).free_symbols
    elif isinstance(item, Instr):
        for op in (item.dst, *item.srcs):
            if isinstance(op, GlobalView):
                for e in (op.offset, op.rows, op.cols, op.row_stride):
                    out |= sympy.sympify(e).free_symbols
    return out


def _nodes(sched: Schedule) -> tuple[SNode, ...]:
    return sched.nodes


def _nest(b: _Builder, node: SNode) -> list[Item]:
    """One top-level nest: C++ loops over its tiles around the tile-wise body."""
    sched = b.sched
    if isinstance(node, SStmt):
        raise _fail(sched.statements[node.name], "a statement outside every loop")
    tile_loops: list[LoopInfo] = []
    inner: SNode = node
    while isinstance(inner, SLoop) and (
        sched.loop(inner.name).kind == "tile" or sched.loop(inner.name).trivial
    ):
        if not sched.loop(inner.name).trivial:
            tile_loops.append(sched.loop(inner.name))
        body = [x for x in inner.body if not _empty(sched, x)]
        if len(body) != 1:
            # Statements at tile level (tile-buffer copies): the body of the innermost
            # tile loop is the tile's work.
            inner = SLoop(inner.name, tuple(body))
            break
        inner = body[0]
    values: dict[str, sympy.Expr] = {}
    axes: dict[str, _Axis] = {}
    for info in tile_loops:
        if info.tile_size is None:
            raise _fail(_first_statement(sched, node), f"tile loop {info.name} has no tile size")
        var = _sym(info.name)
        ub = _bounds(info.ubs, values, f"upper bound of {info.name}", False)
        values[info.vid] = var
        axes[info.origin] = _Axis(
            info.origin, var, sympy.Min(info.tile_size, ub - var), info.tile_size, info
        )
    point_nodes: tuple[SNode, ...] = (inner,)
    if isinstance(inner, SLoop) and (
        sched.loop(inner.name).kind == "tile" or sched.loop(inner.name).trivial
    ):
        point_nodes = inner.body
    order = _point_origins(sched, point_nodes)
    for origin in order:
        if origin in axes:
            continue
        info = _loop_of_origin(sched, point_nodes, origin)
        ub = _bounds(info.ubs, values, f"upper bound of {info.name}", False)
        if info.kind == "tile" and info.tile_size is not None:
            # Blocked inside the point loops (a matmul's k): a loop over k tiles in the body.
            var = _sym(info.name)
            axes[origin] = _Axis(
                origin, var, sympy.Min(info.tile_size, ub - var), info.tile_size, info
            )
            continue
        lb = _bounds(info.lbs, values, f"lower bound of {info.name}", True)
        size = _static(ub - lb, b.params)
        b.shaping |= {str(x) for x in sympy.sympify(ub - lb).free_symbols} & set(b.params)
        if size is None:
            s = _first_statement(sched, node)
            names = ", ".join(sorted(map(str, sympy.sympify(ub - lb).free_symbols)))
            raise _fail(
                s,
                f"loop {info.name} runs over {ub - lb} elements, a symbolic number: a tile "
                "needs a static shape",
                hint=f"block it (krnl.block) or give the size ({names}) as a parameter",
            )
        axes[origin] = _Axis(origin, lb, ub - lb, size, None)
    for origin in axes:
        if order and origin not in order:
            raise _fail(
                _first_statement(sched, node), f"tile loop of {origin} has no point loop inside"
            )
    stmts = _statements_in(point_nodes)
    statements = [sched.statements[n] for n in stmts]
    _check_distribution(b, point_nodes, statements)
    if not order:
        items = _buffers(b, values, statements)
    elif any(_matmul_form(b, x) is not None for x in statements):
        items = _matmul(b, axes, order, statements)
    else:
        items = _tilewise(b, axes, order, statements)
    for info in reversed(tile_loops):
        lb = _bounds(info.lbs, {}, f"lower bound of {info.name}", True)
        ub = _bounds(info.ubs, {}, f"upper bound of {info.name}", False)
        items = [
            Loop(info.name, lb, ub, info.tile_size or 1, items, comment=f"tiles of {info.origin}")
        ]
    return items


def _first_statement(sched: Schedule, node: SNode) -> Statement:
    return sched.statements[_statements_in((node,))[0]]


def _statements_in(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SStmt):
            out.append(n.name)
        else:
            out += _statements_in(n.body)
    return out


def _empty(sched: Schedule, node: SNode) -> bool:
    """A loop with no statement inside (Krnl's unused point handles)."""
    return isinstance(node, SLoop) and not _statements_in((node,))


def _point_origins(sched: Schedule, nodes: Sequence[SNode]) -> list[str]:
    """The original loops of the point loops, outermost first (first seen first); trivial
    loops (one iteration, unused point handles) do not count."""
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SLoop) and sched.loop(n.name).trivial:
            for x in _point_origins(sched, n.body):
                if x not in out:
                    out.append(x)
        elif isinstance(n, SLoop):
            o = sched.loop(n.name).origin
            if o not in out:
                out.append(o)
            for x in _point_origins(sched, n.body):
                if x not in out:
                    out.append(x)
    return out


def _loop_of_origin(sched: Schedule, nodes: Sequence[SNode], origin: str) -> LoopInfo:
    found = _find(sched, nodes, origin)
    assert found is not None, origin
    return found


def _find(sched: Schedule, nodes: Sequence[SNode], origin: str) -> LoopInfo | None:
    for n in nodes:
        if isinstance(n, SLoop):
            info = sched.loop(n.name)
            if info.origin == origin:
                return info
            found = _find(sched, n.body, origin)
            if found is not None:
                return found
    return None


def _check_distribution(b: _Builder, nodes: Sequence[SNode], statements: list[Statement]) -> None:
    """Tile-wise execution runs each statement over the whole tile before the next one: the
    point loops may carry no dependence other than a statement's own reduction."""
    report = b.sched.check()
    status = {lv.loop: lv for lv in report.loops}
    names = {s.name for s in statements}
    for n in _loops_in(nodes):
        lv = status.get(n)
        if lv is None or lv.status == "parallel":
            continue
        own = [(src, snk, red) for src, snk, red in lv.pairs if src in names or snk in names]
        if lv.status == "reduction" and all(src == snk and red for src, snk, red in own):
            continue
        s = next((x for x in statements if n in x.loops), statements[0])
        raise _fail(
            s,
            f"loop {n} carries a dependence ({lv.why_not_vectorizable or lv.status}): the tile "
            "cannot run statement after statement",
            hint="PTO tiles need the point loops parallel (or a reduction along the columns)",
        )


def _loops_in(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(n.name)
            out += _loops_in(n.body)
    return out


# ------------------------------------------------------------------ tile-wise statements


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


@dataclass
class _Value:
    """What an SSA value is on the tile: a tile, a column of per-row values, or a scalar."""

    kind: str  # "tile", "col", "scalar"
    tile: str = ""
    scalar: float | int = 0.0


@dataclass
class _Tilewise:
    b: _Builder
    axes: dict[str, _Axis]
    row: _Axis
    col: _Axis | None
    dt: DType | None = None
    items: list[Item] = field(default_factory=list)
    env: dict[SSAValue, _Value] = field(default_factory=dict)
    virtual: dict[str, _Value] = field(default_factory=dict)  # virtual array -> value
    inits: dict[str, float | int] = field(default_factory=dict)  # iter_args initial constants
    col_names: set[str] = field(default_factory=set)  # the column loops (one range)

    def shape(self) -> tuple[int, int]:
        assert self.dt is not None
        per_block = ALIGN_BYTES // self.dt.size
        cols = self.col.size if self.col is not None else 1
        # Rows rounded like a column tile's (its rows fill 32-byte blocks): the row
        # reductions and expansions need the same static row count on both sides.
        return _round_up(self.row.size, per_block), _round_up(cols, per_block)

    def valid(self) -> tuple[sympy.Expr, sympy.Expr]:
        cols = self.col.extent if self.col is not None else sympy.Integer(1)
        return self.row.extent, cols

    def new_tile(self, base: str) -> str:
        rows, cols = self.shape()
        tiled = (
            self.row.tile_loop is not None,
            self.col is not None and self.col.tile_loop is not None,
        )
        return self.declare(base, rows, cols, self.valid(), tiled, BLayout.RowMajor, "tile")

    def new_col(self, base: str) -> str:
        assert self.dt is not None
        rows = _round_up(self.row.size, ALIGN_BYTES // self.dt.size)
        valid = (self.row.extent, sympy.Integer(1))
        tiled = (self.row.tile_loop is not None, False)
        return self.declare(base, rows, 1, valid, tiled, BLayout.ColMajor, "col")

    def declare(
        self,
        base: str,
        rows: int,
        cols: int,
        valid: tuple[sympy.Expr, sympy.Expr],
        tiled: tuple[bool, bool],
        layout: BLayout,
        kind: str,
    ) -> str:
        """A Vec tile of the nest: a valid dimension is static when it is the same on
        every tile (not blocked, constant), else set per iteration with SetValid."""
        assert self.dt is not None
        static = [None if t else _static(v, {}) for v, t in zip(valid, tiled, strict=True)]
        tt = TileType(Loc.Vec, self.dt, rows, cols, layout, static[0], static[1])
        name = self.b.tile(base, tt, kind)
        if None in static:
            self.items.append(
                SetValid(
                    name,
                    valid[0] if static[0] is None else None,
                    valid[1] if static[1] is None else None,
                )
            )
        return name


def _tilewise(
    b: _Builder, axes: dict[str, _Axis], order: list[str], statements: list[Statement]
) -> list[Item]:
    """Row axis: the outer point loop; columns: every other point loop, all of one range
    (sibling krnl.iterate ops over the same columns, as softmax writes them)."""
    row = axes[order[0]]
    cols = [axes[o] for o in order[1:]]
    for c in cols[1:]:
        if (
            c.size != cols[0].size
            or sympy.simplify(c.extent - cols[0].extent) != 0
            or (sympy.simplify(c.start - cols[0].start) != 0)
        ):
            raise _fail(
                statements[0],
                f"column loops {cols[0].origin} and {c.origin} run over different ranges "
                "(one tile has one column range)",
            )
    t = _Tilewise(b, axes, row, cols[0] if cols else None, col_names={c.origin for c in cols})
    for s in statements:
        _statement(t, s)
    return t.items


def _elem_dtype(s: Statement, v: SSAValue) -> DType:
    try:
        return dtype(str(v.type))
    except Exception as e:
        raise _fail(s, f"values of type {v.type} have no PTO tile") from e


def _statement(t: _Tilewise, s: Statement) -> None:
    program = t.b.sched.program
    dims = set(s.dim_origins or s.dims)
    if t.row.origin not in dims:
        raise _fail(s, f"a statement outside the row loop {t.row.origin}")
    if s.kind == "init":
        assert s.iterate is not None
        for arg, init in zip(s.iterate.iter_args, s.iterate.iter_inits, strict=True):
            c = _constant(init)
            if c is None:
                raise _fail(s, "an iter_args initial value that is not a constant")
            t.inits[program.virtual[arg][0]] = c
        return
    if s.kind == "yield":
        _row_reduction(t, s)
        return
    anchor = s.anchor
    if not (isinstance(anchor, k.StoreOp) or anchor.name == "memref.store"):
        if not s.exports:
            raise _fail(s, f"{anchor.name} has no PTO pattern")
        # A value computed once per row (or per tile element) for later statements.
        for v, arr in s.exports:
            t.virtual[arr] = _value(t, s, v, defining=True)
        return
    value = _value(t, s, anchor.operands[0])
    mem = anchor.operands[1]
    tensor = t.b.tensor_of_value.get(mem)
    if tensor is None:
        raise _fail(s, "a store into a buffer that is not a function argument")
    subs = _subscripts(t, s, anchor.operands[2:])
    _store(t, s, tensor, subs, value)


def _constant(v: SSAValue) -> float | int | None:
    if isinstance(v, OpResult) and v.op.name == "arith.constant":
        attr = v.op.properties.get("value") or v.op.attributes.get("value")
        if isinstance(attr, FloatAttr):
            return float(attr.value.data)
        if isinstance(attr, IntegerAttr):
            return int(attr.value.data)
    return None


def _subscripts(t: _Tilewise, s: Statement, idx: Sequence[SSAValue]) -> list[str]:
    """The original loop each subscript is (PTO windows are plain index ranges)."""
    nest = t.b.sched.program.nest
    out: list[str] = []
    for v in idx:
        origin = nest.origin_of_iv.get(v) if isinstance(v, BlockArgument) else None
        name = None
        if origin is not None and origin.carrier is not None:
            name = t.b.sched.program.loop_names[origin.carrier]
            name = t.b.sched.loop(name).origin if name in t.b.sched.loop_names() else name
        if name is None or name not in t.axes:
            raise _fail(
                s,
                "a subscript that is not a loop's induction variable (PTO windows are "
                "rectangular ranges of rows and columns)",
            )
        out.append(name)
    return out


def _window(t: _Tilewise, s: Statement, tensor: str, subs: list[str]) -> tuple[GlobalView, bool]:
    """The global window of the tile for `tensor[subs]`, and whether it is transposed."""
    tp = t.b.tensors[tensor]
    row, col = t.row, t.col
    if len(subs) == 1 and len(tp.shape) == 1 and subs[0] == row.origin:
        # One value per row: a column window (row stride 1).
        return GlobalView(
            tensor, sympy.expand(row.start), row.extent, sympy.Integer(1), sympy.Integer(1)
        ), False
    if (
        col is None
        or len(subs) != 2
        or len(tp.shape) != 2
        or row.origin not in subs
        or not (set(subs) - {row.origin}) <= t.col_names
        or subs[0] == subs[1]
    ):
        raise _fail(
            s,
            f"{tensor}[{', '.join(subs)}] is not a window of rows {row.origin} and columns "
            f"{', '.join(sorted(t.col_names)) or '-'}",
        )
    if subs[0] == row.origin:
        return GlobalView.of(tp, row.start, col.start, row.extent, col.extent), False
    return GlobalView.of(tp, col.start, row.start, col.extent, row.extent), True


def _value(t: _Tilewise, s: Statement, v: SSAValue, defining: bool = False) -> _Value:
    """`v` on the tile; `defining`: `s` computes it (it is not read from another statement)."""
    found = t.env.get(v)
    if found is not None:
        return found
    program = t.b.sched.program
    if v in program.virtual and not defining:
        arr = program.virtual[v][0]
        if arr not in t.virtual:
            raise _fail(
                s, f"the value {v.name_hint or arr} comes from a statement PTO does not run"
            )
        t.env[v] = t.virtual[arr]
        return t.env[v]
    c = _constant(v)
    if c is not None:
        t.env[v] = _Value("scalar", scalar=c)
        return t.env[v]
    if not isinstance(v, OpResult):
        raise _fail(s, f"the value {v.name_hint or '?'} is not available on the tile")
    op = v.op
    if isinstance(op, k.LoadOp) or op.name == "memref.load":
        tensor = t.b.tensor_of_value.get(op.operands[0])
        if tensor is None:
            raise _fail(s, "a load from a buffer that is not a function argument")
        subs = _subscripts(t, s, op.operands[1:])
        t.dt = t.dt or t.b.tensors[tensor].dtype
        _same_dtype(t, s, t.b.tensors[tensor].dtype)
        view, transposed = _window(t, s, tensor, subs)
        if view.cols == 1 and len(subs) == 1:
            name = t.new_col(f"{tensor.lower()}_col")
            t.items.append(Instr("TLOAD", name, (view,), comment=f"{s.name}: {tensor}[{subs[0]}]"))
            t.env[v] = _Value("col", name)
            return t.env[v]
        if transposed:
            src = _transposed_tile(t, s, f"{tensor.lower()}_t")
            t.items.append(
                Instr("TLOAD", src, (view,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]")
            )
            name = t.new_tile(tensor.lower())
            assert t.col is not None
            tmp = _tmp(t, s, "TTRANS", t.col, t.row)
            t.items.append(Instr("TTRANS", name, (src,), tmp=tmp, comment=f"{s.name}: transpose"))
        else:
            name = t.new_tile(tensor.lower())
            t.items.append(
                Instr("TLOAD", name, (view,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]")
            )
        t.env[v] = _Value("tile", name)
        return t.env[v]
    if op.name in _UNARY:
        x = _value(t, s, op.operands[0])
        _same_dtype(t, s, _elem_dtype(s, v))
        return _unary(t, s, v, _UNARY[op.name], x)
    if op.name in _BINARY:
        _same_dtype(t, s, _elem_dtype(s, v))
        x, y = _value(t, s, op.operands[0]), _value(t, s, op.operands[1])
        instr = _BINARY[op.name]
        if instr == "TMAX" and y.kind == "scalar" and y.scalar == 0 and x.kind == "tile":
            return _unary(t, s, v, "TRELU", x)
        if instr == "TMAX" and x.kind == "scalar" and x.scalar == 0 and y.kind == "tile":
            return _unary(t, s, v, "TRELU", y)
        return _binary(t, s, v, instr, x, y)
    raise _fail(s, f"{op.name} has no PTO instruction")


def _same_dtype(t: _Tilewise, s: Statement, dt: DType) -> None:
    if t.dt is None:
        t.dt = dt
    elif t.dt != dt:
        raise _fail(s, f"values of {t.dt} and {dt} in one nest (PTO ops keep one element type)")


def _transposed_tile(t: _Tilewise, s: Statement, base: str) -> str:
    """A tile of the transposed shape (cols x rows) for a TLOAD before TTRANS."""
    assert t.dt is not None and t.col is not None
    cols = _round_up(t.row.size, ALIGN_BYTES // t.dt.size)
    valid = (t.col.extent, t.row.extent)
    tiled = (t.col.tile_loop is not None, t.row.tile_loop is not None)
    return t.declare(base, t.col.size, cols, valid, tiled, BLayout.RowMajor, "tile")


def _expanded(t: _Tilewise, s: Statement, x: _Value) -> _Value:
    """A column of per-row values as a full tile (TROWEXPAND): the tile-scalar and unary
    instructions take row-major tiles only, and a column tile is column-major. Each element
    then goes through the same operations as its row's value, so results do not change."""
    if x.kind != "col":
        return x
    name = t.new_tile("e")
    t.items.append(Instr("TROWEXPAND", name, (x.tile,), comment=f"{s.name}: per-row values"))
    return _Value("tile", name)


def _unary(t: _Tilewise, s: Statement, v: SSAValue, instr: str, x: _Value) -> _Value:
    if x.kind == "scalar":
        raise _fail(s, f"{instr} of a constant (fold it in the Krnl program)")
    x = _expanded(t, s, x)
    name = t.new_tile("t")
    t.items.append(Instr(instr, name, (x.tile,), comment=f"{s.name}: {v.name_hint or instr}"))
    t.env[v] = _Value(x.kind, name)
    return t.env[v]


def _binary(t: _Tilewise, s: Statement, v: SSAValue, instr: str, x: _Value, y: _Value) -> _Value:
    note = f"{s.name}: {v.name_hint or instr}"
    if x.kind == y.kind == "scalar":
        raise _fail(s, "arithmetic on constants only (fold it in the Krnl program)")
    if x.kind == y.kind:
        name = t.new_tile("t") if x.kind == "tile" else t.new_col("c")
        t.items.append(Instr(instr, name, (x.tile, y.tile), comment=note))
        t.env[v] = _Value(x.kind, name)
        return t.env[v]
    if "scalar" in (x.kind, y.kind):
        tile, c = (x, y) if y.kind == "scalar" else (y, x)
        tile = _expanded(t, s, tile)
        name = t.new_tile("t")
        if y.kind == "scalar" or instr in _COMMUTES:
            t.items.append(Instr(instr + "S", name, (tile.tile, Scalar(c.scalar)), comment=note))
        elif instr == "TDIV":
            t.items.append(Instr("TDIVS", name, (Scalar(c.scalar), tile.tile), comment=note))
        else:
            raise _fail(s, "a constant minus a tile has no PTO instruction (write x * -1 + c)")
        t.env[v] = _Value(tile.kind, name)
        return t.env[v]
    # A tile and a column of per-row values: TROWEXPAND<OP>.
    full, per_row = (x, y) if x.kind == "tile" else (y, x)
    if x.kind == "col" and instr not in _COMMUTES:
        raise _fail(s, f"a per-row value {instr[1:].lower()} a tile has no PTO instruction")
    name = t.new_tile("t")
    op = "TROWEXPAND" + instr[1:]
    tmp = _tmp(t, s, op, t.row, None)
    t.items.append(Instr(op, name, (full.tile, per_row.tile), tmp=tmp, comment=note))
    t.env[v] = _Value("tile", name)
    return t.env[v]


def _tmp(t: _Tilewise, s: Statement, instr: str, rows: _Axis, cols: _Axis | None) -> str | None:
    """A tmp tile for `instr` whose source tile has `rows` x `cols` (None: one column), at
    the nest's static tile size (None when the instruction takes none); its symbolic size
    is derived over the tiles from the same axes."""
    assert t.dt is not None
    rule = tmp_rules.TMP_RULES.get(instr)
    if rule is None:
        return None
    sizes: dict[str, int] = {}
    if "valid_row" in rule.params:
        sizes["valid_row"] = rows.size
    if "valid_col" in rule.params:
        sizes["valid_col"] = cols.size if cols is not None else 1
    tt = tmp_rules.tmp_tile(instr, t.b.arch, dtype=t.dt, **sizes)
    name = t.b.tile(f"{instr.lower()}_tmp", tt, "tmp")
    t.b.tmp_needs[name] = (instr, t.dt, s, rows.origin, cols.origin if cols else "")
    t.b.tmp_static[name] = (rows.size, cols.size if cols is not None else 1)
    return name


def _row_reduction(t: _Tilewise, s: Statement) -> None:
    """`krnl.yield old op e` along the column loop: a TROW* reduction into a column."""
    assert s.iterate is not None
    program = t.b.sched.program
    term = s.anchor
    if len(term.operands) != 1 or len(s.iterate.iter_args) != 1:
        raise _fail(s, "an iterate carrying several values (one reduction per iterate)")
    carried = s.iterate.iter_args[0]
    arr = program.virtual[carried][0]
    y = term.operands[0]
    if t.col is None or not t.col_names & set(s.dim_origins or s.dims):
        raise _fail(s, "a reduction that is not along the column loop")
    if not isinstance(y, OpResult) or y.op.name not in _ROW_REDUCE:
        raise _fail(s, "a reduction that is not +, max or min")
    op = y.op
    if op.operands[0] is carried:
        e = op.operands[1]
    elif op.operands[1] is carried:
        e = op.operands[0]
    else:
        raise _fail(s, "a yield that does not combine the carried value")
    x = _value(t, s, e)
    if x.kind != "tile":
        raise _fail(s, "a reduction of a value that is not a tile of the nest")
    instr = _ROW_REDUCE[op.name]
    red = t.new_col(instr.lower()[4:])
    tmp = _tmp(t, s, instr, t.row, t.col)
    t.items.append(
        Instr(instr, red, (x.tile,), tmp=tmp, comment=f"{s.name}: {y.name_hint or instr}")
    )
    init = t.inits.get(arr)
    if init is None:
        raise _fail(s, "an iter_args reduction without its initial value")
    if init != _IDENTITY[instr]:
        combine = {"TROWSUM": "TADDS", "TROWMAX": "TMAXS", "TROWMIN": "TMINS"}[instr]
        out = t.new_col(instr.lower()[4:])
        t.items.append(
            Instr(combine, out, (red, Scalar(init)), comment=f"{s.name}: with the initial value")
        )
        red = out
    t.virtual[arr] = _Value("col", red)


def _store(t: _Tilewise, s: Statement, tensor: str, subs: list[str], value: _Value) -> None:
    if value.kind == "scalar":
        raise _fail(s, "a store of a constant (TEXPANDS then TSTORE is not emitted yet)")
    view, transposed = _window(t, s, tensor, subs)
    _same_dtype(t, s, t.b.tensors[tensor].dtype)
    if value.kind == "col":
        if view.cols != 1:
            raise _fail(s, "a per-row value stored into a tile window")
        t.items.append(
            Instr("TSTORE", view, (value.tile,), comment=f"{s.name}: {tensor}[{subs[0]}]")
        )
        return
    src = value.tile
    if transposed:
        dst = _transposed_tile(t, s, f"{tensor.lower()}_t")
        tmp = _tmp(t, s, "TTRANS", t.row, t.col)
        t.items.append(Instr("TTRANS", dst, (src,), tmp=tmp, comment=f"{s.name}: transpose"))
        src = dst
    t.items.append(Instr("TSTORE", view, (src,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]"))


# ------------------------------------------------------------------ matmul


def _matmul(
    b: _Builder, axes: dict[str, _Axis], order: list[str], statements: list[Statement]
) -> list[Item]:
    """C[i, j] = 0, then C[i, j] += A[i, k] * B[k, j] over k: the cube's tile flow."""
    if not statements:
        return []
    update = statements[-1]
    anchor = update.anchor
    form = _matmul_form(b, update)
    if form is None:
        raise _fail(update, "a 3-deep nest that is not C[i, j] += A[i, k] * B[k, j]")
    c_name, a_name, b_name, (i, j, kk) = form
    inits = statements[:-1]
    if len(inits) != 1 or not _zero_store(b, inits[0], c_name, i, j):
        raise _fail(
            update,
            f"the matmul accumulates into {c_name}, which the nest does not set to 0 first "
            "(the cube accumulates in L0C, which starts from the first product)",
            hint=f"store 0.0 into {c_name}[{i}, {j}] in the (i, j) loops before the k loop",
        )
    del anchor
    ai, aj, ak = axes[i], axes[j], axes[kk]
    if order.index(kk) != 2:
        raise _fail(update, f"the reduction loop {kk} is not innermost of the point loops")
    ta, tb, tc = (b.tensors[x].dtype for x in (a_name, b_name, c_name))
    allowed = {("f16", "f32"), ("bf16", "f32"), ("f32", "f32"), ("i8", "i32")}
    if ta != tb or (ta.name, tc.name) not in allowed:
        raise _fail(
            update,
            f"matmul of {ta} x {tb} into {tc}: the cube computes f32 from f16, bf16 or f32, "
            "and i32 from i8",
        )
    m, n, kd = ai.size, aj.size, ak.size
    for what, v in (("m", m), ("n", n), ("k", kd)):
        if not 1 <= v <= 4095:
            raise _fail(update, f"matmul tile {what} = {v} is outside [1, 4095]")
    c0 = 16
    mm, nn = _round_up(m, c0), _round_up(n, c0)
    kk_size = _round_up(kd, ALIGN_BYTES // ta.size)
    a_l1 = b.tile(
        "a_l1_",
        TileType(Loc.Mat, ta, mm, kk_size, BLayout.ColMajor, None, None, SLayout.RowMajor),
        "mat",
    )
    b_l1 = b.tile(
        "b_l1_",
        TileType(Loc.Mat, tb, kk_size, nn, BLayout.ColMajor, None, None, SLayout.RowMajor),
        "mat",
    )
    a_l0 = b.tile("a_l0_", left_tile(ta, mm, kk_size, b.arch.name, None, None), "left")
    b_l0 = b.tile("b_l0_", right_tile(tb, kk_size, nn, None, None), "right")
    c_l0 = b.tile("c_l0_", acc_tile(tc, mm, nn, None, None), "acc")
    A, B, C = b.tensors[a_name], b.tensors[b_name], b.tensors[c_name]
    vm, vn = ai.extent, aj.extent

    def step(k_start: sympy.Expr, vk: sympy.Expr, first: bool) -> list[Item]:
        return [
            SetValid(a_l1, vm, vk),
            SetValid(b_l1, vk, vn),
            SetValid(a_l0, vm, vk),
            SetValid(b_l0, vk, vn),
            Instr(
                "TLOAD",
                a_l1,
                (GlobalView.of(A, ai.start, k_start, vm, vk),),
                comment=f"{update.name}: {a_name}[{i}, {kk}]",
            ),
            Instr(
                "TLOAD",
                b_l1,
                (GlobalView.of(B, k_start, aj.start, vk, vn),),
                comment=f"{update.name}: {b_name}[{kk}, {j}]",
            ),
            Instr("TMOV", a_l0, (a_l1,)),
            Instr("TMOV", b_l0, (b_l1,)),
            Instr(
                "TMATMUL" if first else "TMATMUL_ACC",
                c_l0,
                (a_l0, b_l0),
                comment=f"{update.name}: {c_name} += {a_name} * {b_name}",
            ),
        ]

    items: list[Item] = [SetValid(c_l0, vm, vn)]
    k_lo = ak.start if ak.tile_loop is None else _bounds(ak.tile_loop.lbs, {}, "k", True)
    k_hi = (
        (ak.start + ak.extent)
        if ak.tile_loop is None
        else _bounds(ak.tile_loop.ubs, {}, "k", False)
    )
    if ak.tile_loop is None:
        items += step(k_lo, ak.extent, True)
    else:
        var = _sym(ak.tile_loop.name)
        first_vk = sympy.Min(kd, k_hi - k_lo)
        items += step(k_lo, first_vk, True)
        rest = step(var, sympy.Min(kd, k_hi - var), False)
        items.append(Loop(ak.tile_loop.name, k_lo + kd, k_hi, kd, rest, comment=f"tiles of {kk}"))
    items.append(
        Instr(
            "TSTORE",
            GlobalView.of(C, ai.start, aj.start, vm, vn),
            (c_l0,),
            comment=f"{update.name}: {c_name}[{i}, {j}]",
        )
    )
    return items


def _matmul_form(b: _Builder, s: Statement) -> tuple[str, str, str, tuple[str, str, str]] | None:
    anchor = s.anchor
    if not (isinstance(anchor, k.StoreOp) or anchor.name == "memref.store"):
        return None
    val = anchor.operands[0]
    if not isinstance(val, OpResult) or val.op.name not in ("arith.addf", "arith.addi"):
        return None
    add = val.op
    nest = b.sched.program.nest

    def loops_of(op: Operation) -> list[str] | None:
        out: list[str] = []
        first = 2 if op is anchor else 1  # a store's value and memref come first
        for v in op.operands[first:]:
            origin = nest.origin_of_iv.get(v) if isinstance(v, BlockArgument) else None
            if origin is None or origin.carrier is None:
                return None
            out.append(
                b.sched.loop(b.sched.program.loop_names[origin.carrier]).origin
                if b.sched.program.loop_names[origin.carrier] in b.sched.loop_names()
                else b.sched.program.loop_names[origin.carrier]
            )
        return out

    c_store = loops_of(anchor)
    for old, prod in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
        if not (
            isinstance(old, OpResult)
            and (isinstance(old.op, k.LoadOp) or old.op.name == "memref.load")
        ):
            continue
        if old.op.operands[0] is not anchor.operands[1] or loops_of(old.op) != c_store:
            continue
        if not (isinstance(prod, OpResult) and prod.op.name in ("arith.mulf", "arith.muli")):
            continue
        fa, fb = (_unwrap(x) for x in prod.op.operands)
        if not (isinstance(fa, OpResult) and isinstance(fb, OpResult)):
            continue
        if not all(isinstance(x.op, k.LoadOp) or x.op.name == "memref.load" for x in (fa, fb)):
            continue
        la, lb = loops_of(fa.op), loops_of(fb.op)
        if c_store is None or la is None or lb is None or len(c_store) != 2:
            return None
        i, j = c_store
        ks = [x for x in la if x not in (i, j)]
        if len(ks) != 1 or la != [i, ks[0]] or lb != [ks[0], j]:
            return None
        names = [b.tensor_of_value.get(x.op.operands[0]) for x in (old, fa, fb)]
        if None in names:
            return None
        return names[0], names[1], names[2], (i, j, ks[0])  # type: ignore[return-value]
    return None


def _unwrap(v: SSAValue) -> SSAValue:
    """The value under an arith.extf (the cube widens f16/bf16 products to f32 itself)."""
    if isinstance(v, OpResult) and v.op.name == "arith.extf":
        return v.op.operands[0]
    return v


def _zero_store(b: _Builder, s: Statement, c_name: str, i: str, j: str) -> bool:
    anchor = s.anchor
    if not (isinstance(anchor, k.StoreOp) or anchor.name == "memref.store"):
        return False
    if b.tensor_of_value.get(anchor.operands[1]) != c_name:
        return False
    return _constant(anchor.operands[0]) == 0


# ------------------------------------------------------------------ tile buffers


def _buffers(
    b: _Builder, values: Mapping[str, sympy.Expr], statements: list[Statement]
) -> list[Item]:
    """Statements at tile level that move whole tile buffers (onnx-mlir's tiled copies):
    ``memref.alloca`` a buffer, ``krnl.copy_to_tile_buffer`` (TLOAD of the part inside the
    source, then TFILLPAD with the pad value; ``transpose`` through TTRANS),
    ``krnl.copy_from_tile_buffer`` (TSTORE of the part inside the destination)."""
    items: list[Item] = []
    tiles: dict[SSAValue, str] = {}  # buffer value -> its tile (padded, full valid shape)
    for s in statements:
        op = s.anchor
        if op.name in ("memref.alloca", "memref.alloc"):
            t = op.results[0].type
            assert isinstance(t, MemRefType)
            shape = t.get_shape()
            if len(shape) != 2 or min(shape) < 1:
                raise _fail(s, f"a tile buffer of shape {shape} (PTO tiles are 2-D and static)")
            dt = dtype(str(t.element_type))
            cols = _round_up(shape[1], ALIGN_BYTES // dt.size)
            tiles[op.results[0]] = b.tile(
                "buf", TileType(Loc.Vec, dt, shape[0], cols, BLayout.RowMajor, None, None), "tile"
            )
        elif isinstance(op, k.CopyToTileBufferOp):
            items += _copy_to(b, s, op, values, tiles)
        elif isinstance(op, k.CopyFromTileBufferOp):
            buf = tiles.get(op.buffer)
            tensor = b.tensor_of_value.get(op.dest)
            if buf is None or tensor is None:
                raise _fail(
                    s, "a copy from a buffer this nest did not fill, or into a local buffer"
                )
            starts = [_index_value(b, s, v, values) for v in op.starts]
            tp = b.tensors[tensor]
            buf_type = next(x.type for x in b.tiles if x.name == buf)
            tile = _ints(op.tileSize) or [buf_type.rows, _buffer_cols(s, op.buffer)]
            w = [sympy.Min(tile[d], tp.shape[d] - starts[d]) for d in range(2)]
            items.append(SetValid(buf, w[0], w[1]))
            items.append(
                Instr(
                    "TSTORE",
                    GlobalView.of(tp, starts[0], starts[1], w[0], w[1]),
                    (buf,),
                    comment=f"{s.name}: copy_from_tile_buffer into {tensor}",
                )
            )
        else:
            raise _fail(s, f"{op.name} at tile level has no PTO pattern")
    return items


def _buffer_cols(s: Statement, buf: SSAValue) -> int:
    t = buf.type
    assert isinstance(t, MemRefType)
    return t.get_shape()[1]


def _ints(attr: Any) -> list[int] | None:
    if attr is None:
        return None
    return [int(x.value.data) for x in attr.data]


def _index_value(
    b: _Builder, s: Statement, v: SSAValue, values: Mapping[str, sympy.Expr]
) -> sympy.Expr:
    """A start index of a copy: a constant, or the value of a tile loop."""
    c = _constant(v)
    if c is not None:
        return sympy.Integer(int(c))
    if isinstance(v, OpResult) and isinstance(v.op, k.GetInductionVarValueOp):
        program = b.sched.program
        for h, r in zip(v.op.loops, v.op.results, strict=True):
            if r is v:
                name = program.handle_names.get(h)
                if name is not None and name in b.sched.loop_names():
                    vid = b.sched.loop(name).vid
                    if vid in values:
                        return values[vid]
    raise _fail(s, "a copy whose start is not a constant or a tile loop's value")


_PADS = {0.0: "Zero", float("inf"): "Max", float("-inf"): "Min"}


def _copy_to(
    b: _Builder,
    s: Statement,
    op: k.CopyToTileBufferOp,
    values: Mapping[str, sympy.Expr],
    tiles: dict[SSAValue, str],
) -> list[Item]:
    from polykrnl.tiles.types import PadValue

    buf = tiles.get(op.buffer)
    tensor = b.tensor_of_value.get(op.source)
    if buf is None or tensor is None:
        raise _fail(s, "a copy into a buffer allocated elsewhere, or from a local buffer")
    tp = b.tensors[tensor]
    if len(tp.shape) != 2:
        raise _fail(s, f"a copy from the {len(tp.shape)}-D {tensor} (PTO windows are 2-D)")
    pad = _constant(op.padValue)
    kind = _PADS.get(float(pad)) if pad is not None else None
    if kind is None:
        raise _fail(
            s,
            f"pad value {pad}: a PTO tile pads with 0, the type's maximum or its minimum",
            hint="pad with 0.0 (or +-inf)",
        )
    if _ints(op.padToNext) is not None:
        raise _fail(s, "padToNext (TFILLPAD pads the whole tile)", hint="drop padToNext")
    starts = [_index_value(b, s, v, values) for v in op.starts]
    decl = next(x for x in b.tiles if x.name == buf)
    tile = _ints(op.tileSize) or [decl.type.rows, _buffer_cols(s, op.buffer)]
    transpose = op.transpose is not None and op.transpose.value.data
    src_dims = [1, 0] if transpose else [0, 1]
    read = [sympy.Min(tile[d], tp.shape[src_dims[d]] - starts[src_dims[d]]) for d in range(2)]
    dt = decl.type.dtype
    raw_type = TileType(Loc.Vec, dt, decl.type.rows, decl.type.cols, BLayout.RowMajor, None, None)
    raw = b.tile("raw", raw_type, "tile")
    # The buffer pads: its type carries the pad value (TFILLPAD fills outside the source's
    # valid region with it).
    for x in b.tiles:
        if x.name == buf:
            x.type = TileType(
                Loc.Vec,
                dt,
                decl.type.rows,
                decl.type.cols,
                BLayout.RowMajor,
                None,
                None,
                pad=PadValue[kind],
            )
    note = f"{s.name}: copy_to_tile_buffer from {tensor}"
    items: list[Item] = [SetValid(buf, tile[0], tile[1])]
    if not transpose:
        items += [
            SetValid(raw, read[0], read[1]),
            Instr(
                "TLOAD",
                raw,
                (GlobalView.of(tp, starts[0], starts[1], read[0], read[1]),),
                comment=note,
            ),
        ]
    else:
        per_block = ALIGN_BYTES // dt.size
        src_type = TileType(
            Loc.Vec, dt, tile[1], _round_up(tile[0], per_block), BLayout.RowMajor, None, None
        )
        src = b.tile("raw_t", src_type, "tile")
        tmp_type = tmp_rules.tmp_tile(
            "TTRANS", b.arch, dtype=dt, valid_row=tile[1], valid_col=tile[0]
        )
        tmp = b.tile("ttrans_tmp", tmp_type, "tmp")
        b.tmp_needs[tmp] = ("TTRANS", dt, s, "", "")
        b.tmp_static[tmp] = (tile[1], tile[0])
        items += [
            SetValid(src, read[1], read[0]),
            # Starts are in the source's dimension order; buffer dim d reads source dim 1 - d.
            Instr(
                "TLOAD",
                src,
                (GlobalView.of(tp, starts[0], starts[1], read[1], read[0]),),
                comment=note,
            ),
            SetValid(raw, read[0], read[1]),
            Instr("TTRANS", raw, (src,), tmp=tmp, comment=f"{s.name}: transpose"),
        ]
    items.append(Instr("TFILLPAD", buf, (raw,), comment=f"{s.name}: pad with {pad}"))
    return items


# ------------------------------------------------------------------ tmp sizes


def _tmp_sizes(b: _Builder) -> dict[str, symbolic.SymbolicSize]:
    """Each tmp tile's bytes as a function of the problem sizes: the rule at each tile's
    valid extents, maximized over the tiles (exactly where symbolic.max_over_tiles can)."""
    out: dict[str, symbolic.SymbolicSize] = {}
    sizes_static = b.tmp_static
    for name, (instr, dt, s, row, col) in b.tmp_needs.items():
        if not row:
            # A tile-buffer copy: the buffer's static shape bounds every tile's need.
            rows, cols = b.tmp_static[name]
            e = tmp_rules.tmp_bytes(instr, b.arch, dtype=dt, valid_row=rows, valid_col=cols)
            out[name] = symbolic.SymbolicSize(sympy.Integer(int(e)), (), exact=False)
            continue
        extents = symbolic.tile_extents(b.sched, s)
        vr, vc = (
            sympy.Symbol("valid_row", integer=True, positive=True),
            sympy.Symbol("valid_col", integer=True, positive=True),
        )
        rule = tmp_rules.TMP_RULES[instr]
        sizes: dict[str, Any] = {}
        ext: dict[str, isl.PwAff] = {}
        if "valid_row" in rule.params:
            sizes["valid_row"] = vr
            ext["valid_row"] = extents[row]
        if "valid_col" in rule.params:
            sizes["valid_col"] = vc if col else 1
            if col:
                ext["valid_col"] = extents[col]
        # An extent that is the same on every tile (a loop that is not blocked) is a
        # number: the rule's piecewise cases on it resolve before maximizing.
        for key, pa in list(ext.items()):
            c = _constant_pw_aff(pa)
            if c is not None:
                sizes[key] = c
                del ext[key]
        e = tmp_rules.tmp_bytes(instr, b.arch, dtype=dt, **sizes)
        # The extents of a tile never exceed the static tile shape: the rule's cases
        # that cannot happen go (TROWEXPAND's size drops at 256 rows, for instance).
        bounds = {vr: sizes_static[name][0], vc: sizes_static[name][1]}
        e = _resolve_cases(
            sympy.sympify(e), {x: n for x, n in bounds.items() if x in ext_syms(ext, vr, vc)}
        )
        if not ext or not sympy.sympify(e).free_symbols:
            out[name] = symbolic.SymbolicSize(sympy.Integer(int(e)), ())
            continue
        out[name] = symbolic.max_over_tiles(e, ext)
    return out


def _constant_pw_aff(pa: isl.PwAff) -> int | None:
    """The value of `pa` if it is one integer on its whole domain."""
    values: set[int] = set()
    for _dom, aff in pa.get_pieces():
        if not aff.is_cst():
            return None
        v = aff.get_constant_val()
        if not v.is_int():
            return None
        values.add(int(v.to_python()))
    return values.pop() if len(values) == 1 else None


def ext_syms(ext: Mapping[str, isl.PwAff], vr: sympy.Symbol, vc: sympy.Symbol) -> set[sympy.Symbol]:
    return {x for key, x in (("valid_row", vr), ("valid_col", vc)) if key in ext}


def _resolve_cases(e: sympy.Expr, upper: Mapping[sympy.Symbol, int]) -> sympy.Expr:
    """`e` with each Piecewise replaced by its branch when, for every value of its symbols
    in [1, upper], the same branch applies (checked on every integer point)."""

    def resolve(pw: sympy.Piecewise) -> sympy.Expr:
        syms = sorted(pw.free_symbols & set(upper), key=str)
        if not syms or any(x not in upper for x in pw.free_symbols):
            return pw
        points = [{}]  # type: list[dict[sympy.Symbol, int]]
        for x in syms:
            points = [{**p, x: v} for p in points for v in range(1, upper[x] + 1)]
            if len(points) > 100_000:
                return pw
        chosen: set[int] = set()
        for p in points:
            for n, (_branch, cond) in enumerate(pw.args):
                if bool(sympy.sympify(cond).subs(p)):
                    chosen.add(n)
                    break
        if len(chosen) != 1:
            return pw
        return pw.args[chosen.pop()][0]

    return e.replace(lambda x: isinstance(x, sympy.Piecewise), resolve)

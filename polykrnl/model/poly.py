"""Krnl -> PolyProgram: statements, isl iteration domains, access relations, schedule.

A *statement* is one memory op (a store, krnl.memset, a tile copy, ...) with
the pure ops that compute its operands. Its iteration domain is an
``isl.Set`` named after it (``S3[i, j]``) over the values of the loops that
enclose it in the loop nest of :mod:`polykrnl.model.nest` (the nest the
function's recipe describes), one dimension per original loop:

* the original induction variable (named as in the source, ``i``) when the
  statement sits inside the loop that carries it;
* otherwise the innermost loop of that original loop that encloses the
  statement (a tile loop, for statements that the recipe places between a
  tile loop and its point loops), named after the loop (``ib``).

The domain is the exact projection of the loop bounds (steps, ``max``/``min``
bounds, tile and point loops, bounds on enclosing induction variables) on
those dimensions. Parameters are the function's index arguments, the dynamic
sizes of its memref arguments (``A_d0``, shown to users as ``A.0``), and other
values fixed for the whole call that bounds depend on.

Values that cross statements (a loaded value used in a nested loop, the
``iter_args`` of an iterate, the results of an iterate) become *virtual
arrays*, indexed by the iteration of the loops around their definition, so
that the dependences between statements stay exact. Accesses that are not
affine (a subscript loaded from memory, a region inside ``scf.if``) are
may-accesses of the whole array.

The original schedule is an isl schedule tree: one band (under a mark named
after the loop) per concrete loop of the nest, sequence nodes for textual
order. It is the program as written, recipe included.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

import islpy as isl
from xdsl.dialects import affine, arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from polykrnl.display import isl_latex, latex_mono
from polykrnl.errors import Diagnostic, SourceLocation, UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.ir import Function, int_list, location_of
from polykrnl.model.nest import (
    Chain,
    IVBound,
    Loop,
    LoopNest,
    MapBound,
    Stmt,
    YieldPoint,
    build_nest,
    checked_nest,
    value_name,
)

#: The one isl context of the process (islpy parses strings into it).
CTX: isl.Context = isl.DEFAULT_CONTEXT

StatementKind = Literal["op", "value", "init", "yield"]


# ------------------------------------------------------------------ values


@dataclass(frozen=True)
class Access:
    """One access of a statement: `relation` maps statement instances to array elements."""

    array: str
    relation: isl.Map
    write: bool
    # A may-access might not touch every element of `relation` (not affine,
    # inside a branch, or a region that is over-approximated).
    may: bool
    op: Operation
    # For an affine access: each subscript as an isl expression of the values of
    # the statement's loops (`_l0`, `_l1`, ... for Statement.loops in order).
    subscripts: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return f"{'may-' if self.may else ''}{'write' if self.write else 'read'} {self.relation}"


@dataclass(frozen=True)
class ArrayInfo:
    """A memref of the function, or a virtual array holding a value between statements."""

    name: str
    shape: tuple[int | str | None, ...]
    element: str
    virtual: bool = False
    value: SSAValue | None = None
    # For a buffer allocated inside loops: those loops. Each of their iterations
    # has its own buffer, so accesses are indexed by them first (privatization).
    site: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Statement:
    """One polyhedral statement: the ops it runs for each point of its domain."""

    name: str
    kind: StatementKind
    ops: tuple[Operation, ...]
    anchor: Operation
    domain: isl.Set
    dims: tuple[str, ...]
    accesses: tuple[Access, ...]
    # The concrete loops around the statement (outermost first) in the nest the
    # function describes, and the map from its instances to their values.
    loops: tuple[str, ...]
    loop_values: isl.Map
    location: SourceLocation | None
    # The original loop (its name before any block) of each dimension, and the
    # loop whose value it is (the original loop itself, or a tile loop).
    dim_origins: tuple[str, ...] = ()
    dim_loops: tuple[str, ...] = ()
    # The loop value of each dimension: the original loop's name for an original
    # induction variable, else the name of the (tile) loop.
    dim_vids: tuple[str, ...] = ()
    # The loop value of each loop of `loops` (same convention as dim_vids).
    loop_vids: tuple[str, ...] = ()
    # For "yield" and "init" statements: the iterate whose iter_args they set.
    iterate: k.IterateOp | None = None
    # Values this statement stores into virtual arrays: (value, array name).
    exports: tuple[tuple[SSAValue, str], ...] = ()
    # Values read from virtual arrays, with the map to the defining instance.
    imports: tuple[tuple[SSAValue, str], ...] = ()

    @property
    def label(self) -> str:
        """`S3` plus what it is: `S3 (krnl.store, line 12)`."""
        where = f", line {self.location.line}" if self.location else ""
        return f"{self.name} ({self.anchor.name}{where})"

    def __repr__(self) -> str:
        return f"<Statement {self.label}: {self.domain}>"


@dataclass(frozen=True)
class PLoop:
    """A concrete loop of the program as written, with what runs in it."""

    name: str
    loop: Loop
    body: tuple[PNode, ...]


@dataclass(frozen=True)
class PStmt:
    name: str


PNode = PLoop | PStmt


@dataclass(frozen=True, eq=False)
class PolyProgram:
    """The polyhedral model of one Krnl function (see the module docstring)."""

    function: Function
    nest: LoopNest
    statements: tuple[Statement, ...]
    arrays: dict[str, ArrayInfo]
    # isl parameter names, and how users name them (`A_d0` -> `A.0`).
    params: tuple[str, ...]
    param_display: dict[str, str]
    context: isl.Set
    tree: tuple[PNode, ...]
    # Name of every concrete loop of the nest, and of every loop handle.
    loop_names: dict[Loop, str] = field(default_factory=dict)
    handle_names: dict[SSAValue, str] = field(default_factory=dict)
    # SSA values that are parameters (index arguments, dynamic sizes, ...).
    symbols: dict[SSAValue, str] = field(default_factory=dict)
    # Values kept in virtual arrays: value -> (array, loops of the defining dims).
    virtual: dict[SSAValue, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    def domain_params(self) -> list[str]:
        """The parameters the iteration domains depend on (array sizes alone do not count)."""
        used: set[str] = set()
        for s in self.statements:
            d = s.domain
            for pos in range(d.dim(isl.dim_type.param)):
                if d.involves_dims(isl.dim_type.param, pos, 1):
                    used.add(str(d.get_dim_name(isl.dim_type.param, pos)))
        return [p for p in self.params if p in used]

    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def domain(self) -> isl.UnionSet:
        u = isl.UnionSet.empty(isl.Space.params_alloc(CTX, 0))
        for s in self.statements:
            u = u.union(isl.UnionSet.from_set(s.domain))
        return u

    def _accesses(self, write: bool, may: bool | None) -> isl.UnionMap:
        u = isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
        for s in self.statements:
            for a in s.accesses:
                if a.write == write and (may is None or a.may == may):
                    u = u.union(isl.UnionMap.from_map(a.relation))
        return u

    @property
    def reads(self) -> isl.UnionMap:
        """Every read (must and may)."""
        return self._accesses(False, None)

    @property
    def must_writes(self) -> isl.UnionMap:
        return self._accesses(True, False)

    @property
    def may_writes(self) -> isl.UnionMap:
        """Every write (must writes included, as isl's dataflow analysis expects)."""
        return self._accesses(True, None)

    @property
    def schedule(self) -> isl.Schedule:
        """The schedule tree of the program as written (recipe included)."""
        return build_tree(
            self.tree,
            {s.name: s for s in self.statements},
            lambda loop, stmt: _loop_value(stmt, loop),
        )

    def __repr__(self) -> str:
        return f"<PolyProgram @{self.function.name}: {len(self.statements)} statements>"

    def _repr_latex_(self) -> str:
        # One line per domain and per access, in isl's LaTeX notation.
        lines = [
            latex_mono(f"@{self.function.name}") + r" & \text{(iteration domains and accesses)}"
        ]
        for st in self.statements:
            where = f", line {st.location.line}" if st.location else ""
            lines.append(latex_mono(st.name) + r" & " + latex_mono(f"{st.anchor.name}{where}"))
            lines.append(r"\quad\text{domain} & " + isl_latex(st.domain))
            for a in st.accesses:
                what = ("may-" if a.may else "") + ("write" if a.write else "read")
                lines.append(r"\quad\text{" + what + "} & " + isl_latex(a.relation))
        return "$$\\begin{array}{ll}\n" + " \\\\\n".join(lines) + "\n\\end{array}$$"


def _renamed(s: Statement, name: str) -> Statement:
    def m(x: isl.Map) -> isl.Map:
        return x.set_tuple_name(isl.dim_type.in_, name)

    return replace(
        s,
        name=name,
        domain=s.domain.set_tuple_name(name),
        loop_values=m(s.loop_values),
        accesses=tuple(replace(a, relation=m(a.relation)) for a in s.accesses),
    )


def _loop_value(stmt: Statement, loop: str) -> isl.PwAff:
    pos = stmt.loops.index(loop)
    return stmt.loop_values.as_pw_multi_aff().get_pw_aff(pos)


def build_tree(
    nodes: Sequence[PNode],
    statements: dict[str, Statement],
    value: Callable[[str, Statement], isl.PwAff],
    marks: Callable[[str, isl.Schedule], isl.Schedule] | None = None,
) -> isl.Schedule:
    """An isl schedule tree: a marked single-member band per loop, sequences for order.

    `value(loop, stmt)` is the value of `loop` for the instances of `stmt`;
    `marks` may decorate the band of each loop (parallel, unroll). Loops with no
    statement inside have no band (they do nothing).
    """
    parts = [p for p in (_subtree(n, statements, value, marks) for n in nodes) if p is not None]
    if not parts:
        return isl.Schedule.from_domain(isl.UnionSet.empty(isl.Space.params_alloc(CTX, 0)))
    return _sequence(parts)


def _sequence(parts: list[isl.Schedule]) -> isl.Schedule:
    """parts[0]; parts[1]; ... merged pairwise (one long chain of merges is quadratic)."""
    while len(parts) > 1:
        merged = [a.sequence(b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _stmts_in(node: PNode) -> Iterator[str]:
    if isinstance(node, PStmt):
        yield node.name
    else:
        for b in node.body:
            yield from _stmts_in(b)


def _subtree(
    node: PNode,
    statements: dict[str, Statement],
    value: Callable[[str, Statement], isl.PwAff],
    marks: Callable[[str, isl.Schedule], isl.Schedule] | None,
) -> isl.Schedule | None:
    if isinstance(node, PStmt):
        return isl.Schedule.from_domain(isl.UnionSet.from_set(statements[node.name].domain))
    inner = [p for p in (_subtree(b, statements, value, marks) for b in node.body) if p is not None]
    if not inner:
        return None
    body = _sequence(inner)
    pieces = [isl.UnionPwAff.from_pw_aff(value(node.name, statements[s])) for s in _stmts_in(node)]
    while len(pieces) > 1:
        pieces = [a.union_add(b) for a, b in zip(pieces[::2], pieces[1::2], strict=False)] + (
            [pieces[-1]] if len(pieces) % 2 else []
        )
    upa = pieces[0]
    sched = body.insert_partial_schedule(isl.MultiUnionPwAff.from_union_pw_aff(upa))
    band = sched.get_root().child(0)
    sched = band.insert_mark(isl.Id(node.name)).get_schedule()
    if marks is not None:
        sched = marks(node.name, sched)
    return sched


# ------------------------------------------------------------------ names


_NAME_OK = re.compile(r"[^A-Za-z0-9_]")


def isl_name(name: str) -> str:
    """`name` as an isl identifier (letters, digits, `_`; not starting with a digit)."""
    n = _NAME_OK.sub("_", name) or "v"
    return n if not n[0].isdigit() else f"v{n}"


class _Names:
    """Unique names within one function."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def fresh(self, base: str) -> str:
        base = isl_name(base)
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name


def name_loops(
    nest: LoopNest, names: _Names | None = None
) -> tuple[dict[Loop, str], dict[SSAValue, str]]:
    """The name of every concrete loop (documented in the Schedule docs).

    An unblocked loop is named by its induction variable; the loops of
    `%t, %p = krnl.block %L` by the handles' SSA names, else `<L>_t` for the
    tile loop while the point loop keeps L's name.
    """
    names = names or _Names()
    of_handle: dict[SSAValue, str] = {}
    for op in nest.function.op.walk():
        if isinstance(op, k.IterateOp):
            for e in op.entries:
                if e.handle in nest.origins and e.handle not in of_handle:
                    of_handle[e.handle] = names.fresh(nest.origins[e.handle].name)
    for op in nest.function.op.walk():
        if isinstance(op, k.BlockOp) and op.loop in of_handle:
            base = of_handle[op.loop]
            tile, point = op.loop_block, op.loop_local
            of_handle[tile] = names.fresh(tile.name_hint or f"{base}_t")
            of_handle[point] = names.fresh(point.name_hint) if point.name_hint else base
    loops = {lp: of_handle[lp.handle] for lp in _all_loops(nest) if lp.handle in of_handle}
    return loops, of_handle


def _all_loops(nest: LoopNest) -> Iterator[Loop]:
    """Every concrete loop, including those hidden from the roots by placement."""
    seen: set[int] = set()
    for lp in (*nest.loops(), *nest.loop_of.values()):
        for x in _up_and_down(lp):
            if id(x) not in seen:
                seen.add(id(x))
                yield x


def _up_and_down(lp: Loop) -> Iterator[Loop]:
    top = lp
    while top.parent is not None:
        top = top.parent
    yield from top.chain()


# ------------------------------------------------------------------ expressions


_PURE_PREFIXES = ("arith.", "math.")
_PURE_OPS = frozenset(
    {
        "affine.apply",
        "affine.load",
        "krnl.load",
        "memref.load",
        "krnl.get_induction_var_value",
        "memref.dim",
        "krnl.dim",
        "memref.rank",
        "krnl.shape",
        "krnl.global",
        "memref.get_global",
        "krnl.acos",
        "krnl.acosh",
        "krnl.asin",
        "krnl.asinh",
        "krnl.atan",
        "krnl.atanh",
        "krnl.tan",
        "krnl.erf",
        "krnl.isinf",
        "krnl.isnan",
        "krnl.strlen",
        "krnl.strncmp",
        "krnl.find_index",
        "krnl.getref",
        "krnl.vector_type_cast",
        "memref.cast",
        "memref.subview",
        "memref.reinterpret_cast",
        "memref.assume_alignment",
        "memref.extract_aligned_pointer_as_index",
    }
)
_LOADS = frozenset({"affine.load", "krnl.load", "memref.load"})
_ALIASES = frozenset(
    {
        "krnl.getref",
        "krnl.vector_type_cast",
        "memref.cast",
        "memref.subview",
        "memref.reinterpret_cast",
        "memref.assume_alignment",
    }
)
# Ops with nothing to do for the model (they change no memory and make no value).
_SKIP = frozenset({"krnl.entry_point", "krnl.define_loops", "krnl.block", "krnl.permute"})
_RECIPE = frozenset({"krnl.parallel", "krnl.unroll"})
_IO_OPS = frozenset({"krnl.print", "krnl.print_tensor", "krnl.runtime_instrument"})


def is_pure(op: Operation) -> bool:
    return op.name.startswith(_PURE_PREFIXES) or op.name in _PURE_OPS


def _const_int(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        val = v.op.value
        if isinstance(val, IntegerAttr):
            return int(val.value.data)
    return None


def _affine_expr(e: AffineExpr, args: Sequence[str | None], ndims: int) -> str | None:
    """`e` in isl syntax, dims and symbols replaced by `args` (None: not affine)."""
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    if isinstance(e, AffineDimExpr):
        return args[e.position]
    if isinstance(e, AffineSymExpr):
        return args[ndims + e.position]
    if isinstance(e, AffineBinaryOpExpr):
        lhs = _affine_expr(e.lhs, args, ndims)
        rhs = _affine_expr(e.rhs, args, ndims)
        if lhs is None or rhs is None:
            return None
        kind = e.kind
        if kind == AffineBinaryOpKind.Add:
            return f"({lhs}) + ({rhs})"
        if kind == AffineBinaryOpKind.Mul:
            if isinstance(e.rhs, AffineConstantExpr):
                return f"{e.rhs.value}*({lhs})"
            if isinstance(e.lhs, AffineConstantExpr):
                return f"{e.lhs.value}*({rhs})"
            return None
        if not isinstance(e.rhs, AffineConstantExpr) or e.rhs.value <= 0:
            return None
        c = e.rhs.value
        if kind == AffineBinaryOpKind.FloorDiv:
            return f"floor(({lhs})/{c})"
        if kind == AffineBinaryOpKind.CeilDiv:
            return f"ceil(({lhs})/{c})"
        if kind == AffineBinaryOpKind.Mod:
            return f"({lhs}) mod {c}"
    return None


def map_results(m: AffineMap, args: Sequence[str | None]) -> list[str | None]:
    return [_affine_expr(e, args, m.num_dims) for e in m.results]


# ------------------------------------------------------------------ building


@dataclass
class _Site:
    """Where a value is defined: the loops of the defining statement's dimensions."""

    loops: tuple[Loop, ...]


class _ProgramBuilder:
    def __init__(self, fn: Function, nest: LoopNest) -> None:
        self.fn = fn
        self.nest = nest
        self.names = _Names()
        self.unsupported: list[Diagnostic] = []
        # Parameters: isl name -> display name; value -> isl name.
        self.params: dict[str, str] = {}
        self.param_of: dict[SSAValue, str] = {}
        self.dim_params: dict[tuple[SSAValue, int], str] = {}
        self.polys: dict[tuple[Loop, ...], _Poly] = {}
        self._vnames: dict[SSAValue, str] = {}
        # Loops around each memref.alloc/alloca placed in a loop, and per array the
        # loops that index its private copies.
        self.alloc_loops: dict[Operation, tuple[Loop, ...]] = {}
        self.array_site: dict[str, tuple[Loop, ...]] = {}
        self.arrays: dict[str, ArrayInfo] = {}
        self.array_of: dict[SSAValue, str] = {}
        self.statements: list[Statement] = []
        # Virtual array of each value that crosses statements, and the site of
        # its definition.
        self.virtual: dict[SSAValue, tuple[str, _Site]] = {}
        self.func_args = set(fn.op.body.block.args) if fn.op.body.blocks else set()
        self.loop_names, self.handle_names = name_loops(nest, self.names)
        self.iv_carrier: dict[SSAValue, Loop] = {
            o.entry.iv: o.carrier for o in nest.origins.values() if o.carrier is not None
        }
        # Original loops in program order of their `with` entries.
        self.origin_rank: dict[SSAValue, int] = {}
        for op in fn.op.walk():
            if isinstance(op, k.IterateOp):
                for e in op.entries:
                    self.origin_rank.setdefault(e.handle, len(self.origin_rank))
        # The loop each krnl.get_induction_var_value result reads.
        self.get_iv: dict[SSAValue, Loop] = {}
        for op in fn.op.walk():
            if isinstance(op, k.GetInductionVarValueOp):
                for h, r in zip(op.operands, op.results, strict=True):
                    if (lp := nest.loop_of.get(h)) is not None:
                        self.get_iv[r] = lp
        # Ops that live inside a loop (not fixed for the whole call).
        self.in_loop: set[Operation] = set()
        for op in fn.op.walk():
            if isinstance(op, k.IterateOp):
                for inner in op.body.walk():
                    self.in_loop.add(inner)

    def vid(self, lp: Loop) -> str:
        """The value a loop carries: the original loop's name for an original IV."""
        if lp.origin.carrier is lp:
            return self.handle_names[lp.origin.entry.handle]
        return self.loop_names[lp]

    def vname(self, v: SSAValue) -> str:
        """The source name of `v` (cached: reading it back from the text is not cheap)."""
        name = self._vnames.get(v)
        if name is None:
            name = self._vnames[v] = value_name(v, self.fn.module)
        return name

    def loc(self, op: Operation) -> SourceLocation | None:
        return location_of(op, self.fn.module)

    def unsupported_op(self, op: Operation, message: str, hint: str) -> None:
        self.unsupported.append(Diagnostic(message, self.loc(op), hint))

    # -- parameters and arrays
    def param(self, v: SSAValue, display: str) -> str:
        p = self.param_of.get(v)
        if p is None:
            p = self.names.fresh(display)
            self.param_of[v] = p
            self.params[p] = display
        return p

    def dim_param(self, mem: SSAValue, d: int) -> str:
        p = self.dim_params.get((mem, d))
        if p is None:
            base = self.vname(mem).lstrip("%")
            p = self.dim_params[(mem, d)] = self.names.fresh(f"{base}_d{d}")
            self.params[p] = f"{base}.{d}"
        return p

    def array(self, v: SSAValue, op: Operation) -> tuple[str, bool] | None:
        """The array `v` designates, and whether it is reached through an alias."""
        aliased = False
        while isinstance(v, OpResult) and v.op.name in _ALIASES:
            v = v.op.operands[0]
            aliased = True
        if v in self.array_of:
            return self.array_of[v], aliased
        t = v.type
        if not isinstance(t, MemRefType):
            return None
        if not (
            v in self.func_args
            or (
                isinstance(v, OpResult)
                and v.op.name
                in ("memref.alloc", "memref.alloca", "krnl.global", "memref.get_global")
            )
        ):
            self.unsupported_op(
                op,
                f"{op.name} accesses {self.vname(v)}, a memref whose storage "
                "polykrnl cannot identify (it comes from "
                + (v.op.name if isinstance(v, OpResult) else "a block argument")
                + ")",
                "the polyhedral model needs to know which buffer every access touches: "
                "pass the buffer as a function argument or allocate it with memref.alloc",
            )
            return None
        name = self.names.fresh(self.vname(v).lstrip("%"))
        shape: list[int | str | None] = []
        dyn = 0
        for d, size in enumerate(t.get_shape()):
            if size >= 0:
                shape.append(size)
            elif v in self.func_args:
                shape.append(self.dim_param(v, d))
            else:
                assert isinstance(v, OpResult)
                operands = list(v.op.operands)
                e = self.top_expr(operands[dyn]) if dyn < len(operands) else None
                shape.append(e)
                dyn += 1
        site: tuple[Loop, ...] = ()
        if isinstance(v, OpResult) and v.op in self.alloc_loops:
            site = tuple(_Poly(self, self.alloc_loops[v.op]).dim_loops)
        self.array_site[name] = site
        self.arrays[name] = ArrayInfo(
            name,
            tuple(shape),
            str(t.element_type),
            value=v,
            site=tuple(self.loop_names[lp] for lp in site),
        )
        self.array_of[v] = name
        return name, aliased

    def top_expr(self, v: SSAValue) -> str | None:
        """`v` as an isl expression of parameters only (a value fixed for the call)."""
        return _Expr(self, {}).of(v)

    # -- statements
    def build(self) -> PolyProgram:
        body = self.fn.op.body.block if self.fn.op.body.blocks else None
        tree: list[PNode] = []
        if body is not None:
            tree = self.items_of_block(body, ())
        if self.unsupported:
            raise UnsupportedError(
                f"@{self.fn.name} has {len(self.unsupported)} construct(s) without a "
                "polyhedral model: " + self.unsupported[0].message,
                location=self.unsupported[0].location,
                hint=self.unsupported[0].hint,
            )
        statements, tree = self.renamed(tree)
        params = tuple(self.params)
        ctx_str = f"[{', '.join(params)}] -> {{ : }}"
        return PolyProgram(
            self.fn,
            self.nest,
            statements,
            dict(self.arrays),
            params,
            dict(self.params),
            isl.Set(ctx_str),
            tuple(tree),
            dict(self.loop_names),
            dict(self.handle_names),
            dict(self.param_of),
            {
                v: (name, tuple(self.loop_names[lp] for lp in site.loops))
                for v, (name, site) in self.virtual.items()
            },
        )

    def renamed(self, tree: list[PNode]) -> tuple[tuple[Statement, ...], list[PNode]]:
        """Statements renamed S0, S1, ... in program order of their ops."""
        pos = {op: n for n, op in enumerate(self.fn.op.walk())}
        order = sorted(self.statements, key=lambda s: pos.get(s.anchor, -1))
        new = {s.name: f"S{n}" for n, s in enumerate(order)}
        out = tuple(_renamed(s, new[s.name]) for s in order)

        def walk(nodes: Sequence[PNode]) -> list[PNode]:
            return [
                PStmt(new[n.name])
                if isinstance(n, PStmt)
                else PLoop(n.name, n.loop, tuple(walk(n.body)))
                for n in nodes
            ]

        return out, walk(tree)

    def items_of_block(self, block: Block, loops: tuple[Loop, ...]) -> list[PNode]:
        """The statements of a block that is not an iterate body (function, region)."""
        return self.chunk_with_regions(list(block.ops), loops)

    def iterate(self, op: k.IterateOp, loops: tuple[Loop, ...]) -> list[PNode]:
        out: list[PNode] = []
        if op.iter_args:
            out.append(self.init_statement(op, loops))
        if op in self.nest.roots:
            root = self.nest.roots[op]
            if root.consumed_by is None:
                node = self.loop(root, loops)
                if node is not None:
                    out.append(node)
        elif op in self.nest.inline:
            out.extend(self.items(self.nest.inline[op], loops))
        return out

    def loop(self, lp: Loop, loops: tuple[Loop, ...]) -> PLoop:
        inner = (*loops, lp)
        body: list[PNode] = []
        run: list[object] = []
        for item in lp.body():
            if isinstance(item, Loop):
                body.extend(self.items(run, inner))
                run = []
                body.append(self.loop(item, inner))
            else:
                run.append(item)
        body.extend(self.items(run, inner))
        return PLoop(self.loop_names[lp], lp, tuple(body))

    def items(self, items: Sequence[object], loops: tuple[Loop, ...]) -> list[PNode]:
        out: list[PNode] = []
        merged: set[int] = set()
        for n, it in enumerate(items):
            if isinstance(it, Stmt):
                nxt = items[n + 1] if n + 1 < len(items) else None
                if isinstance(nxt, YieldPoint) and nxt.iterate is it.owner:
                    # The yield joins the last chunk: its operands are computed there.
                    merged.add(n + 1)
                    out.extend(self.chunk_with_regions(it.ops, loops, nxt.iterate))
                else:
                    out.extend(self.chunk_with_regions(it.ops, loops))
            elif isinstance(it, Chain):
                out.extend(self.iterate(it.iterate, loops))
            elif isinstance(it, YieldPoint) and n not in merged:
                out.append(self.yield_statement(it.iterate, loops))
            # A ChildAnchor only marks where Loop.body() puts the child loop.
        return out

    def chunk_with_regions(
        self,
        ops: Sequence[Operation],
        loops: tuple[Loop, ...],
        yield_of: k.IterateOp | None = None,
    ) -> list[PNode]:
        """A chunk of an iterate body; krnl.region / krnl.movable bodies are inlined."""
        out: list[PNode] = []
        chunk: list[Operation] = []
        for op in ops:
            if op.name in ("krnl.region", "krnl.movable"):
                out.extend(self.chunk(chunk, loops))
                chunk = []
                for b in op.regions[0].blocks:
                    out.extend(self.items_of_block(b, loops))
            elif isinstance(op, k.IterateOp):
                out.extend(self.chunk(chunk, loops))
                chunk = []
                out.extend(self.iterate(op, loops))
            else:
                chunk.append(op)
        out.extend(self.chunk(chunk, loops, yield_of))
        return out

    def chunk(
        self,
        ops: Sequence[Operation],
        loops: tuple[Loop, ...],
        yield_of: k.IterateOp | None = None,
    ) -> list[PNode]:
        """Split a run of ops into statements (see the module docstring)."""
        ops = [op for op in ops if op.name not in _SKIP and op.name not in _RECIPE]
        ops = [op for op in ops if not _is_terminator(op)]
        term = yield_of.body.block.last_op if yield_of is not None else None
        if term is not None:
            ops.append(term)
        if loops:
            for op in ops:
                if op.name in ("memref.alloc", "memref.alloca"):
                    self.alloc_loops[op] = loops
        position = {op: n for n, op in enumerate(ops)}
        anchors = [op for op in ops if not is_pure(op)]
        anchor_at = [position[a] for a in anchors]
        # Which anchors use each pure op (through pure ops of the chunk).
        users: dict[Operation, set[Operation]] = {}

        def mark(op: Operation, anchor: Operation) -> None:
            for v in _operands_deep(op):
                d = v.owner
                if (
                    isinstance(d, Operation)
                    and d in position
                    and is_pure(d)
                    and anchor not in users.setdefault(d, set())
                ):
                    users[d].add(anchor)
                    mark(d, anchor)

        for a in anchors:
            mark(a, a)
        # Pure values used outside the chunk, or by several anchors while they
        # depend on memory, or read before a write that comes before their use,
        # get a statement of their own that stores them in a virtual array.
        exported: list[Operation] = []
        for op in ops:
            if not is_pure(op):
                continue
            outside = any(
                not _uses_inside(use.operation, position) for r in op.results for use in r.uses
            )
            mem = self.memory_dependent(op)
            if outside and mem:
                exported.append(op)
                continue
            us = users.get(op, set())
            if mem and us:
                # Each user recomputes the value, unless a write between the read and
                # a use could change what it reads: then it is computed once and kept.
                last = max(position[a] for a in us)
                read = self.arrays_read(op)
                # Anchors are in program order: only those between the read and its use.
                lo = bisect.bisect_right(anchor_at, position[op])
                hi = bisect.bisect_left(anchor_at, last)
                if any(self.may_write(b, read) for b in anchors[lo:hi]):
                    exported.append(op)
        exported_set = set(exported)
        starts = sorted([*anchors, *exported], key=lambda o: position[o])
        out: list[PNode] = []
        for a in starts:
            cone = self.cone(a, position, exported_set)
            if a is term:
                out.append(self.statement("yield", cone, a, loops, iterate=yield_of))
                continue
            kind: StatementKind = "value" if a in exported_set else "op"
            out.append(self.statement(kind, cone, a, loops))
        return out

    def arrays_read(
        self, op: Operation, seen: set[Operation] | None = None
    ) -> set[SSAValue] | None:
        """The memrefs the pure computation of `op` reads (None: unknown)."""
        seen = seen if seen is not None else set()
        if op in seen:
            return set()
        seen.add(op)
        out: set[SSAValue] = set()
        if op.name in _LOADS:
            out.add(_base(op.operands[0]))
        for v in op.operands:
            if isinstance(v, OpResult) and is_pure(v.op) and not isinstance(v.op, k.IterateOp):
                inner = self.arrays_read(v.op, seen)
                if inner is None:
                    return None
                out |= inner
            elif isinstance(v, OpResult) and not isinstance(v.type, k.LoopType | MemRefType):
                return None  # the result of a non-pure op (a call, ...)
        return out

    def may_write(self, op: Operation, arrays: set[SSAValue] | None) -> bool:
        """Whether `op` may write one of `arrays` (None: any array)."""
        if op.name in ("krnl.store", "memref.store", "affine.store"):
            target = op.operands[1]
        elif op.name in ("krnl.memset", "krnl.random_normal"):
            target = op.operands[0]
        else:
            return op.name not in (
                "memref.alloc",
                "memref.alloca",
                "krnl.print",
                "krnl.print_tensor",
                "krnl.runtime_instrument",
            )
        return arrays is None or _base(target) in arrays

    def memory_dependent(self, op: Operation, seen: set[Operation] | None = None) -> bool:
        """Whether `op`'s value depends on memory or on values carried between iterations."""
        seen = seen or set()
        if op in seen:
            return False
        seen.add(op)
        if op.name in _LOADS or op.name in ("krnl.strlen", "krnl.strncmp", "krnl.find_index"):
            return True
        for v in op.operands:
            if isinstance(v.type, k.LoopType):
                continue
            if isinstance(v, BlockArgument):
                parent = v.block.parent_op()
                if isinstance(parent, k.IterateOp) and v in parent.iter_args:
                    return True
                if parent is not None and not isinstance(parent, func.FuncOp | k.IterateOp):
                    return True
            elif isinstance(v, OpResult):
                if isinstance(v.op, k.IterateOp) or not is_pure(v.op):
                    return True
                if self.memory_dependent(v.op, seen):
                    return True
        return False

    def cone(
        self, a: Operation, position: dict[Operation, int], exported: set[Operation]
    ) -> list[Operation]:
        """`a` and the pure ops of its chunk it needs, in program order."""
        need: set[Operation] = {a}
        stack = [a]
        while stack:
            op = stack.pop()
            for v in _operands_deep(op):
                d = v.owner
                if (
                    isinstance(d, Operation)
                    and d in position
                    and d not in need
                    and is_pure(d)
                    and (d not in exported or d is a)
                ):
                    need.add(d)
                    stack.append(d)
        return sorted(need, key=lambda o: position[o])

    def init_statement(self, op: k.IterateOp, loops: tuple[Loop, ...]) -> PStmt:
        return self.statement("init", [], op, loops, iterate=op)

    def yield_statement(self, op: k.IterateOp, loops: tuple[Loop, ...]) -> PStmt:
        term = op.body.block.last_op
        assert isinstance(term, k.YieldOp)
        return self.statement("yield", [term], term, loops, iterate=op)

    # -- one statement
    def statement(
        self,
        kind: StatementKind,
        ops: Sequence[Operation],
        anchor: Operation,
        loops: tuple[Loop, ...],
        iterate: k.IterateOp | None = None,
    ) -> PStmt:
        name = f"S{len(self.statements)}"
        poly = self.polys.get(loops)
        if poly is None:
            poly = self.polys[loops] = _Poly(self, loops)
        site = _Site(tuple(poly.dim_loops))
        dims = poly.dims
        expr = _Expr(self, poly.env)
        accesses: list[Access] = []
        exports: list[tuple[SSAValue, str]] = []
        imports: list[tuple[SSAValue, str]] = []
        inside = set(ops)

        def access(
            array: str,
            subs: Sequence[str | None] | None,
            write: bool,
            may: bool,
            op: Operation,
            region: Sequence[tuple[str, str]] | None = None,
        ) -> None:
            accesses.append(poly.access(name, array, subs, write, may, op, region))

        def memref_access(
            v: SSAValue,
            subs: Sequence[str | None] | None,
            write: bool,
            may: bool,
            op: Operation,
            region: Sequence[tuple[str, str]] | None = None,
        ) -> None:
            found = self.array(v, op)
            if found is None:
                return
            arr, aliased = found
            if aliased:
                subs, region, may = None, None, True
            access(arr, subs, write, may, op, region)

        def import_value(v: SSAValue, op: Operation) -> None:
            """`v` comes from another statement: read it from its virtual array."""
            if any(v is x for x, _ in imports):
                return
            arr = self.virtual_of(v, op)
            if arr is None:
                return
            vname, def_site = arr
            imports.append((v, vname))
            accesses.append(poly.virtual_access(name, vname, def_site, False, op))

        for op in ops:
            for v in _operands_deep(op):
                d = v.owner
                if isinstance(d, Operation) and d in inside:
                    continue
                if self.is_imported(v, op, inside):
                    import_value(v, op)
            self.op_accesses(op, expr, memref_access, anchor)
            if op.name in _IO_OPS:
                # Output keeps its order: every print reads and writes one pseudo-array.
                io = self.io_array()
                access(io, [], False, False, op)
                access(io, [], True, False, op)
        if kind == "init":
            assert iterate is not None
            for v in iterate.iter_inits:
                if self.is_imported(v, anchor, inside):
                    import_value(v, anchor)
            for a in iterate.iter_args:
                vname = self.define_virtual(a, site, self.vname(a))
                exports.append((a, vname))
                accesses.append(poly.virtual_access(name, vname, site, True, anchor))
        if kind == "yield":
            assert iterate is not None
            init_site = self.virtual[iterate.iter_args[0]][1]
            for a, r in zip(iterate.iter_args, iterate.results, strict=True):
                vname = self.virtual[a][0]
                self.virtual[r] = (vname, init_site)
                exports.append((a, vname))
                accesses.append(poly.virtual_access(name, vname, init_site, True, anchor))
        if kind == "value" or kind == "op":
            for r in anchor.results:
                if (
                    any(u.operation not in inside for u in r.uses)
                    and not isinstance(r.type, MemRefType)
                    and (kind == "op" or self.memory_dependent(anchor))
                ):
                    vname = self.define_virtual(r, site, self.vname(r))
                    exports.append((r, vname))
                    accesses.append(poly.virtual_access(name, vname, site, True, anchor))
        stmt = Statement(
            name,
            kind,
            tuple(ops),
            anchor,
            poly.domain(name),
            dims,
            tuple(accesses),
            tuple(self.loop_names[lp] for lp in loops),
            poly.loop_values(name),
            self.loc(anchor),
            iterate=iterate,
            exports=tuple(exports),
            imports=tuple(imports),
            dim_origins=tuple(self.handle_names[lp.origin.entry.handle] for lp in poly.dim_loops),
            dim_loops=tuple(self.loop_names[lp] for lp in poly.dim_loops),
            dim_vids=tuple(self.vid(lp) for lp in poly.dim_loops),
            loop_vids=tuple(self.vid(lp) for lp in loops),
        )
        self.statements.append(stmt)
        return PStmt(name)

    def is_imported(self, v: SSAValue, op: Operation, inside: set[Operation]) -> bool:
        """Whether `v`, used by `op`, is a value another statement computes."""
        if isinstance(v, BlockArgument):
            parent = v.block.parent_op()
            return isinstance(parent, k.IterateOp) and v in parent.iter_args
        if not isinstance(v, OpResult) or isinstance(v.type, k.LoopType):
            return False
        d = v.op
        if d in inside:
            return False
        if isinstance(d, k.IterateOp):
            return True
        if isinstance(v.type, MemRefType):
            return False
        if is_pure(d):
            return self.memory_dependent(d)
        return True

    def define_virtual(self, v: SSAValue, site: _Site, base: str) -> str:
        if v in self.virtual:
            return self.virtual[v][0]
        name = self.names.fresh(base.lstrip("%"))
        dims = tuple(self.loop_names[lp] for lp in site.loops)
        self.arrays[name] = ArrayInfo(name, dims, str(v.type), virtual=True, value=v)
        self.virtual[v] = (name, site)
        return name

    def virtual_of(self, v: SSAValue, op: Operation) -> tuple[str, _Site] | None:
        if v in self.virtual:
            return self.virtual[v]
        self.unsupported_op(
            op,
            f"{op.name} uses {self.vname(v)}, a value polykrnl cannot "
            "place in the polyhedral model",
            "compute the value in the same loop body, or report the program",
        )
        return None

    # -- accesses of one op
    def op_accesses(
        self,
        op: Operation,
        expr: _Expr,
        access: Callable[..., None],
        anchor: Operation,
    ) -> None:
        name = op.name
        if name == "krnl.yield":
            return  # what it yields is imported; the yield statement writes iter_args
        if isinstance(op, k.LoadOp | memref.LoadOp):
            access(op.operands[0], [expr.of(i) for i in op.operands[1:]], False, False, op)
        elif isinstance(op, k.StoreOp | memref.StoreOp):
            access(op.operands[1], [expr.of(i) for i in op.operands[2:]], True, False, op)
        elif isinstance(op, affine.LoadOp):
            m = op.map
            args = [expr.of(i) for i in op.indices]
            access(op.memref, map_results(m.data, args) if m else args, False, False, op)
        elif isinstance(op, affine.StoreOp):
            m = op.map
            args = [expr.of(i) for i in op.indices]
            access(op.memref, map_results(m.data, args) if m else args, True, False, op)
        elif isinstance(op, k.MemsetOp):
            access(op.dest, None, True, False, op)
        elif isinstance(op, k.MemcpyOp):
            self.memcpy(op, expr, access)
        elif isinstance(op, k.CopyToTileBufferOp):
            access(op.source, None, False, True, op, self.tile_region(op, op.source, expr))
            access(op.buffer, None, True, True, op)
        elif isinstance(op, k.CopyFromTileBufferOp):
            access(op.buffer, None, False, True, op)
            access(op.dest, None, True, True, op, self.tile_region(op, op.dest, expr))
        elif isinstance(op, k.MatMulOp):
            boxes = self.matmul_boxes(op, expr)
            if boxes is None:
                # Starts or bounds that are not affine: the whole buffers, as may-accesses.
                access(op.A, None, False, True, op)
                access(op.B, None, False, True, op)
                access(op.C, None, False, True, op)
                access(op.C, None, True, True, op)
            else:
                a, b, c = boxes
                access(op.A, None, False, False, op, a)
                access(op.B, None, False, False, op, b)
                access(op.C, None, False, False, op, c)
                access(op.C, None, True, False, op, c)
        elif name in ("memref.alloc", "memref.alloca", "memref.dealloc"):
            target = op.results[0] if op.results else op.operands[0]
            access(target, None, True, False, op)
        elif name in ("memref.copy",):
            access(op.operands[0], None, False, False, op)
            access(op.operands[1], None, True, False, op)
        elif name == "krnl.random_normal":
            access(op.operands[0], None, True, False, op)
        elif op.regions or name in ("krnl.call", "func.call", "krnl.specialized_kernel"):
            # Opaque: every memref it can see may be read and written.
            for v in _memref_operands_deep(op):
                access(v, None, False, True, op)
                access(v, None, True, True, op)
        elif is_pure(op) or name in (
            "krnl.print",
            "krnl.print_tensor",
            "krnl.runtime_instrument",
            "krnl.seqdealloc",
            "krnl.seqstore",
            "krnl.seqalloc",
            "krnl.seqextract",
        ):
            for v in op.operands:
                if isinstance(v.type, MemRefType) and name not in ("krnl.getref",):
                    if name in _ALIASES or name in ("memref.dim", "krnl.dim", "krnl.shape"):
                        continue
                    write = name in ("krnl.seqstore", "krnl.seqdealloc")
                    access(v, None, write, True, op)
        else:
            self.unsupported_op(
                op,
                f"{name} has no polyhedral model",
                "polykrnl models Krnl, memref, affine, arith and math ops; rewrite the op "
                "or report the need",
            )

    def io_array(self) -> str:
        if "_io" not in self.arrays:
            self.names.taken.add("_io")
            self.arrays["_io"] = ArrayInfo("_io", (), "io", virtual=True)
        return "_io"

    def memcpy(self, op: k.MemcpyOp, expr: _Expr, access: Callable[..., None]) -> None:
        n, d_off, s_off = expr.of(op.num_elems), expr.of(op.dest_offset), expr.of(op.src_offset)
        for mem, off, write in ((op.src, s_off, False), (op.dest, d_off, True)):
            t = mem.type
            assert isinstance(t, MemRefType)
            shape = t.get_shape()
            if n is None or off is None or any(s < 0 for s in shape[1:]):
                access(mem, None, write, True, op)
                continue
            rank = len(shape)
            names = [f"_a{d}" for d in range(rank)]
            flat = names[-1] if rank else "0"
            stride = 1
            for d in range(rank - 2, -1, -1):
                stride *= shape[d + 1]
                flat = f"{stride}*{names[d]} + {flat}"
            region = [("", f"({off}) <= {flat} < ({off}) + ({n})")]
            access(mem, None, write, False, op, region)

    def matmul_boxes(self, op: k.MatMulOp, expr: _Expr) -> tuple[list[tuple[str, str]], ...] | None:
        """The elements of A, B and C one compute tile touches, as in the interpreter.

        The tile covers rows [i0, i0 + ci), columns [j0, j0 + cj) and k in
        [k0, k0 + ck), each clipped by its global upper bound; a buffer holds the
        data from its memory start on, and dimensions before the last two are
        fixed at the memory start.
        """

        def exprs(vs: Sequence[SSAValue]) -> list[str] | None:
            out = [expr.of(v) for v in vs]
            return None if any(x is None for x in out) else [str(x) for x in out]

        a_mem, b_mem, c_mem = (
            exprs(op.aGlobalIndexMemStart),
            exprs(op.bGlobalIndexMemStart),
            exprs(op.cGlobalIndexMemStart),
        )
        starts = exprs(
            [op.iGlobalIndexComputeStart, op.jGlobalIndexComputeStart, op.kGlobalIndexComputeStart]
        )
        ubs = exprs([op.iGlobalUB, op.jGlobalUB, op.kGlobalUB])
        if a_mem is None or b_mem is None or c_mem is None or starts is None or ubs is None:
            return None
        shapes = []
        for v in (op.A, op.B, op.C):
            t = v.type
            assert isinstance(t, MemRefType)
            shapes.append(list(t.get_shape()))
        a_tile = int_list(op.aTileSize) or shapes[0][-2:]
        c_tile = int_list(op.cTileSize) or shapes[2][-2:]
        compute = int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]
        if len(compute) != 3 or any(x < 0 for x in compute):
            return None
        for mem, shape in zip((a_mem, b_mem, c_mem), shapes, strict=True):
            if len(shape) < 2 or len(mem) != len(shape):
                return None
        ranges = [(s, f"({s}) + {n}", ub) for s, n, ub in zip(starts, compute, ubs, strict=True)]

        def box(mem: list[str], rows: int, cols: int) -> list[tuple[str, str]]:
            out = [("", f"_a{d} = {m}") for d, m in enumerate(mem[:-2])]
            for d, which in ((len(mem) - 2, rows), (len(mem) - 1, cols)):
                lo, hi, ub = ranges[which]
                g = f"_a{d} + ({mem[d]})"  # the global index of the element
                out.append(("", f"{lo} <= {g} < {hi} and {g} < {ub}"))
            return out

        return box(a_mem, 0, 2), box(b_mem, 2, 1), box(c_mem, 0, 1)

    def tile_region(
        self, op: k.CopyToTileBufferOp | k.CopyFromTileBufferOp, mem: SSAValue, expr: _Expr
    ) -> list[tuple[str, str]] | None:
        """Constraints on `mem`'s elements a tile copy touches (None: the whole memref)."""
        buf_t, mem_t = op.buffer.type, mem.type
        assert isinstance(buf_t, MemRefType) and isinstance(mem_t, MemRefType)
        b_rank, m_rank = len(buf_t.get_shape()), len(mem_t.get_shape())
        off = m_rank - b_rank
        starts = [expr.of(v) for v in op.starts]
        if any(s is None for s in starts) or off < 0 or len(starts) != m_rank:
            return None
        tile_attr = op.tileSize
        tile = (
            [int(a.value.data) for a in tile_attr.data] if tile_attr is not None else None
        ) or list(buf_t.get_shape())
        if any(t < 0 for t in tile):
            return None
        transpose = (
            isinstance(op, k.CopyToTileBufferOp)
            and op.transpose is not None
            and bool(op.transpose.value.data)
        )
        dim_of = list(range(m_rank))
        if transpose:
            dim_of[-2], dim_of[-1] = dim_of[-1], dim_of[-2]
        out: list[tuple[str, str]] = []
        for s in range(m_rank):
            if s < off:
                out.append(("", f"_a{s} = {starts[s]}"))
            else:
                d = dim_of.index(s) - off
                out.append(("", f"{starts[s]} <= _a{s} < ({starts[s]}) + {tile[d]}"))
        return out


def _base(v: SSAValue) -> SSAValue:
    """The memref behind alias ops (casts, views)."""
    while isinstance(v, OpResult) and v.op.name in _ALIASES:
        v = v.op.operands[0]
    return v


def _is_terminator(op: Operation) -> bool:
    return op.name in ("func.return", "krnl.yield", "scf.yield", "affine.yield", "krnl.terminate")


def _operands_deep(op: Operation) -> Iterator[SSAValue]:
    """The operands of `op` and of the ops nested in its regions, defined outside `op`."""
    yield from op.operands
    if op.regions:
        inner = set(op.walk())
        for o in op.walk():
            if o is op:
                continue
            for v in o.operands:
                d = v.owner
                if isinstance(d, Operation) and d in inner:
                    continue
                if isinstance(d, Block) and d.parent_op() in inner:
                    continue
                yield v


def _memref_operands_deep(op: Operation) -> list[SSAValue]:
    out: list[SSAValue] = []
    for v in _operands_deep(op):
        if isinstance(v.type, MemRefType) and v not in out:
            out.append(v)
    return out


def _uses_inside(user: Operation, position: dict[Operation, int]) -> bool:
    """Whether `user` (or the op whose region holds it) is in the chunk."""
    op: Operation | None = user
    while op is not None:
        if op in position:
            return True
        op = op.parent_op()
    return False


class _Expr:
    """SSA index values as isl expressions over loop variables and parameters."""

    def __init__(self, b: _ProgramBuilder, env: dict[SSAValue, str]) -> None:
        self.b = b
        self.env = env

    def of(self, v: SSAValue) -> str | None:
        if v in self.env:
            return self.env[v]
        c = _const_int(v)
        if c is not None:
            return str(c)
        b = self.b
        if isinstance(v, BlockArgument):
            if v in b.func_args and isinstance(v.type, IndexType | IntegerType):
                return b.param(v, b.vname(v).lstrip("%"))
            return None
        assert isinstance(v, OpResult)
        op = v.op
        if isinstance(op, affine.ApplyOp):
            m = op.map.data
            return map_results(m, [self.of(x) for x in op.operands])[0]
        if op.name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui"):
            return self.of(op.operands[0])
        if op.name in (
            "arith.addi",
            "arith.subi",
            "arith.muli",
            "arith.floordivsi",
            "arith.ceildivsi",
        ):
            lhs, rhs = self.of(op.operands[0]), self.of(op.operands[1])
            cl, cr = _const_int(op.operands[0]), _const_int(op.operands[1])
            if lhs is not None and rhs is not None:
                if op.name == "arith.addi":
                    return f"({lhs}) + ({rhs})"
                if op.name == "arith.subi":
                    return f"({lhs}) - ({rhs})"
                if op.name == "arith.muli" and (cl is not None or cr is not None):
                    return f"({lhs}) * ({rhs})"
                if op.name == "arith.floordivsi" and cr is not None and cr > 0:
                    return f"floor(({lhs})/{cr})"
                if op.name == "arith.ceildivsi" and cr is not None and cr > 0:
                    return f"ceil(({lhs})/{cr})"
        if op.name in ("memref.dim", "krnl.dim"):
            mem, idx = op.operands[0], _const_int(op.operands[1])
            t = mem.type
            if idx is not None and isinstance(t, MemRefType):
                size = t.get_shape()[idx]
                if size >= 0:
                    return str(size)
                if mem in b.func_args:
                    p = b.dim_param(mem, idx)
                    b.param_of.setdefault(v, p)
                    return p
        if op not in b.in_loop and isinstance(v.type, IndexType | IntegerType):
            # Fixed for the whole call: a parameter named after the value.
            return b.param(v, b.vname(v).lstrip("%"))
        return None


class _Poly:
    """The loop polyhedron around one statement: every enclosing loop as a variable."""

    def __init__(self, b: _ProgramBuilder, loops: tuple[Loop, ...]) -> None:
        self.b = b
        self.loops = loops
        self.var = {lp: f"_l{n}" for n, lp in enumerate(loops)}
        env: dict[SSAValue, str] = {}
        for lp in loops:
            if lp.origin.carrier is lp:
                env[lp.origin.entry.iv] = self.var[lp]
        for r, lp in b.get_iv.items():
            if lp in self.var:
                env[r] = self.var[lp]
        self.env = env
        expr = _Expr(b, env)
        cons: list[str] = []
        for lp in loops:
            x = self.var[lp]
            if lp.trivial:
                cons.append(f"{x} = 0")
                continue
            lbs = [e for bd in lp.lbs for e in self.bound(bd, expr)]
            ubs = [e for bd in lp.ubs for e in self.bound(bd, expr)]
            for e in ubs:
                if e is not None:
                    cons.append(f"{x} < {e}")
            known = [e for e in lbs if e is not None]
            for e in known:
                cons.append(f"{x} >= {e}")
            if lp.step > 1 and known:
                if len(known) == 1:
                    cons.append(f"({x} - ({known[0]})) mod {lp.step} = 0")
                else:
                    alts = []
                    for i, e in enumerate(known):
                        others = " and ".join(f"{e} >= {o}" for j, o in enumerate(known) if j != i)
                        alts.append(
                            f"(({x} - ({e})) mod {lp.step} = 0"
                            + (f" and {others}" if others else "")
                            + ")"
                        )
                    cons.append("(" + " or ".join(alts) + ")")
        self.constraints = cons
        # The dimensions: per original loop, its innermost non-trivial loop here.
        chosen: dict[int, Loop] = {}
        order: list[int] = []
        for lp in loops:
            key = id(lp.origin)
            if lp.trivial:
                continue
            if key not in chosen:
                order.append(key)
            chosen[key] = lp
        # In `with`-list order (outer iterates first), whatever the recipe did, so
        # that a statement's space does not depend on the schedule.
        order.sort(key=lambda key: b.origin_rank[chosen[key].origin.entry.handle])
        dims: list[str] = []
        self.dim_var: list[str] = []
        self.dim_loops = [chosen[key] for key in order]
        for key in order:
            lp = chosen[key]
            if lp.origin.carrier is lp:
                dims.append(isl_name(lp.origin.name))
            else:
                dims.append(b.loop_names[lp])
            self.dim_var.append(self.var[lp])
        seen: dict[str, int] = {}
        unique = []
        for d in dims:
            n = seen.get(d, 0)
            seen[d] = n + 1
            unique.append(d if n == 0 else f"{d}_{n + 1}")
        self.dims = tuple(unique)

    def bound(self, bd: MapBound | IVBound, expr: _Expr) -> list[str | None]:
        if isinstance(bd, IVBound):
            # A point loop sits inside its tile loop (the nest builder checks it).
            return [f"{self.var[bd.current]} + {bd.offset}"]
        return map_results(bd.map, [expr.of(v) for v in bd.operands])

    def _params(self) -> str:
        return "[" + ", ".join(self.b.params) + "]"

    @cached_property
    def values(self) -> isl.Map:
        """Statement instance -> the values of all its loops (parsed once per site)."""
        vs = [self.var[lp] for lp in self.loops]
        cons = [
            *self.constraints,
            *(f"{d} = {v}" for d, v in zip(self.dims, self.dim_var, strict=True)),
        ]
        body = " and ".join(cons) if cons else "true"
        return _parse_map(
            f"{self._params()} -> {{ _S[{', '.join(self.dims)}] -> [{', '.join(vs)}] : {body} }}"
        )

    def _through_loops(
        self, stmt: str, array: str, outs: Sequence[str], cons: Sequence[str]
    ) -> isl.Map:
        """{ stmt[dims] -> array[outs] } for constraints written over the loop variables."""
        vs = [self.var[lp] for lp in self.loops]
        body = " and ".join(cons) if cons else "true"
        f = _parse_map(
            f"{self._params()} -> {{ [{', '.join(vs)}] -> {array}[{', '.join(outs)}] : {body} }}"
        )
        return self.values.apply_range(f).set_tuple_name(isl.dim_type.in_, stmt).coalesce()

    def domain(self, name: str) -> isl.Set:
        return self.values.domain().set_tuple_name(name)

    def loop_values(self, name: str) -> isl.Map:
        return self.values.set_tuple_name(isl.dim_type.in_, name)

    def access(
        self,
        stmt: str,
        array: str,
        subs: Sequence[str | None] | None,
        write: bool,
        may: bool,
        op: Operation,
        region: Sequence[tuple[str, str]] | None = None,
    ) -> Access:
        info = self.b.arrays[array]
        rank = len(info.shape)
        outs = [f"_a{d}" for d in range(rank)]
        extra: list[str] = []
        exact: tuple[str, ...] | None = None
        site = self.b.array_site.get(array, ())
        if site:
            # This iteration's private copy of a buffer allocated inside loops.
            private = [f"_p{d}" for d in range(len(site))]
            extra += [f"{p} = {self.var[lp]}" for p, lp in zip(private, site, strict=True)]
            outs_all = [*private, *outs]
        else:
            outs_all = outs
        if subs is not None and len(subs) == rank and all(s is not None for s in subs):
            exact = tuple(str(x) for x in subs)
            extra = [f"{o} = {x}" for o, x in zip(outs, exact, strict=True)]
        else:
            if subs is not None or region is None:
                may = True if subs is not None else may
            for d, size in enumerate(info.shape):
                extra.append(f"{outs[d]} >= 0")
                if size is not None:
                    extra.append(f"{outs[d]} < {size}")
            if region is not None:
                extra += [c for _, c in region]
        # The subscripts are written over _l0, _l1, ...: Statement.loops in order.
        rel = self._through_loops(stmt, array, outs_all, extra)
        return Access(array, rel, write, may, op, exact)

    def virtual_access(
        self, stmt: str, array: str, def_site: _Site, write: bool, op: Operation
    ) -> Access:
        """Element of a virtual array: the iteration of the loops around its definition."""
        subs = [self.var.get(lp) for lp in def_site.loops]
        if any(s is None for s in subs):
            # The definition's loops do not all enclose this statement.
            self.b.unsupported_op(
                op,
                f"{op.name} uses a value defined in a loop that does not enclose it",
                "this happens when the recipe moves a statement out of the loop that "
                "computes its operands; keep uses inside that loop",
            )
            subs = []
        outs = [f"_a{d}" for d in range(len(subs))]
        extra = [f"{o} = {s}" for o, s in zip(outs, subs, strict=True)]
        return Access(array, self._through_loops(stmt, array, outs, extra), write, False, op)


def _parse_map(text: str) -> isl.Map:
    try:
        return isl.Map(text).coalesce()
    except isl.Error as e:  # pragma: no cover - an internal bug, not user input
        raise AssertionError(f"polykrnl built an invalid isl map: {text}") from e


def poly_program(fn: Function, recipe: bool = True, reorder: bool = True) -> PolyProgram:
    """The polyhedral model of `fn` (raises VerifyError / UnsupportedError).

    With `recipe=False`, the loops are those of the `with` lists in their
    original order (the recipe ops are ignored); this fails with
    UnsupportedError when the function's statements only have a meaning in the
    blocked nest (statements at tile level, krnl.get_induction_var_value of a
    tile handle, krnl.matmul).
    """
    if not fn.op.body.blocks:
        raise UnsupportedError(
            f"@{fn.name} is a declaration without a body: nothing to model",
            location=fn.location(fn.op),
            hint="give the function a body, or choose another one",
        )
    nest = checked_nest(fn)
    if recipe and not reorder:
        plain = build_nest(fn, recipe=True, reorder=False)
        if plain.diagnostics:
            d = plain.diagnostics[0]
            raise UnsupportedError(
                f"@{fn.name} has no loop order without its krnl.permute ops: {d.message}",
                location=d.location,
                hint="its statements are placed by the permuted order of the loops, so "
                "polykrnl cannot tell which order the permutation changed",
            )
        return _ProgramBuilder(fn, plain).build()
    if not recipe:
        plain = build_nest(fn, recipe=False)
        if plain.diagnostics:
            d = plain.diagnostics[0]
            raise UnsupportedError(
                f"@{fn.name} has no loop nest without its recipe: {d.message}",
                location=d.location,
                hint="its statements are placed by krnl.block handles (tile-level statements, "
                "krnl.get_induction_var_value of a tile, krnl.matmul); use "
                "polykrnl.schedule(fn), which applies the recipe",
            )
        for op in fn.op.walk():
            if isinstance(op, k.GetInductionVarValueOp | k.MatMulOp):
                handles = op.operands if isinstance(op, k.GetInductionVarValueOp) else op.loops
                if any(h not in plain.loop_of for h in handles):
                    raise UnsupportedError(
                        f"@{fn.name} has no loop nest without its recipe: {op.name} names "
                        "a loop that only the recipe creates",
                        location=location_of(op, fn.module),
                        hint="use polykrnl.schedule(fn), which applies the recipe",
                    )
        nest = plain
    return _ProgramBuilder(fn, nest).build()

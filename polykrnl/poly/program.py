"""PolyProgram: statements with isl domains and accesses, the original schedule tree, names."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Literal

import islpy as isl
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.display import isl_latex, latex_mono
from polykrnl.errors import SourceLocation
from polykrnl.ir import Function
from polykrnl.nest.loops import (
    Loop,
    LoopNest,
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
    # Why the relation covers more than the elements touched (a may-access that is
    # an over-approximation); empty when it is exact.
    approximation: str = ""
    # The subscripts (dimensions of the array) read from data, when they are the only
    # reason the access is a may-access: it runs whenever its statement does, and
    # touches the element those subscripts name (legality states the data condition
    # under which two such accesses meet, instead of calling it unproven).
    data_subscripts: tuple[int, ...] = ()
    # The elements the op addresses before the model clips them to the array's shape
    # (a box of lanes, a flat range, a matmul tile), for memory safety: `relation` stays
    # inside the array so that dependences never meet elements that do not exist.
    # None: `relation` itself (exact subscripts, or the whole array).
    reach: isl.Map | None = None
    # Dimensions whose subscripts depend on data (a gather): no static bound, checked
    # where the generated code uses them.
    data_dims: tuple[int, ...] = ()
    # The op itself touches only elements inside the memref (a transfer skips lanes
    # outside it, a tile copy pads): nothing to check.
    clips: bool = False

    @property
    def addressed(self) -> isl.Map:
        """Instances -> the elements the op addresses, in bounds or not."""
        return self.relation if self.reach is None else self.reach

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

    @property
    def approximations(self) -> tuple[str, ...]:
        """Why some of its accesses are over-approximated (each reason once)."""
        return tuple(dict.fromkeys(a.approximation for a in self.accesses if a.approximation))


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


@dataclass(frozen=True)
class ValueParam:
    """A parameter that is one value fixed for the whole call (an index argument, a size
    computed before the loops)."""

    value: SSAValue
    display: str  # how users name it (`N`)

    def __str__(self) -> str:
        return self.display


@dataclass(frozen=True)
class DimParam:
    """A parameter that is a dynamic size of a memref argument: dimension `dim` of `array`."""

    array: SSAValue
    array_name: str  # the argument's name (`A`)
    dim: int

    def __str__(self) -> str:
        return f"{self.array_name}.{self.dim}"  # how users name it (`A.0`)


ParamSource = ValueParam | DimParam


@dataclass(frozen=True, eq=False)
class PolyProgram:
    """The polyhedral model of one Krnl function.

    Made by `pk.poly_program(fn)`. One `Statement` per memory op (`S0`, `S1`, ... in
    program order) with its isl iteration domain and access relations; `domain`,
    `reads`, `must_writes` and `may_writes` are their unions, `params` the isl
    parameters (index arguments, and `A_d0` for dimension 0 of a dynamic memref
    `%A`), `schedule` the schedule tree of the program as written. Accesses the model
    over-approximates are may-accesses, listed with their reason by `check()`.

    Examples
    --------

    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @scale(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["scale"]
    >>> program = pk.poly_program(fn)
    >>> program.params
    ('N', 'X_d0')
    >>> print(program.domain)
    [N, X_d0] -> { S0[i] : 0 <= i < N }
    """

    function: Function
    nest: LoopNest
    statements: tuple[Statement, ...]
    arrays: dict[str, ArrayInfo]
    # isl parameter names, and where each comes from (`A_d0`: dimension 0 of `%A`).
    params: tuple[str, ...]
    param_sources: dict[str, ParamSource]
    context: isl.Set
    tree: tuple[PNode, ...]
    # Name of every concrete loop of the nest, and of every loop handle.
    loop_names: dict[Loop, str] = field(default_factory=dict)
    handle_names: dict[SSAValue, str] = field(default_factory=dict)
    # SSA values that are parameters (index arguments, dynamic sizes, ...).
    symbols: dict[SSAValue, str] = field(default_factory=dict)
    # Values kept in virtual arrays: value -> (array, loops of the defining dims).
    virtual: dict[SSAValue, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # The array of each memref value that has one (arguments, allocations, globals).
    array_names: dict[SSAValue, str] = field(default_factory=dict)

    def written_arrays(self) -> set[str]:
        """The arrays some statement writes (or may write)."""
        return {a.array for s in self.statements for a in s.accesses if a.write}

    def written_arguments(self) -> frozenset[str]:
        """The names of the function's memref arguments that a call may change: those some
        statement writes (or may write), through a view or not, and any whose array the
        program does not know. The others keep their values across calls."""
        written = self.written_arrays()
        fn = self.function
        out: set[str] = set()
        for a, v in zip(fn.arguments, fn.op.body.block.args, strict=True):
            if isinstance(a.type, MemRefType):
                array = self.array_names.get(v)
                if array is None or array in written:
                    out.add(a.name)
        return frozenset(out)

    @property
    def param_display(self) -> dict[str, str]:
        """isl parameter -> how users name it (`A_d0` -> `A.0`, `N` -> `N`)."""
        return {p: str(src) for p, src in self.param_sources.items()}

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
        return self.statement_map[name]

    @cached_property
    def statement_map(self) -> Mapping[str, Statement]:
        """Statement name -> statement (one table per program: every schedule of a
        function with many nests, and each nest's part of it, shares it)."""
        return MappingProxyType({s.name: s for s in self.statements})

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
            self.statement_map,
            lambda loop, stmt: _loop_value(stmt, loop),
        )

    @cached_property
    def order_schedule(self) -> isl.Schedule:
        """The order of `schedule` without its strip-mining: a tile loop that only
        encloses its point loop orders nothing the point loop does not, so dependences
        are the same computed on this tree, which has no quasi-affine tile dimensions
        (isl's dataflow analysis on deep tiled nests takes minutes, and crashed)."""
        statements = self.statement_map
        return build_tree(
            _untiled(self.tree, statements),
            statements,
            lambda loop, stmt: _loop_value(stmt, loop),
        )

    @cached_property
    def nest_orders(self) -> tuple[tuple[frozenset[str], isl.Schedule], ...]:
        """Per top-level node of `tree`: its statements and their order (the tree of
        `order_schedule` inside the node), each built from the node alone."""
        statements = self.statement_map
        out: list[tuple[frozenset[str], isl.Schedule]] = []
        for node in _untiled(self.tree, statements):
            names = frozenset(_stmts_in(node))
            tree = build_tree((node,), statements, lambda loop, stmt: _loop_value(stmt, loop))
            out.append((names, tree))
        return tuple(out)

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


def renamed(s: Statement, name: str) -> Statement:
    def m(x: isl.Map) -> isl.Map:
        return x.set_tuple_name(isl.dim_type.in_, name)

    return replace(
        s,
        name=name,
        domain=s.domain.set_tuple_name(name),
        loop_values=m(s.loop_values),
        accesses=tuple(replace(a, relation=m(a.relation)) for a in s.accesses),
    )


def _untiled(nodes: Sequence[PNode], statements: Mapping[str, Statement]) -> tuple[PNode, ...]:
    """`nodes` with each tile loop whose body is just its point loop replaced by that
    loop (unless a statement's instances are indexed by the tile loop's value)."""
    out: list[PNode] = []
    for n in nodes:
        if isinstance(n, PStmt):
            out.append(n)
            continue
        body = _untiled(n.body, statements)
        if (
            n.loop.kind == "tile"
            and len(body) == 1
            and isinstance(body[0], PLoop)
            and not any(n.name in statements[st].dim_vids for st in _stmts_in(n))
        ):
            out.append(body[0])
        else:
            out.append(replace(n, body=body))
    return tuple(out)


def _loop_value(stmt: Statement, loop: str) -> isl.PwAff:
    pos = stmt.loops.index(loop)
    return stmt.loop_values.as_pw_multi_aff().get_pw_aff(pos)


def build_tree(
    nodes: Sequence[PNode],
    statements: Mapping[str, Statement],
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
    return sequence_of(parts)


def sequence_of(parts: list[isl.Schedule]) -> isl.Schedule:
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
    statements: Mapping[str, Statement],
    value: Callable[[str, Statement], isl.PwAff],
    marks: Callable[[str, isl.Schedule], isl.Schedule] | None,
) -> isl.Schedule | None:
    if isinstance(node, PStmt):
        return isl.Schedule.from_domain(isl.UnionSet.from_set(statements[node.name].domain))
    inner = [p for p in (_subtree(b, statements, value, marks) for b in node.body) if p is not None]
    if not inner:
        return None
    body = sequence_of(inner)
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


class Names:
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
    nest: LoopNest, names: Names | None = None
) -> tuple[dict[Loop, str], dict[SSAValue, str]]:
    """The name of every concrete loop (documented in the Schedule docs).

    An unblocked loop is named by its induction variable; the loops of
    `%t, %p = krnl.block %L` by the handles' SSA names, else `<L>_t` for the
    tile loop while the point loop keeps L's name.
    """
    names = names or Names()
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

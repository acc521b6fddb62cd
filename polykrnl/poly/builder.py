"""Building the PolyProgram of a function: statements cut from loop bodies, their accesses."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple, cast

import islpy as isl
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import Diagnostic, SourceLocation, UnsupportedError
from polykrnl.ir import Function, location_of, value_name
from polykrnl.nest.loops import (
    Chain,
    ChildAnchor,
    Item,
    Loop,
    LoopNest,
    Stmt,
    YieldPoint,
    build_nest,
    checked_nest,
)
from polykrnl.poly.budget import bounded
from polykrnl.poly.domains import Expr, LoopPolyhedron, Site
from polykrnl.poly.guards import Guard, branches, condition
from polykrnl.poly.privatize import candidates, private_cells
from polykrnl.poly.program import (
    Access,
    ArrayInfo,
    DimParam,
    Names,
    ParamSource,
    PLoop,
    PNode,
    PolyProgram,
    PStmt,
    Statement,
    StatementKind,
    ValueParam,
    name_loops,
    renamed,
)
from polykrnl.poly.table import (
    POLY,
    Accessor,
    base,
    is_pure,
    is_terminator,
    model_of,
    opaque,
    operands_deep,
)
from polykrnl.poly.views import region_through_views, through_views

# ------------------------------------------------------------------ building


class OnBuffer(NamedTuple):
    """An access of a memref, as an access of the buffer behind its views."""

    array: str
    subs: Sequence[str | None] | None
    may: bool
    region: Sequence[tuple[str, str]] | None
    why: str | None


class ProgramBuilder:
    def __init__(
        self, fn: Function, nest: LoopNest, private: Mapping[Operation, Operation] | None = None
    ) -> None:
        self.fn = fn
        self.nest = nest
        # Allocations outside an iterate whose buffer is private to its iterations
        # (privatize.py): each is modelled as allocated just before the op it maps to,
        # in the iterate's body, as if written there.
        self.private = dict(private or {})
        self.private_before: dict[Operation, list[Operation]] = {}
        for alloc, anchor in self.private.items():
            self.private_before.setdefault(anchor, []).append(alloc)
        self.names = Names()
        self.unsupported: list[Diagnostic] = []
        # Parameters: isl name -> where it comes from; value -> isl name.
        self.params: dict[str, ParamSource] = {}
        self.param_of: dict[SSAValue, str] = {}
        self.dim_params: dict[tuple[SSAValue, int], str] = {}
        self.polys: dict[tuple[tuple[Loop, ...], tuple[Guard, ...]], LoopPolyhedron] = {}
        # The affine branches around the statements being built (guards.py).
        self.guards: tuple[Guard, ...] = ()
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
        self.virtual: dict[SSAValue, tuple[str, Site]] = {}
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
        self.in_loop.update(self.private)

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
            self.params[p] = ValueParam(v, display)
        return p

    def dim_param(self, mem: SSAValue, d: int) -> str:
        p = self.dim_params.get((mem, d))
        if p is None:
            base = self.vname(mem).lstrip("%")
            p = self.dim_params[(mem, d)] = self.names.fresh(f"{base}_d{d}")
            self.params[p] = DimParam(mem, base, d)
        return p

    def array(self, v: SSAValue, op: Operation) -> tuple[str, bool] | None:
        """The array `v` designates, and whether it is reached through an alias."""
        aliased = False
        while isinstance(v, OpResult) and (m := model_of(v.op)) is not None and m.alias:
            v = v.op.operands[0]
            aliased = True
        if v in self.array_of:
            return self.array_of[v], aliased
        t = v.type
        if not isinstance(t, MemRefType):
            return None
        if not (
            v in self.func_args
            or (isinstance(v, OpResult) and (m := model_of(v.op)) is not None and m.storage)
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
            site = tuple(LoopPolyhedron(self, self.alloc_loops[v.op]).dim_loops)
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
        return Expr(self, {}).of(v)

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
            dict(self.array_of),
        )

    def renamed(self, tree: list[PNode]) -> tuple[tuple[Statement, ...], list[PNode]]:
        """Statements renamed S0, S1, ... in program order of their ops."""
        pos: dict[Operation, float] = {op: n for n, op in enumerate(self.fn.op.walk())}
        for alloc, anchor in self.private.items():
            pos[alloc] = pos[anchor] - 0.5  # where it is modelled
        order = sorted(self.statements, key=lambda s: pos.get(s.anchor, -1))
        new = {s.name: f"S{n}" for n, s in enumerate(order)}
        out = tuple(renamed(s, new[s.name]) for s in order)

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
        if op in self.nest.inline:
            out.extend(self.body(self.nest.inline_body(op), loops))
        elif op in self.nest.roots:
            root = self.nest.roots[op]
            if root.consumed_by is None:
                out.append(self.loop(root, loops))
        return out

    def loop(self, lp: Loop, loops: tuple[Loop, ...]) -> PLoop:
        inner = (*loops, lp)
        return PLoop(self.loop_names[lp], lp, tuple(self.body(lp.body(), inner)))

    def body(self, items: Iterable[Item | Loop], loops: tuple[Loop, ...]) -> list[PNode]:
        """The nodes of a body inside `loops`: its statements, and its loops as loops."""
        body: list[PNode] = []
        run: list[object] = []
        for item in items:
            if isinstance(item, Loop):
                body.extend(self.items(run, loops))
                run = []
                body.append(self.loop(item, loops))
            else:
                run.append(item)
        body.extend(self.items(run, loops))
        return body

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
            elif isinstance(it, ChildAnchor) and it.iterate.iter_args:
                # The anchor's iter_args start here, before its loop (the next node).
                out.append(self.init_statement(it.iterate, loops))
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
            if (m := model_of(op)) is not None and m.inline:
                out.extend(self.chunk(chunk, loops))
                chunk = []
                for b in op.regions[0].blocks:
                    out.extend(self.items_of_block(b, loops))
            elif isinstance(op, k.IterateOp):
                out.extend(self.chunk(chunk, loops))
                chunk = []
                out.extend(self.iterate(op, loops))
            elif (blocks := branches(op, Expr(self, self.polyhedron(loops).env))) is not None:
                # Its statements are the branches' own, each under its condition.
                out.extend(self.chunk(chunk, loops))
                chunk = []
                outer = self.guards
                for block, then in blocks:
                    self.guards = (*outer, (op, then))
                    try:
                        out.extend(self.items_of_block(block, loops))
                    finally:
                        self.guards = outer
            else:
                chunk.append(op)
        out.extend(self.chunk(chunk, loops, yield_of))
        return out

    def polyhedron(self, loops: tuple[Loop, ...]) -> LoopPolyhedron:
        """The polyhedron of `loops` under the current guards (built once)."""
        key, guards = (loops, self.guards), self.guards
        if key not in self.polys:
            self.polys[key] = LoopPolyhedron(
                self, loops, lambda e: [c for g in guards if (c := condition(g, e)) is not None]
            )
        return self.polys[key]

    def chunk(
        self,
        ops: Sequence[Operation],
        loops: tuple[Loop, ...],
        yield_of: k.IterateOp | None = None,
    ) -> list[PNode]:
        """Split a run of ops into statements (see the module docstring)."""
        if self.private:
            ops = self.moved_allocations(ops)
        ops = [op for op in ops if (m := model_of(op)) is None or not m.skip]
        ops = [op for op in ops if not is_terminator(op)]
        term = yield_of.body.block.last_op if yield_of is not None else None
        if term is not None:
            ops.append(term)
        if loops:
            for op in ops:
                if (m := model_of(op)) is not None and m.allocates:
                    self.alloc_loops[op] = loops
        position = {op: n for n, op in enumerate(ops)}
        anchors = [op for op in ops if not is_pure(op)]
        anchor_at = [position[a] for a in anchors]
        # Which anchors use each pure op (through pure ops of the chunk).
        users: dict[Operation, set[Operation]] = {}

        def mark(op: Operation, anchor: Operation) -> None:
            for v in operands_deep(op):
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
                not uses_inside(use.operation, position) for r in op.results for use in r.uses
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

    def moved_allocations(self, ops: Sequence[Operation]) -> list[Operation]:
        """`ops` with the private allocations moved to where they are modelled."""
        out: list[Operation] = []
        for op in ops:
            if op in self.private:
                continue
            out.extend(self.private_before.get(op, ()))
            out.append(op)
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
        if (m := model_of(op)) is not None and m.load:
            out.add(base(op.operands[0]))
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
        m = model_of(op)
        writes = True if m is None else m.writes
        if isinstance(writes, bool):
            return writes
        return arrays is None or base(op.operands[writes]) in arrays

    def memory_dependent(self, op: Operation, seen: set[Operation] | None = None) -> bool:
        """Whether `op`'s value depends on memory or on values carried between iterations."""
        seen = seen or set()
        if op in seen:
            return False
        seen.add(op)
        if (m := model_of(op)) is not None and m.reads_memory:
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
            for v in operands_deep(op):
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
        poly = self.polyhedron(loops)
        site = Site(tuple(poly.dim_loops))
        dims = poly.dims
        expr = Expr(self, poly.env)
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
            why: str | None = None,
        ) -> None:
            accesses.append(poly.access(name, array, subs, write, may, op, region, why))

        def memref_access(
            v: SSAValue,
            subs: Sequence[str | None] | None,
            write: bool,
            may: bool,
            op: Operation,
            region: Sequence[tuple[str, str]] | None = None,
            why: str | None = None,
        ) -> None:
            found = self.onto_buffer(v, subs, may, op, region, why, expr)
            if found is None:
                return
            arr, subs, may, region, why = found
            access(arr, subs, write, may, op, region, why)

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
            for v in operands_deep(op):
                d = v.owner
                if isinstance(d, Operation) and d in inside:
                    continue
                if self.is_imported(v, op, inside):
                    import_value(v, op)
            self.op_accesses(op, expr, memref_access, anchor)
            if (m := model_of(op)) is not None and m.io:
                # Output keeps its order: every print reads and writes one pseudo-array.
                io = self.io_array()
                access(io, [], False, False, op)
                access(io, [], True, False, op)
        if kind == "init":
            assert iterate is not None
            for v in iterate.iter_inits:
                if self.is_imported(v, anchor, inside):
                    import_value(v, anchor)
        for v, vname, def_site in self.exported(kind, anchor, iterate, site, inside):
            exports.append((v, vname))
            accesses.append(poly.virtual_access(name, vname, def_site, True, anchor))
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

    def exported(
        self,
        kind: StatementKind,
        anchor: Operation,
        iterate: k.IterateOp | None,
        site: Site,
        inside: set[Operation],
    ) -> list[tuple[SSAValue, str, Site]]:
        """The values a statement stores into virtual arrays for later statements: each
        value, its array and the site whose iterations index it (iter_args at an init,
        an iterate's results at its yield, a value used outside its statement)."""
        out: list[tuple[SSAValue, str, Site]] = []
        if kind == "init":
            assert iterate is not None
            for a in iterate.iter_args:
                out.append((a, self.define_virtual(a, site, self.vname(a)), site))
        if kind == "yield":
            assert iterate is not None
            init_site = self.virtual[iterate.iter_args[0]][1]
            for a, r in zip(iterate.iter_args, iterate.results, strict=True):
                vname = self.virtual[a][0]
                self.virtual[r] = (vname, init_site)
                out.append((a, vname, init_site))
        if kind == "value" or kind == "op":
            for r in anchor.results:
                if (
                    any(u.operation not in inside for u in r.uses)
                    and not isinstance(r.type, MemRefType)
                    and (kind == "op" or self.memory_dependent(anchor))
                ):
                    out.append((r, self.define_virtual(r, site, self.vname(r)), site))
        return out

    def onto_buffer(
        self,
        v: SSAValue,
        subs: Sequence[str | None] | None,
        may: bool,
        op: Operation,
        region: Sequence[tuple[str, str]] | None,
        why: str | None,
        expr: Expr,
    ) -> OnBuffer | None:
        """An access of memref `v` as an access of the buffer behind its views: the array,
        the subscripts or region there, whether it becomes a may-access, and why (None: `v`
        is no array of the model)."""
        found = self.array(v, op)
        if found is None:
            return None
        arr, aliased = found
        mapped = (
            through_views(v, cast(list[str], subs), expr)
            if aliased and region is None and subs is not None and None not in subs
            else None
        )
        if mapped is not None and mapped.subs is not None:
            subs = mapped.subs
            if mapped.span > 1:
                # Each element is `span` elements (bytes) of the buffer behind.
                last = len(subs) - 1
                region = [
                    ("", f"_a{d} = {x}" if d < last else f"{x} <= _a{d} < {x} + {mapped.span}")
                    for d, x in enumerate(subs)
                ]
                subs = None
        elif aliased and region is not None and subs is None:
            exact = region_through_views(v, region, expr)
            if exact is not None:
                region = exact  # the view's box, mapped onto the buffer behind
            else:
                subs, region, may = None, None, True
                why = f"{op.name} reaches {arr} through a view ({self.vname(v)}): any element"
        elif aliased:
            subs, region, may = None, None, True
            why = f"{op.name} reaches {arr} through a view ({self.vname(v)}): any element"
            if mapped is not None:
                why += f" ({mapped.blocker} has no exact map to it)"
        return OnBuffer(arr, subs, may, region, why)

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

    def define_virtual(self, v: SSAValue, site: Site, base: str) -> str:
        if v in self.virtual:
            return self.virtual[v][0]
        name = self.names.fresh(base.lstrip("%"))
        dims = tuple(self.loop_names[lp] for lp in site.loops)
        self.arrays[name] = ArrayInfo(name, dims, str(v.type), virtual=True, value=v)
        self.virtual[v] = (name, site)
        return name

    def virtual_of(self, v: SSAValue, op: Operation) -> tuple[str, Site] | None:
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

    def op_accesses(self, op: Operation, expr: Expr, access: Accessor, anchor: Operation) -> None:
        """The accesses of one op of the statement, as its dialect's model gives them."""
        m = model_of(op)
        if m is not None:
            if m.accesses is not None:
                m.accesses(op, expr, access)
        elif op.regions:
            opaque(op, expr, access)  # whatever op it is, its regions can touch any memref
        else:
            self.unsupported_op(op, *POLY.missing_text(op))

    def io_array(self) -> str:
        if "_io" not in self.arrays:
            self.names.taken.add("_io")
            self.arrays["_io"] = ArrayInfo("_io", (), "io", virtual=True)
        return "_io"


def uses_inside(user: Operation, position: dict[Operation, int]) -> bool:
    """Whether `user` (or the op whose region holds it) is in the chunk."""
    op: Operation | None = user
    while op is not None:
        if op in position:
            return True
        op = op.parent_op()
    return False


@bounded("the polyhedral model")
def poly_program(
    fn: Function, recipe: bool = True, reorder: bool = True, *, checked: LoopNest | None = None
) -> PolyProgram:
    """The polyhedral model of `fn` (raises VerifyError / UnsupportedError).

    `checked` is `fn`'s loop nest with its whole recipe, built by `checked_nest`,
    when the caller has it (the program of the recipe does): it is not built again.

    With `recipe=False`, the loops are those of the `with` lists in their
    original order (the recipe ops are ignored); this fails with
    UnsupportedError when the function's statements only have a meaning in the
    blocked nest (statements at tile level, krnl.get_induction_var_value of a
    tile handle, krnl.matmul).

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
    >>> program.statements
    (<Statement S0 (krnl.store, line 7): [N, X_d0] -> { S0[i] : 0 <= i < N }>,)
    >>> print(program.reads)
    [N, X_d0] -> { S0[i] -> X[_a0 = i] : 0 <= i < N }
    """
    if not fn.op.body.blocks:
        raise UnsupportedError(
            f"@{fn.name} is a declaration without a body: nothing to model",
            location=fn.location(fn.op),
            hint="give the function a body, or choose another one",
        )
    nest = checked if checked is not None else checked_nest(fn)
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
        return _build(fn, plain)
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
    return _build(fn, nest)


def _build(fn: Function, nest: LoopNest) -> PolyProgram:
    """The model of `fn` over `nest`, with the scratch buffers allocated outside an
    iterate but private to its iterations given a copy per iteration (privatize.py:
    deciding it needs the dataflow of the model where they are shared)."""
    program = ProgramBuilder(fn, nest).build()
    found = candidates(fn)
    if not found:
        return program
    private = private_cells(program, found)
    if not private:
        return program
    return ProgramBuilder(fn, nest, private).build()

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
  transposed window, then TTRANS), ``X[r]`` (a column of one value per row), ``V[c]``
  (a row of one value per column, combined with tiles by TCOLEXPANDADD/SUB/MUL/...);
- elementwise arith/math ops on tiles (TADD, TSUB, TMUL, TDIV, TMAX, TMIN, TEXP,
  TSQRT, TABS, TNEG, TLOG, TRELU for ``max(x, 0)``), with a constant (TADDS,
  TMULS, ...), or with a per-row value (TROWEXPANDADD/SUB/MUL/DIV/MAX/MIN);
- a store ``Y[r, c] = tile`` (TSTORE) or ``Y[c, r] = tile`` (TTRANS, TSTORE);
- a reduction along the columns carried by iter_args (``krnl.yield old op e``
  with +, max, min): TROWSUM, TROWMAX, TROWMIN into a column of per-row values,
  combined with the initial value unless it is the identity;
- ``C[i, j] = C[i, j] + A[i, k] * B[k, j]`` over a k loop: TLOAD to Mat tiles, TMOV
  to Left/Right, TMATMUL for the first k tile then TMATMUL_ACC, TSTORE from Acc (C
  zero-initialized in the same (i, j) iteration), or an atomic-add TSTORE that adds
  the sum to C's old values.

Nests that share a function-level temporary are fused into one loop over row tiles
(:mod:`~polykrnl.targets.pto.fusion`), the temporary kept in UB (a krnl.memset of it is
the constant its rows start from). A nest that copies a tensor
into a convolution layout is one TTRANS on ConvTiles (:mod:`~polykrnl.targets.pto.layouts`).

Anything else is refused with a PtoError naming the statement and the reason;
nothing is emitted wrongly.

Here the function's arguments become the kernel's tensors and sizes; each nest is
planned in :mod:`~polykrnl.targets.pto.nest_plan`, which hands its body to
:mod:`~polykrnl.targets.pto.tilewise`, :mod:`~polykrnl.targets.pto.matmul` or
:mod:`~polykrnl.targets.pto.tile_buffers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy  # type: ignore[import-untyped]
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from polykrnl.codegen.safe_text import cpp_identifier
from polykrnl.errors import PtoError
from polykrnl.poly import DimParam, ParamSource, PolyProgram, Statement, ValueParam
from polykrnl.targets.pto import symbolic
from polykrnl.targets.pto.dtypes import dtype
from polykrnl.targets.pto.fusion import (
    Temporary,
    arrays_in,
    nest_groups,
    returned_buffers,
    temporaries,
)
from polykrnl.targets.pto.layouts import conversion_of
from polykrnl.targets.pto.loop_bounds import int_symbol
from polykrnl.targets.pto.lowering_state import KernelBuilder, lowering_error
from polykrnl.targets.pto.matmul import krnl_matmul_of, zero_memset
from polykrnl.targets.pto.memset import lower_memset, memset_of
from polykrnl.targets.pto.nest_plan import (
    first_statement,
    lower_group,
    lower_nest,
    statements_in,
)
from polykrnl.targets.pto.pipeline import double_buffer as pipelined
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Item,
    Loop,
    Program,
    SetValid,
    TensorParam,
    plan_offsets,
)
from polykrnl.targets.pto.sync import insert_sync
from polykrnl.targets.pto.tmp_sizes import tmp_sizes
from polykrnl.targets.pto.types import Arch, arch
from polykrnl.transforms.core import Schedule, SLoop, SNode, SStmt

__all__ = ["Lowered", "lower"]


@dataclass(frozen=True)
class Lowered:
    """A PTO tile program for a schedule, and what the kernel object needs around it."""

    program: Program
    # tmp tile -> the bytes it needs, as a function of the problem sizes (max over tiles)
    tmp_sizes: Mapping[str, symbolic.SymbolicSize]
    # problem-size parameter (isl name) -> how it is given: an index argument's name,
    # or `A.0` for a dimension of a memref argument
    param_sources: Mapping[str, ParamSource]
    # the Krnl function's arguments in order (memrefs are the program's tensors)
    arguments: tuple[str, ...]
    # sizes given in `params` that static tile shapes were derived from (isl name ->
    # value): the kernel is only correct for these values
    fixed: Mapping[str, int] = field(default_factory=dict)


def _refuse_moved_loops(sched: Schedule) -> None:
    """Refuse a skewed, fused, surrounded or distributed schedule: tiles are planned from
    each loop's own bounds, and such a loop runs its statements over other ranges (each on
    its own domain)."""
    moved = next(
        (st for st in sched.steps if st.op in ("skew", "fuse", "surround", "distribute")), None
    )
    if moved is not None:
        raise PtoError(
            f"PTO code generation: the schedule applies {moved.op}({', '.join(moved.loops)}), "
            "and PTO kernels are planned from loops that run as written or tiled",
            hint="generate this schedule with to_numpy(), to_numba() or to_mlir(), or "
            "tile the loops without skew or fusion for PTO",
        )


def lower(
    sched: Schedule,
    arch_name: str | Arch = "a2a3",
    params: Mapping[str, int] | None = None,
    *,
    double_buffer: bool = True,
) -> Lowered:
    """The PTO tile program of `sched` (see the module docstring for what is recognized).

    `params` fixes problem sizes (isl names: `N`, `A_d0`) that the static tile shapes
    need when a loop that is not blocked has a symbolic range; `double_buffer` gives the
    tiles of innermost tile loops two copies where they fit (:mod:`.pipeline`).
    """
    _refuse_moved_loops(sched)
    a = arch(arch_name)
    program = sched.program
    fn = program.function
    given = dict(params or {})
    tensors, tensor_of_value, sources = _argument_tensors(program)
    returned = _output_tensors(sched, tensors, tensor_of_value)
    b = KernelBuilder(sched, a, given, tensors, tensor_of_value)
    body: list[Item] = []
    owner: dict[str, Statement] = {}  # tile -> first statement of the nest declaring it
    # tile -> its group: the groups run one after the other, so their tiles share UB
    scopes: dict[str, int] = {}
    temps = temporaries(sched)
    workspaces: dict[str, str] = {}  # temporary kept in GM -> why
    groups = nest_groups(sched, temps, {stmt for _, stmt in returned})
    zeroed: Statement | None = None  # a krnl.memset of 0 right before this group
    for n, group in enumerate(groups):
        node = group[0]
        before = len(b.tiles)
        if _zeroes_next(b, group, groups[n + 1 :]):
            # Y = 0, then a krnl.matmul into Y (the cube's accumulator starts from zero) or
            # a padded layout conversion into Y (its padding lanes are the zeros)
            zeroed = sched.statements[node.name]
            continue
        try:
            shared = {a for x in group for a in arrays_in(sched, x)} & set(temps)
            alone = sched.statements[node.name] if isinstance(node, SStmt) else None
            if len(group) == 1 and alone is not None and memset_of(b, alone) is not None:
                body += lower_memset(b, alone)
            elif zeroed is not None:
                body += lower_nest(b, node, zeroed)
            elif shared:
                body += _fused_or_in_gm(b, group, shared, temps, workspaces)
            else:
                body += lower_nest(b, node)
        except PtoError as e:
            if e.location is not None:
                raise
            # Raised where no statement was at hand (a loop bound): the nest's first one.
            prefix = "PTO code generation: "
            message = e.message[len(prefix) :] if e.message.startswith(prefix) else e.message
            raise lowering_error(first_statement(sched, node), message, e.hint) from None
        owner.update({t.name: first_statement(sched, node) for t in b.tiles[before:]})
        scopes.update({t.name: n for t in b.tiles[before:]})
        zeroed = None
    used_params = sorted(
        {str(s) for t in tensors.values() for d in t.shape for s in sympy.sympify(d).free_symbols}
        | {str(s) for it in body for s in _free(it)}
    )
    for p in used_params:
        if p not in sources:
            raise lowering_error(None, f"the size {p} is computed inside the function")
    try:
        decls = plan_offsets([(t.name, t.type) for t in b.tiles], a, scopes=scopes)
    except PtoError as e:
        # Name the nest of the largest tile (the one to block more finely) and point at it:
        # of the group whose tiles do not fit (groups use the buffers one after the other).
        failing = [t for t in b.tiles if scopes.get(t.name, 0) == _failing_scope(b, scopes, a)]
        largest = max(failing or b.tiles, key=lambda t: t.type.bytes)
        raise lowering_error(
            owner[largest.name],
            f"{e.message}; the largest tile is {largest.name} of this nest",
            hint="block the loops (krnl.block) so that one tile holds fewer elements",
        ) from None
    prog = Program(
        cpp_identifier(fn.name),
        tuple(tensors[x.name] for x in fn.arguments if x.name in tensors)
        + tuple(tensors[tensor_of_value[v]] for v, _ in returned)
        + tuple(tensors[w] for w in workspaces),
        tuple(used_params),
        decls,
        tuple(body),
        a,
        notes=tuple(
            f"workspace {w}: a temporary kept in global memory, the nests that share it "
            f"not fused ({why})"
            for w, why in workspaces.items()
        ),
    )
    prog = insert_sync(pipelined(prog) if double_buffer else prog)
    return Lowered(
        prog,
        tmp_sizes(b),
        {p: sources[p] for p in used_params},
        tuple(x.name for x in fn.arguments),
        {p: v for p, v in given.items() if p in b.shaping},
    )


def _argument_tensors(
    program: PolyProgram,
) -> tuple[dict[str, TensorParam], dict[SSAValue, str], dict[str, ParamSource]]:
    """The kernel's tensor of each memref argument (its shape in the problem sizes), the
    argument value of each, and where each size comes from (an index argument, a
    dimension); PtoError for an argument PTO kernels do not take."""
    fn = program.function
    tensors: dict[str, TensorParam] = {}
    tensor_of_value: dict[SSAValue, str] = {}
    sources: dict[str, ParamSource] = {}
    dim_param = {
        (src.array, src.dim): p
        for p, src in program.param_sources.items()
        if isinstance(src, DimParam)
    }
    block_args = fn.op.body.block.args
    for argument, value in zip(fn.arguments, block_args, strict=True):
        if isinstance(argument.type, MemRefType):
            shape: list[sympy.Expr] = []
            for n, d in enumerate(argument.type.get_shape()):
                if d >= 0:
                    shape.append(sympy.Integer(d))
                    continue
                pname = dim_param.get((value, n), f"{argument.name}_d{n}")
                sources[pname] = DimParam(value, argument.name, n)
                shape.append(int_symbol(pname))
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
            sources[program.symbols[value]] = ValueParam(value, argument.name)
        else:
            raise PtoError(
                f"PTO code generation: @{fn.name} takes the scalar argument {argument.name} "
                f"({argument.type}); PTO kernels here take tensors and index sizes only",
                location=fn.location(fn.op),
                hint="make it a constant in the Krnl function, or a 1-element memref",
            )
    return tensors, tensor_of_value, sources


def _failing_scope(b: KernelBuilder, scopes: dict[str, int], a: Arch) -> int:
    """The first group whose tiles alone do not fit their buffers."""
    for scope in sorted(set(scopes.values())):
        try:
            plan_offsets([(t.name, t.type) for t in b.tiles if scopes[t.name] == scope], a)
        except PtoError:
            return scope
    return 0


def _zeroes_next(b: KernelBuilder, group: list[SNode], rest: list[list[SNode]]) -> bool:
    """Whether `group` is a `krnl.memset` of 0 into what the nest after it writes, when
    that nest is a krnl.matmul (into C) or a padded layout conversion."""
    if len(group) != 1 or not isinstance(group[0], SStmt) or not rest or len(rest[0]) != 1:
        return False
    sched = b.sched
    c = zero_memset(b, sched.statements[group[0].name])
    nest = rest[0][0]
    if c is None or not isinstance(nest, SLoop):
        return False
    statements = [sched.statements[x] for x in statements_in((nest,))]
    op = krnl_matmul_of(b, statements)
    if op is not None:
        return b.tensor_of_value.get(op.C) == c
    conv = conversion_of(b, statements)
    return conv is not None and conv.padded and conv.dst == c


def _fused_or_in_gm(
    b: KernelBuilder,
    group: list[SNode],
    shared: set[str],
    temps: Mapping[str, Temporary],
    workspaces: dict[str, str],
) -> list[Item]:
    """The nests that share `shared` fused, or, when they cannot be, each nest on its own
    with the temporaries as workspace tensors in global memory (TSTORE by one nest, TLOAD
    by the next): the kernel then takes them as arguments, after the outputs."""
    state = b.snapshot()
    try:
        return lower_group(b, group, shared)
    except PtoError as e:
        b.restore(state)
        why = e.message.removeprefix("PTO code generation: ")
    sched = b.sched
    for k, array in enumerate(sorted(shared)):
        stmt = temps[array].alloc
        value = sched.statements[stmt].anchor.results[0]
        name = _buffer_tensor(sched, value, stmt, array, f"temp{k}", b.tensors)
        b.tensor_of_value[value] = name
        workspaces[name] = why
    items: list[Item] = []
    try:
        for node in group:
            alone = sched.statements[node.name] if isinstance(node, SStmt) else None
            if alone is not None and memset_of(b, alone) is not None:
                items += lower_memset(b, alone)  # a workspace's memset, now a tensor's
            else:
                items += lower_nest(b, node)
    except PtoError as e:
        raise PtoError(
            e.message, location=e.location, hint=f"{e.hint} (the nests sharing a temporary "
            f"were not fused either: {why})",
        ) from None  # fmt: skip
    return items


def _output_tensors(
    sched: Schedule, tensors: dict[str, TensorParam], tensor_of_value: dict[SSAValue, str]
) -> list[tuple[SSAValue, str]]:
    """The returned buffers as output tensors after the arguments, named after their SSA
    value (`result<k>` when unnamed or taken); their sizes are the kernel's parameters."""
    out = returned_buffers(sched)
    for k, (v, stmt) in enumerate(out):
        name = _buffer_tensor(sched, v, stmt, v.name_hint, f"result{k}", tensors)
        tensor_of_value[v] = name
    return out


def _buffer_tensor(
    sched: Schedule,
    v: SSAValue,
    stmt: str,
    name: str | None,
    fallback: str,
    tensors: dict[str, TensorParam],
) -> str:
    """A buffer the function allocates (statement `stmt`) as a kernel tensor: `name`, or
    `fallback` when it is missing, taken or no identifier; its sizes must be parameters."""
    program = sched.program
    s = sched.statements[stmt]
    if not name or name in tensors or not name.isidentifier():
        name = fallback
    mtype = v.type
    assert isinstance(mtype, MemRefType)
    sizes = iter(s.anchor.operands)
    shape: list[sympy.Expr] = []
    for d in mtype.get_shape():
        if d >= 0:
            shape.append(sympy.Integer(d))
            continue
        size = next(sizes)
        if size not in program.symbols:
            raise lowering_error(s, f"the buffer {name} has a size computed inside the function")
        shape.append(int_symbol(program.symbols[size]))
    try:
        dt = dtype(str(mtype.element_type))
    except Exception as e:
        raise lowering_error(
            s, f"the buffer {name} holds {mtype.element_type}, which PTO tiles do not"
        ) from e
    tensors[name] = TensorParam(name, dt, shape)
    return name


def _free(item: Item) -> set[sympy.Symbol]:
    """The size symbols `item` uses (its own loop variables excluded)."""
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

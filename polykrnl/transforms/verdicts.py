"""How sure a violation is: certain, under a data condition, or only possible.

The dependences legality checks are computed from every access, the model's
over-approximations included. A violated pair of instances is

* **certain** when two must-accesses realize it: both instances run and touch the
  same element (the model's domains and affine subscripts are exact);
* **data**: realized by accesses whose only approximation is a subscript read from
  memory (`B[idx[i]]`): both instances run, and they touch the same element exactly
  when those subscripts agree, a condition on the input this module states
  ("when idx[0] == idx[1]");
* **may**: it exists only through an access the model over-approximates (an opaque
  statement, a branch on a value, a loop of unknown trip count). Nothing is proven
  either way: the violation names each approximated statement and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import islpy as isl
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir import OpResult, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineSymExpr

from polykrnl.dialect.std_ext import ExtSIOp, ExtUIOp, IndexCastUIOp, TruncIOp
from polykrnl.ir import value_name
from polykrnl.poly import Access, PolyProgram, Statement
from polykrnl.poly.table import model_of
from polykrnl.transforms.dependences import Dependence
from polykrnl.transforms.legality_report import Instance

Certainty = Literal["certain", "data", "may"]

# Integer casts keep the subscript's value (for the indices a program can use): the
# condition names the element loaded, not the cast.
_CASTS = (arith.IndexCastOp, IndexCastUIOp, ExtSIOp, ExtUIOp, TruncIOp)

# Which accesses of the source and sink a dependence of each kind pairs (write?).
_ENDS = {"RAW": (True, False), "WAR": (False, True), "WAW": (True, True)}


@dataclass(frozen=True)
class Judgement:
    """The pairs to take a witness from, how sure a violation among them is, and why."""

    pairs: isl.UnionMap
    certainty: Certainty
    # For "data": the accesses (source's, sink's) whose subscripts the condition compares.
    accesses: tuple[Access, Access] | None = None
    # For "may": each approximated statement of the pairs, with why ("S3 (scf.if, line
    # 12): scf.if is opaque to the model: ...").
    reasons: tuple[str, ...] = ()


def judge(program: PolyProgram, d: Dependence, bad: isl.UnionMap) -> Judgement:
    """How sure the violation of `d` on the instance pairs `bad` is (see the module doc)."""
    stmts = program.statement_map
    src, snk = stmts[d.source], stmts[d.sink]
    src_write, snk_write = _ENDS[d.kind]
    ends = [
        (a, b)
        for a in src.accesses
        if a.array == d.array and a.write == src_write
        for b in snk.accesses
        if b.array == d.array and b.write == snk_write
    ]
    data_ok = {id(a): _data_only(a, st, program) for st in (src, snk) for a in st.accesses}
    met: list[tuple[Access, Access, isl.UnionMap]] = []
    for a, b in ends:
        pairs = isl.UnionMap.from_map(a.relation).apply_range(
            isl.UnionMap.from_map(b.relation).reverse()
        )
        meet = pairs.intersect(bad)
        if not meet.is_empty():
            met.append((a, b, meet))
    for a, b, meet in met:
        if not a.may and not b.may:
            return Judgement(meet, "certain")
    for a, b, meet in met:
        if data_ok[id(a)] and data_ok[id(b)]:
            return Judgement(meet, "data", (a, b))
    reasons: list[str] = []
    for a, b, _ in met:
        for st, x in ((src, a), (snk, b)):
            if x.may:
                text = f"{st.label}: {x.approximation or 'may touch any element of ' + x.array}"
                if text not in reasons:
                    reasons.append(text)
    return Judgement(bad, "may", reasons=tuple(reasons))


def _data_only(a: Access, st: Statement, program: PolyProgram) -> bool:
    """Whether `a` runs whenever its statement does and its only approximation is
    subscripts computed from values loaded from memory."""
    if not a.may:
        return True
    if not a.data_subscripts:
        return False
    return all(
        (v := _subscript_value(a, dim)) is not None and _loaded(v, st) is not None
        for dim in a.data_subscripts
    )


def condition(
    program: PolyProgram,
    accesses: tuple[Access, Access],
    src: Instance,
    snk: Instance,
    params: Mapping[str, int],
) -> str:
    """The data condition under which the two accesses at `src` and `snk` touch one element:
    "idx[0] == idx[1]" (each data subscript by the element it is loaded from)."""
    stmts = program.statement_map
    a, b = accesses
    parts: list[str] = []
    for dim in sorted({*a.data_subscripts, *b.data_subscripts}):
        left = _subscript_text(program, a, dim, stmts[src.stmt], src, params)
        right = _subscript_text(program, b, dim, stmts[snk.stmt], snk, params)
        if left != right:
            parts.append(f"{left} == {right}")
    return " and ".join(parts)


def _subscript_value(a: Access, dim: int) -> SSAValue | None:
    """The SSA value of subscript `dim` of `a`'s op, when the op names it directly."""
    indices = getattr(a.op, "indices", None)
    if indices is None:
        return None
    values = list(indices)
    m = getattr(a.op, "map", None)
    if isinstance(m, AffineMapAttr):
        results = m.data.results
        if dim >= len(results):
            return None
        e = results[dim]
        if isinstance(e, AffineDimExpr):
            return values[e.position]
        if isinstance(e, AffineSymExpr):
            return values[m.data.num_dims + e.position]
        return None
    return values[dim] if dim < len(values) else None


def _loaded(v: SSAValue, st: Statement) -> Access | None:
    """The read of `st` that loads `v` (through integer casts), when there is one."""
    while isinstance(v, OpResult) and isinstance(v.op, _CASTS):
        v = v.op.operands[0]
    if not isinstance(v, OpResult) or (m := model_of(v.op)) is None or not m.load:
        return None
    return next((r for r in st.accesses if r.op is v.op and not r.write), None)


def _subscript_text(
    program: PolyProgram,
    a: Access,
    dim: int,
    st: Statement,
    inst: Instance,
    params: Mapping[str, int],
) -> str:
    """Subscript `dim` of `a` at `inst`: a number when affine, the element a data
    subscript is loaded from ("idx[0]"), else the value's name at the instance."""
    if dim not in a.data_subscripts:
        value = _value_at(program, st, _affine_subscript(a, dim), inst, params)
        return str(value) if value is not None else f"subscript {dim} of {a.array} at {inst}"
    v = _subscript_value(a, dim)
    load = _loaded(v, st) if v is not None else None
    if load is not None and load.subscripts is not None:
        values = [_value_at(program, st, x, inst, params) for x in load.subscripts]
        shown = ", ".join(str(x) if x is not None else "?" for x in values)
        return f"{load.array}[{shown}]"
    name = value_name(v, program.function.module) if v is not None else f"subscript {dim}"
    return f"{name} at {inst}"


def _affine_subscript(a: Access, dim: int) -> str | None:
    return a.subscripts[dim] if a.subscripts is not None else None


def _value_at(
    program: PolyProgram,
    st: Statement,
    text: str | None,
    inst: Instance,
    params: Mapping[str, int],
) -> int | None:
    """The value of `text` (an isl expression of `_l0, _l1, ...`, the statement's loops)
    at instance `inst`, when the instance and `params` fix it."""
    if text is None:
        return None
    names = ", ".join(program.params)
    loops = ", ".join(f"_l{n}" for n in range(len(st.loops)))
    try:
        f = isl.Map(f"[{names}] -> {{ [{loops}] -> [{text}] }}")
        fixed = " and ".join(
            [
                *(f"{d} = {inst.point[d]}" for d in st.dims),
                *(f"{p} = {v}" for p, v in params.items() if p in program.params),
            ]
        )
        point = isl.Set(f"[{names}] -> {{ {st.name}[{', '.join(st.dims)}] : {fixed or 'true'} }}")
        image = st.loop_values.intersect_domain(point).apply_range(f).range()
        if image.is_empty() or not image.is_singleton():
            return None
        p = image.sample_point()
        return int(p.get_coordinate_val(isl.dim_type.set, 0).to_python())
    except isl.Error:
        return None

"""MLIR text being written: SSA names, nested regions, and isl's AST expressions as
`arith` ops on `index` values.

Every value gets a fresh name (`%i_3`), so nothing of the input reaches the text except
through `ssa_name` (letters, digits and `_` only) and `comment` (one line, no control
character). Index constants are kept apart and written at the start of the function
(`constants`), where they dominate every use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import islpy as isl

from polykrnl.codegen.safe_text import cpp_comment_text
from polykrnl.errors import UnsupportedError

_AND = isl.ast_expr_op_type.and_  # type: ignore[attr-defined]
_OR = isl.ast_expr_op_type.or_  # type: ignore[attr-defined]

# isl's binary operators on index values. `div` is exact (the dividend is a multiple),
# `pdiv_q` has a non-negative dividend: both are floor divisions like `fdiv_q`.
# `pdiv_r` has a non-negative dividend and `zdiv_r` is only compared with 0, so the
# truncated remainder is right for both.
_BINARY: dict[Any, str] = {
    isl.ast_expr_op_type.add: "arith.addi",
    isl.ast_expr_op_type.sub: "arith.subi",
    isl.ast_expr_op_type.mul: "arith.muli",
    isl.ast_expr_op_type.div: "arith.floordivsi",
    isl.ast_expr_op_type.fdiv_q: "arith.floordivsi",
    isl.ast_expr_op_type.pdiv_q: "arith.floordivsi",
    isl.ast_expr_op_type.pdiv_r: "arith.remsi",
    isl.ast_expr_op_type.zdiv_r: "arith.remsi",
    isl.ast_expr_op_type.min: "arith.minsi",
    isl.ast_expr_op_type.max: "arith.maxsi",
}
_COMPARE: dict[Any, str] = {
    isl.ast_expr_op_type.eq: "eq",
    isl.ast_expr_op_type.le: "sle",
    isl.ast_expr_op_type.lt: "slt",
    isl.ast_expr_op_type.ge: "sge",
    isl.ast_expr_op_type.gt: "sgt",
}
_LOGIC: dict[Any, str] = {
    _AND: "arith.andi",
    isl.ast_expr_op_type.and_then: "arith.andi",
    _OR: "arith.ori",
    isl.ast_expr_op_type.or_else: "arith.ori",
}


def ssa_name(hint: str) -> str:
    """The part of an SSA name made from `hint` (a Krnl value or loop name)."""
    words = re.findall(r"[A-Za-z0-9]+", hint)
    base = "_".join(words) or "v"
    return base if not base[0].isdigit() else "v" + base


def comment(text: str) -> str:
    """`text` as the body of one `//` comment line."""
    return cpp_comment_text(text)


@dataclass
class MlirWriter:
    """The lines of one function body, with the names it has given."""

    lines: list[str] = field(default_factory=list)
    depth: int = 2
    taken: set[str] = field(default_factory=set)
    # index constant -> its name; written at the function's start
    constants: dict[int, str] = field(default_factory=dict)
    # isl identifier (iterator or parameter) -> the SSA name of its value
    isl_names: dict[str, str] = field(default_factory=dict)

    def fresh(self, hint: str) -> str:
        base = ssa_name(hint)
        out, n = base, 0
        while out in self.taken:
            n += 1
            out = f"{base}_{n}"
        self.taken.add(out)
        return "%" + out

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, hint: str, text: str) -> str:
        """`%name = text`; the new name."""
        out = self.fresh(hint)
        self.line(f"{out} = {text}")
        return out

    def index(self, value: int) -> str:
        """An index constant."""
        if value not in self.constants:
            self.constants[value] = self.fresh(f"c{value}" if value >= 0 else f"cm{-value}")
        return self.constants[value]

    def constant_lines(self) -> list[str]:
        return [f"    {n} = arith.constant {v} : index" for v, n in sorted(self.constants.items())]

    # -- isl AST expressions
    def expr(self, e: isl.AstExpr) -> str:
        """The SSA name of isl expression `e` (index, or i1 for a condition)."""
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return self.index(int(e.int_get_val().to_python()))
        if t == isl.ast_expr_type.id:
            name = str(e.id_get_id().get_name())
            if name not in self.isl_names:
                raise UnsupportedError(
                    f"MLIR code generation: isl's AST names {name}, which has no value here",
                    hint="report the schedule: this is a bug of polykrnl",
                )
            return self.isl_names[name]
        op = e.get_op_type()
        args = [self.expr(e.op_get_arg(i)) for i in range(e.op_get_n_arg())]
        if op in _BINARY:
            out = args[0]
            for a in args[1:]:
                out = self.op("t", f"{_BINARY[op]} {out}, {a} : index")
            return out
        if op in _COMPARE:
            return self.op("p", f"arith.cmpi {_COMPARE[op]}, {args[0]}, {args[1]} : index")
        if op in _LOGIC:
            out = args[0]
            for a in args[1:]:
                out = self.op("p", f"{_LOGIC[op]} {out}, {a} : i1")
            return out
        if op == isl.ast_expr_op_type.minus:
            return self.op("t", f"arith.subi {self.index(0)}, {args[0]} : index")
        if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
            return self.op("t", f"arith.select {args[0]}, {args[1]}, {args[2]} : index")
        raise UnsupportedError(
            f"MLIR code generation: isl produced an expression polykrnl does not translate: {op}",
            hint="report the schedule",
        )

    def pw_aff(self, pa: isl.PwAff, dims: list[str]) -> str:
        """The value of a piecewise quasi-affine function of the dims (SSA names `dims`)."""
        n = pa.dim(isl.dim_type.in_)
        ids = [f"__pk_d{i}" for i in range(n)]
        for i in range(n):
            pa = pa.set_dim_id(isl.dim_type.in_, i, isl.Id(ids[i], context=pa.get_ctx()))
        pa = pa.move_dims(isl.dim_type.param, pa.dim(isl.dim_type.param), isl.dim_type.in_, 0, n)
        pa = pa.reset_tuple_id(isl.dim_type.in_)
        build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space()))
        saved = dict(self.isl_names)
        self.isl_names.update(zip(ids, dims, strict=True))
        try:
            return self.expr(build.expr_from_pw_aff(pa))
        finally:
            self.isl_names = saved

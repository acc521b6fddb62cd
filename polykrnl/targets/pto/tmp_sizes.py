"""The bytes each tmp tile needs, as a function of the problem sizes: the tmp rule at each
tile's valid extents, maximized over the tiles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import islpy as isl
import sympy  # type: ignore[import-untyped]

from polykrnl.targets.pto import symbolic, tmp_rules
from polykrnl.targets.pto.lowering_state import KernelBuilder

__all__ = ["tmp_sizes"]


def tmp_sizes(b: KernelBuilder) -> dict[str, symbolic.SymbolicSize]:
    """Each tmp tile's bytes as a function of the problem sizes: the rule at each tile's
    valid extents, maximized over the tiles (exactly where symbolic.max_over_tiles can)."""
    out: dict[str, symbolic.SymbolicSize] = {}
    for name, (form, dt) in b.tmp_conv.items():
        # A layout conversion: one tile of static shape, the rule at its sizes.
        e = tmp_rules.tmp_bytes(form.rule, b.arch, dtype=dt, **form.tmp_sizes())
        out[name] = symbolic.SymbolicSize(sympy.Integer(int(e)), ())
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
            sympy.sympify(e), {x: n for x, n in bounds.items() if x in _ext_syms(ext, vr, vc)}
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


def _ext_syms(
    ext: Mapping[str, isl.PwAff], vr: sympy.Symbol, vc: sympy.Symbol
) -> set[sympy.Symbol]:
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

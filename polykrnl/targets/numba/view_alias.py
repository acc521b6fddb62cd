"""Numba's parallel passes must know that `a.view(dtype)` is `a`'s memory.

With `parallel=True`, Numba removes the stores to an array that nothing reads later,
after an alias analysis (`numba.core.ir_utils.find_potential_aliases`) that knows
slices, `reshape`, `ravel`, `transpose` and `.T`, but not `.view` nor
`np.lib.stride_tricks.as_strided` (memref.reinterpret_cast). A pool temporary is
a view of an i8 buffer (`pool[0:16].view(np.float32)`, memref.view), written through one
view and read through another: the writes were dropped as dead, and a parallel softmax
returned zeros (numba 0.68; tests/targets/numba/test_numba_scalars.py).

A kernel that calls `prange` and `.view` carries :data:`SOURCE`, which adds the missing
rule through the analysis' extension table (keyed by the IR node type; a rule already
there for assignments still runs first): after `x = y.view(...)` or
`x = as_strided(y, ...)`, `x` aliases `y`. It
runs when the kernel's module is imported, before anything compiles, in polykrnl's
kernels and in the modules `polykrnl emit` writes; and the text changes the kernel's
source, so a kernel cached before the rule is compiled again.
"""

from __future__ import annotations

import ast

#: the helper's name among a kernel's helpers
NAME = "_pk_view_alias"

SOURCE = '''
def _pk_view_alias():
    """Numba's parallel passes drop stores through `a.view(...)` and `as_strided(a, ...)`
    unless told that they are `a`'s memory (polykrnl/targets/numba/view_alias.py): add
    that rule, once."""
    from numba.core import ir, ir_utils

    before = ir_utils.alias_analysis_extensions.get(ir.Assign)
    if getattr(before, "_pk_view_alias", False):
        return

    def rule(instr, args, typemap, func_ir, alias_map, arg_aliases):
        if before is not None:
            before(instr, args, typemap, func_ir, alias_map, arg_aliases)
        expr = instr.value
        if not (isinstance(expr, ir.Expr) and expr.op == "call"):
            return
        method = ir_utils.guard(ir_utils.get_definition, func_ir, expr.func)
        if not (isinstance(method, ir.Expr) and method.op == "getattr"):
            return
        if method.attr == "view":
            rhs = method.value.name
        elif method.attr == "as_strided" and expr.args:
            rhs = expr.args[0].name
        else:
            return
        lhs = instr.target.name
        if rhs in arg_aliases:
            arg_aliases.add(lhs)
        else:  # as the analysis records `x = y.reshape(...)`
            alias_map.setdefault(rhs, set()).add(lhs)
            alias_map.setdefault(lhs, set()).add(rhs)

    rule._pk_view_alias = True
    ir_utils.alias_analysis_extensions[ir.Assign] = rule


_pk_view_alias()
'''


def needed(fn: ast.FunctionDef) -> bool:
    """Whether the kernel `fn` runs loops on threads and views a buffer."""
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    views = any(
        isinstance(n, ast.Attribute) and n.attr in ("view", "as_strided") for n in ast.walk(fn)
    )
    return "prange" in names and views

"""LoopTree: the loop nest of a Schedule, as onnx-mlir's lowering would write it.

``str(tree)``::

    for %i_t = 0 to 10 step 4 {
      for %i = %i_t to min(%i_t + 4, 10) {
        S0: krnl.store B[%i] <- A[%i]
      }
    }

Loop headers are ``for %NAME = LB to UB [step S] {``, with ``  // parallel``,
``  // parallel in parts``, ``  // unroll`` after the brace; LB is one expression or
``max(...)``, UB one or ``min(...)``. A statement line is ``S<n>: <op> <writes> <- <reads>``;
accesses are written with the names of the loops that carry the values
(``A[%i, %j + 1]``), values passed between statements as ``%name``, and
accesses to a region of an array (memset, tile copies, ...) as ``A[..]``.

``tree.to_json()`` is the same tree as plain data::

    {"function": "f", "body": [NODE, ...]}
    NODE = {"loop": "i_t", "kind": "tile", "lb": "0", "ub": "10", "step": 4,
            "parallel": false, "parts": false, "unroll": false, "trivial": false,
            "body": [NODE, ...]}
         | {"stmt": "S0", "op": "krnl.store", "line": 7,
            "writes": ["B[%i]"], "reads": ["A[%i]"]}
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import islpy as isl

from polykrnl.display import display_box, highlight
from polykrnl.poly import PolyProgram, Statement
from polykrnl.transforms.core import Schedule, SLoop, SNode


@dataclass(frozen=True)
class LoopNode:
    name: str
    kind: str
    lb: str
    ub: str
    step: int
    parallel: bool
    unroll: bool
    trivial: bool
    body: tuple[TreeNode, ...]
    parts: bool = False  # parallel in parts at its split point (Schedule.parallel_parts)


@dataclass(frozen=True)
class StmtNode:
    name: str
    op: str
    line: int | None
    writes: tuple[str, ...]
    reads: tuple[str, ...]


TreeNode = LoopNode | StmtNode


@dataclass(frozen=True)
class LoopTree:
    """The final loop nest of a schedule: `Schedule.loops()`.

    `str()` writes the loops the way onnx-mlir's lowering would (`for %i = lb to ub
    step s`, `// parallel`, `// unroll`, each statement with its writes and reads);
    `to_json()` is the same as data; `loops()` lists the outermost loops.

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
    >>> tree = pk.schedule(fn).block("i", 4).loops()
    >>> print(tree)
    for %i_t = 0 to %N step 4 {
      for %i = %i_t to min(%i_t + 4, %N) {
        S0: krnl.store X[%i] <- X[%i]
      }
    }
    >>> tree.to_json()["body"][0]["loop"]
    'i_t'
    """

    function: str
    body: tuple[TreeNode, ...]

    def __str__(self) -> str:
        lines: list[str] = []
        _lines(self.body, 0, lines)
        return "\n".join(lines) + ("\n" if lines else "")

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "body": [_json(n) for n in self.body]}

    def loops(self) -> list[LoopNode]:
        """Every loop, outermost first, in program order."""
        out: list[LoopNode] = []

        def go(nodes: tuple[TreeNode, ...]) -> None:
            for n in nodes:
                if isinstance(n, LoopNode):
                    out.append(n)
                    go(n.body)

        go(self.body)
        return out

    def _repr_html_(self) -> str:
        return display_box(
            "looptree", f"loop nest of @{self.function}", highlight(str(self), "mlir")
        )


def _lines(nodes: tuple[TreeNode, ...], depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for n in nodes:
        if isinstance(n, StmtNode):
            text = f"{n.name}: {n.op}"
            if n.writes:
                text += " " + ", ".join(n.writes)
            if n.reads:
                text += " <- " + ", ".join(n.reads)
            out.append(pad + text)
            continue
        step = f" step {n.step}" if n.step != 1 else ""
        flags = (("parallel", n.parallel), ("parallel in parts", n.parts), ("unroll", n.unroll))
        marks = [m for m, on in flags if on]
        tail = f"  // {', '.join(marks)}" if marks else ""
        out.append(f"{pad}for %{n.name} = {n.lb} to {n.ub}{step} {{{tail}")
        _lines(n.body, depth + 1, out)
        out.append(pad + "}")


def _json(n: TreeNode) -> dict[str, Any]:
    if isinstance(n, StmtNode):
        return {
            "stmt": n.name,
            "op": n.op,
            "line": n.line,
            "writes": list(n.writes),
            "reads": list(n.reads),
        }
    return {
        "loop": n.name,
        "kind": n.kind,
        "lb": n.lb,
        "ub": n.ub,
        "step": n.step,
        "parallel": n.parallel,
        "parts": n.parts,
        "unroll": n.unroll,
        "trivial": n.trivial,
        "body": [_json(b) for b in n.body],
    }


def loop_tree(sched: Schedule) -> LoopTree:
    """The loop nest of `sched` (see the module docstring)."""
    stmts = sched.statements

    def go(nodes: tuple[SNode, ...], outer: tuple[str, ...]) -> tuple[TreeNode, ...]:
        out: list[TreeNode] = []
        for n in nodes:
            if isinstance(n, SLoop):
                info = sched.loop_info[n.name]
                used = {
                    x
                    for b in (*info.lbs, *info.ubs)
                    for r in b.operands
                    if r.kind == "value"
                    for x in sched.vid_loops(r.name)
                }
                if used <= set(outer) and not info.isl_bounds:
                    lb = sched.format_bound_list(info.lbs, "max")
                    ub = sched.format_bound_list(info.ubs, "min")
                else:
                    # The bounds use a loop that is now inside this one (a skewed band
                    # was tiled or permuted): the range over it, as isl computes it.
                    lb, ub = _isl_bounds(sched, (*outer, n.name))
                out.append(
                    LoopNode(
                        n.name,
                        info.kind,
                        lb,
                        ub,
                        info.step,
                        info.parallel,
                        info.unroll,
                        info.trivial,
                        go(n.body, (*outer, n.name)),
                        info.parts,
                    )
                )
            else:
                out.append(_stmt_node(sched, stmts[n.name]))
        return tuple(out)

    return LoopTree(sched.program.function.name, go(sched.nodes, ()))


def _isl_bounds(sched: Schedule, path: tuple[str, ...]) -> tuple[str, str]:
    """LB and UB of the last loop of `path` over all it runs, given the outer loops."""
    m = sched.prefix_map(path, sorted(sched.statements_below(path[-1])))
    sets: list[isl.Set] = []
    m.range().foreach_set(sets.append)
    rng = sets[0]
    for x in sets[1:]:
        rng = rng.union(x)
    n = len(path)
    names = [f"%{x}" for x in path[:-1]]
    params = sched.program.param_display
    # [outer loops] -> [this loop]
    m2 = isl.Map.from_range(rng).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, n - 1)
    lo = m2.lexmin_pw_multi_aff().get_pw_aff(0)
    hi = m2.lexmax_pw_multi_aff().get_pw_aff(0)
    one = isl.PwAff.val_on_domain(hi.domain(), isl.Val.int_from_si(hi.get_ctx(), 1))
    return _format_pw(lo, names, params), _format_pw(hi.add(one), names, params)


def _format_pw(pa: isl.PwAff, names: list[str], params: dict[str, str]) -> str:
    # Simplify with the known domain (strides of the outer loops make mods constant).
    pa = pa.gist(pa.domain()).coalesce()
    pieces: list[isl.Aff] = []
    pa.foreach_piece(lambda _s, aff: pieces.append(aff))
    texts = [_format_aff(a, names, params) for a in pieces]
    if texts and all(t is not None for t in texts) and len(set(texts)) == 1:
        return str(texts[0])
    return str(pa.coalesce())


def _stmt_node(sched: Schedule, s: Statement) -> StmtNode:
    program = sched.program
    names = [sched.vid_text(vid, s.name) for vid in s.dim_vids]
    loop_names = [
        sched.vid_text(vid, s.name) if sched.carries(vid) else "%?" for vid in s.loop_vids
    ]
    params = program.param_display
    writes: list[str] = []
    reads: list[str] = []
    for a in s.accesses:
        info = program.arrays[a.array]
        if info.virtual:
            text = f"%{a.array}"
        elif a.subscripts is not None:
            # From the subscripts as written, not from the relation (which isl may
            # simplify with the domain, e.g. to a constant on a one-point domain).
            written = _format_subscripts(a.array, a.subscripts, len(s.loops), loop_names, program)
            # A piecewise subscript (affine.min/max) is shown from the relation.
            text = written or _format_access(a.array, a.relation, names, params)
        else:
            text = _format_access(a.array, a.relation, names, params)
        target = writes if a.write else reads
        if text not in target:
            target.append(text)
    line = s.location.line if s.location else None
    return StmtNode(s.name, s.anchor.name, line, tuple(writes), tuple(reads))


def _format_subscripts(
    array: str, subs: tuple[str, ...], n_loops: int, names: list[str], program: PolyProgram
) -> str | None:
    affs = _subscript_affs(tuple(program.params), n_loops, subs)
    if affs is None:
        return None  # not one affine function: min/max of several
    out: list[str] = []
    for aff in affs:
        text = _format_aff(aff, names, program.param_display)
        if text is None:
            return f"{array}[..]"
        out.append(text)
    return f"{array}[{', '.join(out)}]"


@functools.lru_cache(maxsize=4096)
def _subscript_affs(
    params: tuple[str, ...], n_loops: int, subs: tuple[str, ...]
) -> tuple[isl.Aff, ...] | None:
    """The subscripts of an access as affine functions of `_l0, _l1, ...`, or None.

    Parsed once per distinct access (isl's parser costs a third of a millisecond, and
    the same subscripts recur across statements and schedules of one program).
    """
    loops = ", ".join(f"_l{n}" for n in range(n_loops))
    exprs = ", ".join(f"({e})" for e in subs)
    try:
        ma = isl.MultiAff(f"[{', '.join(params)}] -> {{ [{loops}] -> [{exprs}] }}")
    except isl.Error:
        return None
    return tuple(ma.get_at(d) for d in range(len(subs)))


def _format_access(array: str, rel: isl.Map, names: list[str], params: dict[str, str]) -> str:
    """`A[%i, %j + 1]` for a single-valued affine access, else `A[..]`."""
    if rel.is_empty():
        return f"{array}[..]"
    if not rel.is_single_valued():
        return f"{array}[..]"
    pma = rel.as_pw_multi_aff()
    if pma.n_piece() != 1:
        return f"{array}[..]"
    pieces: list[isl.MultiAff] = []
    pma.foreach_piece(lambda _set, ma: pieces.append(ma))
    ma = pieces[0]
    subs: list[str] = []
    for d in range(ma.dim(isl.dim_type.out)):
        text = _format_aff(ma.get_at(d), names, params)
        if text is None:
            return f"{array}[..]"
        subs.append(text)
    return f"{array}[{', '.join(subs)}]"


def _format_aff(aff: isl.Aff, names: list[str], params: dict[str, str]) -> str | None:
    """`aff` in MLIR affine style (`%i + 1`, `%N * 2`, `(%i + 3) floordiv 4`), if integral."""
    if not aff.get_denominator_val().is_one():
        return None
    terms: list[tuple[int, str]] = []
    for k, name in enumerate(names):
        c = aff.get_coefficient_val(isl.dim_type.in_, k).to_python()
        if c:
            terms.append((int(c), name))
    for k in range(aff.dim(isl.dim_type.param)):
        c = aff.get_coefficient_val(isl.dim_type.param, k).to_python()
        if c:
            pname = str(aff.get_dim_name(isl.dim_type.param, k))
            terms.append((int(c), "%" + params.get(pname, pname)))
    for k in range(aff.dim(isl.dim_type.div)):
        c = aff.get_coefficient_val(isl.dim_type.div, k).to_python()
        if not c:
            continue
        div = aff.get_div(k)  # floor(e / d)
        d = div.get_denominator_val()
        inner = _format_aff(div.scale_val(d), names, params)
        if inner is None:
            return None
        terms.append((int(c), f"({inner}) floordiv {d.to_python()}"))
    const = int(aff.get_constant_val().to_python())
    parts: list[str] = []
    for c, name in terms:
        mag = name if abs(c) == 1 else f"{name} * {abs(c)}"
        if not parts:
            parts.append(mag if c > 0 else f"-{mag}" if abs(c) == 1 else f"{name} * {c}")
        else:
            parts.append(f"{'+' if c > 0 else '-'} {mag}")
    if const or not parts:
        if not parts:
            parts.append(str(const))
        else:
            parts.append(f"{'+' if const > 0 else '-'} {abs(const)}")
    return " ".join(parts)

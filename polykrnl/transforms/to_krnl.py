"""Schedule -> Krnl text whose recipe reproduces the schedule.

The function is re-parsed from its printed form, its recipe ops are removed,
and the schedule's steps are written back as krnl.block / krnl.permute /
krnl.parallel / krnl.unroll ops just before the krnl.iterate that binds the
loops. Each iterate's first list is rewritten to name the loops from the top
of its chain (or, for `krnl.iterate(...) with ()`, from the loop right inside
the enclosing body) down to the loop its body sits in, which is how Krnl
places statements. `num_threads` / `proc_bind` clauses of krnl.parallel are
not kept.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import ScheduleError
from polykrnl.ir import Function
from polykrnl.reader.parser import parse
from polykrnl.transforms.core import Schedule, SLoop, SNode

_RECIPE = (k.BlockOp, k.PermuteOp, k.ParallelOp, k.UnrollOp)


def _refuse_steps_krnl_lacks(sched: Schedule) -> None:
    """A skew, a fusion, a surrounding loop or parallel parts have no Krnl op: say so."""
    skewed = [st for st in sched.steps if st.op == "skew"]
    if skewed:
        loop, by = skewed[0].loops
        raise ScheduleError(
            f"cannot write Krnl for this schedule: loop '{loop}' is skewed by '{by}', and Krnl "
            "has no skew op",
            hint="keep the skewed schedule in Python (loops(), trace(), check(), code "
            "generation), or write the skew into the program's subscripts by hand",
        )
    around = [st for st in sched.steps if st.op == "surround"]
    if around:
        loop, name = around[0].loops
        raise ScheduleError(
            f"cannot write Krnl for this schedule: loop '{loop}' is surrounded by loop "
            f"'{name}' of one iteration, and a krnl.iterate's loops are the ones written",
            hint="keep the schedule in Python (loops(), trace(), check(), code generation)",
        )
    parts = [st for st in sched.steps if st.op == "parts"]
    if parts:
        raise ScheduleError(
            f"cannot write Krnl for this schedule: loop '{parts[0].loops[0]}' runs in "
            "parallel parts, and krnl.parallel makes a whole loop parallel (wrong for a loop "
            "that carries dependences through its split point)",
            hint="keep the schedule in Python (loops(), trace(), check(), code generation), "
            "or leave the loop sequential",
        )
    split = [st for st in sched.steps if st.op == "distribute"]
    if split:
        raise ScheduleError(
            f"cannot write Krnl for this schedule: loop '{split[0].loops[0]}' is distributed, "
            "and Krnl has no distribution op (a krnl.iterate's loops are the ones written)",
            hint="keep the schedule in Python (loops(), trace(), check(), code generation)",
        )
    fused = [st for st in sched.steps if st.op == "fuse"]
    if fused:
        first, second = fused[0].loops
        raise ScheduleError(
            f"cannot write Krnl for this schedule: loops '{first}' and '{second}' are fused, "
            "and Krnl has no fusion op (a krnl.iterate's loops are the ones written)",
            hint="keep the fused schedule in Python (loops(), trace(), check(), code "
            "generation), or write the loops fused in the program by hand",
        )


def to_krnl(sched: Schedule) -> str:
    """Krnl MLIR text (the whole module) whose recipe reproduces `sched`."""
    _refuse_steps_krnl_lacks(sched)
    fn0 = sched.program.function
    module = parse(fn0.module.print(), fn0.module.filename or "<schedule>")
    fn = module[fn0.name]
    old_ops = list(fn0.op.walk())
    new_ops = list(fn.op.walk())
    twin = dict(zip(old_ops, new_ops, strict=True))
    program = sched.program

    # Handles by loop name, starting with the original loops.
    handle: dict[str, SSAValue] = {}
    old_handle_names = program.handle_names
    chain_of: dict[str, k.IterateOp] = {}
    for op in fn0.op.walk():
        if isinstance(op, k.IterateOp):
            new_it = twin[op]
            assert isinstance(new_it, k.IterateOp)
            for e_old, e_new in zip(op.entries, new_it.entries, strict=True):
                name = old_handle_names.get(e_old.handle)
                if name is not None:
                    handle[name] = e_new.handle
                    chain_of[name] = new_it
    # Old block results, to re-point their uses at the new handles.
    old_block_results: dict[SSAValue, str] = {}
    for op in fn0.op.walk():
        if isinstance(op, k.BlockOp):
            new_block = twin[op]
            for r_old, r_new in zip(op.results, new_block.results, strict=True):
                if r_old in old_handle_names:
                    old_block_results[r_new] = old_handle_names[r_old]

    old_recipe = [op for op in fn.op.walk() if isinstance(op, _RECIPE)]
    # Emit the steps.
    # Krnl wants krnl.parallel and krnl.unroll after the blocks and permutes of
    # their loops (the marks stay with the loops whatever comes after them).
    rank = {"block": 0, "permute": 0, "unroll": 1, "parallel": 2}
    ordered = sorted(
        (st for st in sched.steps if st.op != "trivial"),  # trivial: an unused point handle
        key=lambda st: rank[st.op],
    )
    for step in ordered:
        it = chain_of[step.loops[0]]
        parent = it.parent_block()
        assert parent is not None
        new: Operation
        if step.op == "block":
            new = k.BlockOp(handle[step.loops[0]], step.size)
            tile, point = step.names
            new.results[0].name_hint = tile
            if point != step.loops[0]:
                # A point loop keeping the blocked loop's name is Krnl's default for an
                # unnamed handle (and the name may be the induction variable's).
                new.results[1].name_hint = point
            handle[tile], handle[point] = new.results[0], new.results[1]
            chain_of[tile] = chain_of[point] = it
        elif step.op == "permute":
            new = k.PermuteOp([handle[n] for n in step.loops], step.perm)
        elif step.op == "parallel":
            new = k.ParallelOp([handle[n] for n in step.loops])
        else:
            new = k.UnrollOp(handle[step.loops[0]])
        parent.insert_op_before(new, it)

    _rewrite_iterates(fn0, twin, sched, handle)
    # Re-point what still uses the old block handles, then drop the old recipe. The
    # iterates' lists are rewritten by now, so a schedule without the text's recipe
    # (recipe=False) leaves no use of them there.
    dropped = set(old_recipe)
    for v, name in old_block_results.items():
        for use in list(v.uses):
            if use.operation in dropped:
                continue
            if name not in handle:
                raise ScheduleError(
                    f"cannot write Krnl for this schedule: the program uses loop handle "
                    f"%{name}, which the schedule does not have",
                    hint="keep the loops the program names (get_induction_var_value, krnl.matmul)",
                )
            use.operation.operands[use.index] = handle[name]
    for op in reversed(old_recipe):
        op.detach()
        op.erase()
    return module.print()


def _parents(nodes: tuple[SNode, ...], parent: str | None, out: dict[str, str | None]) -> None:
    for n in nodes:
        out[n.name] = parent
        if isinstance(n, SLoop):
            _parents(n.body, n.name, out)


def _rewrite_iterates(
    fn0: Function,
    twin: dict[Operation, Operation],
    sched: Schedule,
    handle: dict[str, SSAValue],
) -> None:
    parent: dict[str, str | None] = {}
    _parents(sched.nodes, None, parent)
    dest = _dests(sched, parent)
    for op in fn0.op.walk():
        if not isinstance(op, k.IterateOp) or (not op.entries and not op.optimized_loops):
            continue
        d = dest.get(op)
        if d is None:
            continue  # nothing runs in it: keep its list
        chain = _chain_down_to(d, parent, dest, sched, op)
        new_it = twin[op]
        assert isinstance(new_it, k.IterateOp)
        rest = list(new_it.operands[len(new_it.optimized_loops) :])
        new_it.operands = [*(handle[n] for n in chain), *rest]
        new_it.properties["num_optimized_loops"] = IntegerAttr(len(chain), i64)


def _dests(sched: Schedule, parent: dict[str, str | None]) -> dict[k.IterateOp, str | None]:
    """The schedule loop each iterate's body sits in.

    For an iterate with statements of its own, the loop holding them. For one whose
    body holds only other iterates, the innermost loop above its statements that comes
    from one of its own loops: the text's list may name handles of a recipe the
    schedule does not have (recipe=False), so it cannot be kept as written.
    """
    dest: dict[k.IterateOp, str | None] = {}
    below: dict[k.IterateOp, str] = {}  # a statement somewhere inside each iterate
    for s in sched.program.statements:
        if s.name not in parent:
            continue
        it = _iterate_of(s.anchor)
        if it is not None:
            dest.setdefault(it, parent[s.name])
        while it is not None:
            below.setdefault(it, s.name)
            it = _iterate_of(it)
    names = sched.program.handle_names
    for op, stmt in below.items():
        if op in dest:
            continue
        own = {names[e.handle] for e in op.entries if e.handle in names}
        loop = parent[stmt]
        while loop is not None and sched.loop_info[loop].origin not in own:
            loop = parent.get(loop)
        if loop is not None:
            dest[op] = loop
    return dest


def _iterate_of(op: Operation) -> k.IterateOp | None:
    """The krnl.iterate whose body holds `op` (through krnl.region / krnl.movable)."""
    p = op.parent_op()
    while isinstance(p, k.RegionOp | k.MovableOp):
        p = p.parent_op()
    return p if isinstance(p, k.IterateOp) else None


def _chain_down_to(
    d: str,
    parent: dict[str, str | None],
    dest: dict[k.IterateOp, str | None],
    sched: Schedule,
    op: k.IterateOp,
) -> list[str]:
    """The loops from the top of `op`'s part of the nest down to `d`, outermost first."""
    path = [d]
    enclosing = _enclosing_dest(op, dest)
    while True:
        p = parent.get(path[-1])
        if p is None or p == enclosing:
            break
        path.append(p)
    # A point loop that runs once is one whose handle Krnl never sees named.
    return [n for n in reversed(path) if not sched.loop_info[n].trivial]


def _enclosing_dest(op: k.IterateOp, dest: dict[k.IterateOp, str | None]) -> str | None:
    """The loop holding the body of the iterate that encloses `op` (None at top level)."""
    outer = _iterate_of(op)
    while outer is not None:
        if outer in dest:
            return dest[outer]
        outer = _iterate_of(outer)
    return None

"""The user-facing Schedule: the schedule value with a method for each stage of the pipeline.

``polykrnl.Schedule`` is the schedule value of :mod:`polykrnl.transforms.core`
with methods that delegate: the primitives (:mod:`polykrnl.transforms.primitives`),
which it refuses when their result breaks a dependence the schedule kept (unless
``force=True``), legality, the loop tree, the trace and the Krnl text
(:mod:`polykrnl.transforms`), the NumPy kernel (:mod:`polykrnl.codegen`) and the
PTO kernel (:mod:`polykrnl.targets.pto`). Every primitive returns a new Schedule.

``schedule(fn)``, ``check(fn)`` and ``compile_function(fn)`` are ``pk.schedule``,
``pk.check`` and ``pk.compile``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, Self, cast

import islpy as isl

from polykrnl import targets
from polykrnl.display import code, display_box, highlight, preformatted, section, side_by_side
from polykrnl.errors import IllegalTransformError, ScheduleError, UnsupportedError
from polykrnl.ir import Function
from polykrnl.poly.budget import bounded
from polykrnl.targets.mlir import MlirKernel
from polykrnl.targets.numba.kernel import NumbaKernel
from polykrnl.targets.numpy.kernel import NumpyKernel
from polykrnl.targets.pto.kernel import PtoKernel
from polykrnl.transforms import core, legality, looptree, to_krnl, trace
from polykrnl.transforms.legality_report import LegalityReport
from polykrnl.transforms.looptree import LoopTree
from polykrnl.transforms.primitives import (
    block,
    distribute,
    fuse,
    parallel,
    permute,
    skew,
    surround,
    trivialize,
    unroll,
)
from polykrnl.transforms.recipe import schedule_as, schedule_of


class Schedule(core.Schedule):
    """An immutable schedule of a function's loops: the loop tree and the steps that made it.

    Get one with `pk.schedule(fn)` (after the function's Krnl recipe) or
    `Schedule.from_function(fn, recipe=False)` (the loops as written). Every primitive
    (`block`, `permute`, `reorder`, `parallel`, `parallel_parts`, `unroll`, `skew`, `fuse`,
    `surround`, `trivialize`) returns a new Schedule and refuses, with
    `IllegalTransformError`, a result that breaks a dependence (`force=True` accepts it;
    `check()` still reports it). Loops are named by
    their induction variables (`%i` -> `"i"`); `block("i", T)` makes the tile loop
    `"i_t"` and keeps `"i"` for the point loop.

    Examples
    --------
    The examples of the methods below use this `fn` (B = A transposed):

    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @t(%A: memref<4x6xf32>, %B: memref<6x4xf32>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 6) {
    ...     %v = krnl.load %A[%i, %j] : memref<4x6xf32>
    ...     krnl.store %v, %B[%j, %i] : memref<6x4xf32>
    ...   }
    ...   return
    ... }''')["t"]
    >>> sched = pk.Schedule.from_function(fn, recipe=False)
    >>> sched
    <Schedule @t: i > j>
    >>> sched.block("i", 2).reorder(["i_t", "j", "i"]).parallel("i_t")
    <Schedule @t: i_t > j > i>
    """

    # -- construction
    @classmethod
    @bounded("building the schedule")
    def from_function(cls, fn: object, recipe: bool = True) -> Self:
        """The schedule of `fn`: after its Krnl recipe, or in original order (`recipe=False`).

        With `recipe=True` this is `pk.schedule(fn)`. `recipe=False` ignores the
        recipe ops (`krnl.block`, `krnl.permute`, ...) and raises `UnsupportedError`
        when the function's statements only have a meaning in the blocked nest.

        Examples
        --------
        >>> pk.Schedule.from_function(fn, recipe=False).loop_names()
        ['i', 'j']
        """
        return schedule_of(fn, cls, recipe=recipe)

    # -- primitives
    @bounded("block")
    def block(
        self,
        loop: str,
        size: int,
        *,
        names: tuple[str, str] | None = None,
        force: bool = False,
    ) -> Self:
        """Strip-mine `loop` by `size`: a tile loop and a point loop directly inside it.

        The tile loop is named `loop + "_t"` and the point loop keeps `loop` (it
        carries the original induction variable), unless `names=(tile, point)`.
        Never illegal (`force` is accepted for symmetry). Raises `ScheduleError` for
        an unknown loop or a size below 1.

        Examples
        --------
        >>> print(sched.block("i", 2).loops())
        for %i_t = 0 to 4 step 2 {
          for %i = %i_t to %i_t + 2 {
            for %j = 0 to 6 {
              S0: krnl.store B[%j, %i] <- A[%i, %j]
            }
          }
        }
        """
        del force  # strip-mining keeps the order of every instance: never illegal
        return block.block(self, loop, size, names=names)

    @bounded("permute")
    def permute(
        self, loops: Sequence[str], krnl_map: Sequence[int], *, force: bool = False
    ) -> Self:
        """Krnl's scatter: the loop of `loops[k]` goes to position `krnl_map[k]` of the chain.

        `loops` are perfectly nested (a chain); this is `krnl.permute`'s convention,
        the inverse of `reorder`'s. Raises `ScheduleError` for a map that is not a
        permutation or loops that are not a chain, `IllegalTransformError` when the
        new order breaks a dependence (unless `force=True`).

        Examples
        --------
        >>> sched.permute(["i", "j"], [1, 0]).loop_names()
        ['j', 'i']
        """
        return self._checked(permute.permute(self, loops, krnl_map), force)

    @bounded("reorder")
    def reorder(self, order: Sequence[str], *, force: bool = False) -> Self:
        """Gather: `order` lists the loops of a perfectly nested chain, outermost first.

        Raises like `permute`.

        Examples
        --------
        >>> sched.block("i", 2).reorder(["i_t", "j", "i"]).loop_names()
        ['i_t', 'j', 'i']
        """
        return self._checked(permute.reorder(self, order), force)

    @bounded("parallel")
    def parallel(self, *loops: str, force: bool = False) -> Self:
        """Mark loops parallel (`krnl.parallel`; their band members become coincident).

        Raises `IllegalTransformError` when a loop carries a dependence (unless
        `force=True`), `ScheduleError` for an unknown or unrolled loop.

        Examples
        --------
        >>> print(sched.parallel("i").loops())
        for %i = 0 to 4 {  // parallel
          for %j = 0 to 6 {
            S0: krnl.store B[%j, %i] <- A[%i, %j]
          }
        }
        """
        return self._checked(parallel.parallel(self, *loops), force)

    @bounded("parallel_parts")
    def parallel_parts(self, loop: str, *, force: bool = False) -> Self:
        """Run `loop` in three parts at its split point, the first and last in parallel.

        A loop whose carried dependences all start or end at one iteration (its split
        point, a function of the loops around it: Floyd-Warshall's row loop at row k)
        runs the iterations before the point, the point alone, then those after it;
        each part carries no dependence, so the first and last run in parallel. Exact:
        the order of every dependence is kept (`krnl.parallel` of such a loop is illegal,
        and right only for values with path[k][k] >= 0). Numba runs the parts as two
        `prange`s; the other targets run the loop as written. Krnl has no such op:
        `to_krnl()` refuses it. Raises `IllegalTransformError` when the loop has no split
        point (unless `force=True`), `ScheduleError` for a loop not as written (blocked,
        skewed, fused), a parallel or an unrolled one.

        Examples
        --------
        >>> import polykrnl as pk
        >>> fw = pk.parse('''
        ... func.func @fw(%p: memref<8x8xf64>) {
        ...   %kk, %ii, %jj = krnl.define_loops 3
        ...   krnl.iterate(%kk, %ii, %jj) with (%kk -> %k = 0 to 8, %ii -> %i = 0 to 8,
        ...                                    %jj -> %j = 0 to 8) {
        ...     %a = krnl.load %p[%i, %j] : memref<8x8xf64>
        ...     %b = krnl.load %p[%i, %k] : memref<8x8xf64>
        ...     %c = krnl.load %p[%k, %j] : memref<8x8xf64>
        ...     %s = arith.addf %b, %c : f64
        ...     %m = arith.minimumf %a, %s : f64
        ...     krnl.store %m, %p[%i, %j] : memref<8x8xf64>
        ...   }
        ...   return
        ... }''')["fw"]
        >>> s = pk.Schedule.from_function(fw)
        >>> print(str(s.parallel_parts("i").loops()).splitlines()[1])
          for %i = 0 to 8 {  // parallel in parts
        """
        return self._checked(parallel.parallel_parts(self, loop), force)

    @bounded("skew")
    def skew(self, loop: str, by: str, factor: int = 1, *, force: bool = False) -> Self:
        """Run `loop` over `loop + factor * by` (`by` encloses it): makes bands tilable.

        The loop's bounds shift by `factor * by`; statements still see the
        original values. Krnl has no skew op: `to_krnl()` refuses skewed schedules.
        A band that is not permutable says in `check()` which skew makes it tilable.

        Examples
        --------
        >>> print(sched.skew("j", "i").loops())
        for %i = 0 to 4 {
          for %j = %i to %i + 6 {
            S0: krnl.store B[(%j - %i), %i] <- A[%i, (%j - %i)]
          }
        }
        """
        return self._checked(skew.skew(self, loop, by, factor), force)

    @bounded("fuse")
    def fuse(self, first: str, second: str, shift: int = 0, *, force: bool = False) -> Self:
        """Run the adjacent sibling loops `first` and `second` as one loop (not Krnl).

        In each iteration v of the fused loop (named `first`), the body of `first` at v
        runs, then the body of `second` at v - `shift`: `shift` delays the second loop so
        that what it reads was computed (jacobi's second nest reads its neighbours: 1).
        The loops inside stay siblings; fuse them in turn. Raises
        `IllegalTransformError` when the fused order breaks a dependence (unless
        `force=True`), `ScheduleError` when the loops are not adjacent siblings as
        written, or their bounds differ by more than a constant. Krnl has no fusion op:
        `to_krnl()` refuses fused schedules.

        Examples
        --------
        >>> import polykrnl as pk
        >>> fn = pk.parse('''
        ... func.func @two(%A: memref<8xf32>, %B: memref<8xf32>) {
        ...   %ii, %jj = krnl.define_loops 2
        ...   krnl.iterate(%ii) with (%ii -> %i = 0 to 7) {
        ...     %v = krnl.load %A[%i] : memref<8xf32>
        ...     krnl.store %v, %B[%i] : memref<8xf32>
        ...   }
        ...   krnl.iterate(%jj) with (%jj -> %j = 1 to 8) {
        ...     %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
        ...     %v = krnl.load %B[%im] : memref<8xf32>
        ...     krnl.store %v, %A[%j] : memref<8xf32>
        ...   }
        ...   return
        ... }''')["two"]
        >>> print(pk.Schedule.from_function(fn).fuse("i", "j", 0).loops())
        for %i = 0 to 8 {
          S0: krnl.store B[%i] <- A[%i]
          S1: krnl.store A[%i] <- B[%i - 1]
        }
        """
        fused = fuse.fuse(self, first, second, shift)
        try:
            return self._checked(fused, force)
        except IllegalTransformError as e:
            least = fuse.smallest_shift(self, first, second)
            if least is not None and least > shift:
                e.hint = (
                    f"the smallest shift that keeps every dependence is {least}: "
                    f"fuse({first!r}, {second!r}, {least}); " + (e.hint or "")
                )
            raise

    @bounded("distribute")
    def distribute(
        self, loop: str, *, names: Sequence[str] | None = None, force: bool = False
    ) -> Self:
        """One loop per statement or loop in `loop`'s body, in order (not Krnl).

        The first loop keeps the name, the others are `loop_d`, `loop_d_2`, ... (or
        `names`, one per loop). Each instance runs at the same loop values; all the
        iterations of the first part now run before the second's. Inside a tile loop,
        this is fusion by tiles: fuse the row loops of two passes, block the fused loop,
        distribute its point loop, and each pass runs over a tile of rows while they are
        in cache, ordered on its own. Raises `IllegalTransformError` when the new order
        breaks a dependence (unless `force=True`), `ScheduleError` for a loop with one
        part, a parallel, unrolled or skewed loop, or inner loops whose bounds read it.
        `to_krnl()` refuses a distributed schedule.

        Examples
        --------
        >>> import polykrnl as pk
        >>> fn = pk.parse('''
        ... func.func @two(%A: memref<8xf32>, %B: memref<8xf32>, %C: memref<8xf32>) {
        ...   %ii = krnl.define_loops 1
        ...   krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
        ...     %v = krnl.load %A[%i] : memref<8xf32>
        ...     krnl.store %v, %B[%i] : memref<8xf32>
        ...     %w = krnl.load %B[%i] : memref<8xf32>
        ...     krnl.store %w, %C[%i] : memref<8xf32>
        ...   }
        ...   return
        ... }''')["two"]
        >>> print(pk.Schedule.from_function(fn).distribute("i").loops())
        for %i = 0 to 8 {
          S0: krnl.store B[%i] <- A[%i]
        }
        for %i_d = 0 to 8 {
          S1: krnl.store C[%i_d] <- B[%i_d]
        }
        """
        return self._checked(distribute.distribute(self, loop, names=names), force)

    @bounded("surround")
    def surround(self, loop: str, name: str, value: int = 0) -> Self:
        """Put `loop` inside a new loop `name` that runs once, at `value` (not Krnl).

        Nothing runs in another order: a loop is given the depth of the nests beside it,
        so that `fuse` can join it to them (a row loop beside 2-D nests, at the row it
        writes). Raises `ScheduleError` when `name` is taken. Krnl has no such loop:
        `to_krnl()` refuses the schedule.

        Examples
        --------
        >>> print(sched.surround("i", "n", 0).loops())
        for %n = 0 to 1 {
          for %i = 0 to 4 {
            for %j = 0 to 6 {
              S0: krnl.store B[%j, %i] <- A[%i, %j]
            }
          }
        }
        """
        return self._checked(surround.surround(self, loop, name, value), False)

    @bounded("unroll")
    def unroll(self, loop: str, *, force: bool = False) -> Self:
        """Fully unroll `loop` (`krnl.unroll`): a constant trip count, or a point loop.

        Never illegal. Raises `ScheduleError` for a loop without a constant trip count
        that is not a point loop, or a parallel one.

        Examples
        --------
        >>> print(sched.block("j", 3).unroll("j").loops())
        for %i = 0 to 4 {
          for %j_t = 0 to 6 step 3 {
            for %j = %j_t to %j_t + 3 {  // unroll
              S0: krnl.store B[%j, %i] <- A[%i, %j]
            }
          }
        }
        """
        del force  # unrolling keeps the order
        return unroll.unroll(self, loop)

    def script(self, function: str = "fn") -> str:
        """Python that rebuilds this schedule from the function named `function`: the
        schedule it started from, then each primitive applied since (replayable with
        exec, given `pk` and the function).

        Examples
        --------
        >>> print(sched.block("i", 2).parallel("i_t").script())
        s = pk.Schedule.from_function(fn, recipe=False)
        s = s.block('i', 2, names=('i_t', 'i'))
        s = s.parallel('i_t')
        """
        if self.recipe_steps is None:
            lines = [f"s = pk.Schedule.from_function({function}, recipe=False)"]
            steps = self.steps
        else:
            lines = [f"s = pk.schedule({function})"]
            steps = self.steps[self.recipe_steps :]
        lines += [f"s = s.{core.step_call(st)}" for st in steps]
        return "\n".join(lines)

    @bounded("trivialize")
    def trivialize(self, loop: str) -> Self:
        """Make `loop` run once (0 to 1): Krnl's point loop whose handle is never used.

        Examples
        --------
        A tile loop with a single tile:

        >>> print(sched.block("j", 6).trivialize("j_t").loops())
        for %i = 0 to 4 {
          for %j_t = 0 to 1 step 6 {
            for %j = %j_t to %j_t + 6 {
              S0: krnl.store B[%j, %i] <- A[%i, %j]
            }
          }
        }
        """
        return trivialize.trivialize(self, loop)

    def _checked(self, new: Self, force: bool) -> Self:
        """Refuse a result that breaks a dependence this schedule kept, unless forced."""
        if force:
            # Recorded so that script() replays it with force=True.
            last = replace(new.steps[-1], forced=True)
            return replace(new, steps=(*new.steps[:-1], last))
        if not self.legal:
            return new
        return legality.refuse_if_illegal(new, core.step_text(new.steps[-1]))

    @cached_property
    @bounded("the legality check")
    def legal(self) -> bool:
        """Whether every dependence is kept and no parallel loop carries one.

        Examples
        --------
        >>> sched.legal
        True
        """
        return legality.is_legal(self)

    # -- the other stages
    @bounded("the loop nest")
    def loops(self) -> LoopTree:
        """The final loop nest: `str()` reads like onnx-mlir's affine loops, `.to_json()`.

        Examples
        --------
        >>> print(sched.loops())
        for %i = 0 to 4 {
          for %j = 0 to 6 {
            S0: krnl.store B[%j, %i] <- A[%i, %j]
          }
        }
        """
        return looptree.loop_tree(self)

    @bounded("the legality check")
    def check(self) -> LegalityReport:
        """The legality report: dependences kept, parallel loops, permutable bands.

        Never raises for an illegal schedule (one made with `force=True`): the report
        says what breaks, with a witness. `report.memory` is the memory safety of the
        function's accesses.

        Examples
        --------
        >>> print(sched.check())
        @t: legal
          loops:
            i: parallel
            j: parallel vectorizable
          band (i, j): permutable (tilable)
          memory safety:
            in bounds for every size: A, B
        """
        return legality.check(self)

    @bounded("NumPy code generation")
    def to_numpy(
        self,
        *,
        vectorize: bool = True,
        reassociate: bool = True,
        parallel: bool = False,
        check_bounds: bool = True,
    ) -> NumpyKernel:
        """This schedule as a NumPy kernel (built and compiled once per schedule and options).

        `reassociate=False` keeps every reduction in its order (bit-exact with the
        reference; contractions then run as sequential loops of array updates).
        `parallel=True` runs krnl.parallel loops that stay Python loops around array
        code on threads (see benchmarks/README.md for when that pays off).
        `check_bounds=False` drops the kernel's bounds guard (``check().memory`` says
        which sizes are safe): a call whose arrays do not fit is then undefined.

        Examples
        --------
        >>> import numpy as np
        >>> kernel = sched.block("i", 2).to_numpy()
        >>> A = np.arange(24, dtype=np.float32).reshape(4, 6)
        >>> B = np.zeros((6, 4), dtype=np.float32)
        >>> kernel(A=A, B=B)
        >>> bool((B == A.T).all())
        True
        """
        return cast(
            NumpyKernel,
            self.kernel(
                "numpy",
                vectorize=vectorize,
                reassociate=reassociate,
                parallel=parallel,
                check_bounds=check_bounds,
            ),
        )

    def kernel(self, target: str, **options: Any) -> Any:
        """The kernel of this schedule for the target named `target` (``"numpy"``,
        ``"numba"``, ``"pto"``: :func:`polykrnl.targets.registry`) with that target's
        options, built once per schedule, target and options (`to_numpy`, `to_numba` and
        `to_pto` are this with each target's options spelled out).

        Raises `ScheduleError` for an unknown target or an option the target does not
        take, `UnsupportedError` when the target cannot run here (Numba not installed).

        Examples
        --------
        >>> import numpy as np
        >>> kernel = sched.kernel("numpy", vectorize=False)
        >>> A, B = np.arange(24, dtype=np.float32).reshape(4, 6), np.zeros((6, 4), np.float32)
        >>> kernel(A=A, B=B)
        >>> bool((B == A.T).all())
        True
        >>> kernel is sched.to_numpy(vectorize=False)
        True
        """
        t = targets.target(target)
        unknown = sorted(set(options) - set(t.defaults))
        if unknown:
            raise ScheduleError(
                f"the {t.label} target takes no option {', '.join(unknown)}",
                hint=f"its options: {', '.join(t.defaults)}",
            )
        options = {**t.defaults, **options}
        key = (t.name, tuple(sorted(options.items(), key=lambda kv: kv[0])))
        found = self._kernels.get(key)
        if found is None:
            reason = t.missing()
            if reason is not None:
                fn = self.program.function
                raise UnsupportedError(reason, location=fn.location(fn.op), hint=t.install_hint)
            build = bounded(f"{t.label} code generation")(t.build)
            found = self._kernels[key] = build(self, **options)
        return found

    @cached_property
    def _kernels(self) -> dict[tuple[str, tuple[tuple[str, Any], ...]], Any]:
        return {}

    @bounded("Numba code generation")
    def to_numba(
        self,
        *,
        parallel: bool = True,
        boundscheck: bool | None = None,
        cache: bool = True,
        check_bounds: bool = True,
    ) -> NumbaKernel:
        """This schedule as scalar loops compiled by Numba (needs ``polykrnl[numba]``).

        The loops follow the schedule exactly (tiles, permutation, unroll); a
        krnl.parallel loop that legality proves parallel runs on Numba's threads
        (`parallel=False`: sequentially). The kernel's bounds guard (`check_bounds`)
        refuses arrays that do not fit before any access; where it proves every access
        in bounds, Numba's own per-access check is off (`boundscheck=None`, the
        default); `boundscheck=True` / `False` forces it on / off. `cache=True`
        keeps the compiled code on disk for later processes. Compilation happens at
        the first call for each argument signature; `kernel.compile_seconds` says how
        long it took.

        Examples
        --------
        >>> kernel = sched.to_numba(cache=False)
        >>> print(kernel.function_source.splitlines()[1])
        def kernel_t(A, B):
        """
        return cast(
            NumbaKernel,
            self.kernel(
                "numba",
                parallel=parallel,
                boundscheck=boundscheck,
                cache=cache,
                check_bounds=check_bounds,
            ),
        )

    @bounded("MLIR code generation")
    def to_mlir(self, *, parallel: bool = True, check_bounds: bool = True) -> MlirKernel:
        """This schedule as standard MLIR (``.source``), run natively with LLVM 19's tools.

        The loops follow the schedule exactly (scf.for; tiles, permutation); a
        krnl.parallel loop that legality proves parallel is an scf.parallel, run on
        OpenMP threads where LLVM's libomp is installed (`parallel=False`: sequential).
        The first call compiles the kernel (cached on disk by its source). Every call
        refuses sizes for which an access would leave its array (`check_bounds`).
        """
        return cast(MlirKernel, self.kernel("mlir", parallel=parallel, check_bounds=check_bounds))

    @bounded("PTO code generation")
    def to_pto(
        self,
        arch: str = "a2a3",
        *,
        params: Mapping[str, int] | None = None,
        double_buffer: bool = True,
    ) -> PtoKernel:
        """This schedule as a PTO tile kernel (C++ for Ascend, tmp sizes, NumPy simulation).

        `arch` is "a2a3" or "a5"; `params` fixes problem sizes that static tile shapes
        need (a loop that is not blocked over a symbolic range). With `double_buffer`
        (the default), the tiles that pipes pass along in an innermost tile loop get two
        copies so that loading the next tile overlaps computing this one. Raises PtoError
        naming the statement when no PTO pattern matches.

        Examples
        --------
        >>> kernel = sched.block("i", 2).to_pto("a2a3")
        >>> "TLOAD" in kernel.source and "TSTORE" in kernel.source
        True
        """
        return cast(
            PtoKernel,
            self.kernel(
                "pto",
                arch=arch,
                params=None if params is None else tuple(sorted(params.items())),
                double_buffer=double_buffer,
            ),
        )

    @bounded("the Krnl text of the schedule")
    def to_krnl(self) -> str:
        """Krnl MLIR text (the whole module) whose recipe reproduces this schedule.

        Raises `ScheduleError` for a skewed schedule (Krnl has no skew op).

        Examples
        --------
        >>> text = sched.block("i", 2).parallel("i_t").to_krnl()
        >>> print(text)
        builtin.module {
          func.func @t(%A: memref<4x6xf32>, %B: memref<6x4xf32>) {
            %ii, %jj = krnl.define_loops 2
            %i_t, %0 = krnl.block %ii 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
            krnl.parallel %i_t : !krnl.loop
            krnl.iterate(%i_t, %0, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 6) {
              %v = krnl.load %A[%i, %j] : memref<4x6xf32>
              krnl.store %v, %B[%j, %i] : memref<6x4xf32>
            }
            func.return
          }
        }
        >>> pk.schedule(pk.parse(text)["t"]).loop_names()
        ['i_t', 'i', 'j']
        """
        return to_krnl.to_krnl(self)

    @bounded("the trace")
    def trace(self, **params: int) -> list[tuple[str, dict[str, int]]]:
        """Statement instances in execution order: [("S0", {"i": 0, "j": 1}), ...].

        The keys are the statement's dimensions: the original induction
        variables (a tile loop's name for a statement placed at tile level).
        Pass every parameter: index arguments by name, dynamic sizes as
        ``**{"A.0": 64}`` (or ``A_d0=64``).

        Examples
        --------
        >>> sched.permute(["i", "j"], [1, 0]).trace()[:3]
        [('S0', {'i': 0, 'j': 0}), ('S0', {'i': 1, 'j': 0}), ('S0', {'i': 2, 'j': 0})]
        """
        return trace.trace(self, params)

    def _repr_html_(self) -> str:
        steps = " \u2192 ".join(core.step_text(st) for st in self.steps) or "none (original order)"
        printer = isl.Printer.to_str(self.tree.get_ctx()).set_yaml_style(isl.yaml_style.BLOCK)
        tree = str(printer.print_schedule(self.tree).get_str())
        body = f'<div style="margin: 2px 0;">steps: {code(steps)}</div>' + side_by_side(
            section("loop nest", highlight(str(self.loops()), "mlir")),
            section("isl schedule tree", preformatted(tree)),
        )
        title = f"Schedule @{self.program.function.name}: {' > '.join(self.loop_names())}"
        return display_box("schedule", title, body)


@bounded("the Krnl recipe's schedule")
def schedule(fn: Function, *, force: bool = False) -> Schedule:
    """The Schedule of `fn` after its Krnl recipe.

    The recipe ops (`krnl.block`, `krnl.permute`, `krnl.parallel`, `krnl.unroll`) are
    applied in program order through the same primitives as `Schedule.block`, ...,
    so the loops are those onnx-mlir's lowering builds.

    Parameters
    ----------
    fn
        A function of a parsed or built module (`mod["name"]`).
    force
        Accept a recipe that breaks a dependence (`check()` then reports it).

    Returns
    -------
    Schedule

    Raises
    ------
    IllegalTransformError
        The recipe breaks a dependence (located at the recipe op responsible).
    VerifyError, UnsupportedError
        `fn` is not a valid Krnl function, or has an op the polyhedral model lacks.

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @t(%A: memref<4x6xf32>, %B: memref<6x4xf32>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   %ib, %il = krnl.block %ii 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    ...   krnl.permute(%ib, %il, %jj) [0, 2, 1] : !krnl.loop, !krnl.loop, !krnl.loop
    ...   krnl.iterate(%ib, %jj, %il) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 6) {
    ...     %v = krnl.load %A[%i, %j] : memref<4x6xf32>
    ...     krnl.store %v, %B[%j, %i] : memref<6x4xf32>
    ...   }
    ...   return
    ... }''')["t"]
    >>> sched = pk.schedule(fn)
    >>> print(sched.loops())
    for %ib = 0 to 4 step 2 {
      for %j = 0 to 6 {
        for %il = %ib to %ib + 2 {
          S0: krnl.store B[%j, %il] <- A[%il, %j]
        }
      }
    }
    >>> sched.legal
    True
    """
    return schedule_as(Schedule, fn, force=force)


@bounded("the legality check")
def check(fn: Function) -> LegalityReport:
    """The legality report of `fn`'s Krnl recipe (never raises for illegality).

    The same as `pk.schedule(fn, force=True).check()`: `report.legal`, the violated
    dependences with a witness pair of iterations, each loop's verdict (parallel,
    reduction, carried distances), each band's permutability and `report.memory`.

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @shift(%A: memref<10xf32>) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.parallel(%ii) : !krnl.loop
    ...   krnl.iterate(%ii) with (%ii -> %i = 1 to 10) {
    ...     %p = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    ...     %v = krnl.load %A[%p] : memref<10xf32>
    ...     krnl.store %v, %A[%i] : memref<10xf32>
    ...   }
    ...   return
    ... }''')["shift"]
    >>> report = pk.check(fn)
    >>> report.legal
    False
    >>> print(report)
    @shift: ILLEGAL (1 violation)
      1. RAW dependence on A from S0(i=1) to S0(i=2) (distance i: +1): loop 'i' is parallel ...
         hint: loop 'i' carries this dependence: run it sequentially ...
      loops:
        i: forward [parallel] distance 1 (RAW on A)
      memory safety:
        in bounds for every size: A
      loop nest (the loops at fault marked):
        for %i = 1 to 10 {  // parallel   <-- parallel, carries RAW on A
          S0: krnl.store A[%i] <- A[%i - 1]
        }
    >>> v = report.violations[0]
    >>> v.kind, v.array, v.source.point, v.sink.point
    ('RAW', 'A', {'i': 1}, {'i': 2})
    """
    return Schedule.from_function(fn).check()


@bounded("compiling the function")
def compile_function(
    fn: Function,
    target: str = "numpy",
    *,
    force: bool = False,
    vectorize: bool | None = None,
    reassociate: bool | None = None,
    parallel: bool | None = None,
    check_bounds: bool | None = None,
    **options: Any,
) -> Any:
    """The kernel of `fn` after its Krnl recipe for the target named `target`:
    ``pk.compile(fn)`` (NumPy, the options of Schedule.to_numpy), ``target="numba"``
    (scalar loops compiled by Numba), ``target="mlir"`` (standard MLIR run natively),
    ``target="pto"`` (``arch=...``); the names are those of
    :func:`polykrnl.targets.registry`. An option left out takes the target's default
    (krnl.parallel loops run on threads by default in Numba, only when asked in NumPy).
    Every kernel refuses arrays that do not fit its accesses (``pk.BoundsError``) unless
    `check_bounds=False`.

    Raises `IllegalTransformError` when the recipe breaks a dependence (unless
    `force=True`), `ScheduleError` for an unknown target or an option the target does
    not take.

    Examples
    --------
    >>> import numpy as np
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
    >>> kernel = pk.compile(fn)
    >>> X = np.arange(5, dtype=np.float32)
    >>> kernel(X=X, N=5)
    >>> X
    array([0., 2., 4., 6., 8.], dtype=float32)
    """
    given = {
        "vectorize": vectorize,
        "reassociate": reassociate,
        "parallel": parallel,
        "check_bounds": check_bounds,
        **options,
    }
    sched = schedule(fn, force=force)
    return sched.kernel(target, **{k: v for k, v in given.items() if v is not None})

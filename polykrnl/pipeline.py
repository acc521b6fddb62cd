"""The user-facing Schedule: the schedule value with a method for each stage of the pipeline.

``polykrnl.Schedule`` is the schedule value of :mod:`polykrnl.transforms.core`
with methods that delegate: the primitives (:mod:`polykrnl.transforms.primitives`),
which it refuses when their result breaks a dependence the schedule kept (unless
``force=True``), legality, the loop tree, the trace and the Krnl text
(:mod:`polykrnl.transforms`), the NumPy kernel (:mod:`polykrnl.codegen`) and the
PTO kernel (:mod:`polykrnl.tiles`). Every primitive returns a new Schedule.

``schedule(fn)``, ``check(fn)`` and ``compile_function(fn)`` are ``pk.schedule``,
``pk.check`` and ``pk.compile``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Self

import islpy as isl

from polykrnl.codegen.kernel import NumpyKernel
from polykrnl.codegen.kernel import to_numpy as numpy_kernel
from polykrnl.codegen.numba_kernel import NumbaKernel
from polykrnl.codegen.numba_kernel import to_numba as numba_kernel
from polykrnl.display import code, display_box, highlight, preformatted, section, side_by_side
from polykrnl.errors import ScheduleError
from polykrnl.model.ir import Function
from polykrnl.model.poly.budget import bounded
from polykrnl.targets.mlir import MlirKernel
from polykrnl.targets.mlir import to_mlir as mlir_kernel
from polykrnl.tiles.kernel import PtoKernel
from polykrnl.tiles.kernel import to_pto as pto_kernel
from polykrnl.transforms import core, legality, looptree, to_krnl, trace
from polykrnl.transforms.legality_report import LegalityReport
from polykrnl.transforms.looptree import LoopTree
from polykrnl.transforms.primitives import block, parallel, permute, skew, trivialize, unroll
from polykrnl.transforms.recipe import schedule_as, schedule_of


class Schedule(core.Schedule):
    """An immutable schedule of a PolyProgram; every primitive returns a new one."""

    # -- construction
    @classmethod
    @bounded("building the schedule")
    def from_function(cls, fn: object, recipe: bool = True) -> Self:
        """The schedule of `fn`: after its Krnl recipe, or in original order (recipe=False)."""
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
        """Strip-mine `loop` by `size`: a tile loop and a point loop directly inside it."""
        del force  # strip-mining keeps the order of every instance: never illegal
        return block.block(self, loop, size, names=names)

    @bounded("permute")
    def permute(
        self, loops: Sequence[str], krnl_map: Sequence[int], *, force: bool = False
    ) -> Self:
        """Krnl's scatter: the loop of `loops[k]` goes to position `krnl_map[k]` of the chain."""
        return self._checked(permute.permute(self, loops, krnl_map), force)

    @bounded("reorder")
    def reorder(self, order: Sequence[str], *, force: bool = False) -> Self:
        """Gather: `order` lists the loops of a perfectly nested chain, outermost first."""
        return self._checked(permute.reorder(self, order), force)

    @bounded("parallel")
    def parallel(self, *loops: str, force: bool = False) -> Self:
        """Mark loops parallel (their band members become coincident)."""
        return self._checked(parallel.parallel(self, *loops), force)

    @bounded("skew")
    def skew(self, loop: str, by: str, factor: int = 1, *, force: bool = False) -> Self:
        """Run `loop` over `loop + factor * by` (`by` encloses it): makes bands tilable.

        The loop's bounds shift by `factor * by`; statements still see the
        original values. Krnl has no skew op: `to_krnl()` refuses skewed schedules.
        """
        return self._checked(skew.skew(self, loop, by, factor), force)

    @bounded("unroll")
    def unroll(self, loop: str, *, force: bool = False) -> Self:
        """Fully unroll `loop`: a constant trip count, or a point loop (never illegal)."""
        del force  # unrolling keeps the order
        return unroll.unroll(self, loop)

    def script(self, function: str = "fn") -> str:
        """Python that rebuilds this schedule from the function named `function`: the
        schedule it started from, then each primitive applied since (replayable with
        exec, given `pk` and the function)."""
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
        """Make `loop` run once (0 to 1): Krnl's point loop whose handle is never used."""
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
        """Whether every dependence is kept and no parallel loop carries one."""
        return legality.is_legal(self)

    # -- the other stages
    @bounded("the loop nest")
    def loops(self) -> LoopTree:
        """The final loop nest (str() reads like onnx-mlir's affine loops; .to_json())."""
        return looptree.loop_tree(self)

    @bounded("the legality check")
    def check(self) -> LegalityReport:
        """The legality report: dependences kept, parallel loops, permutable bands."""
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
        """
        key = (vectorize, reassociate, parallel, check_bounds)
        found = self._numpy_kernels.get(key)
        if found is None:
            found = self._numpy_kernels[key] = numpy_kernel(self, *key)
        return found

    @cached_property
    def _numpy_kernels(self) -> dict[tuple[bool, bool, bool, bool], NumpyKernel]:
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
        """
        key = (parallel, boundscheck, cache, check_bounds)
        found = self._numba_kernels.get(key)
        if found is None:
            found = self._numba_kernels[key] = numba_kernel(
                self,
                parallel=parallel,
                boundscheck=boundscheck,
                cache=cache,
                check_bounds=check_bounds,
            )
        return found

    @cached_property
    def _numba_kernels(self) -> dict[tuple[bool, bool | None, bool, bool], NumbaKernel]:
        return {}

    @bounded("MLIR code generation")
    def to_mlir(self, *, parallel: bool = True, check_bounds: bool = True) -> MlirKernel:
        """This schedule as standard MLIR (``.source``), run natively with LLVM 19's tools.

        The loops follow the schedule exactly (scf.for; tiles, permutation); a
        krnl.parallel loop that legality proves parallel is an scf.parallel, run on
        OpenMP threads where LLVM's libomp is installed (`parallel=False`: sequential).
        The first call compiles the kernel (cached on disk by its source). Every call
        refuses sizes for which an access would leave its array (`check_bounds`).
        """
        key = (parallel, check_bounds)
        found = self._mlir_kernels.get(key)
        if found is None:
            found = self._mlir_kernels[key] = mlir_kernel(
                self, parallel=parallel, check_bounds=check_bounds
            )
        return found

    @cached_property
    def _mlir_kernels(self) -> dict[tuple[bool, bool], MlirKernel]:
        return {}

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
        """
        return pto_kernel(self, arch, params, double_buffer=double_buffer)

    @bounded("the Krnl text of the schedule")
    def to_krnl(self) -> str:
        """Krnl MLIR text (the whole module) whose recipe reproduces this schedule."""
        return to_krnl.to_krnl(self)

    @bounded("the trace")
    def trace(self, **params: int) -> list[tuple[str, dict[str, int]]]:
        """Statement instances in execution order: [("S0", {"i": 0, "j": 1}), ...].

        The keys are the statement's dimensions: the original induction
        variables (a tile loop's name for a statement placed at tile level).
        Pass every parameter: index arguments by name, dynamic sizes as
        ``**{"A.0": 64}`` (or ``A_d0=64``).
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

    Raises IllegalTransformError (located at the recipe op responsible) when the
    recipe breaks a dependence, unless `force=True`.
    """
    return schedule_as(Schedule, fn, force=force)


@bounded("the legality check")
def check(fn: Function) -> LegalityReport:
    """The legality report of `fn`'s Krnl recipe (never raises for illegality)."""
    return Schedule.from_function(fn).check()


@bounded("compiling the function")
def compile_function(
    fn: Function,
    target: str = "numpy",
    *,
    force: bool = False,
    vectorize: bool = True,
    reassociate: bool = True,
    parallel: bool | None = None,
    check_bounds: bool = True,
) -> NumpyKernel | NumbaKernel | MlirKernel:
    """The kernel of `fn` after its Krnl recipe: ``pk.compile(fn, target="numpy")``
    (the options are those of Schedule.to_numpy), ``target="numba"`` (scalar loops
    compiled by Numba) or ``target="mlir"`` (standard MLIR run natively). `parallel`
    defaults to the target's default: krnl.parallel loops on Python threads only when
    asked for NumPy (a thread pool pays only for
    long iterations), as prange for Numba. Every kernel refuses arrays that do not fit
    its accesses (``pk.BoundsError``) unless `check_bounds=False`."""
    if target == "numba":
        return schedule(fn, force=force).to_numba(
            parallel=parallel is not False, check_bounds=check_bounds
        )
    if target == "mlir":
        return schedule(fn, force=force).to_mlir(
            parallel=parallel is not False, check_bounds=check_bounds
        )
    if target != "numpy":
        raise ScheduleError(
            f"unknown target {target!r}",
            hint="target='numpy', 'numba' or 'mlir' (PTO kernels: sched.to_pto(arch=...))",
        )
    return schedule(fn, force=force).to_numpy(
        vectorize=vectorize,
        reassociate=reassociate,
        parallel=bool(parallel),
        check_bounds=check_bounds,
    )

"""What calling a generated kernel means, whatever its target: arguments checked and bound
like ``pk.run_reference`` binds them, memref arguments updated in place, results handed back."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, MemRefType

from polykrnl.codegen.bounds_guard import BOUNDS_ERROR
from polykrnl.errors import BoundsError
from polykrnl.interpreter import (
    Interpreter,
    handed_back,
    memref_dtype,
    memref_shape,
    scalar_dtype,
)
from polykrnl.transforms.memory_safety import memory_report

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule


class KernelCall:
    """`__call__(**arrays_and_params)` of a kernel; a target gives `_run(values)`."""

    schedule: Schedule

    def _run(self, values: list[Any]) -> Any:
        """The generated function called on the bound arguments, in signature order."""
        raise NotImplementedError

    @cached_property
    def _signature(self) -> list[tuple[str, Any, Any]]:
        """Per argument: its name, the dtype and shape of a memref (or the scalar's type
        constructor), for the fast path of __call__."""
        out: list[tuple[str, Any, Any]] = []
        for a in self.schedule.program.function.arguments:
            t = a.type
            if isinstance(t, MemRefType) and not isinstance(t.element_type, MemRefType):
                out.append((a.name, memref_dtype(t), memref_shape(t)))
            elif isinstance(t, IndexType):
                out.append((a.name, int, None))
            elif isinstance(t, Float16Type | Float32Type | Float64Type):
                out.append((a.name, scalar_dtype(t).type, None))
            else:
                out.append((a.name, None, None))  # checked by the interpreter's rules
        return out

    def _fast_values(self, given: dict[str, Any]) -> list[Any] | None:
        """The arguments when they are exactly what the kernel takes (else None)."""
        if len(given) != len(self._signature):
            return None
        values: list[Any] = []
        for arg, kind, shape in self._signature:
            v = given.get(arg, given)  # `given` itself: missing
            if shape is not None:
                if (
                    type(v) is not np.ndarray
                    or v.dtype != kind
                    or v.ndim != len(shape)
                    or any(w is not None and w != g for w, g in zip(shape, v.shape, strict=True))
                ):
                    return None
                values.append(v)
            elif kind is int and type(v) is int:
                values.append(v)
            elif kind not in (None, int) and type(v) in (float, int, kind):
                values.append(kind(v))
            else:
                return None
        return values

    def _bound(
        self, given: dict[str, Any]
    ) -> tuple[list[Any], list[tuple[list[Any], np.ndarray[Any, Any]]]]:
        """The argument values in signature order, and the lists to update after the call."""
        fast = self._fast_values(given)
        if fast is not None:
            return fast, []
        # Lists, conversions and every error message: the interpreter's rules.
        fn = self.schedule.program.function
        return Interpreter(fn.module).bind_arguments(fn, given)

    def _bounds_error(self, e: IndexError) -> BoundsError:
        """The guard's error as polykrnl's, at the access's op, with what to do."""
        program = self.schedule.program
        fn = program.function
        array, dim = e.args[0], e.args[1]
        memory = memory_report(program)
        guard = next((g for g in memory.guards if (g.array, g.dim) == (array, dim)), None)
        verdict = next((a for a in memory.arrays if a.array == array), None)
        if verdict is not None and verdict.verdict == "out of bounds":
            hint = (
                f"no size fits: the function leaves {array} for every size it allows "
                "(`polykrnl check` shows a witness); fix the program"
            )
        elif verdict is not None and verdict.verdict == "in bounds when":
            hint = f"{array} is in bounds when {verdict.condition} (`polykrnl check`)"
        else:
            hint = "pass arrays whose sizes fit the accesses (see `polykrnl check`)"
        where = guard.location if guard is not None and guard.location else fn.location(fn.op)
        return BoundsError(f"@{fn.name}: {e}", location=where, hint=hint)

    def __call__(self, **arrays_and_params: Any) -> Any:
        fn = self.schedule.program.function
        values, writeback = self._bound(arrays_and_params)
        try:
            with np.errstate(all="ignore"):
                results = self._run(values)
        except IndexError as e:
            # The kernel's own guard (bounds_guard.py): one polykrnl error, located at
            # the function. Any other IndexError is not ours to reword.
            if type(e).__name__ != BOUNDS_ERROR:
                raise
            raise self._bounds_error(e) from None
        if results is None:
            results = ()
        elif not isinstance(results, tuple):
            results = (results,)
        return handed_back(fn, list(results), writeback)

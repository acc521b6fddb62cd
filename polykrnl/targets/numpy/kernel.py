"""The NumPy target's kernel: the Python source `codegen.kernel.write_kernel` writes in the
array form, compiled once and called with arrays by name."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from polykrnl import display
from polykrnl.codegen import numpy_ops
from polykrnl.codegen.kernel import helper_order, schedule_comment, write_kernel
from polykrnl.codegen.kernel_call import KernelCall
from polykrnl.codegen.memory_ops import HELPERS
from polykrnl.codegen.python_form import NUMPY_FORM, PythonForm
from polykrnl.codegen.safe_text import comment_text
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter import registered_calls

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule


@dataclass(frozen=True, eq=False)
class NumpyKernel(KernelCall):
    """A compiled NumPy kernel: `.source` (Python text) and `__call__(**arrays_and_params)`.

    Made by `Schedule.to_numpy()` or `pk.compile(fn)`. Call it with the function's
    arguments by name (arrays of the exact dtype, updated in place; index values as
    ints); it returns the function's results. Before any access it refuses arrays that
    do not fit (`BoundsError`). `exact` is False when a reduction was reassociated or a
    math function (exp, tanh, ...) of float32 values computed in float32
    (`reassociated`, `narrow_math`; floating-point results may then differ from the
    reference in the last bits; `reassociate=False` gives an exact kernel).

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
    >>> kernel = pk.schedule(fn).to_numpy()
    >>> print(kernel.function_source.strip().splitlines()[-1])
            np.add(x, x, out=X[0:N])
    >>> X = np.ones(3, dtype=np.float32)
    >>> kernel(X=X, N=3)
    >>> X
    array([2., 2., 2.], dtype=float32)
    """

    schedule: Schedule = field(repr=False)
    source: str
    entry: str  # the name of the generated function in `source`
    # False when a reduction was reassociated (a contraction as np.einsum) or a math
    # function of float32 values computed in float32: floating-point results then differ
    # from the reference in the last bits.
    exact: bool = True
    helpers: frozenset[str] = frozenset()  # the helper functions the source defines
    function_source: str = ""  # the generated functions alone (for a caller's module)
    cache: bool = False  # nothing of a NumPy kernel is cached on disk (Numba's are)
    reassociated: bool = False  # a float reduction runs in another order
    # math functions computed in their float32 (float16) operands' type, by NumPy's own
    # loops (within a few ulp), where the interpreter rounds a float64 result once
    narrow_math: tuple[str, ...] = ()
    # the form of Python its source is written in (module_source reads it)
    form: ClassVar[PythonForm] = NUMPY_FORM
    imports: ClassVar[str] = "import numpy as np"

    def helper_sources(self, helpers: Sequence[str], cache: bool) -> list[str]:
        """The source of each helper, for a module of NumPy kernels."""
        return [numpy_ops.PRELUDE.get(h) or HELPERS[h] for h in helpers]

    @cached_property
    def _function(self) -> Any:
        namespace: dict[str, Any] = {}
        exec(compile(self.source, f"<polykrnl kernel {self.entry}>", "exec"), namespace)
        if "_pk_calls" in namespace:
            # In-process, krnl.call reaches the functions of polykrnl.register_call.
            namespace["_pk_calls"] = _RegisteredCalls()
        return namespace[self.entry]

    def _run(self, values: list[Any]) -> Any:
        return self._function(*values)

    def __repr__(self) -> str:
        lines = self.source.count("\n")
        return f"<NumpyKernel @{self.schedule.program.function.name}: {lines} lines>"

    def inexact_reason(self) -> str:
        """Why the results may differ from the reference in the last bits ("" if exact)."""
        why = ["reassociated (float sums or products in another order)"] * self.reassociated
        if self.narrow_math:
            why.append(f"{', '.join(self.narrow_math)} computed in float32 (within a few ulp)")
        return "; ".join(why)

    def _repr_html_(self) -> str:
        """Jupyter: the call signature, what the kernel guarantees, the highlighted source."""
        fn = self.schedule.program.function
        rows = [(a.name, str(a.type)) for a in fn.arguments]
        exact = (
            "exact: bit for bit the reference interpreter's results"
            if self.exact
            else "not exact: " + self.inexact_reason()
        )
        body = (
            display.section(
                f"{self.entry}(**arrays_and_params)", display.html_table(("argument", "type"), rows)
            )
            + f'<div style="margin: 4px 0;">{display.escape(exact)}</div>'
            + display.section("source", display.highlight(self.source, "python"))
        )
        return display.display_box("numpy-kernel", f"NumpyKernel @{fn.name}", body)


def to_numpy(
    sched: Schedule,
    vectorize: bool = True,
    reassociate: bool = True,
    parallel: bool = False,
    check_bounds: bool = True,
) -> NumpyKernel:
    """The NumPy kernel of a schedule.

    `vectorize=False` keeps every loop a Python loop; `reassociate=False` keeps
    reductions in their order and computes math functions of float32 values in float64
    rounded once, as the interpreter does (bit-exact results, slower contractions and
    functions);
    `parallel=True` runs the krnl.parallel loops that stay Python loops around
    array code on a thread pool (scalar bodies hold the GIL and would not gain);
    `check_bounds=False` drops the bounds guard (bounds_guard.py).
    """
    w = write_kernel(
        sched,
        vectorize=vectorize,
        reassociate=reassociate,
        parallel=parallel,
        check_bounds=check_bounds,
    )
    header = "\n".join(
        [
            f"# polykrnl NumPy kernel of @{comment_text(sched.program.function.name)}",
            "# schedule:",
            *schedule_comment(sched),
            "import numpy as np",
            "",
            *(numpy_ops.PRELUDE.get(h) or HELPERS[h] for h in helper_order(w.helpers)),
            "",
            *w.callee_sources,
        ]
    )
    return NumpyKernel(
        sched,
        header + "\n" + w.own_source,
        w.entry,
        w.exact and not w.narrow_math,
        w.helpers,
        w.function_source,
        reassociated=not w.exact,
        narrow_math=w.narrow_math,
    )


class _RegisteredCalls(dict[str, Any]):
    """krnl.call targets as the interpreter finds them (looked up at each call)."""

    def __missing__(self, name: str) -> Any:
        target = registered_calls().get(name)
        if target is None:
            raise UnsupportedError(
                f"krnl.call to '{name}', which is not registered",
                hint=f"register a Python function with polykrnl.register_call('{name}', f)",
            )
        return _keywords_it_takes(target)


def _keywords_it_takes(target: Any) -> Any:
    """`target` called with the op's attributes it declares (all of them with **kwargs)."""
    try:
        params = dict(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        params = {}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def call(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **{n: v for n, v in kwargs.items() if takes_all or n in params})

    return call

"""`pk.run_reference`: the reference interpreter, in the program's order or a schedule's."""

from __future__ import annotations

from typing import Any

from polykrnl.interpreter import Interpreter
from polykrnl.ir import Function


def run_reference(fn: Function, /, schedule: Any = None, **arrays_and_params: Any) -> Any:
    """Run `fn` with the reference interpreter; arguments are passed by name.

    Memref arguments are NumPy arrays of the exact dtype (``f32`` ->
    ``float32``, ``index`` -> ``int64``, ...) and shape (``?`` accepts any
    size); they are updated in place. Scalars are Python or NumPy numbers,
    strings are str. Returns None, the single result, or a tuple of results.

    With ``schedule=s`` (a polykrnl Schedule of `fn`), the statement instances
    run in the order of `s` instead of the program's own order.

    Raises `ArgumentError` for missing or mismatched arguments and `InterpretError`
    for a run-time problem (an access out of bounds, an unknown call).

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
    >>> X = np.arange(4, dtype=np.float32)
    >>> pk.run_reference(fn, X=X, N=4)
    >>> X
    array([0., 2., 4., 6.], dtype=float32)
    """
    if schedule is not None:
        # The instances in a schedule's order need the polyhedral model; the plain run
        # needs only the loop nest (the interpreter imports no isl).
        from polykrnl.transforms.scheduled_run import run_schedule

        return run_schedule(fn, schedule, arrays_and_params)
    return Interpreter(fn.module).call(fn, arrays_and_params)

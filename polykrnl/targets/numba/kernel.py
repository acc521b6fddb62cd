"""NumbaKernel: a Schedule as scalar loops compiled by Numba (the extra ``polykrnl[numba]``).

``sched.to_numba()`` writes isl's AST of the schedule as plain Python loops, in
exactly the schedule's order (tiles, permutation, unrolled copies), every value
of its MLIR type (Numba would otherwise compute `int32 + int32` in int64), and
each krnl.parallel loop that legality proves parallel as ``prange``. The
module it writes (``.source``) is self-contained: NumPy, Numba and the helpers.

Compilation happens once per argument signature, at the first call (or at
:meth:`NumbaKernel.compile`), and is timed apart from running. With
``cache=True`` the module is written to polykrnl's cache directory
(``$POLYKRNL_CACHE_DIR``, else ``$XDG_CACHE_HOME/polykrnl`` or
``~/.cache/polykrnl``) so that Numba's on-disk cache serves later processes.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute

from polykrnl import display
from polykrnl.codegen.bounds_guard import BOUNDS_ERROR
from polykrnl.codegen.cache_dir import cache_dir
from polykrnl.codegen.kernel import helper_order, schedule_comment, write_kernel
from polykrnl.codegen.kernel_call import KernelCall
from polykrnl.codegen.python_form import PythonForm
from polykrnl.codegen.safe_text import comment_text
from polykrnl.codegen.scalar_prelude import SCALAR_HELPERS
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter import scalar_dtype
from polykrnl.targets.numba import bits, minmax_keys, vector_math, view_alias
from polykrnl.targets.numba.aliases import Root, array_roots
from polykrnl.targets.numba.fission import split_sums
from polykrnl.targets.numba.form import NUMBA_FORM
from polykrnl.targets.numba.lane_accumulators import unroll_accumulator_lanes
from polykrnl.targets.numba.lanes import flatten_lanes
from polykrnl.targets.numba.promote import (
    hoist_views,
    localize_per_iteration,
    merge_views,
    promote_invariants,
    unbox_set_once,
)
from polykrnl.targets.numba.scalars import forward_loads, hoist_scalars
from polykrnl.targets.numba.subscripts import sign_invariant_subscripts

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule

#: what to install when Numba is missing
INSTALL_HINT = "install the extra: pip install 'polykrnl[numba]'"


def numba_missing() -> str | None:
    """Why the Numba target cannot run here (None: it can)."""
    try:
        import numba  # noqa: F401
    except ImportError as e:
        return f"the Numba target needs numba, which does not import here ({e})"
    return None


@dataclass(frozen=True, eq=False)
class NumbaKernel(KernelCall):
    """A Numba kernel: `.source` (a Python module) and `__call__(**arrays_and_params)`.

    Made by `Schedule.to_numba()` or `pk.compile(fn, target="numba")` (needs the
    `numba` extra). The loops follow the schedule exactly; `parallel_loops` says which
    `krnl.parallel` loops run as `prange` and why the others do not. Called like a
    `NumpyKernel`; Numba compiles it at the first call.

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
    >>> kernel = pk.compile(fn, target="numba")
    >>> X = np.ones(3, dtype=np.float32)
    >>> kernel(X=X, N=3)
    >>> X
    array([2., 2., 2.], dtype=float32)
    """

    schedule: Schedule = field(repr=False)
    source: str
    entry: str
    # krnl.parallel loop -> "prange", or the reason it runs sequentially
    parallel_loops: dict[str, str] = field(default_factory=dict)
    cache: bool = True
    helpers: frozenset[str] = frozenset()  # the helper functions the source defines
    function_source: str = ""  # the generated functions alone, decorated (for a module)
    exact: bool = True  # scalar loops in the schedule's order: the reference's results
    # Numba's per-access index checks: off where the bounds guard proves every access
    boundscheck: bool = True
    # argument signature -> seconds Numba took to compile it (filled by calls)
    compile_seconds: dict[tuple[Any, ...], float] = field(default_factory=dict, compare=False)
    # what the arrays' dtype, rank and flags were typed as, once compiled for them
    _compiled_for: set[tuple[Any, ...]] = field(
        default_factory=set, init=False, compare=False, repr=False
    )
    # the form of Python its source is written in (module_source reads it)
    form: ClassVar[PythonForm] = NUMBA_FORM
    imports: ClassVar[str] = "import numpy as np\nfrom numba import njit, prange"

    def helper_sources(self, helpers: Sequence[str], cache: bool) -> list[str]:
        """The source of each helper, decorated, for a module of Numba kernels."""
        return [numba_helper(h, cache) for h in _intrinsics_first(helpers)]

    @cached_property
    def _module(self) -> ModuleType:
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:24]
        name = f"_polykrnl_numba_{digest}"
        if self.cache:
            path = _cache_dir() / f"{name}.py"
            if not path.exists():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(self.source)
                tmp.replace(path)  # atomic: another process may write the same file
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # Numba's cache finds the module by name
            spec.loader.exec_module(module)
            return module
        module = ModuleType(name)
        exec(compile(self.source, f"<polykrnl numba kernel {self.entry}>", "exec"), module.__dict__)
        return module

    @property
    def dispatcher(self) -> Any:
        """The Numba dispatcher of the kernel's function."""
        return getattr(self._module, self.entry)

    def compile(self, **arrays_and_params: Any) -> float:
        """Compile for the types of these arguments; the seconds it took (0 if done)."""
        values = self._bound(arrays_and_params)[0]
        return self._compiled(values)

    def _compiled(self, values: list[Any]) -> float:
        import numba

        # numba.typeof costs ~30 us an array, more than a small kernel's run (a 3x3
        # convolution took 0.66 ms through the call against 0.45 in C): what it reads
        # of an array (dtype, rank, layout, writeable, aligned) is the key of the check.
        key = tuple(_type_key(v) for v in values)
        if key in self._compiled_for:
            return 0.0
        sig = tuple(numba.typeof(v) for v in values)
        if sig in self.compile_seconds:
            self._compiled_for.add(key)
            return 0.0
        start = time.perf_counter()
        try:
            self.dispatcher.compile(sig)
        except numba.core.errors.NumbaError as e:
            fn = self.schedule.program.function
            first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
            raise UnsupportedError(
                f"Numba could not compile the kernel of @{fn.name}: {first}",
                location=fn.location(fn.op),
                hint="the NumPy target runs it (emit numpy / run --target numpy); "
                "please report the program",
            ) from None
        self.compile_seconds[sig] = time.perf_counter() - start
        self._compiled_for.add(key)
        return self.compile_seconds[sig]

    def _run(self, values: list[Any]) -> Any:
        self._compiled(values)
        results = self.dispatcher(*values)
        # Numba hands scalars back as Python numbers: give them their MLIR type.
        types = self.schedule.program.function.result_types
        if len(types) == 1:
            return _typed_result(results, types[0])
        if isinstance(results, tuple):
            return tuple(_typed_result(r, t) for r, t in zip(results, types, strict=True))
        return results

    def __repr__(self) -> str:
        lines = self.source.count("\n")
        return f"<NumbaKernel @{self.schedule.program.function.name}: {lines} lines>"

    def _repr_html_(self) -> str:
        fn = self.schedule.program.function
        rows = [(a.name, str(a.type)) for a in fn.arguments]
        loops = [(loop, how) for loop, how in self.parallel_loops.items()]
        body = display.section(
            f"{self.entry}(**arrays_and_params)", display.html_table(("argument", "type"), rows)
        )
        if loops:
            body += display.section(
                "krnl.parallel loops", display.html_table(("loop", "runs as"), loops)
            )
        body += display.section("source", display.highlight(self.source, "python"))
        return display.display_box("numba-kernel", f"NumbaKernel @{fn.name}", body)


def to_numba(
    sched: Schedule,
    *,
    parallel: bool = True,
    boundscheck: bool | None = None,
    cache: bool = True,
    check_bounds: bool = True,
) -> NumbaKernel:
    """The Numba kernel of a schedule.

    `parallel=False` runs krnl.parallel loops sequentially; `check_bounds` writes the
    bounds guard (bounds_guard.py); Numba's own index checks (`boundscheck`) are on
    unless the guard proves every access in bounds (None), or as forced (an access
    outside an array without either check is undefined behaviour); `cache=False`
    keeps the module in memory (no file, no on-disk cache).
    """
    reason = numba_missing()
    if reason is not None:
        fn = sched.program.function
        raise UnsupportedError(reason, location=fn.location(fn.op), hint=INSTALL_HINT)
    w = write_kernel(
        sched,
        vectorize=False,
        reassociate=False,
        parallel=parallel,
        form=NUMBA_FORM,
        check_bounds=check_bounds,
    )
    functions = ast.parse(w.function_source)
    functions = _NumbaForms().visit(functions)
    maths: set[str] = set()
    keys = False
    for f in functions.body:
        if isinstance(f, ast.FunctionDef) and f.name == w.entry:
            roots = _rewrite_entry(f, sched)
            flatten_lanes(f)
            maths |= vector_math.use_vector_math(f, roots)
        elif isinstance(f, ast.FunctionDef):
            flatten_lanes(f)
            maths |= vector_math.use_vector_math(f)
        if isinstance(f, ast.FunctionDef):
            keys = minmax_keys.use_minmax_keys(f) or keys
            if f.name in w.proven_in_bounds:
                sign_invariant_subscripts(f)
    for f in functions.body:
        if isinstance(f, ast.FunctionDef):
            # Each function by its own guard, so that a callee reads the same in every
            # module that defines it.
            checks = boundscheck if boundscheck is not None else f.name not in w.proven_in_bounds
            options = f'cache={cache}, error_model="numpy", boundscheck={checks}'
            threaded = any(isinstance(x, ast.Name) and x.id == "prange" for x in ast.walk(f))
            f.decorator_list = [
                ast.parse(f"njit({options}{', parallel=True' if threaded else ''})").body[0].value  # type: ignore[attr-defined]
            ]
    ast.fix_missing_locations(functions)
    fn = sched.program.function
    pranged = dict(w.pranged)
    header = [
        f"# polykrnl Numba kernel of @{comment_text(fn.name)}",
        "# schedule:",
        *schedule_comment(sched),
    ]
    if pranged:
        header.append("# krnl.parallel loops:")
        header += [
            "#   "
            + comment_text(
                f"{loop}: "
                + (f"{how} (threads)" if how.startswith("prange") else f"sequential: {how}")
            )
            for loop, how in pranged.items()
        ]
    function_source = ast.unparse(functions) + "\n"
    threaded_views = any(
        isinstance(f, ast.FunctionDef) and view_alias.needed(f) for f in functions.body
    )
    helpers = w.helpers | {view_alias.NAME} if threaded_views else w.helpers
    helpers = helpers | {bits.NAME, *maths} if maths else helpers
    helpers = helpers | {bits.NAME, minmax_keys.NAME} if keys else helpers
    source = "\n".join(
        [
            *header,
            NumbaKernel.imports,
            "",
            *(numba_helper(h, cache) for h in _intrinsics_first(helper_order(helpers))),
            "",
            function_source,
        ]
    )
    return NumbaKernel(
        sched,
        source,
        w.entry,
        parallel_loops=pranged,
        cache=cache,
        helpers=helpers,
        function_source=function_source,
        boundscheck=boundscheck if boundscheck is not None else w.entry not in w.proven_in_bounds,
    )


def _rewrite_entry(f: ast.FunctionDef, sched: Schedule) -> dict[str, Root]:
    """The rewrites of the entry function's AST that keep it the interpreter's, bit for bit
    (promote.py, scalars.py, fission.py); the array roots of the result (aliases.py)."""
    unbox_set_once(f)
    localize_per_iteration(f)
    unroll_accumulator_lanes(f)  # before promotion, which keeps the lanes in locals
    hoist_views(f)
    arguments = _element_types(sched, f)
    pure = frozenset(SCALAR_HELPERS)
    merge_views(f)
    forward_loads(f, array_roots(f, arguments), pure)
    promote_invariants(f, arguments, pure)
    # again: the elements promoted through one view are loaded once
    forward_loads(f, array_roots(f, arguments), pure)
    hoist_scalars(f, array_roots(f, arguments), pure)
    split_sums(f, array_roots(f, arguments))
    return array_roots(f, arguments)


def _intrinsics_first(helpers: Sequence[str]) -> list[str]:
    """The helpers with the intrinsics (bits.py), which others call, first."""
    return sorted(helpers, key=lambda h: h != bits.NAME)


def numba_helper(helper: str, cache: bool = True) -> str:
    """The source of a helper of Numba kernels, decorated (the exception class not)."""
    if helper == BOUNDS_ERROR:
        return SCALAR_HELPERS[helper]
    if helper == bits.NAME:
        return bits.SOURCE
    if helper == view_alias.NAME:
        return view_alias.SOURCE
    if helper in vector_math.HELPERS.values():
        return vector_math.source(helper, cache)
    if helper == minmax_keys.NAME:
        return minmax_keys.source(cache)
    return f'@njit(cache={cache}, error_model="numpy")' + SCALAR_HELPERS[helper].rstrip() + "\n"


class _NumbaForms(ast.NodeTransformer):
    """NumPy spellings Numba lacks, in the equivalent form it compiles:
    `x.astype(np.T)` -> `np.T(x)`, `np.f(a, dtype=np.T)` -> `np.f(np.T(a))`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "astype" and len(node.args) == 1:
            return ast.Call(node.args[0], [f.value], [])
        dtype = next((k for k in node.keywords if k.arg == "dtype"), None)
        if (
            dtype is not None
            and isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id == "np"
            and f.attr not in ("full", "empty", "zeros", "ones", "array")
        ):
            node.args = [ast.Call(dtype.value, [a], []) for a in node.args]
            node.keywords = [k for k in node.keywords if k is not dtype]
        return node


def _element_types(sched: Schedule, entry: ast.FunctionDef) -> dict[str, str]:
    """Memref parameter of the entry function -> NumPy dtype name of its elements."""
    args = sched.program.function.arguments
    params = [a.arg for a in entry.args.args]
    if len(params) != len(args):
        return {}
    out = {}
    for p, a in zip(params, args, strict=True):
        if isinstance(a.type, MemRefType):
            try:
                dtype = np.dtype(scalar_dtype(a.type.element_type))
            except (TypeError, ValueError):
                continue
            out[p] = "bool_" if dtype == np.bool_ else dtype.name  # np.bool_ is the type
    return out


def _type_key(v: Any) -> tuple[Any, ...]:
    """What Numba's type of `v` depends on: for an array its dtype, rank and flags
    (numba.typeof's layout, readonly and aligned); other values are typed by numba.typeof
    itself (a Python int is int64 or uint64 by its value)."""
    if type(v) is np.ndarray:
        f = v.flags
        return (v.dtype, v.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    import numba

    return (numba.typeof(v),)


def _typed_result(value: Any, t: Attribute) -> Any:
    if isinstance(t, MemRefType) or isinstance(value, np.ndarray):
        return value
    try:
        return scalar_dtype(t).type(value)
    except (TypeError, ValueError):
        return value


def _cache_dir() -> Path:
    """Where cached kernel modules live (codegen/cache_dir.py)."""
    return cache_dir("numba")

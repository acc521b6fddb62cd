"""PtoKernel: the PTO tile kernel of a schedule, as C++ and as its NumPy simulation.

``sched.to_pto(arch="a2a3")`` lowers the schedule (:mod:`polykrnl.tiles.lower`)
and wraps the tile program:

- ``.source``: the complete C++ kernel; ``.harness(**sizes)``: the same with a
  ``main`` for pto-isa's CPU simulator (one raw file per memref argument);
- ``.tiles``: the declared tiles (type, buffer offset);
- ``.tmp_sizes``: tmp tile -> bytes it needs, a sympy expression of the problem
  sizes (the maximum over the tiles); ``.tmp_bytes(**sizes)`` the numbers;
- ``.simulate(**arrays_and_sizes)``: runs the instruction list the C++ prints on
  NumPy arrays with the documented semantics, updating them in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import sympy  # type: ignore[import-untyped]

from polykrnl import display
from polykrnl.errors import ArgumentError, BoundsError
from polykrnl.model.poly import DimParam
from polykrnl.tiles.cpp import harness, to_cpp
from polykrnl.tiles.interpret import simulate, timeline
from polykrnl.tiles.lower import Lowered, lower
from polykrnl.tiles.program import Program, TileDecl, eval_expr
from polykrnl.tiles.timeline import CostModel, Timeline
from polykrnl.transforms.core import Schedule
from polykrnl.transforms.memory_safety import refuse_unsafe

__all__ = ["PtoKernel", "to_pto"]


@dataclass(frozen=True, eq=False)
class PtoKernel:
    """A PTO kernel of a schedule (see the module docstring)."""

    schedule: Schedule
    lowered: Lowered = field(repr=False)

    @property
    def program(self) -> Program:
        return self.lowered.program

    @property
    def arch(self) -> str:
        return self.program.arch.name

    @cached_property
    def source(self) -> str:
        return to_cpp(self.program)

    @property
    def tiles(self) -> tuple[TileDecl, ...]:
        return self.program.tiles

    @property
    def tmp_sizes(self) -> dict[str, sympy.Expr]:
        """tmp tile -> bytes it needs (sympy, in the problem sizes; max over the tiles)."""
        return {name: size.expr for name, size in self.lowered.tmp_sizes.items()}

    @property
    def params(self) -> dict[str, str]:
        """Problem size -> where it comes from (an index argument, or `A.0` for a dimension)."""
        return {p: str(src) for p, src in self.lowered.param_sources.items()}

    def tmp_bytes(self, **sizes: int) -> dict[str, int]:
        """The bytes each tmp tile needs for the given problem sizes (e.g. ``N=40``)."""
        out: dict[str, int] = {}
        for name, size in self.lowered.tmp_sizes.items():
            missing = [p for p in size.params if p not in sizes]
            if missing:
                raise ArgumentError(
                    f"tmp_bytes of {self.program.name}: no value for {', '.join(missing)}",
                    hint="give every size the formula uses, e.g. "
                    + ", ".join(f"{p}=64" for p in missing),
                )
            out[name] = size.evaluate(**{p: sizes[p] for p in size.params})
        return out

    def sizes_of(self, values: Mapping[str, Any]) -> dict[str, int]:
        """The problem sizes for the given arguments (index arguments and array shapes)."""
        out: dict[str, int] = {}
        for p, source in self.lowered.param_sources.items():
            if isinstance(source, DimParam):
                arg = source.array_name
                array = values.get(arg)
                if not isinstance(array, np.ndarray):
                    raise ArgumentError(
                        f"{self.program.name}: argument {arg} is missing or not an array",
                        hint=f"pass {arg}=numpy array",
                    )
                out[p] = int(array.shape[source.dim])
            else:
                src = source.display
                if src not in values:
                    raise ArgumentError(
                        f"{self.program.name}: no value for the size {src}",
                        hint=f"pass {src}=<int>",
                    )
                out[p] = int(values[src])
        return out

    def harness(self, **sizes: int) -> str:
        """The C++ kernel with a ``main`` for the CPU simulator, sizes fixed (``N=40``)."""
        params = {
            p: sizes[str(src)] for p, src in self.lowered.param_sources.items() if str(src) in sizes
        }
        self._check_fixed(params)
        refuse_unsafe(self.schedule.program, params, f"harness of {self.program.name}")
        return harness(self.program, params)

    def _check_fixed(self, sizes: Mapping[str, int]) -> None:
        # A size given to to_pto(params=) shaped the static tiles: other values would
        # make tiles too small (a harness writing past them), so they are refused here.
        for p, v in self.lowered.fixed.items():
            if p in sizes and sizes[p] != v:
                src = self.lowered.param_sources[p]
                raise ArgumentError(
                    f"{self.program.name}: the kernel was emitted for {src} = {v} "
                    f"(to_pto(params=...)), not {src} = {sizes[p]}",
                    hint=f"emit it again with params {p}={sizes[p]}",
                )

    def simulate(self, **arrays_and_sizes: Any) -> None:
        """Run the kernel's instructions on NumPy arrays (updated in place), with the
        documented PTO semantics; sizes come from index arguments and array shapes. Checks
        that the kernel's flags order every two accesses of different pipes to the same
        tile or memory (raises RaceError naming both otherwise)."""
        simulate(self.program, *self._run_args(arrays_and_sizes))

    def timeline(self, *, cost: CostModel | None = None, **arrays_and_sizes: Any) -> Timeline:
        """When each instruction would run with the pipes in parallel, under a cost model
        (:mod:`polykrnl.tiles.timeline`): for comparing schedules of this kernel (double
        buffering or not, block sizes), not for predicting hardware time. Takes what
        :meth:`simulate` takes; the arrays are not changed."""
        arrays, sizes = self._run_args(arrays_and_sizes)
        return timeline(self.program, {k: v.copy() for k, v in arrays.items()}, sizes, cost)

    def _run_args(
        self, arrays_and_sizes: dict[str, Any]
    ) -> tuple[dict[str, np.ndarray[Any, Any]], dict[str, int]]:
        sizes = self.sizes_of(arrays_and_sizes)
        self._check_fixed(sizes)
        refuse_unsafe(self.schedule.program, sizes, f"simulation of {self.program.name}")
        arrays: dict[str, np.ndarray[Any, Any]] = {}
        for t in self.program.tensors:
            a = arrays_and_sizes.get(t.name)
            if not isinstance(a, np.ndarray):
                raise ArgumentError(
                    f"{self.program.name}: argument {t.name} is missing or not an array",
                    hint=f"pass {t.name}=numpy array of {t.dtype}",
                )
            if a.dtype != t.dtype.np_dtype or not a.flags.c_contiguous:
                raise ArgumentError(
                    f"{self.program.name}: {t.name} is a {a.dtype} array "
                    f"({'C-contiguous' if a.flags.c_contiguous else 'not contiguous'}); the "
                    f"kernel takes contiguous {t.dtype.np_dtype}",
                    hint=f"pass np.ascontiguousarray({t.name}, dtype=np.{t.dtype.np_dtype})",
                )
            want = tuple(int(eval_expr(n, sizes)) for n in t.shape)
            if a.shape != want:
                raise BoundsError(
                    f"{self.program.name}: {t.name} has shape {a.shape}; at these sizes the "
                    f"kernel takes {want}",
                    hint=f"pass {t.name} of shape {want}",
                )
            arrays[t.name] = a
        return arrays, sizes

    def __repr__(self) -> str:
        return (
            f"<PtoKernel @{self.program.name} for {self.arch}: {len(self.tiles)} tiles, "
            f"{len(self.lowered.tmp_sizes)} tmp>"
        )

    def _repr_html_(self) -> str:
        return self.html()

    def html(self, **sizes: int) -> str:
        """The HTML display; with the problem sizes (``N=40``), the tmp sizes as numbers too."""
        rows = []
        for t in self.tiles:
            tt = t.type
            valid = f"{_dim(tt.valid_row)} x {_dim(tt.valid_col)}"
            rows.append(
                (t.name, tt.cpp, f"{tt.rows} x {tt.cols}", valid, t.buffer.name, t.offset, tt.bytes)
            )
        numbers = self.tmp_bytes(**sizes) if sizes else {}
        tmp_rows = []
        for name, size in self.lowered.tmp_sizes.items():
            tex = display.Html(f"\\({sympy.latex(size.expr)}\\)")
            declared = next(t.type.bytes for t in self.tiles if t.name == name)
            tmp_rows.append(
                (
                    name,
                    tex,
                    numbers.get(name, "-"),
                    declared,
                    "exact" if size.exact else "upper bound",
                )
            )
        body = display.section(
            "tiles",
            display.html_table(
                ("tile", "type", "shape", "valid", "buffer", "offset", "bytes"), rows
            ),
        )
        if tmp_rows:
            at = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "give sizes: kernel.html(N=..)"
            body += display.section(
                "tmp sizes: bytes needed (max over the tiles)",
                display.html_table(("tmp", "formula", f"bytes at {at}", "declared", ""), tmp_rows),
            )
        body += display.section("C++", display.highlight(self.source, "cpp"))
        return display.display_box(
            "pto-kernel", f"PtoKernel @{self.program.name} ({self.program.arch.title})", body
        )


def _dim(v: int | None) -> str:
    return "dynamic" if v is None else str(v)


def to_pto(
    sched: Schedule,
    arch: str = "a2a3",
    params: Mapping[str, int] | None = None,
    *,
    double_buffer: bool = True,
) -> PtoKernel:
    """The PTO kernel of a schedule for `arch` ("a2a3" or "a5"); `params` fixes sizes the
    static tile shapes need (a loop that is not blocked over a symbolic range);
    `double_buffer` as in :meth:`polykrnl.Schedule.to_pto`."""
    return PtoKernel(sched, lower(sched, arch, params, double_buffer=double_buffer))

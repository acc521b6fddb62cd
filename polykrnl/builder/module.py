"""The ModuleBuilder and the FunctionBuilder it hands out."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from polykrnl.builder.affine import AffineOps
from polykrnl.builder.arith import ArithOps
from polykrnl.builder.core import FunctionCore, TypeLike, builder_error, user_frame
from polykrnl.builder.generic import GenericOps
from polykrnl.builder.krnl_memory import KrnlMemoryOps
from polykrnl.builder.krnl_scalar import KrnlScalarOps
from polykrnl.builder.loops import KrnlLoopOps
from polykrnl.builder.math import MathOps
from polykrnl.builder.memref import MemrefOps
from polykrnl.ir import Module
from polykrnl.reader.layouts import normalize_layouts


class FunctionBuilder(
    KrnlLoopOps,
    KrnlMemoryOps,
    MemrefOps,
    ArithOps,
    MathOps,
    KrnlScalarOps,
    AffineOps,
    GenericOps,
):
    """Builds one ``func.func``; use it as ``with mb.function(...) as f:``.

    Every method that creates a value takes ``name=`` (or ``names=`` for
    several values): the SSA name it prints with, e.g. ``name="a"`` gives
    ``%a``. Without a name the printer numbers the value.
    """


class ModuleBuilder:
    """Builds a module of functions; ``module()`` returns the finished :class:`Module`.

    ``filename`` names the module in messages; it defaults to the Python file
    that creates the builder.

    Examples
    --------
    >>> import polykrnl as pk
    >>> mb = pk.ModuleBuilder()
    >>> with mb.function("copy", [("A", "memref<8xf32>"), ("B", "memref<8xf32>")]) as f:
    ...     A, B = f.args
    ...     (ii,) = f.define_loops(1, names=("ii",))
    ...     with f.iterate([ii], [(ii, "i", 0, 8)]) as (i,):
    ...         f.store(f.load(A, [i], name="a"), B, [i])
    >>> print(mb.module()["copy"].print())
    func.func @copy(%A: memref<8xf32>, %B: memref<8xf32>) {
      %ii = krnl.define_loops 1
      krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
        %a = krnl.load %A[%i] : memref<8xf32>
        krnl.store %a, %B[%i] : memref<8xf32>
      }
      func.return
    }
    """

    def __init__(self, filename: str | None = None) -> None:
        self.op = ModuleOp([])
        self.filename = filename if filename is not None else user_frame()[0]
        self._open_function: FunctionCore | None = None
        self._module: Module | None = None

    def function(
        self,
        name: str,
        args: Sequence[tuple[str | None, TypeLike]] = (),
        results: Sequence[TypeLike] = (),
    ) -> FunctionBuilder:
        """A new ``func.func @name(args) -> results``; use it in a ``with`` statement."""
        self._check_can_add(name)
        return FunctionBuilder(self, name, args, results)

    def module(self) -> Module:
        """The finished module (the same object on later calls)."""
        if self._module is not None:
            return self._module
        if self._open_function is not None:
            raise builder_error(
                f"function '{self._open_function.name}' is still being built",
                "call mb.module() after the with block of every function",
            )
        # No final verify: every op was verified when it was added or closed. Tiled
        # layouts are normalized as where text is read, so both agree (reader/layouts.py).
        notes, kept = normalize_layouts(self.op, {})
        self._module = Module(
            self.op, source=None, filename=self.filename, layout_notes=notes, layouts_kept=kept
        )
        return self._module

    def _check_can_add(self, name: str) -> None:
        if self._module is not None:
            raise builder_error(
                "the module was already finished by mb.module()",
                "add every function before calling mb.module(), or use a new ModuleBuilder",
            )
        if self._open_function is not None:
            raise builder_error(
                f"function '{self._open_function.name}' is still being built",
                "functions do not nest: close one with block before opening the next",
            )
        if any(isinstance(f, func.FuncOp) and f.sym_name.data == name for f in self.op.body.ops):
            raise builder_error(
                f"the module already has a function named '{name}'",
                "give each function a distinct name",
            )

    def _open(self, fb: FunctionCore) -> None:
        # Checked again: another function may have been added since mb.function(...).
        self._check_can_add(fb.name)
        self._open_function = fb
        self.op.body.block.add_op(fb.func_op)

    def _close(self, fb: FunctionCore, *, keep: bool) -> None:
        assert self._open_function is fb
        self._open_function = None
        if not keep:
            fb.func_op.detach()

"""Modules and functions: the xDSL IR of a Krnl program, its printers and source locations.

Every parsed op carries a `FileLineColLoc` pointing at its name in the source
(see :mod:`polykrnl.reader.parser`), so that later stages (verifier,
interpreter, schedule errors) can show the offending line with a caret.
Printing never shows these locations.
"""

from __future__ import annotations

import bisect
import io
import linecache
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.printer import Printer

from polykrnl.display import display_box, highlight
from polykrnl.errors import SourceLocation, UnknownFunctionError


class LineIndex:
    """Offset -> (line, column) for one source text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._lines: dict[int, str] = {}

    def location(self, file: str, offset: int, length: int = 1) -> SourceLocation:
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        line_text = self._lines.get(line)
        if line_text is None:
            end = self.text.find("\n", start)
            raw = self.text[start : end if end >= 0 else len(self.text)]
            # control characters (binary input) would garble the terminal: show U+FFFD
            line_text = "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in raw)
            self._lines[line] = line_text
        return SourceLocation(file, line + 1, offset - start + 1, line_text, max(1, length))


def int_list(attr: Attribute | None) -> list[int] | None:
    """The integers of an optional array attribute (None when absent or empty)."""
    if attr is None:
        return None
    assert isinstance(attr, ArrayAttr)
    vals = [int(a.value.data) for a in attr.data if isinstance(a, IntegerAttr)]
    return vals or None


def const_int(v: SSAValue) -> int | None:
    """The value of `v` when an arith.constant integer (or index) defines it."""
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        val = v.op.value
        if isinstance(val, IntegerAttr):
            return int(val.value.data)
    return None


def print_ir(op: Operation, *, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue().rstrip("\n") + "\n"


@dataclass(frozen=True)
class LayoutNote:
    """A function argument or result whose memref type the reader normalized."""

    function: str
    what: str  # "argument %x" or "result 0"
    before: str
    after: str

    def __str__(self) -> str:
        return (
            f"@{self.function}: {self.what} {self.before} is read as {self.after} "
            "(its layout map normalized, as onnx-mlir's --normalize-memrefs does)"
        )


@dataclass(frozen=True)
class Argument:
    """A function argument: its SSA name (without `%`) and its type."""

    name: str
    type: Attribute


class Module:
    """A parsed (or built) Krnl module: its functions, source and printers.

    Treat it as a value: polykrnl never mutates a Module it handed out, and
    transformations produce new objects.

    `mod["name"]` is a `Function` (`UnknownFunctionError` for a name it does not
    define), `mod.functions` lists them in order, `print(mod)` prints the module
    back in Krnl's syntax and `mod.print(generic=True)` in MLIR's generic form.

    Examples
    --------
    >>> import polykrnl as pk
    >>> mod = pk.parse("func.func @f() { return }  func.func @g() { return }")
    >>> [fn.name for fn in mod.functions]
    ['f', 'g']
    >>> print(mod)
    builtin.module {
      func.func @f() {
        func.return
      }
      func.func @g() {
        func.return
      }
    }
    """

    __slots__ = (
        "filename",
        "layout_notes",
        "layouts_kept",
        "line_index",
        "op",
        "source",
        "source_names",
    )

    def __init__(
        self,
        op: ModuleOp,
        *,
        source: str | None = None,
        filename: str = "<string>",
        source_names: Mapping[SSAValue, str] | None = None,
        layout_notes: tuple[LayoutNote, ...] = (),
        layouts_kept: str | None = None,
    ):
        self.op = op
        self.source = source
        self.filename = filename
        self.line_index = LineIndex(source) if source is not None else None
        # xDSL keeps only a name hint per value (none for `%0`, `a` for `%a_1`); the
        # parser records the names the source gives, so that messages can quote them.
        self.source_names: Mapping[SSAValue, str] = source_names or {}
        # The signatures the reader's normalization of tiled layouts changed, and why it
        # left a module's layouts as they were (reader/layouts.py).
        self.layout_notes = layout_notes
        self.layouts_kept = layouts_kept

    @property
    def functions(self) -> tuple[Function, ...]:
        return tuple(
            Function(self, f) for f in self.op.body.block.ops if isinstance(f, func.FuncOp)
        )

    def __getitem__(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        names = ", ".join(f.name for f in self.functions) or "none"
        raise UnknownFunctionError(
            f"no function named '{name}' in {self.filename}",
            hint=f"the module defines: {names}",
        )

    def __iter__(self) -> Iterator[Function]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def print(self, *, generic: bool = False) -> str:
        """MLIR text of the module (custom syntax, or the generic form)."""
        return print_ir(self.op, generic=generic)

    def __str__(self) -> str:
        return self.print()

    def __repr__(self) -> str:
        names = ", ".join(f.name for f in self.functions)
        return f"<polykrnl.Module {self.filename!r}: {names}>"

    def location(self, op: Operation) -> SourceLocation | None:
        """Where `op` stands in its source (the parsed text or the builder's Python file)."""
        return location_of(op, self)

    def _repr_html_(self) -> str:
        names = ", ".join(f"@{f.name}" for f in self.functions) or "no functions"
        return display_box(
            "module", f"Module {self.filename}: {names}", highlight(self.print(), "mlir")
        )


def location_of(op: Operation, module: Module | None = None) -> SourceLocation | None:
    loc = op.location
    if not isinstance(loc, FileLineColLoc):
        return None
    file, line, col = loc.filename.data, loc.line.data, loc.column.data
    if module is not None and module.line_index is not None and file == module.filename:
        idx = module.line_index
        if 1 <= line <= len(idx.starts):
            offset = idx.starts[line - 1] + col - 1
            return idx.location(file, offset, _token_length(idx.text, offset))
    text = linecache.getline(file, line) or None
    length = _token_length(text, col - 1) if text else 1
    return SourceLocation(file, line, col, text, length)


_TOKEN = re.compile(r'"?[\w.$-]+"?')


def _token_length(text: str, offset: int) -> int:
    """Length of the op name (or word) at `offset`: `return` is shorter than `func.return`."""
    m = _TOKEN.match(text, offset)
    return len(m.group()) if m else 1


@dataclass(frozen=True, eq=False)
class Function:
    """One `func.func` of a module.

    Its `name`, `arguments` (name and MLIR type of each), `result_types`, `print()`
    (its text) and `location(op)` (where an op of it is in the source). Every stage
    takes a Function: `pk.schedule(fn)`, `pk.check(fn)`, `pk.compile(fn)`,
    `pk.run_reference(fn, ...)`.

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
    >>> fn.name
    'scale'
    >>> [a.name for a in fn.arguments]
    ['X', 'N']
    """

    module: Module
    op: func.FuncOp

    @property
    def name(self) -> str:
        return self.op.sym_name.data

    @property
    def arguments(self) -> tuple[Argument, ...]:
        if not self.op.body.blocks:
            # A declaration (`func.func private @f(index)`): names from its type.
            return tuple(
                Argument(f"arg{i}", t) for i, t in enumerate(self.op.function_type.inputs.data)
            )
        out = []
        for i, a in enumerate(self.op.body.block.args):
            # The source's name: xDSL drops a `_<digits>` suffix from name hints.
            text = value_name(a, self.module).lstrip("%")
            name = text if text.isidentifier() else a.name_hint or f"arg{i}"
            out.append(Argument(name, a.type))
        return tuple(out)

    @property
    def result_types(self) -> tuple[Attribute, ...]:
        return tuple(self.op.function_type.outputs.data)

    def print(self, *, generic: bool = False) -> str:
        return print_ir(self.op, generic=generic)

    def __str__(self) -> str:
        return self.print()

    def __repr__(self) -> str:
        args = ", ".join(f"%{a.name}: {a.type}" for a in self.arguments)
        return f"<polykrnl.Function @{self.name}({args})>"

    def location(self, op: Operation) -> SourceLocation | None:
        return location_of(op, self.module)

    def _repr_html_(self) -> str:
        args = ", ".join(f"%{a.name}: {a.type}" for a in self.arguments)
        return display_box("function", f"@{self.name}({args})", highlight(self.print(), "mlir"))


def value_name(v: SSAValue, module: Module | None = None) -> str:
    """The name `v` has in the source text (`%0#1`, `%a_1`), else a description."""
    if module is not None and (name := module.source_names.get(v)) is not None:
        return name
    if v.name_hint:
        return f"%{v.name_hint}"
    if isinstance(v, OpResult):
        return f"result {v.index} of {v.op.name}"
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        return f"argument {v.index} of {parent.name if parent else 'a block'}"
    return "a value"

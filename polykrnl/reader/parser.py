"""Parsing Krnl MLIR text into xDSL IR, with source locations and clear errors.

xDSL reads the text; this module records where each op's name stands, and
turns xDSL's parse errors (some cryptic, some reported one token late) into
:class:`~polykrnl.errors.ParseError` with a precise location and a hint.
"""

from __future__ import annotations

import bisect
import re
import struct
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.utils.exceptions import ParseError as XParseError
from xdsl.utils.lexer import Span

from polykrnl.dialect.krnl import Krnl
from polykrnl.dialect.krnl.access import parse_access_map
from polykrnl.dialect.std_ext import REPLACED, STD_EXT_OPS
from polykrnl.dialect.std_vector import STD_VECTOR_OPS
from polykrnl.errors import ParseError, SourceLocation
from polykrnl.ir import LineIndex, Module
from polykrnl.reader.affine_text import SemiAffineReading
from polykrnl.reader.layouts import normalize_layouts
from polykrnl.reader.source_text import for_xdsl

DIALECTS = (
    builtin.Builtin,
    func.Func,
    arith.Arith,
    math.Math,
    memref.MemRef,
    affine.Affine,
    scf.Scf,
    vector.Vector,
    Krnl,
)


@cache
def context() -> Context:
    """The one xDSL context of the process, with every dialect polykrnl reads."""
    ctx = Context()
    for d in DIALECTS:
        kept = [op for op in d.operations if op not in REPLACED]
        ctx.load_dialect(
            Dialect(d.name, kept, list(d.attributes)) if len(kept) < len(list(d.operations)) else d
        )
    for op in (*STD_EXT_OPS, *STD_VECTOR_OPS):
        ctx.load_op(op)
    return ctx


class _LocatingParser(SemiAffineReading):
    """xDSL's parser, recording where each op's name stands in the source."""

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(context(), text, filename)
        self._filename = filename
        self._index = LineIndex(text)
        #: each value defined in the text, with the name the text gives it
        self.source_names: dict[SSAValue, str] = {}

    def _register_ssa_definition(
        self, name: str, values: Sequence[SSAValue], span: Span[str]
    ) -> None:
        # xDSL's one entry point for every SSA definition (op results, block
        # arguments), where the source's own name is still known.
        super()._register_ssa_definition(name, values, span)
        if len(values) == 1:
            self.source_names[values[0]] = f"%{name}"
        else:
            for i, v in enumerate(values):
                self.source_names[v] = f"%{name}#{i}"

    def parse_affine_map_of_ssa_ids(self) -> tuple[AffineMap, Sequence[SSAValue[IndexType]]]:
        # affine.load/store and krnl's access ops: with `%l#0` and `symbol(%n)`, as MLIR
        # writes them, which xDSL's own reader refuses.
        m, values = parse_access_map(self)
        return m, cast(list[SSAValue[IndexType]], values)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        name_re = re.compile(r'(?<![%\w.$#"])"?' + re.escape(op.name) + r"\b")
        m = name_re.search(self._index.text, start)
        offset = m.start() + (1 if m and m.group().startswith('"') else 0) if m else start
        loc = self._index.location(self._filename, offset, len(op.name))
        op.location = FileLineColLoc(
            StringAttr(self._filename), IntAttr(loc.line), IntAttr(loc.column)
        )
        return op


_HINTS: tuple[tuple[str, str], ...] = (
    (
        r"Operation (?P<op>krnl\.\S+) does not have a custom format",
        r"\g<op> has no custom syntax in the Krnl op reference: write it in the generic "
        'form, e.g. %y = "krnl.erf"(%x) : (f32) -> f32',
    ),
    (
        r"Operation (?P<op>\S+) does not have a custom format",
        r"xDSL, which reads the MLIR text, has no custom syntax for \g<op>: write it in the "
        r'generic form "\g<op>"(%operands) : (operand types) -> result types',
    ),
    (
        r"^type !\S+ is not registered",
        "the krnl dialect defines the types !krnl.loop and !krnl.string: check the type name",
    ),
    (
        r"is not registered",
        "polykrnl reads the builtin, func, arith, math, memref, affine, scf, vector and krnl "
        "dialects: check the op name",
    ),
    (
        r"which this same krnl\.iterate defines",
        "to bound a loop by an outer induction variable, nest a second krnl.iterate: "
        "krnl.iterate(%jj) with (%jj -> %j = %i to N) { ... }",
    ),
    (
        r"undefined|not defined|was not found",
        "define the value before it is used (values defined in a region, e.g. a "
        "krnl.iterate body, are not visible after it)",
    ),
    (
        r"multiple results requires '(max|min)' prefix|is only allowed before an? (lower|upper)",
        "write `max` before a multi-result lower bound map and `min` before an upper one",
    ),
    (
        r"results, but was given \d+ to bind",
        "bind one name per result, e.g. `%a, %b = krnl.define_loops 2` or "
        "`%l:2 = krnl.define_loops 2` (then use %l#0, %l#1)",
    ),
    (
        r"used with type !krnl\.loop, but",
        "loop handles are the !krnl.loop values of krnl.define_loops or krnl.block",
    ),
    (
        r"used with type index, but has been previously used or defined with type i",
        "loop bounds and memory indices are of type index: convert with arith.index_cast",
    ),
    (
        r"previously used or defined with type",
        "the type written for an operand must be the type the value was defined with",
    ),
    (r"is already defined", "give every SSA value its own name"),
    (r"missing `\}`", "close every `{` with a matching `}`"),
    (
        r"Could not parse entire input",
        "there is text after the last complete op: an extra `}`, or a stray line?",
    ),
    (
        r"unexpected character|not MLIR text|not UTF-8",
        "pass a Krnl .mlir text file (UTF-8 MLIR text)",
    ),
    (
        r"Expected '(with|to|->)'",
        "a krnl.iterate reads krnl.iterate(%h, ...) with (%h -> %i = LB to UB, ...) "
        "[iter_args(%x = %init) -> (T)] { ... }",
    ),
    (
        r"function type",
        'an op in the generic form ends with its type: "dialect.op"(%x) : (f32) -> f32',
    ),
    (r"expected.*type|type.*expected", "check the types after `:` against the op syntax"),
)


def _hint_for(message: str) -> str:
    for pattern, hint in _HINTS:
        if m := re.search(pattern, message):
            return m.expand(hint)  # a hint may name a group of its pattern: \g<op>
    return "compare the line with the syntax in the Krnl op reference"


def _parse_error(index: LineIndex, filename: str, span: Span[str] | None, msg: str) -> ParseError:
    offset = span.start if span is not None else len(index.text)
    length = (span.end - span.start) if span is not None else 1
    loc = index.location(filename, min(offset, max(0, len(index.text) - 1)), length)
    return ParseError(msg, location=loc, hint=_hint_for(msg))


_COMMENT_OR_SPACE = re.compile(r"(\s|//[^\n]*)*")


def parse(text: str, filename: str = "<string>") -> Module:
    """Parse Krnl MLIR text (a `module` or bare functions) into a :class:`Module`.

    Raises :class:`polykrnl.errors.ParseError` for any malformed input, with
    the location and a hint; never an xDSL exception.

    `filename` names the text in messages and locations (default ``"<string>"``).

    Examples
    --------
    >>> import polykrnl as pk
    >>> mod = pk.parse('''
    ... func.func @zero(%A: memref<8xf32>) {
    ...   %c = arith.constant 0.0 : f32
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    ...     krnl.store %c, %A[%i] : memref<8xf32>
    ...   }
    ...   return
    ... }''')
    >>> mod.functions
    (<polykrnl.Function @zero(%A: memref<8xf32>)>,)
    >>> mod["zero"].name
    'zero'
    """
    index = LineIndex(text)
    if _COMMENT_OR_SPACE.fullmatch(text):
        raise ParseError(
            "the input holds no operations",
            location=SourceLocation(filename, 1, 1, text.split("\n", 1)[0] if text else ""),
            hint="give a module with at least one func.func",
        )
    if "\x00" in text:
        raise ParseError(
            "the input contains a NUL character: it is not MLIR text",
            location=index.location(filename, text.index("\x00")),
            hint="pass a Krnl .mlir text file",
        )
    _check_string_literals(text, index, filename)
    _check_op_names(text, index, filename)
    parser: _LocatingParser | None = None
    try:
        parser = _LocatingParser(for_xdsl(text), filename)
        op = parser.parse_module()
    except XParseError as e:
        better, msg = _better_error(text, cast(Span[str], e.span), e.msg)
        if parser is not None and (use := _undefined_use(parser, index, msg)) is not None:
            better = use
        raise _parse_error(index, filename, better, msg) from None
    except Exception as e:  # xDSL raises plain exceptions from some op constructors
        span = parser._current_token.span if parser is not None else None
        raise _parse_error(index, filename, span, f"cannot parse this op: {e}") from None
    module = Module(op, source=text, filename=filename, source_names=parser.source_names)
    _check_single_blocks(module)
    _check_memref_signatures(module)
    _hex_floats_as_bits(module)
    # onnx-mlir normalizes tiled layouts before it lowers them; so does polykrnl, once,
    # so that every stage sees the same function (reader/layouts.py).
    names = dict(parser.source_names)
    notes, kept = normalize_layouts(op, names)
    if not notes and kept is None:
        return module
    return Module(
        op,
        source=text,
        filename=filename,
        source_names=names,
        layout_notes=notes,
        layouts_kept=kept,
    )


_DENSE = re.compile(r"dense<\s*([^<>]*?)\s*>")
_LITERAL = re.compile(r"-?0x[0-9a-fA-F]+|[-+]?[\d.]+(?:[eE][-+]?\d+)?")
# IEEE binary16/32/64 by width (struct, not NumPy: `verify` does not load NumPy).
_IEEE = {16: "<e", 32: "<f", 64: "<d"}


def _float_of_bits(raw: int, el: AnyFloat) -> float | None:
    """The float whose bit pattern is `raw` in `el` (None for a width without a form)."""
    if isinstance(el, BFloat16Type):  # the upper half of a binary32
        return float(struct.unpack("<f", (raw << 16).to_bytes(4, "little"))[0])
    fmt = _IEEE.get(el.bitwidth)
    if fmt is None:
        return None
    return float(struct.unpack(fmt, raw.to_bytes(el.bitwidth // 8, "little"))[0])


def _hex_floats_as_bits(module: Module) -> None:
    """Float data written `dense<0xFF800000>` is a bit pattern (-inf), as in MLIR.

    xDSL reads such a literal as the integer's value; the op's source text still
    has the literals, so the attribute is rebuilt from them.
    """
    index = module.line_index
    if index is None or "0x" not in index.text:
        return
    for op in module.op.walk():
        for name, attr in (*op.properties.items(), *op.attributes.items()):
            if not isinstance(attr, DenseIntOrFPElementsAttr):
                continue
            el = attr.get_element_type()
            if not isinstance(el, AnyFloat):
                continue
            loc = module.location(op)
            if loc is None:
                continue
            found = _DENSE.search(index.text, index.starts[loc.line - 1])
            if found is None or "0x" not in found[1]:
                continue
            width = el.bitwidth
            values: list[float] = []
            for lit in _LITERAL.findall(found[1]):
                if lit.lstrip("-").startswith("0x"):
                    value = _float_of_bits(int(lit, 16) & ((1 << width) - 1), el)
                    if value is None:
                        break
                    values.append(value)
                else:
                    values.append(float(lit))
            n = len(list(attr.get_values()))
            if len(values) == 1 and n > 1:
                values *= n
            if len(values) != n:
                continue
            new = DenseIntOrFPElementsAttr.from_list(cast(Any, attr.get_type()), values)
            if name in op.properties:
                op.properties[name] = new
            else:
                op.attributes[name] = new


# An op's name where an op starts a line: after its results (`%a, %b:2 = `), bare or
# quoted (the generic form).
_OP_AT_LINE_START = re.compile(
    r'^[ \t]*(?:(?:%[\w$.#:-]+[ \t]*,[ \t]*)*%[\w$.#:-]+[ \t]*=[ \t]*)?(")?'
    r"(?P<op>(?P<dialect>[a-z_][\w$]*)\.[\w$.]+)(?(1)\")",
    re.M,
)


def _check_op_names(text: str, index: LineIndex, filename: str) -> None:
    """An op of a dialect polykrnl does not read is refused at its name, with what to do.

    ONNX ops left by a partial lowering need onnx-mlir; other unknown ops are named
    with the dialects polykrnl reads. (Checked before xDSL reads the text, so the
    message does not depend on the wording of xDSL's own.)
    """
    ctx = context()
    known = set(ctx.registered_dialect_names)
    for m in _OP_AT_LINE_START.finditer(text):
        op, dialect = m["op"], m["dialect"]
        if dialect in known and ctx.get_optional_op(op) is not None:
            continue
        if dialect in known and text[m.end() :].lstrip(" \t").startswith(("@", "<")):
            continue  # not an op: a symbol or attribute of a known dialect
        loc = index.location(filename, m.start("op"), len(op))
        if dialect == "onnx":
            raise ParseError(
                f"not Krnl: `{op}` is an ONNX op, left by a partial lowering",
                location=loc,
                hint="lower this function with onnx-mlir first (onnx-mlir-opt "
                "--convert-onnx-to-krnl), then give polykrnl the Krnl it writes",
            )
        what = "dialect" if dialect not in known else "op of its dialect"
        raise ParseError(
            f"`{op}` is not an op polykrnl reads (unknown {what})",
            location=loc,
            hint="polykrnl reads the " + ", ".join(sorted(known)) + " dialects; `polykrnl ops` "
            "lists every op and what each stage supports",
        )


def _check_memref_signatures(module: Module) -> None:
    """A function with a body takes and returns memrefs and scalars, never tensors.

    Tensors are the values of ONNX-level functions, which onnx-mlir's lowering turns
    into memrefs; a tensor left in a signature means the function was not lowered.
    """
    for op in module.op.walk():
        if not isinstance(op, func.FuncOp):
            continue
        try:
            ftype = op.function_type
            has_body = bool(op.body.blocks)
        except (IndexError, KeyError):
            # The generic form parses without xDSL checking the op's fields; reading
            # a missing one raises IndexError (the fuzzer's `func.return` -> `func.func`).
            raise ParseError(
                "`func.func` without its function type, its name or its body",
                location=module.location(op),
                hint='in the generic form a function is "func.func"() <{function_type = '
                '(...) -> (...), sym_name = "name"}> ({ ... }) : () -> ()',
            ) from None
        if not has_body:
            continue
        for what, types in (("takes", ftype.inputs.data), ("returns", ftype.outputs.data)):
            tensor = next(
                (t for t in types if isinstance(t, TensorType | UnrankedTensorType)), None
            )
            if tensor is None:
                continue
            loc = module.location(op)
            index = module.line_index
            if loc is not None and index is not None:
                start = index.starts[loc.line - 1] + loc.column - 1
                body = index.text.find("{", start)
                at = index.text.find("tensor<", start, body if body >= 0 else len(index.text))
                if at >= 0:
                    loc = index.location(module.filename, at, len("tensor"))
            raise ParseError(
                f"not Krnl: @{op.sym_name.data} {what} {tensor}, a tensor: the function is "
                "at the ONNX level, before its lowering to Krnl (whose functions take and "
                "return memrefs)",
                location=loc,
                hint="lower this function with onnx-mlir first (onnx-mlir-opt "
                "--convert-onnx-to-krnl), then give polykrnl the Krnl it writes",
            )


def _check_single_blocks(module: Module) -> None:
    """Krnl programs are structured: every region holds one block.

    xDSL accepts `^bb1:` labels in any region, and code downstream (and the
    dialects polykrnl loads, which have no branch ops) has no meaning for them.
    """
    for op in module.op.walk():
        for region in op.regions:
            if len(region.blocks) > 1:
                second = region.blocks[1]
                loc = module.location(second.first_op or op)
                index = module.line_index
                if loc is not None and index is not None and second.first_op is not None:
                    # Point at the `^bb` label that opens the second block.
                    at = index.text.rfind("^", 0, index.starts[loc.line - 1] + loc.column - 1)
                    if at >= 0:
                        label = re.match(r"\^[\w$.-]*", index.text[at:])
                        loc = index.location(
                            module.filename, at, len(label.group()) if label else 1
                        )
                raise ParseError(
                    f"a region of {op.name} has {len(region.blocks)} blocks; polykrnl reads "
                    "structured programs, whose regions hold a single block",
                    location=loc,
                    hint="remove the `^bb` block labels: structured control flow (krnl.iterate, "
                    "scf.for, scf.if, affine.for) needs no branches",
                )


_STRING_ESCAPE = re.compile(r'\\(?:["nt\\]|[0-9A-Fa-f]{2})')


# Comments, well-formed string literals, or a `"` that starts a bad one. Each
# alternative is linear: no nested quantifiers.
_STRINGS_AND_COMMENTS = re.compile(r'//[^\n]*|"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"|"')


def _check_string_literals(text: str, index: LineIndex, filename: str) -> None:
    """Reject unterminated strings and bad escapes before xDSL's lexer sees them.

    xDSL matches string literals with a regular expression that backtracks
    exponentially when a literal never closes or holds a bad escape: a cut line
    of a long `signature = "..."` would hang the parser.
    """
    for m in _STRINGS_AND_COMMENTS.finditer(text):
        if m.group() != '"':
            continue
        start = i = m.start() + 1
        while i < len(text) and text[i] not in '"\n\v\f':
            if text[i] == "\\":
                if _STRING_ESCAPE.match(text, i) is None:
                    raise ParseError(
                        f"invalid escape {text[i : i + 2]!r} in a string literal",
                        location=index.location(filename, i, 2),
                        hint='MLIR strings allow \\", \\\\, \\n, \\t and two hex digits (\\22)',
                    )
                i += 2
            else:
                i += 1
        raise ParseError(
            "unterminated string literal",
            location=index.location(filename, start - 1),
            hint='close the string with `"` on the same line',
        )


def _undefined_use(parser: _LocatingParser, index: LineIndex, msg: str) -> Span[str] | None:
    """Where the first op that uses an undefined value names it.

    xDSL reports undefined values at the end of the input; the text search in
    `_better_span` may find the name where a nested region defines it (out of
    scope at the use). The ops holding the forward references know their place.
    """
    m = re.match(r"values used but not defined: \[%([^,\]]+)", msg)
    if not m:
        return None
    name = m.group(1)
    offsets: list[int] = []
    for value in parser.forward_ssa_references.get(name, {}).values():
        for use in value.uses:
            loc = use.operation.location
            if isinstance(loc, FileLineColLoc) and 1 <= loc.line.data <= len(index.starts):
                offsets.append(index.starts[loc.line.data - 1] + loc.column.data - 1)
    ref = re.compile(re.escape("%" + name) + r"(?![\w$.])")
    for start in sorted(offsets):
        if found := ref.search(index.text, start):
            return Span(found.start(), found.end(), parser.lexer.input)
    return None


def _better_span(text: str, span: Span[str], msg: str) -> Span[str]:
    """Point at the offending name where xDSL points at the token after it."""
    if m := re.match(r"Operation (\S+) (is not registered|does not have a custom format)", msg):
        at = text.rfind(m.group(1), 0, span.start + 1)
        if at >= 0:
            return Span(at, at + len(m.group(1)), span.input)
    if m := re.match(r"'([\w.$]+)' is not registered", msg):  # a type: `!krnl.lop`
        at = text.rfind("!" + m.group(1), 0, span.start + 1)
        if at >= 0:
            return Span(at, at + 1 + len(m.group(1)), span.input)
    if m := re.match(r"values used but not defined: \[(%[^,\]]+)", msg):
        use = re.search(re.escape(m.group(1)) + r"(?![\w$.])", text)
        if use:
            return Span(use.start(), use.end(), span.input)
    if re.search(r"(?i)expected", msg):
        # "Expected ':'" reported at the first token of the next line: the thing is
        # missing right after the previous token, so point there.
        end = _end_of_previous_token(text, span.start)
        if "\n" in text[end : span.start]:
            return Span(end, end + 1, span.input)
    return span


_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def _code_only(text: str) -> str:
    """`text` with comments blanked out (same length, strings kept)."""
    return _STRING_OR_COMMENT.sub(
        lambda m: m.group() if m.group().startswith('"') else " " * len(m.group()), text
    )


def _end_of_previous_token(text: str, offset: int) -> int:
    code = _code_only(text[:offset])
    return len(code.rstrip())


def _unclosed_brace(text: str) -> int | None:
    """Offset of the `{` that is most likely missing its `}`, or None if all are closed.

    Braces are matched by counting; among the matched pairs, the first whose `}`
    is indented differently from the line of its `{` is taken as the one that
    swallowed a later `}` (the usual way a `}` goes missing); otherwise the
    innermost `{` left open.
    """
    code = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()), text)
    index = LineIndex(text)

    def indent(offset: int) -> int:
        line = bisect.bisect_right(index.starts, offset) - 1
        start = index.starts[line]
        end = text.find("\n", start)
        line_text = text[start : end if end >= 0 else len(text)]
        return len(line_text) - len(line_text.lstrip())

    stack: list[int] = []
    suspects: list[int] = []
    for i, ch in enumerate(code):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            opening = stack.pop()
            if indent(opening) != indent(i):
                suspects.append(opening)
    if not stack:
        return None
    return min(suspects) if suspects else stack[-1]


def _better_error(text: str, span: Span[str], msg: str) -> tuple[Span[str], str]:
    """A clearer message and location where xDSL's are cryptic or misplaced."""
    msg = msg.strip()
    at_end = not _code_only(text[span.start :]).strip()
    if msg == "in block definition" or (at_end and "'}'" in msg):
        opening = _unclosed_brace(text)
        if opening is not None:
            return (
                Span(opening, opening + 1, span.input),
                "missing `}`: the input ends before this `{` is closed",
            )
        return span, "unexpected end of input"
    if msg == "attribute expected":
        word = text[span.start : span.end]
        if word == "max":
            return span, "`max` is only allowed before a lower bound (an upper bound takes `min`)"
        if word == "min":
            return span, "`min` is only allowed before an upper bound (a lower bound takes `max`)"
    if m := re.fullmatch(r"Unexpected character: (.)", msg, re.DOTALL):
        ch = m.group(1)
        shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
        return span, f"unexpected character {shown}: this is not MLIR text"
    if msg == "Expected ':'function type signature expected":
        msg = "expected `:` and the op's function type, e.g. : (f32) -> f32"
    if m := re.fullmatch(r"'([\w.$]+)' is not registered", msg):  # a type
        return _better_span(text, span, msg), f"type !{m.group(1)} is not registered"
    return _better_span(text, span, msg), msg


def load(path: str | Path) -> Module:
    """Read and parse a Krnl MLIR file.

    Messages and locations name the file. Raises `ParseError` like `parse`, and
    `OSError` when the file cannot be read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import polykrnl as pk
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.mlir"
    >>> _ = path.write_text("func.func @f() { return }")
    >>> pk.load(path).functions
    (<polykrnl.Function @f()>,)
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ParseError(
            f"cannot read {p}: {e.strerror or e}",
            location=None,
            hint="check the path and its permissions",
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[: e.start].decode("utf-8", errors="replace")
        index = LineIndex(good + " ")
        raise ParseError(
            f"the file is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
            location=index.location(str(p), len(good)),
            hint="pass a Krnl .mlir text file",
        ) from None
    return parse(text, str(p))


# ------------------------------------------------------------------ wrappers

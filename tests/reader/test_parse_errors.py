"""Bad input for the parser: every case gives a ParseError with a stable message,
the right line and column and a hint, and the CLI reports it as
`error: FILE:LINE:COL: message`, the source line, a caret line and `hint: ...`,
exit status 2, never a traceback.

The expected lines and columns were counted by hand on the inputs below.
"""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from polykrnl.cli import main
from polykrnl.errors import ParseError
from polykrnl.reader.parser import load, parse


@dataclass(frozen=True)
class Bad:
    """One bad input and what the error must say about it."""

    id: str
    content: str | bytes
    message: str  # a stable substring of the message
    line: int
    column: int
    hint: str  # a stable substring of the hint
    source: str | None = None  # the line shown under the message; default: from content


HEAD = "func.func @f(%A: memref<10xf32>, %N: index) {\n  %ii = krnl.define_loops 1\n"
TAIL = "  return\n}\n"


def _iterate(with_list: str, body: str = "") -> str:
    """HEAD, then `krnl.iterate(%ii) <with_list> {` on line 3, the body, `}`, TAIL."""
    return f"{HEAD}  krnl.iterate(%ii) {with_list} {{\n{body}  }}\n{TAIL}"


CASES: tuple[Bad, ...] = (
    Bad(
        "malformed_missing_type_at_end_of_line",
        "func.func @f() {\n  %c = arith.constant 1 :\n  return\n}\n",
        "type expected",
        2,
        26,  # just after the `:` that ends line 2, not at `return` on line 3
        "check the types after `:`",
    ),
    Bad(
        "multi_block_region",
        "func.func @f() {\n  return\n^bb1:\n  return\n}\n",
        "a region of func.func has 2 blocks",
        3,
        1,  # at the `^bb1` label that opens the second block
        "remove the `^bb` block labels",
    ),
    Bad(
        # A cut line of a long escaped string once made xDSL's lexer backtrack for minutes.
        "unterminated_string",
        'func.func @f() {\n  "krnl.print"() {format = "'
        + "\\22ab\\22 " * 30
        + "} : () -> ()\n  return\n}\n",
        "unterminated string literal",
        2,
        28,
        'close the string with `"` on the same line',
    ),
    Bad(
        "invalid_string_escape",
        'func.func @f() {\n  "krnl.print"() {format = "abc\\q"} : () -> ()\n  return\n}\n',
        "invalid escape",
        2,
        32,
        "two hex digits",
    ),
    Bad(
        "unknown_op",
        f"{HEAD}  %x = krnl.frobnicate %A : memref<10xf32>\n{TAIL}",
        "`krnl.frobnicate` is not an op polykrnl reads (unknown op of its dialect)",
        3,
        8,
        "`polykrnl ops` lists every op",
    ),
    Bad(
        "unknown_dialect",
        f'{HEAD}  %x = "foo.bar"(%A) : (memref<10xf32>) -> f32\n{TAIL}',
        "`foo.bar` is not an op polykrnl reads (unknown dialect)",
        3,
        9,
        "polykrnl reads the affine, arith, builtin, func, krnl, math, memref, scf, vector",
    ),
    Bad(
        "unknown_type",
        f"{HEAD}  %z = arith.constant 1.0 : f32\n  krnl.memset %A, %z : !krnl.lop\n{TAIL}",
        "type !krnl.lop is not registered",
        4,
        24,  # at `!krnl.lop`, where xDSL points at `return` on the next line
        "!krnl.loop and !krnl.string",
    ),
    Bad(
        "wrong_memref_type",
        _iterate("with (%ii -> %i = 0 to 10)", "    %v = krnl.load %A[%i] : memref<10xf64>\n"),
        "operand is used with type memref<10xf64>, but has been previously used or "
        "defined with type memref<10xf32>",
        4,
        20,
        "the type the value was defined with",
    ),
    Bad(
        "missing_type",
        _iterate("with (%ii -> %i = 0 to 10)", "    %v = krnl.load %A[%i]\n"),
        "Expected ':'",
        4,
        26,  # right after `]`, not at the `}` of the next line
        "compare the line with the syntax in the Krnl op reference",
    ),
    Bad(
        "non_index_bound",
        f"{HEAD}  %c = arith.constant 10 : i32\n"
        "  krnl.iterate(%ii) with (%ii -> %i = 0 to %c) {\n  }\n" + TAIL,
        "operand is used with type index, but has been previously used or defined with type i32",
        4,
        44,
        "arith.index_cast",
    ),
    Bad(
        "empty_file",
        "",
        "the input holds no operations",
        1,
        1,
        "at least one func.func",
    ),
    Bad(
        "whitespace_and_comments_only",
        "  \n\n // only a comment\n\t\n",
        "the input holds no operations",
        1,
        1,
        "at least one func.func",
        source="  ",
    ),
    Bad(
        "binary_garbage",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00",
        "the file is not UTF-8 text (byte 0x89 at offset 0)",
        1,
        1,
        "pass a Krnl .mlir text file",
        source=" ",
    ),
    Bad(
        "control_characters",
        b"\x7fELF\x02\x01\x01",
        "unexpected character U+007F: this is not MLIR text",
        1,
        1,
        "pass a Krnl .mlir text file",
        source="\ufffdELF\ufffd\ufffd\ufffd",
    ),
    Bad(
        "non_utf8_byte",
        b"func.func @f() {\n  // caf\xe9\n  return\n}\n",
        "the file is not UTF-8 text (byte 0xe9 at offset 25)",
        2,
        9,
        "pass a Krnl .mlir text file",
        source="  // caf ",
    ),
    Bad(
        "nul_byte",
        "func.func @f() {\n  return\x00\n}\n",
        "the input contains a NUL character",
        2,
        9,
        "pass a Krnl .mlir text file",
    ),
    Bad(
        "missing_closing_brace",
        f"{HEAD}  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {{\n"
        "    %v = krnl.load %A[%i] : memref<10xf32>\n" + TAIL,
        "missing `}`: the input ends before this `{` is closed",
        3,
        48,  # the iterate's `{`: the final `}` (column 1) closes it, not the function
        "close every `{` with a matching `}`",
    ),
    Bad(
        "extra_closing_brace",
        f"{HEAD}{TAIL}}}\n",
        "Could not parse entire input",
        5,
        1,
        "an extra `}`",
    ),
    Bad(
        "iterate_missing_with",
        _iterate("(%ii -> %i = 0 to 10)"),
        "Expected 'with'",
        3,
        21,
        "krnl.iterate(%h, ...) with (%h -> %i = LB to UB, ...)",
    ),
    Bad(
        "iterate_missing_arrow",
        _iterate("with (%ii %i = 0 to 10)"),
        "Expected '->'",
        3,
        31,
        "krnl.iterate(%h, ...) with (%h -> %i = LB to UB, ...)",
    ),
    Bad(
        "iterate_missing_to",
        _iterate("with (%ii -> %i = 0 10)"),
        "Expected 'to'",
        3,
        41,
        "krnl.iterate(%h, ...) with (%h -> %i = LB to UB, ...)",
    ),
    Bad(
        "multi_result_upper_bound_without_min",
        _iterate("with (%ii -> %i = 0 to affine_map<()[s0] -> (s0, 10)>()[%N])"),
        "loop bound affine map with multiple results requires 'min' prefix",
        3,
        44,
        "`min` before an upper one",
    ),
    Bad(
        "multi_result_lower_bound_without_max",
        _iterate("with (%ii -> %i = affine_map<()[s0] -> (s0, 0)>()[%N] to 10)"),
        "loop bound affine map with multiple results requires 'max' prefix",
        3,
        39,
        "write `max` before a multi-result lower bound map",
    ),
    Bad(
        "max_before_upper_bound",
        _iterate("with (%ii -> %i = 0 to max affine_map<()[s0] -> (s0, 10)>()[%N])"),
        "`max` is only allowed before a lower bound (an upper bound takes `min`)",
        3,
        44,
        "`min` before an upper one",
    ),
    Bad(
        "undefined_value_in_bound",
        _iterate("with (%ii -> %i = 0 to %M)"),
        "values used but not defined: [%M]",
        3,
        44,
        "define the value before it is used",
    ),
    Bad(
        "induction_variable_used_after_its_loop",
        f"{HEAD}  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {{\n  }}\n"
        "  %v = krnl.load %A[%i] : memref<10xf32>\n" + TAIL,
        "values used but not defined: [%i]",
        5,
        21,  # the use after the loop, not the definition `-> %i` on line 3
        "are not visible after it",
    ),
    Bad(
        "bound_uses_iv_of_the_same_iterate",
        "func.func @f() {\n  %ii, %jj = krnl.define_loops 2\n"
        "  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 10, %jj -> %j = %i to 10) {\n"
        "  }\n" + TAIL,
        "the lower bound uses %i, which this same krnl.iterate defines",
        3,
        65,
        "nest a second krnl.iterate",
    ),
    Bad(
        "iter_args_init_uses_iv_of_the_same_iterate",
        f"{HEAD}  %s = krnl.iterate(%ii) with (%ii -> %i = 0 to 10) iter_args(%a = %i)"
        " -> (index) {\n    krnl.yield %a : index\n  }\n" + TAIL,
        "iter_args uses %i, which this same krnl.iterate defines",
        3,
        62,
        "nest a second krnl.iterate",
    ),
    Bad(
        "wrong_result_count",
        "func.func @f() {\n  %a, %b = krnl.define_loops 3\n" + TAIL,
        "Operation has 3 results, but was given 2 to bind",
        2,
        3,
        "bind one name per result",
    ),
    Bad(
        "duplicate_value_name",
        f"{HEAD}  %ii = krnl.define_loops 1\n{TAIL}",
        "SSA value %ii is already defined",
        3,
        3,
        "give every SSA value its own name",
    ),
    Bad(
        "erf_in_custom_syntax",
        "func.func @f() {\n  %x = arith.constant 1.0 : f32\n  %y = krnl.erf %x : f32\n" + TAIL,
        "Operation krnl.erf does not have a custom format",
        3,
        8,  # at `krnl.erf`, where xDSL points at `%x`
        "krnl.erf has no custom syntax in the Krnl op reference: write it in the generic "
        'form, e.g. %y = "krnl.erf"(%x) : (f32) -> f32',
    ),
    Bad(
        "standard_op_without_custom_syntax",
        f"{HEAD}  %c = memref.memory_space_cast %A : memref<10xf32> to memref<10xf32>\n{TAIL}",
        "Operation memref.memory_space_cast does not have a custom format",
        3,
        8,
        'generic form "memref.memory_space_cast"(%operands)',
    ),
    Bad(
        "generic_op_without_function_type",
        'func.func @f() {\n  %x = arith.constant 1.0 : f32\n  %y = "krnl.erf"(%x)\n' + TAIL,
        "expected `:` and the op's function type",
        3,
        22,
        'ends with its type: "dialect.op"(%x) : (f32) -> f32',
    ),
    # Found by the fuzzer (a `func.return` renamed `func.func` in generic form): xDSL
    # parsed the op without its properties and reading its type raised IndexError.
    Bad(
        "generic_func_without_properties",
        'func.func @f(%s: f32) {\n  "func.func"(%s) : (f32) -> ()\n}\n',
        "`func.func` without its function type, its name or its body",
        2,
        4,
        'in the generic form a function is "func.func"() <{function_type',
    ),
)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _write(tmp_path: Path, case: Bad) -> Path:
    path = tmp_path / f"{case.id}.mlir"
    if isinstance(case.content, bytes):
        path.write_bytes(case.content)
    else:
        path.write_text(case.content, encoding="utf-8", newline="")
    return path


def _source_line(case: Bad) -> str:
    if case.source is not None:
        return case.source
    assert isinstance(case.content, str)
    return case.content.split("\n")[case.line - 1].replace("\x00", "\ufffd")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_parse_error(case: Bad, tmp_path: Path) -> None:
    path = _write(tmp_path, case)
    with pytest.raises(ParseError) as info:
        load(path)
    err = info.value
    assert case.message in err.message
    assert err.location is not None
    assert (err.location.file, err.location.line, err.location.column) == (
        str(path),
        case.line,
        case.column,
    )
    assert err.location.line_text == _source_line(case)
    assert err.hint is not None and case.hint in err.hint


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_reports_parse_error(case: Bad, tmp_path: Path) -> None:
    path = _write(tmp_path, case)
    code, out, err = _cli("print", str(path))
    assert (code, out) == (2, "")
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 4, err
    first, source, caret, hint = lines
    assert first.startswith(f"error: {path}:{case.line}:{case.column}: ")
    assert case.message in first
    assert source == "  " + _source_line(case)
    assert caret.rstrip("^") == " " * (case.column + 1)  # two spaces, then the column
    assert caret.endswith("^")
    assert hint.startswith("hint: ") and case.hint in hint


def test_onnx_ops_ask_for_onnx_mlir_first() -> None:
    with pytest.raises(ParseError) as info:
        parse(
            "func.func @f(%a: memref<4xf32>) {\n"
            '  %0 = "onnx.Relu"(%a) : (memref<4xf32>) -> memref<4xf32>\n  return\n}\n',
            "partial.mlir",
        )
    assert info.value.message == "not Krnl: `onnx.Relu` is an ONNX op, left by a partial lowering"
    assert info.value.location is not None and info.value.location.column == 9
    assert "onnx-mlir-opt --convert-onnx-to-krnl" in (info.value.hint or "")


def test_parse_reports_the_given_filename() -> None:
    with pytest.raises(ParseError) as info:
        parse("func.func @f() {\n  %x = krnl.nope\n  return\n}\n", "inline.mlir")
    loc = info.value.location
    assert loc is not None
    assert (loc.file, loc.line, loc.column) == ("inline.mlir", 2, 8)
    assert "`krnl.nope` is not an op polykrnl reads" in info.value.message


def test_caret_underlines_the_whole_op_name(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == "unknown_op")
    code, _, err = _cli("print", str(_write(tmp_path, case)))
    assert code == 2
    assert err.splitlines()[2] == "  " + " " * 7 + "^" * len("krnl.frobnicate")


def test_nonexistent_file(tmp_path: Path) -> None:
    path = tmp_path / "no_such_dir" / "missing.mlir"
    with pytest.raises(ParseError) as info:
        load(path)
    assert info.value.message == f"cannot read {path}: No such file or directory"
    assert info.value.location is None
    assert info.value.hint == "check the path and its permissions"
    code, out, err = _cli("print", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {path}: cannot read {path}: No such file or directory\n"
        "hint: check the path and its permissions\n"
    )


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    code, out, err = _cli("print", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {tmp_path}: cannot read {tmp_path}: Is a directory\n")
    assert "Traceback" not in err


@pytest.mark.slow  # a new process, ~1 s to import polykrnl (fast tier: tests/test_cli_numpy.py)
def test_cli_subprocess_exits_2_without_traceback(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == "missing_closing_brace")
    path = _write(tmp_path, case)
    proc = subprocess.run(
        [sys.executable, "-m", "polykrnl.cli", "print", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {path}:3:48: missing `}}`")
    assert "\nhint: close every `{` with a matching `}`\n" in proc.stderr

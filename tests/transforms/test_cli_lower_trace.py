"""`polykrnl lower` and `polykrnl trace`: loop nests and instance orders derived by hand.

Every expected loop header and instance count below is worked out from the
Krnl semantics (block: the tile loop steps by T from the lower bound, the
point loop runs to `min(tile + T, UB)` unless T divides the trip count;
permute scatters: loop k goes to position map[k]), not copied from output.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from polykrnl.cli import main
from tests.property_tiers import FEW, SIZED

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
RECIPES = Path(__file__).resolve().parent / "recipes"

# Two functions: a blocked, parallel, unrolled nest with a symbolic bound, and a
# 2-D nest swapped by krnl.permute.
PROGRAM = """\
func.func @tiled(%A: memref<?x3xf32>, %B: memref<?x3xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel %ib : !krnl.loop
  krnl.unroll %jj : !krnl.loop
  krnl.iterate(%ib, %il, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to 3) {
    %v = krnl.load %A[%i, %j] : memref<?x3xf32>
    krnl.store %v, %B[%i, %j] : memref<?x3xf32>
  }
  return
}

func.func @swap(%A: memref<4x3xf32>, %B: memref<3x4xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.permute(%ii, %jj) [1, 0] : !krnl.loop, !krnl.loop
  krnl.iterate(%jj, %ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 3) {
    %v = krnl.load %A[%i, %j] : memref<4x3xf32>
    krnl.store %v, %B[%j, %i] : memref<3x4xf32>
  }
  return
}
"""

TILED_LOOPS = """\
for %ib = 0 to %N step 4 {  // parallel
  for %il = %ib to min(%ib + 4, %N) {
    for %j = 0 to 3 {  // unroll
      S0: krnl.store B[%il, %j] <- A[%il, %j]
    }
  }
}
"""

SWAP_LOOPS = """\
for %j = 0 to 3 {
  for %i = 0 to 4 {
    S0: krnl.store B[%j, %i] <- A[%i, %j]
  }
}
"""

# A program that verifies only if nothing is wrong: the same loop unrolled twice.
UNROLLED_TWICE = """\
func.func @twice(%A: memref<8xf32>) {
  %ii = krnl.define_loops 1
  krnl.unroll %ii : !krnl.loop
  krnl.unroll %ii : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %v = krnl.load %A[%i] : memref<8xf32>
    krnl.store %v, %A[%i] : memref<8xf32>
  }
  return
}
"""

NOT_MLIR = "func.func @f() {\n  %x = krnl.nope\n  return\n}\n"


def _cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _bad(code: int, out: str, err: str) -> str:
    """Checks the shape of a refusal; returns stderr."""
    assert code == 2, (out, err)
    assert out == ""
    assert err.startswith("error: "), err
    assert "Traceback" not in err
    return err


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "two.mlir"
    path.write_text(PROGRAM)
    return path


def _write(tmp_path: Path, text: str, name: str = "p.mlir") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ lower


def test_lower_one_function(program: Path) -> None:
    assert _cli("lower", program, "--func", "tiled") == (0, TILED_LOOPS, "")
    assert _cli("lower", program, "--func", "swap") == (0, SWAP_LOOPS, "")


def test_lower_every_function_under_its_name(program: Path) -> None:
    code, out, err = _cli("lower", program)
    assert (code, err) == (0, "")
    assert out == f"// @tiled\n{TILED_LOOPS}\n// @swap\n{SWAP_LOOPS}"


def test_lower_a_single_function_file_has_no_header(tmp_path: Path) -> None:
    path = _write(tmp_path, PROGRAM[: PROGRAM.index("func.func @swap")])
    assert _cli("lower", path) == (0, TILED_LOOPS, "")


def test_lower_block_twice_corpus() -> None:
    code, out, err = _cli("lower", CORPUS / "block_twice.mlir")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "// @block_twice"
    # 0 to 10 by 4: partial last tile; its point loop by 2 steps by 2 and keeps
    # every upper bound of the point loop it blocks.
    expected = [
        "for %i0 = 0 to 10 step 4 {",
        "  for %i1a = %i0 to min(%i0 + 4, 10) step 2 {",
        "    for %i1b = %i1a to min(%i1a + 2, %i0 + 4, 10) {",
    ]
    assert lines[1:4] == expected
    # 0 to %n by 8: nothing is known to divide n.
    at = lines.index("// @block_symbolic")
    assert lines[at - 1] == ""
    assert lines[at + 1 : at + 3] == [
        "for %ib = 0 to %n step 8 {",
        "  for %il = %ib to min(%ib + 8, %n) {",
    ]


def test_lower_transpose_corpus_orders() -> None:
    code, out, _ = _cli("lower", CORPUS / "transpose.mlir", "--func", "transpose_blocked")
    assert code == 0
    headers = [line.strip() for line in out.splitlines() if "for %" in line]
    # permute(ib, il, jb, jl) [0, 2, 1, 3]: ib -> 0, il -> 2, jb -> 1, jl -> 3;
    # 8 divides 32 and 48: full tiles, no min.
    assert headers == [
        "for %ib = 0 to 32 step 8 {",
        "for %jb = 0 to 48 step 8 {",
        "for %il = %ib to %ib + 8 {",
        "for %jl = %jb to %jb + 8 {",
    ]
    code, out, _ = _cli("lower", CORPUS / "transpose.mlir", "--func", "transpose_021")
    assert code == 0
    assert [line.strip() for line in out.splitlines() if "for %" in line] == [
        "for %i = 0 to %in.0 {",
        "for %j = 0 to %in.1 {",
        "for %k = 0 to %in.2 {",
    ]


def test_lower_json_shape_follows_the_command_line(program: Path, tmp_path: Path) -> None:
    code, out, _ = _cli("lower", program, "--json")
    assert code == 0
    data = json.loads(out)
    assert isinstance(data, list)
    assert [d["function"] for d in data] == ["tiled", "swap"]

    code, out, _ = _cli("lower", program, "--func", "tiled", "--json")
    assert code == 0
    tiled = json.loads(out)
    assert tiled == data[0]
    (ib,) = tiled["body"]
    assert (ib["loop"], ib["kind"], ib["lb"], ib["ub"], ib["step"]) == ("ib", "tile", "0", "%N", 4)
    assert ib["parallel"] and not ib["unroll"]
    (il,) = ib["body"]
    assert (il["loop"], il["kind"], il["lb"]) == ("il", "point", "%ib")
    assert il["ub"] == "min(%ib + 4, %N)"
    (j,) = il["body"]
    assert (j["loop"], j["kind"], j["unroll"], j["parallel"]) == ("j", "loop", True, False)
    (s0,) = j["body"]
    assert s0["stmt"] == "S0" and s0["op"] == "krnl.store" and s0["line"] == 8

    # A file with one function still gives a list without --func.
    single = _write(tmp_path, PROGRAM[: PROGRAM.index("func.func @swap")], "one.mlir")
    code, out, _ = _cli("lower", single, "--json")
    assert code == 0
    assert json.loads(out) == [tiled]


@SIZED
def test_lower_every_corpus_file_without_a_traceback(tier: str) -> None:
    # In-process: an internal exception would escape main() and fail the test. The fast
    # tier lowers every third file.
    paths = sorted(CORPUS.glob("*.mlir"))
    for path in paths[::3] if tier == FEW else paths:
        code, out, err = _cli("lower", path)
        if code != 0:
            _bad(code, out, err)
        else:
            assert "for %" in out or "S0" in out, path


# ------------------------------------------------------------------ trace


def test_trace_text_one_line_per_instance(program: Path) -> None:
    code, out, err = _cli("trace", program, "--func", "swap")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    # j outside (0 to 3), i inside (0 to 4): 12 instances, i varies fastest. The
    # point lists the induction variables in `with`-list order (i, j), whatever the order.
    assert len(lines) == 12
    assert lines[:5] == ["S0 i=0 j=0", "S0 i=1 j=0", "S0 i=2 j=0", "S0 i=3 j=0", "S0 i=0 j=1"]
    assert lines[-1] == "S0 i=3 j=2"


def test_trace_json_symbolic_bound(program: Path) -> None:
    code, out, err = _cli("trace", program, "--func", "tiled", "--param", "N=10", "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    # i in 0..9 (tiles 0, 4, 8; the last one partial), j in 0..2: 30 instances.
    assert len(data) == 30
    assert all(set(x) == {"stmt", "point"} for x in data)
    # Keys are the original induction variables, not the tile/point loop names.
    assert [(x["point"]["i"], x["point"]["j"]) for x in data] == [
        (i, j) for i in range(10) for j in range(3)
    ]
    assert {x["stmt"] for x in data} == {"S0"}


def test_trace_text_and_json_agree(program: Path) -> None:
    _, text, _ = _cli("trace", program, "--func", "tiled", "--param", "N=6")
    _, js, _ = _cli("trace", program, "--func", "tiled", "--param", "N=6", "--json")
    as_text = [
        " ".join([x["stmt"], *(f"{k}={v}" for k, v in x["point"].items())]) for x in json.loads(js)
    ]
    assert text.splitlines() == as_text
    assert len(as_text) == 6 * 3


def test_trace_empty_domain(program: Path) -> None:
    assert _cli("trace", program, "--func", "tiled", "--param", "N=0") == (0, "", "")
    assert _cli("trace", program, "--func", "tiled", "--param", "N=0", "--json") == (0, "[]\n", "")


def test_trace_block_twice_corpus() -> None:
    path = CORPUS / "block_twice.mlir"
    code, out, _ = _cli("trace", path, "--func", "block_twice", "--json")
    assert code == 0
    data = json.loads(out)
    # i in 0..9, two statements per iteration in program order.
    assert len(data) == 20
    assert [(x["stmt"], x["point"]) for x in data[:4]] == [
        ("S0", {"i": 0}),
        ("S1", {"i": 0}),
        ("S0", {"i": 1}),
        ("S1", {"i": 1}),
    ]
    # The size of %a is not needed: the loops depend on %n only.
    code, out, _ = _cli("trace", path, "--func", "block_symbolic", "--param", "n=19")
    assert code == 0
    assert out.splitlines() == [f"S0 i={i}" for i in range(19)]


def test_trace_transpose_corpus() -> None:
    path = CORPUS / "transpose.mlir"
    code, out, _ = _cli("trace", path, "--func", "transpose_blocked", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data) == 32 * 48
    points = [(x["point"]["i"], x["point"]["j"]) for x in data]
    # Tile (ib=0, jb=0) first, row by row; then the next tile along j.
    assert points[:64] == [(i, j) for i in range(8) for j in range(8)]
    assert points[64] == (0, 8)
    assert len(set(points)) == len(points)

    dims = ("--param", "in.0=2", "--param", "in.1=3", "--param", "in.2=4")
    code, out, _ = _cli("trace", path, "--func", "transpose_021", *dims)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 * 3 * 4
    assert lines[:2] == ["S0 i=0 j=0 k=0", "S0 i=0 j=0 k=1"]


def test_trace_statements_at_tile_level() -> None:
    path = RECIPES / "imperfect_tile_level.mlir"
    code, out, _ = _cli("trace", path, "--json")
    assert code == 0
    data = json.loads(out)
    stmts = [x["stmt"] for x in data]
    # 3 tiles of i (0, 4, 8): S0 and S2 once per tile, S1 for 10 x 8 (i, j).
    assert (stmts.count("S0"), stmts.count("S1"), stmts.count("S2")) == (3, 80, 3)
    assert data[0] == {"stmt": "S0", "point": {"ib": 0}}
    # The first tile: S0, then its 4 x 8 points, then S2; then the next tile.
    assert stmts[:34] == ["S0", *["S1"] * 32, "S2"]
    assert data[34] == {"stmt": "S0", "point": {"ib": 4}}


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("command", ["lower", "trace"])
def test_unknown_function(program: Path, command: str) -> None:
    err = _bad(*_cli(command, program, "--func", "nope"))
    assert f"error: {program}: no function named 'nope'" in err
    assert "hint: the module defines: tiled, swap" in err


def test_trace_needs_func_when_there_are_several(program: Path) -> None:
    err = _bad(*_cli("trace", program))
    assert "defines 2 functions; which one should be traced?" in err
    assert "--func NAME" in err and "tiled, swap" in err


def test_trace_missing_param(program: Path) -> None:
    err = _bad(*_cli("trace", program, "--func", "tiled"))
    assert f"error: {program}:1:1: missing value for parameter 'N' of @tiled" in err
    assert "hint: give every symbolic size: N=..." in err


def test_trace_unknown_param(program: Path) -> None:
    err = _bad(*_cli("trace", program, "--func", "tiled", "--param", "N=4", "--param", "M=3"))
    assert "@tiled has no parameter named 'M'" in err
    assert "hint: its parameters are: " in err and "N" in err.splitlines()[-1]


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("N=1.5", "--param N needs an integer value, got '1.5'"),
        ("N=ten", "--param N needs an integer value, got 'ten'"),
        ("N=", "--param N needs an integer value, got ''"),
        ("N", "--param takes NAME=INTEGER or ARG.DIM=INTEGER, got 'N'"),
        ("A.x=3", "--param takes NAME=INTEGER or ARG.DIM=INTEGER, got 'A.x=3'"),
        ("=3", "--param takes NAME=INTEGER or ARG.DIM=INTEGER, got '=3'"),
    ],
)
def test_trace_bad_param_syntax(program: Path, param: str, message: str) -> None:
    err = _bad(*_cli("trace", program, "--func", "tiled", "--param", param))
    assert err.splitlines()[0] == f"error: {message}"
    assert "usage: polykrnl" in err


@pytest.mark.parametrize("command", ["lower", "trace"])
def test_file_that_does_not_parse(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, NOT_MLIR, "bad.mlir")
    err = _bad(*_cli(command, path))
    assert err.startswith(f"error: {path}:2:8: ")
    assert "krnl.nope" in err and "^" in err and "\nhint: " in err


@pytest.mark.parametrize("command", ["lower", "trace"])
def test_program_that_does_not_verify(tmp_path: Path, command: str) -> None:
    path = _write(tmp_path, UNROLLED_TWICE, "twice.mlir")
    err = _bad(*_cli(command, path))
    assert err.startswith(f"error: {path}:4:3: loop %ii is unrolled twice")
    assert "hint: remove one of the krnl.unroll ops" in err


@pytest.mark.parametrize("command", ["lower", "trace"])
def test_missing_file(tmp_path: Path, command: str) -> None:
    path = tmp_path / "missing.mlir"
    err = _bad(*_cli(command, path))
    assert err.startswith(f"error: {path}: cannot read {path}")


@pytest.mark.parametrize("argv", [["lower"], ["trace"], ["lower", "x.mlir", "--frob"]])
def test_usage_errors(argv: list[str]) -> None:
    err = _bad(*_cli(*argv))
    assert "usage: polykrnl" in err


@pytest.mark.slow  # a new process, ~1 s to import polykrnl (fast tier: tests/test_cli_numpy.py)
def test_trace_subprocess_exits_2_without_traceback(program: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "polykrnl.cli", "trace", str(program), "--func", "tiled"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {program}:1:1: missing value for parameter 'N'")
    assert "Traceback" not in proc.stderr

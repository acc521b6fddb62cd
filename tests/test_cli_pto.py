"""`polykrnl emit pto`: the C++ kernel, its harness, the tmp sizes; errors exit 2 cleanly."""

from __future__ import annotations

import io
from pathlib import Path

import polykrnl as pk
from polykrnl.cli import main

ROOT = Path(__file__).resolve().parent
KERNELS = ROOT / "targets" / "pto" / "krnl" / "pto_kernels.mlir"
SIZES = ["--param", "N=37", "--param", "M=21"]
DIMS = ["--param", "A.0=37", "--param", "A.1=21", "--param", "B.0=21", "--param", "B.1=37"]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_emit_prints_the_kernel_and_its_tmp_sizes() -> None:
    code, out, err = cli("emit", "pto", str(KERNELS), "--arch", "a2a3", "--func", "transpose_f32")
    assert code == 0, err
    kernel = pk.schedule(pk.load(KERNELS)["transpose_f32"]).to_pto()
    assert out.startswith(kernel.source)
    (tmp,) = kernel.tmp_sizes
    assert f"//   {tmp}: {kernel.tmp_sizes[tmp]}" in out
    # with sizes, the bytes too: a 37 x 21 A has full 16 x 16 tiles (1024 bytes, by hand:
    # roundup(16, 8) * roundup(16, 16) * 4)
    code, out, _ = cli(
        "emit", "pto", str(KERNELS), "--arch", "a2a3", "--func", "transpose_f32", *SIZES
    )
    assert code == 0 and "= 1024 at the given sizes" in out


def test_harness_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "t.cpp"
    code, out, err = cli(
        "emit", "pto", str(KERNELS), "--arch", "a5", "--func", "transpose_f32", "--harness",
        *SIZES, *DIMS, "-o", str(target),
    )  # fmt: skip
    assert code == 0, err
    assert out == f"wrote {target}: C++ kernel with a main for the CPU simulator transpose_f32\n"
    text = target.read_text()
    assert "int main(int argc, char** argv)" in text and "const int64_t N = 37;" in text
    assert "Ascend A5" in text


def _error(*argv: str) -> str:
    code, out, err = cli(*argv)
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith("error: ") and "Traceback" not in err
    return err


def test_errors_exit_2_with_a_message() -> None:
    base = ("emit", "pto", str(KERNELS))
    assert "unknown architecture 'a9'" in _error(*base, "--arch", "a9", "--func", "softmax")
    assert "which one should be emitted" in _error(*base, "--arch", "a2a3")
    err = _error(*base, "--arch", "a2a3", "--func", "transpose_f32", "--harness", *SIZES)
    assert "missing: A.0, A.1, B.0, B.1" in err and "hint: add --param A.0=64" in err
    assert "has no size of that name" in _error(
        *base, "--arch", "a2a3", "--func", "softmax", "--param", "Q=3"
    )
    panel = str(ROOT / "corpus" / "matmul_panel.mlir")
    err = _error("emit", "pto", panel, "--arch", "a2a3", "--func", "tile_buffer_attrs")
    assert "matmul_panel.mlir:60:5" in err and "pad value -1.0" in err and "^^^" in err


ERRORS = ROOT / "targets" / "pto" / "krnl" / "pto_errors.mlir"


def test_a5_kernel_to_stdout_and_to_a_file(tmp_path: Path) -> None:
    code, out, err = cli("emit", "pto", str(KERNELS), "--arch", "a5", "--func", "transpose_f32")
    assert code == 0, err
    a5 = pk.schedule(pk.load(KERNELS)["transpose_f32"]).to_pto("a5")
    a2 = pk.schedule(pk.load(KERNELS)["transpose_f32"]).to_pto("a2a3")
    assert a5.source != a2.source  # TTRANS takes no tmp on A5 (docs/pto.md): another tmp tile
    assert out.startswith(a5.source) and "(Ascend A5), bytes needed:" in out
    target = tmp_path / "k.cpp"
    code, out2, err = cli(
        "emit", "pto", str(KERNELS), "--arch", "a5", "--func", "transpose_f32", "-o", str(target)
    )
    assert code == 0, err
    assert out2 == f"wrote {target}: C++ kernel transpose_f32\n"
    assert target.read_text() == out


def test_a_size_fixed_for_an_unblocked_range() -> None:
    # symbolic_range is refused without N (test below); with N=40 its tile has 40 rows, and
    # the output says the kernel holds for that N only.
    base = ("emit", "pto", str(ERRORS), "--arch", "a2a3", "--func", "symbolic_range")
    code, out, err = cli(*base, "--param", "N=40")
    assert code == 0, err
    assert "Tile<TileType::Vec, float, 40, 1," in out
    assert out.endswith("// emitted for N = 40 only: static tile shapes come from these sizes\n")
    code, out, err = cli(
        *base, "--harness", "--param", "N=40", "--param", "X.0=40", "--param", "Y.0=40"
    )
    assert code == 0 and "const int64_t N = 40;" in out and "int main(" in out, err


def test_refusals_exit_2_with_location_caret_and_hint(tmp_path: Path) -> None:
    base = ("emit", "pto", str(ERRORS), "--arch", "a2a3", "--func")
    err = _error(*base, "nope")
    assert "no function named 'nope'" in err and "hint: the module defines:" in err
    # no PTO instruction for math.erf: the statement's store, line 21 of pto_errors.mlir
    err = _error(*base, "erf")
    assert "pto_errors.mlir:21:5:" in err and "math.erf has no PTO instruction" in err
    assert "^^^" in err and "\nhint: " in err
    # a 1024 x 1024 f32 nest in one tile: 2 * 4 MiB of UB (by hand), line 61 its store
    err = _error(*base, "too_big")
    assert "pto_errors.mlir:61:5:" in err and "tiles do not fit UB on a2a3: 8388608" in err
    assert "hint: block the loops" in err
    err = _error(*base, "symbolic_range")
    assert "a symbolic number" in err and "as a parameter" in err
    err = _error(*base, "erf", "-o", str(tmp_path / "missing" / "k.cpp"))
    assert "math.erf" in err  # refused before anything is written
    err = _error(
        "emit", "pto", str(KERNELS), "--arch", "a2a3", "--func", "softmax",
        "-o", str(tmp_path / "missing" / "k.cpp"),
    )  # fmt: skip
    assert "cannot write" in err and "hint: " in err


def test_emit_pto_single_buffer_on_request() -> None:
    args = ("emit", "pto", str(KERNELS), "--arch", "a2a3", "--func", "scale_add_relu")
    code, double, _ = cli(*args)
    assert code == 0 and "x1[2]" in double and "(event_t)(EVENT_ID1 + jb_pp)" in double
    code, single, _ = cli(*args, "--single-buffer")
    assert code == 0 and "[2]" not in single and "EVENT_ID1" not in single

"""`polykrnl emit pto`: the C++ kernel, its harness, the tmp sizes; errors exit 2 cleanly."""

from __future__ import annotations

import io
from pathlib import Path

import polykrnl as pk
from polykrnl.cli import main

ROOT = Path(__file__).resolve().parent
KERNELS = ROOT / "tiles" / "krnl" / "pto_kernels.mlir"
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

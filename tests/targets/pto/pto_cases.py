"""Inputs for the Krnl kernels of krnl/pto_kernels.mlir and krnl/pto_buffers.mlir, shared by
the PTO end-to-end tests (simulate vs pk.run_reference) and the optional CPU-simulator test.

Each case names a function, its sizes (chosen with partial tiles at the edges, or below one
tile) and how to make random inputs; `sizes(args)` gives the keyword sizes PtoKernel takes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

import polykrnl as pk

HERE = Path(__file__).parent
KERNELS = pk.load(HERE / "krnl" / "pto_kernels.mlir")
BUFFERS = pk.load(HERE / "krnl" / "pto_buffers.mlir")
CORPUS = pk.load(HERE.parent.parent / "corpus" / "softmax.mlir")
FUSED = pk.load(HERE / "krnl" / "pto_fused.mlir")
ONNX_LAYERNORM = pk.load(HERE.parent.parent / "corpus" / "onnx_layernorm.mlir")
LAYOUTS = pk.load(HERE / "krnl" / "pto_layouts.mlir")
MATMUL_OP = pk.load(HERE / "krnl" / "pto_matmul_op.mlir")
MEMSET = pk.load(HERE / "krnl" / "pto_memset.mlir")
ACC = pk.load(HERE / "krnl" / "pto_acc.mlir")
Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class PtoCase:
    name: str  # an id
    function: str
    # "kernels", "buffers", "fused", "layouts", "matmul_op", "memset", "acc" (krnl/pto_*.mlir),
    # "corpus"
    # (tests/corpus/softmax.mlir) or "onnx" (tests/corpus/onnx_layernorm.mlir)
    module: str
    make: Callable[[np.random.Generator], dict[str, Any]]
    # Elements of rounding allowed against the reference (0: bit for bit): exp, sums and
    # matmul products are computed in another order or precision by the tile ops.
    rtol: float = 0.0
    atol: float = 0.0
    # sizes fixed at emission (to_pto(params=...)), and the kernel's output tensors that
    # receive the function's returned buffers, in order
    params: tuple[tuple[str, int], ...] = ()
    returns: tuple[str, ...] = ()
    scratch: tuple[str, ...] = ()  # workspace tensors: their contents are not compared

    def fn(self) -> pk.Function:
        modules = {
            "kernels": KERNELS, "buffers": BUFFERS, "corpus": CORPUS, "fused": FUSED,
            "onnx": ONNX_LAYERNORM, "layouts": LAYOUTS, "matmul_op": MATMUL_OP,
            "memset": MEMSET, "acc": ACC,
        }  # fmt: skip
        return modules[self.module][self.function]


def _u(rng: np.random.Generator, *shape: int, dt: Any = np.float32) -> Array:
    return rng.uniform(-1, 1, shape).astype(dt)


def _transpose(n: int, m: int, dt: Any) -> Callable[[np.random.Generator], dict[str, Any]]:
    return lambda r: {"N": n, "M": m, "A": _u(r, n, m, dt=dt), "B": np.zeros((m, n), dt)}


def _elementwise(n: int, m: int) -> Callable[[np.random.Generator], dict[str, Any]]:
    return lambda r: {
        "N": n, "M": m, "X": _u(r, n, m), "Z": _u(r, n, m), "Y": np.zeros((n, m), np.float32)
    }  # fmt: skip


def _rows(n: int, m: int) -> Callable[[np.random.Generator], dict[str, Any]]:
    return lambda r: {"N": n, "X": _u(r, n, m), "Y": np.zeros((n, m), np.float32)}


def _matmul(m: int, n: int, k: int) -> Callable[[np.random.Generator], dict[str, Any]]:
    return lambda r: {
        "M": m, "N": n, "K": k, "A": _u(r, m, k, dt=np.float16), "B": _u(r, k, n, dt=np.float16),
        "C": np.full((m, n), np.nan, np.float32),
    }  # fmt: skip


def _matmul_acc(m: int, n: int, k: int, dt: Any) -> Callable[[np.random.Generator], dict[str, Any]]:
    """C += A * B: C holds values the product is added to."""
    return lambda r: {
        "A": _u(r, m, k, dt=dt), "B": _u(r, k, n, dt=dt), "C": _u(r, m, n),
    }  # fmt: skip


def _copy(shape_in: tuple[int, int], shape_out: tuple[int, int]) -> Any:
    return lambda r: {"src": _u(r, *shape_in), "out": np.full(shape_out, np.nan, np.float32)}


def _convert(src: tuple[int, ...], dst: tuple[int, ...], dt: Any = np.float32) -> Any:
    return lambda r: {"X": _u(r, *src, dt=dt), "Y": np.full(dst, np.nan, dt)}


CASES = [
    PtoCase("transpose_f32_partial", "transpose_f32", "kernels", _transpose(37, 21, np.float32)),
    PtoCase("transpose_f32_full", "transpose_f32", "kernels", _transpose(32, 48, np.float32)),
    PtoCase("transpose_f32_small", "transpose_f32", "kernels", _transpose(5, 3, np.float32)),
    PtoCase("transpose_f16_partial", "transpose_f16", "kernels", _transpose(37, 50, np.float16)),
    PtoCase("scale_add_relu", "scale_add_relu", "kernels", _elementwise(19, 45)),
    PtoCase("softmax_partial", "softmax", "kernels", _rows(19, 40), 1e-6, 1e-7),
    PtoCase("softmax_full", "softmax", "kernels", _rows(16, 40), 1e-6, 1e-7),
    PtoCase("layer_norm", "layer_norm", "kernels", _rows(13, 64), 1e-5, 1e-6),
    # f16 products summed in f32 over up to 70 terms of magnitude <= 1
    PtoCase("matmul_partial", "matmul", "kernels", _matmul(40, 50, 70), 1e-5, 1e-5),
    PtoCase("matmul_small", "matmul", "kernels", _matmul(3, 5, 7), 1e-5, 1e-5),
    # no krnl.block: the whole static 6 x 10 nest is one tile (static valid shapes)
    PtoCase(
        "softmax_one_tile",
        "softmax_rows",
        "corpus",
        lambda r: {"x": _u(r, 6, 10), "y": np.zeros((6, 10), np.float32)},
        1e-6,
        1e-7,
    ),
    PtoCase("copy_padded", "copy_padded", "buffers", _copy((13, 21), (13, 21))),
    PtoCase("copy_transposed", "copy_transposed", "buffers", _copy((13, 21), (21, 13))),
    # several nests fused through temporaries (krnl/pto_fused.mlir)
    PtoCase("softmax5_partial", "softmax5", "fused", _rows(19, 40), 1e-6, 1e-7),
    PtoCase("softmax5_small", "softmax5", "fused", _rows(5, 40), 1e-6, 1e-7),
    PtoCase(
        "layernorm3",
        "layernorm3",
        "fused",
        lambda r: {"X": _u(r, 13, 64), "Y": np.zeros((13, 64), np.float32)},
        1e-5,
        1e-6,
    ),
    PtoCase(
        "layernorm_affine",
        "layernorm_affine",
        "fused",
        lambda r: {
            "x": _u(r, 13, 16),
            "scale": _u(r, 16),
            "bias": _u(r, 16),
            "y": np.zeros((13, 16), np.float32),
        },
        1e-5,
        1e-6,
    ),
    # onnx-mlir's layer normalization as it writes it (tests/corpus/onnx_layernorm.mlir):
    # the result a returned buffer, the rows a dynamic size fixed at emission
    PtoCase(
        "onnx_layernorm",
        "layernorm",
        "onnx",
        lambda r: {
            "x": _u(r, 13, 16),
            "scale": _u(r, 16),
            "bias": _u(r, 16),
            "y": np.full((13, 16), np.nan, np.float32),
        },
        1e-5,
        1e-6,
        params=(("x_d0", 13),),
        returns=("y",),
    ),
    # krnl.matmul as onnx-mlir writes a MatMul: memset, then one krnl.matmul per tile
    PtoCase(
        "matmul_op",
        "matmul_op",
        "matmul_op",
        lambda r: {
            "A": _u(r, 20, 24),
            "B": _u(r, 24, 18),
            "C": np.full((20, 18), np.nan, np.float32),
        },
        1e-5,
        1e-5,
        returns=("C",),
    ),
    PtoCase(
        "matmul_op_dynamic",
        "matmul_op_dynamic",
        "matmul_op",
        lambda r: {
            "M": 40,
            "N": 50,
            "K": 70,
            "A": _u(r, 40, 70, dt=np.float16),
            "B": _u(r, 70, 50, dt=np.float16),
            "C": np.full((40, 50), np.nan, np.float32),
        },
        1e-5,
        1e-5,
    ),
    # layout conversions: one TTRANS each, values moved bit for bit
    PtoCase(
        "nchw_to_nc1hwc0", "nchw_to_nc1hwc0", "layouts", _convert((1, 32, 4, 8), (1, 4, 4, 8, 8))
    ),
    PtoCase(
        "nc1hwc0_to_nchw", "nc1hwc0_to_nchw", "layouts", _convert((2, 2, 3, 8, 8), (2, 16, 3, 8))
    ),
    PtoCase(
        "nchw_to_nc1hwc0_padded",
        "nchw_to_nc1hwc0_padded",
        "layouts",
        _convert((2, 20, 2, 4), (2, 3, 2, 4, 8)),
    ),
    PtoCase(
        "ncdhw_to_fractal_z_3d",
        "ncdhw_to_fractal_z_3d",
        "layouts",
        _convert((16, 8, 2, 2, 2), (8, 1, 16, 8)),
    ),
    PtoCase(
        "gnchw_to_gnc1hwc0",
        "gnchw_to_gnc1hwc0",
        "layouts",
        _convert((2, 2, 32, 2, 4), (2, 2, 2, 2, 4, 16), np.float16),
    ),
    PtoCase(
        "nc1hwc0_to_fractal_z",
        "nc1hwc0_to_fractal_z",
        "layouts",
        _convert((32, 2, 2, 3, 8), (12, 2, 16, 8)),
    ),
    PtoCase(
        "nc1hwc0_to_fractal_z_padded",
        "nc1hwc0_to_fractal_z_padded",
        "layouts",
        _convert((20, 1, 2, 2, 8), (4, 2, 16, 8)),
    ),
    PtoCase(
        "gnc1hwc0_to_fractal_z",
        "gnc1hwc0_to_fractal_z",
        "layouts",
        _convert((2, 16, 2, 1, 3, 16), (12, 1, 16, 16), np.float16),
    ),
    # krnl.memset on its own: one filled tile stored over every window
    PtoCase("fill", "fill", "memset", lambda r: {"Y": np.full((250, 40), np.nan, np.float32)}),
    PtoCase(
        "fill_wide", "fill_wide", "memset", lambda r: {"Y": np.full((37, 2500), np.nan, np.float16)}
    ),
    PtoCase("fill_3d", "fill_3d", "memset", lambda r: {"Y": np.zeros((3, 5, 24), np.int32)}),
    PtoCase(
        "accumulate",
        "accumulate",
        "memset",
        lambda r: {"N": 19, "X": _u(r, 19, 40), "Y": np.full((19, 40), np.nan, np.float32)},
    ),
    # C += A * B with C's old values: the sum from L0C added to C by an atomic-add store
    PtoCase(
        "gemm_acc",
        "gemm_acc",
        "acc",
        lambda r: {"M": 40, "N": 50, "K": 70, **_matmul_acc(40, 50, 70, np.float16)(r)},
        1e-5,
        1e-5,
    ),
    PtoCase(
        "gemm_acc_small",
        "gemm_acc",
        "acc",
        lambda r: {"M": 3, "N": 5, "K": 7, **_matmul_acc(3, 5, 7, np.float16)(r)},
        1e-5,
        1e-5,
    ),
    PtoCase("gemm_acc_f32", "gemm_acc_f32", "acc", _matmul_acc(20, 18, 24, np.float32), 1e-5, 1e-5),
    PtoCase(
        "matmul_op_acc", "matmul_op_acc", "acc", _matmul_acc(20, 18, 24, np.float32), 1e-5, 1e-5
    ),
    PtoCase(
        "matmul_op_not_zeroed",
        "matmul_op_not_zeroed",
        "matmul_op",
        _matmul_acc(16, 16, 16, np.float32),
        1e-5,
        1e-5,
    ),
    PtoCase(
        "matmul_not_zeroed",
        "matmul_not_zeroed",
        "acc",
        _matmul_acc(16, 16, 16, np.float16),
        1e-5,
        1e-5,
    ),
    # krnl.memset of temporaries the fused nests then accumulate into, kept in UB
    PtoCase("layernorm_memset", "layernorm_memset", "acc", _rows(19, 32), 1e-5, 1e-6),
    PtoCase("layernorm_memset_small", "layernorm_memset", "acc", _rows(5, 32), 1e-5, 1e-6),
    PtoCase("softmax_memset", "softmax_memset", "acc", _rows(19, 40), 1e-6, 1e-7),
    PtoCase(
        "memset_workspace",
        "memset_workspace",
        "acc",
        lambda r: {**_rows(19, 16)(r), "T": np.full(19, np.nan, np.float32)},
        1e-6,
        1e-6,
        scratch=("T",),
    ),
    # temporaries the nests cannot share in UB: workspaces in global memory
    PtoCase(
        "fused_tiling",
        "fused_tiling",
        "fused",
        lambda r: {
            "N": 19,
            "X": _u(r, 19, 16),
            "Y": np.zeros((19, 16), np.float32),
            "T": np.full((19, 16), np.nan, np.float32),
        },
        1e-6,
        1e-7,
        scratch=("T",),
    ),
    PtoCase(
        "fused_window",
        "fused_window",
        "fused",
        lambda r: {
            "X": _u(r, 16, 16),
            "Y": np.zeros((16, 16), np.float32),
            "Z": np.zeros((16, 16), np.float32),
            "S": np.full((16, 16), np.nan, np.float32),
        },
        1e-6,
        1e-7,
        scratch=("S",),
    ),
    PtoCase(
        "through_array",
        "through_array",
        "fused",
        lambda r: {
            "N": 19,
            "M": 37,
            "X": _u(r, 19, 37),
            "Y": np.zeros((19, 37), np.float32),
            "Z": np.zeros((19, 37), np.float32),
        },
        1e-6,
        1e-7,
    ),
]


@cache
def pto_kernel(case: PtoCase, arch: str) -> pk.PtoKernel:
    """The case's kernel for `arch`, lowered once for all the tests that read it."""
    return pk.schedule(case.fn()).to_pto(arch, params=dict(case.params))


def reference(case: PtoCase, args: dict[str, Any]) -> dict[str, Any]:
    """What pk.run_reference leaves in a copy of `args` (the kernel's tensors and sizes),
    the function's returned buffers under the names of the kernel's output tensors."""
    expected = copy.deepcopy(args)
    fn = case.fn()
    result = pk.run_reference(fn, **{a.name: expected[a.name] for a in fn.arguments})
    results = result if isinstance(result, tuple) else (result,)
    for name, value in zip(case.returns, results, strict=False):
        expected[name] = value
    return expected


@cache
def _reference(case: PtoCase, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    args = case.make(np.random.default_rng(seed))
    return args, reference(case, args)


def inputs_and_reference(case: PtoCase, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fresh copies of the case's random inputs and of what pk.run_reference leaves in them.

    The interpreter runs once per case and seed (the matmuls take seconds), not once per
    architecture.
    """
    args, expected = _reference(case, seed)
    return copy.deepcopy(args), copy.deepcopy(expected)


def sizes(kernel: pk.PtoKernel, args: dict[str, Any]) -> dict[str, int]:
    """The sizes a harness takes, by the Krnl names (`N`, `A.0`), from the arguments."""
    out: dict[str, int] = {}
    for src in kernel.params.values():
        if "." in src:
            name, dim = src.rsplit(".", 1)
            out[src] = int(args[name].shape[int(dim)])
        else:
            out[src] = int(args[src])
    return out


def close(got: Array, want: Array, case: PtoCase) -> bool:
    if case.rtol == 0 and case.atol == 0:
        return bool(np.array_equal(got, want, equal_nan=True))
    return bool(np.allclose(got, want, rtol=case.rtol, atol=case.atol, equal_nan=True))

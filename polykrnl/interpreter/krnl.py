"""What the krnl dialect's ops do in the reference interpreter."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.dialect.krnl.access import has_identity_layout
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import (
    CALLS,
    INTERPRET,
    Frame,
    Interpreter,
    eval_map,
    no_effect,
)
from polykrnl.interpreter.math import erf, float_predicate, unary_float
from polykrnl.interpreter.memory import (
    array_of,
    checked_index,
    dim_of,
    indexed_load,
    indexed_store,
    logical_shape,
    new_array,
    new_shape,
    store_element,
    writable,
)
from polykrnl.interpreter.runtime_calls import RUNTIME_ARITY, RUNTIME_CALLS
from polykrnl.interpreter.values import (
    Fail,
    make_value,
    memref_dtype,
    show_value,
    user_value,
    vector_shape,
)
from polykrnl.ir import int_list

# Recipe ops are already applied by the loop nest; the others have no effect on values
# (memory is garbage collected).
INTERPRET.add(
    no_effect,
    k.DefineLoopsOp,
    k.BlockOp,
    k.PermuteOp,
    k.ParallelOp,
    k.UnrollOp,
    k.EntryPointOp,
    k.PrefetchOp,
    k.RuntimeInstrumentOp,
    k.SpecializedKernelOp,
    k.SeqDeallocOp,
)


@INTERPRET.register(k.IterateOp)
def _iterate(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.IterateOp)
    return it.run_iterate(op, fr)


@INTERPRET.register(k.RegionOp, k.MovableOp)
def _region(it: Interpreter, op: Operation, fr: Frame) -> None:
    # A region is only an affine scope; a movable's statements run where it stands
    # (it is what the lowering leaves at the statements' final place).
    for block in op.regions[0].blocks:
        it.exec_block(block, fr)


@INTERPRET.register(k.GetInductionVarValueOp)
def _get_iv(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    out: list[int] = []
    for h in op.operands:
        loop = fr.nest.loop_of.get(h)
        if loop is None:
            raise Fail(
                f"loop handle {show_value(h)} has no loop of its own at the end of the recipe",
                "it was blocked (use its tile or point handle) or never bound by a `with` entry",
            )
        if loop not in fr.ivs:
            raise Fail(
                f"krnl.get_induction_var_value({show_value(h)}) is read outside the loop "
                f"of {show_value(h)}",
                "place the op in the body of the krnl.iterate whose loops include it",
            )
        out.append(fr.ivs[loop])
    return out


INTERPRET.add(indexed_load, k.LoadOp)
INTERPRET.add(indexed_store, k.StoreOp)


@INTERPRET.register(k.MemsetOp)
def _memset(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, k.MemsetOp)
    writable(fr, op.dest, "krnl.memset")[...] = fr.get(op.value)


@INTERPRET.register(k.MemcpyOp)
def _memcpy(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, k.MemcpyOp)
    dest = writable(fr, op.dest, "krnl.memcpy")
    src = array_of(fr, op.src)
    n, d0, s0 = fr.index(op.num_elems), fr.index(op.dest_offset), fr.index(op.src_offset)
    if n < 0 or d0 < 0 or s0 < 0:
        raise Fail(f"krnl.memcpy with a negative count or offset ({n}, {d0}, {s0})")
    if s0 + n > src.size:
        raise Fail(
            f"krnl.memcpy out of bounds: reads elements [{s0}, {s0 + n}) of {show_value(op.src)}, "
            f"which has {src.size}",
            "num_elems + src_offset must not exceed the number of elements of src",
        )
    if d0 + n > dest.size:
        raise Fail(
            f"krnl.memcpy out of bounds: writes elements [{d0}, {d0 + n}) of "
            f"{show_value(op.dest)}, which has {dest.size}",
            "num_elems + dest_offset must not exceed the number of elements of dest",
        )
    if dest.dtype != src.dtype:
        raise Fail(f"krnl.memcpy between {src.dtype} and {dest.dtype}", "use the same type")
    # `.flat` reads and writes in row-major order even for strided views; the
    # slice read is a copy, so overlapping ranges behave like memmove.
    dest.flat[d0 : d0 + n] = src.flat[s0 : s0 + n]


def _tile_extent(
    tile: int, buf_size: int, d: int, start: int, size: int, s: int, mem: SSAValue
) -> int:
    """How many elements of dimension `s` of `mem` a tile copy moves: min(size - start, tile)."""
    if tile > buf_size:
        raise Fail(f"tileSize {tile} exceeds the buffer size {buf_size} in dimension {d}")
    if start < 0:
        raise Fail(f"negative start {start} in dimension {s} of {show_value(mem)}")
    return max(0, min(size - start, tile))


@INTERPRET.register(k.CopyToTileBufferOp)
def _copy_to_buffer(it: Interpreter, op: Operation, fr: Frame) -> None:
    """buf[b] = src[start + b] inside the source, padValue up to padToNext.

    Buffer dimension d covers source dimension off + d (off = source rank -
    buffer rank), the last two swapped when `transpose` is set; prefix source
    dimensions take the start index as is. In dimension d, min(source size -
    start, T_d) elements are read, T_d being tileSize[d] (default: the buffer
    size); the box of the read elements is then extended, in each dimension, to
    the next multiple of padToNext[d] (default 1, capped at T_d), and the
    extension is filled with padValue. Elements outside that box keep their
    values.
    """
    assert isinstance(op, k.CopyToTileBufferOp)
    buf = writable(fr, op.buffer, "krnl.copy_to_tile_buffer")
    src = array_of(fr, op.source)
    starts = [fr.index(v) for v in op.starts]
    pad_value = fr.get(op.padValue)
    b_rank, s_rank = buf.ndim, src.ndim
    off = s_rank - b_rank
    if off < 0 or len(starts) != s_rank:
        raise Fail("krnl.copy_to_tile_buffer needs one start per source dimension")
    tile = int_list(op.tileSize) or list(buf.shape)
    pads = int_list(op.padToNext) or [1] * b_rank
    transpose = op.transpose is not None and bool(op.transpose.value.data)
    if transpose and b_rank < 2:
        raise Fail("transpose needs a buffer of rank 2 or more")
    src_dim = list(range(s_rank))
    if transpose:
        src_dim[-2], src_dim[-1] = src_dim[-1], src_dim[-2]
    for s in range(off):
        if not 0 <= starts[s] < src.shape[s]:
            raise Fail(
                f"start {starts[s]} is out of bounds for dimension {s} of "
                f"{show_value(op.source)} (size {src.shape[s]})"
            )
    read: list[int] = []
    ext: list[int] = []
    for d in range(b_rank):
        s = src_dim[off + d]
        r = _tile_extent(tile[d], buf.shape[d], d, starts[s], src.shape[s], s, op.source)
        p = pads[d]
        if p < 1:
            raise Fail(f"padToNext must be >= 1, got {p}")
        read.append(r)
        # Padding to the tile size fills the whole tile, as onnx-mlir's lowering does.
        ext.append(tile[d] if p == tile[d] else min(-(-r // p) * p, tile[d]))
    buf[tuple(slice(0, e) for e in ext)] = pad_value
    index: list[int | slice] = [starts[s] for s in range(off)]
    for s in range(off, s_rank):
        d = src_dim.index(s) - off
        index.append(slice(starts[s], starts[s] + read[d]))
    block = src[tuple(index)]
    if transpose:
        block = np.swapaxes(block, -1, -2)
    buf[tuple(slice(0, r) for r in read)] = block


@INTERPRET.register(k.CopyFromTileBufferOp)
def _copy_from_buffer(it: Interpreter, op: Operation, fr: Frame) -> None:
    """dest[start + b] = buf[b] for b < min(dest size - start, tileSize) per dimension."""
    assert isinstance(op, k.CopyFromTileBufferOp)
    buf = array_of(fr, op.buffer)
    dest = writable(fr, op.dest, "krnl.copy_from_tile_buffer")
    starts = [fr.index(v) for v in op.starts]
    b_rank, d_rank = buf.ndim, dest.ndim
    off = d_rank - b_rank
    if off < 0 or len(starts) != d_rank:
        raise Fail("krnl.copy_from_tile_buffer needs one start per destination dimension")
    tile = int_list(op.tileSize) or list(buf.shape)
    index: list[int | slice] = []
    sizes: list[int] = []
    for s in range(d_rank):
        if s < off:
            if not 0 <= starts[s] < dest.shape[s]:
                raise Fail(
                    f"start {starts[s]} is out of bounds for dimension {s} of "
                    f"{show_value(op.dest)} (size {dest.shape[s]})"
                )
            index.append(starts[s])
            continue
        d = s - off
        w = _tile_extent(tile[d], buf.shape[d], d, starts[s], dest.shape[s], s, op.dest)
        sizes.append(w)
        index.append(slice(starts[s], starts[s] + w))
    dest[tuple(index)] = buf[tuple(slice(0, w) for w in sizes)]


@INTERPRET.register(k.MatMulOp)
def _matmul(it: Interpreter, op: Operation, fr: Frame) -> None:
    """C[i, j] += sum_k A[i, k] * B[k, j] over one compute tile (scalar lowering).

    The tile starts at the global compute starts (i0, j0, k0); its sizes are
    computeTileSize (default: C's tile, then A's column tile) clipped by the
    global upper bounds. Buffers hold the data starting at their global memory
    starts; dimensions before the last two take the memory start as a fixed
    index. Each C element accumulates in k order: acc = a * b + acc, rounded
    in the element type after each operation, like onnx-mlir's scalar code.
    """
    assert isinstance(op, k.MatMulOp)
    A, B, C = array_of(fr, op.A), array_of(fr, op.B), writable(fr, op.C, "krnl.matmul")
    a_mem = [fr.index(v) for v in op.aGlobalIndexMemStart]
    b_mem = [fr.index(v) for v in op.bGlobalIndexMemStart]
    c_mem = [fr.index(v) for v in op.cGlobalIndexMemStart]
    for name, arr, mem in (("A", A, a_mem), ("B", B, b_mem), ("C", C, c_mem)):
        if arr.ndim < 2 or len(mem) != arr.ndim:
            raise Fail(
                f"krnl.matmul needs a memref {name} of rank >= 2 and one memory start per "
                f"dimension, got rank {arr.ndim} with {len(mem)} starts"
            )
    i0, j0, k0 = (
        fr.index(v)
        for v in (
            op.iGlobalIndexComputeStart,
            op.jGlobalIndexComputeStart,
            op.kGlobalIndexComputeStart,
        )
    )
    i_ub, j_ub, k_ub = (fr.index(v) for v in (op.iGlobalUB, op.jGlobalUB, op.kGlobalUB))
    a_tile = int_list(op.aTileSize) or list(A.shape[-2:])
    c_tile = int_list(op.cTileSize) or list(C.shape[-2:])
    compute = int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]
    ni = max(0, min(i_ub - i0, compute[0]))
    nj = max(0, min(j_ub - j0, compute[1]))
    nk = max(0, min(k_ub - k0, compute[2]))
    if ni == 0 or nj == 0:
        return

    def block(
        name: str,
        v: SSAValue,
        arr: np.ndarray[Any, Any],
        mem: list[int],
        r0: int,
        c0: int,
        nr: int,
        nc: int,
    ) -> np.ndarray[Any, Any]:
        idx: list[int | slice] = []
        for d, start in enumerate(mem[:-2]):
            if not 0 <= start < arr.shape[d]:
                raise Fail(
                    f"krnl.matmul out of bounds: index {start} in dimension {d} of "
                    f"{show_value(v)} (size {arr.shape[d]})"
                )
            idx.append(start)
        for d, (lo, n) in zip((arr.ndim - 2, arr.ndim - 1), ((r0, nr), (c0, nc)), strict=True):
            if n and not (lo >= 0 and lo + n <= arr.shape[d]):
                raise Fail(
                    f"krnl.matmul out of bounds: the tile reads indices [{lo}, {lo + n}) in "
                    f"dimension {d} of {show_value(v)} ({name}, size {arr.shape[d]})",
                    "the compute starts minus the memory starts must stay inside the buffer",
                )
            idx.append(slice(lo, lo + n))
        return arr[tuple(idx)]

    a = block("A", op.A, A, a_mem, i0 - a_mem[-2], k0 - a_mem[-1], ni, nk)
    b = block("B", op.B, B, b_mem, k0 - b_mem[-2], j0 - b_mem[-1], nk, nj)
    c = block("C", op.C, C, c_mem, i0 - c_mem[-2], j0 - c_mem[-1], ni, nj)
    acc = c.copy()
    for kk in range(nk):
        # One elementwise multiply and one add per k, in C's dtype: the same
        # roundings as the scalar loop, vectorized over (i, j).
        acc = np.multiply(a[:, kk : kk + 1], b[kk : kk + 1, :], dtype=C.dtype) + acc
    c[...] = acc


@INTERPRET.register(k.DimOp)
def _krnl_dim(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.DimOp)
    return [dim_of(fr, op.alloc, fr.index(op.index), "krnl.dim")]


@INTERPRET.register(k.ShapeOp)
def _krnl_shape(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.ShapeOp)
    shape = logical_shape(op.alloc, array_of(fr, op.alloc))
    t = op.shape.type
    assert isinstance(t, MemRefType)
    return [np.array(shape, dtype=memref_dtype(t))]


@INTERPRET.register(k.GetRefOp)
def _getref(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.GetRefOp)
    pool = array_of(fr, op.mempool)
    offset = int(fr.get(op.offset))
    t = op.output.type
    assert isinstance(t, MemRefType)
    if pool.ndim != 1 or pool.dtype.itemsize != 1 or not pool.flags.c_contiguous:
        raise Fail(
            f"krnl.getref needs a contiguous 1-D byte memref as memory pool, got "
            f"{pool.dtype} of shape {pool.shape}"
        )
    dyn = [fr.index(v) for v in op.value]
    shape = list(new_shape(t, dyn))
    dt = memref_dtype(t)
    nbytes = math.prod(shape) * dt.itemsize
    if not 0 <= offset <= pool.size - nbytes:
        raise Fail(
            f"krnl.getref out of bounds: bytes [{offset}, {offset + nbytes}) of the "
            f"{pool.size}-byte pool {show_value(op.mempool)}"
        )
    return [pool[offset : offset + nbytes].view(dt).reshape(shape)]


@INTERPRET.register(k.VectorTypeCastOp)
def _vector_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.VectorTypeCastOp)
    a = array_of(fr, op.source)
    t = op.result.type
    assert isinstance(t, MemRefType)
    vshape = vector_shape(t.element_type)
    if len(vshape) != 1 or isinstance(cast(MemRefType, op.source.type).element_type, VectorType):
        raise UnsupportedError("krnl.vector_type_cast from a scalar memref to 1-D vectors only")
    vl = vshape[0]
    n = a.shape[-1] // vl
    view = a[..., : n * vl].reshape(*a.shape[:-1], n, vl)
    if not np.shares_memory(view, a) and view.size:
        raise Fail("krnl.vector_type_cast needs a memref whose last dimension is contiguous")
    return [view]


# -- random_normal, strings, find_index, print, call


@INTERPRET.register(k.RandomNormalOp)
def _random_normal(it: Interpreter, op: Operation, fr: Frame) -> None:
    """Fill the first numberOfValues elements with mean + scale * N(0, 1).

    The generator is NumPy's PCG64 seeded from the seed operand (its integer
    value, or its float64 bit pattern when it is not integral): the same seed
    gives the same values. onnx-mlir's runtime uses the C library's rand(),
    whose sequence differs between platforms, so no bit-exact match is sought.
    """
    assert isinstance(op, k.RandomNormalOp)
    out = writable(fr, op.output, "krnl.random_normal")
    n = fr.index(op.numberOfValues)
    if not 0 <= n <= out.size:
        raise Fail(
            f"krnl.random_normal of {n} values into {show_value(op.output)}, which has {out.size}"
        )
    seed = float(fr.get(op.seed))
    key = int(seed) if seed.is_integer() else int(np.float64(seed).view(np.uint64))
    rng = np.random.Generator(np.random.PCG64(abs(key)))
    mean, scale = float(fr.get(op.mean)), float(fr.get(op.scale))
    vals = rng.standard_normal(n) * scale + mean
    out.flat[:n] = vals.astype(out.dtype)


def _c_bytes(s: Any) -> bytes:
    if not isinstance(s, str):
        raise Fail(f"expected a string value, got {type(s).__name__}")
    b = s.encode("utf-8")
    return b.split(b"\0", 1)[0]  # C strings end at the first NUL


@INTERPRET.register(k.StrlenOp)
def _strlen(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return [len(_c_bytes(fr.get(op.operands[0])))]


@INTERPRET.register(k.StrncmpOp)
def _strncmp(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a, b = _c_bytes(fr.get(op.operands[0])), _c_bytes(fr.get(op.operands[1]))
    n = int(fr.get(op.operands[2]))
    a, b = a[: max(n, 0)], b[: max(n, 0)]
    return [(a > b) - (a < b)]  # bytes compare as unsigned chars, like strncmp


def _fnv(hval: int, data: bytes) -> int:
    """onnx-mlir's 32-bit FNV variant of src/Runtime/OMIndexLookup.c."""
    prime = 0x01000193
    hval = prime if hval == 0 else hval & 0xFFFFFFFF
    for byte in data:
        c = byte - 256 if byte >= 128 else byte  # `char` is signed there
        hval = (hval * prime) & 0xFFFFFFFF
        hval ^= c & 0xFFFFFFFF
    return hval


@INTERPRET.register(k.FindIndexOp)
def _find_index(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    """The value of `input` in the perfect hash table (G, V) of onnx-mlir's runtime."""
    assert isinstance(op, k.FindIndexOp)
    x = fr.get(op.input)
    data = _c_bytes(x) if isinstance(op.input.type, k.StringType) else str(int(x)).encode()
    G, V = array_of(fr, op.G), array_of(fr, op.V)
    size = int(fr.get(op.len))
    if size <= 0 or size > G.size or size > V.size:
        raise Fail(
            f"krnl.find_index with a dictionary size {size} for G of {G.size} and V of "
            f"{V.size} elements"
        )
    d = int(G.flat[_fnv(0, data) % size])
    slot = -d - 1 if d < 0 else _fnv(d, data) % size
    if not 0 <= slot < V.size:
        raise Fail(f"krnl.find_index: G leads to slot {slot} outside V")
    index = int(V.flat[slot])
    if not 0 <= index < size:
        raise Fail(
            f"krnl.find_index: the table gives {index}, outside [0, {size})",
            "the input is not in the dictionary described by G and V",
        )
    return [index]


_C_LENGTH = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|L|z|j|t|q)?([diouxXeEfFgGcsp%])")


def _c_format(fmt: str, value: Any) -> str:
    """printf-style formatting for one optional value (length modifiers ignored)."""
    pyfmt = _C_LENGTH.sub(lambda m: "%" + m.group(1) + m.group(2).replace("p", "s"), fmt)
    if value is None:
        return pyfmt % ()
    if isinstance(value, np.floating):
        value = float(value)
    return pyfmt % (value,)


@INTERPRET.register(k.PrintOp)
def _print(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, k.PrintOp)
    value = fr.get(op.input) if op.input is not None else None
    try:
        text = _c_format(op.format.data, value)
    except (TypeError, ValueError) as e:
        raise Fail(
            f"krnl.print cannot format {op.format.data!r} with this value: {e}",
            "use one printf conversion (%d, %f, %e, %g, %s, ...) matching the value",
        ) from None
    it.write(text)


_OM_TYPE_NAMES = {
    "float16": "_Float16",
    "float32": "float",
    "float64": "double",
    "bool": "_Bool",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "object": "const char *",
}


def _om_elem(x: Any) -> str:
    if isinstance(x, np.floating):
        return f"{float(x):f}"
    if isinstance(x, np.bool_ | bool):
        return str(int(x))
    return str(x)


def _om_data(a: np.ndarray[Any, Any]) -> str:
    if a.ndim == 0:
        return _om_elem(a[()])
    return "[" + ", ".join(_om_data(a[i]) for i in range(a.shape[0])) + "]"


@INTERPRET.register(k.PrintTensorOp)
def _print_tensor(it: Interpreter, op: Operation, fr: Frame) -> None:
    """Print like onnx-mlir's omTensorPrint: %s signature, %t type, %d data, %e end."""
    assert isinstance(op, k.PrintTensorOp)
    a = array_of(fr, op.input)
    dtype_name = _OM_TYPE_NAMES.get(a.dtype.name, a.dtype.name)
    type_text = "".join(f"{d}x" for d in a.shape) + dtype_name
    strides = [s // a.itemsize for s in a.strides]
    signature = (
        f"\trank = {a.ndim}\n\tdataType = {dtype_name}\n\tnumElems = {a.size}\n"
        f"\tshape: {''.join(f'[{d}]' for d in a.shape)}\n"
        f"\tstrides: {''.join(f'[{s}]' for s in strides)}\n\ttype: {type_text}\n"
    )
    data = f"\tdata: ({_om_data(a)})\n"
    msg = op.msg.data
    out: list[str] = []
    had_format = False
    i = 0
    while i < len(msg):
        if msg[i] == "%" and i + 1 < len(msg):
            f = msg[i + 1]
            if f == "e":
                break
            if f in "dst":
                out.append({"d": data, "s": signature, "t": type_text}[f])
                had_format = True
            i += 2
            continue
        out.append(msg[i])
        i += 1
    if not had_format:
        out.append("\n" + signature + data + "\n")
    it.write("".join(out))


def attr_to_py(a: Attribute) -> Any:
    if isinstance(a, IntegerAttr):
        if a.type == IntegerType(1):
            return bool(a.value.data)
        return a.value.data
    if isinstance(a, FloatAttr):
        return a.value.data
    if isinstance(a, StringAttr):
        return a.data
    if isinstance(a, ArrayAttr):
        return [attr_to_py(x) for x in a.data]
    if isinstance(a, DenseArrayBase):
        return list(a.get_values())
    if isinstance(a, DenseIntOrFPElementsAttr):
        return np.array(a.get_values())
    return a


@INTERPRET.register(k.CallOp)
def _krnl_call(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any] | None:
    assert isinstance(op, k.CallOp)
    name = op.funcName.data
    target: Callable[..., Any] | None = (
        RUNTIME_CALLS.get(name) or it.calls.get(name) or CALLS.get(name)
    )
    if name in RUNTIME_ARITY and len(op.parameters) != RUNTIME_ARITY[name]:
        raise Fail(
            f"krnl.call '{name}' takes {RUNTIME_ARITY[name]} parameters (the order tensor, "
            f"the data, ...), given {len(op.parameters)}",
            "write the call as onnx-mlir's lowering does (docs/krnl-semantics.md)",
        )
    if target is None:
        known = sorted({*it.calls, *CALLS, *RUNTIME_CALLS})
        raise Fail(
            f"krnl.call to '{name}', which is not registered",
            f"register a Python function with polykrnl.register_call('{name}', pyfunc); "
            f"registered: {', '.join(known) if known else 'none'}",
        )
    args = [user_value(fr.get(v), v.type) for v in op.parameters]
    attrs = {
        n: attr_to_py(a)
        for n, a in {**op.attributes, **op.properties}.items()
        if n not in ("funcName", "numOfOutput")
    }
    kwargs: dict[str, Any] = {}
    if attrs:
        try:
            params = dict(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            params = {}
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        kwargs = {n: v for n, v in attrs.items() if takes_all or n in params}
    try:
        result = target(*args, **kwargs)
    except Exception as e:
        if name in RUNTIME_CALLS:
            raise Fail(
                f"krnl.call '{name}' (onnx-mlir's runtime): {e}",
                "onnx-mlir's runtime takes (order, data, axis, ascending[, k, sorted]): an "
                "order tensor of indices 0..n-1 along the last axis, of the data's shape "
                "(docs/krnl-semantics.md)",
            ) from e
        raise Fail(
            f"the function registered for krnl.call '{name}' raised {type(e).__name__}: {e}",
            "the error comes from the registered Python function, not from the program",
        ) from e
    if not op.results:
        return None
    values = list(result) if len(op.results) > 1 else [result]
    if len(values) != len(op.results):
        raise Fail(f"'{name}' returned {len(values)} values, krnl.call expects {len(op.results)}")
    return [make_value(v, r.type) for v, r in zip(values, op.results, strict=True)]


# -- sequences


@INTERPRET.register(k.SeqAllocOp)
def _seqalloc(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.SeqAllocOp)
    t = op.output.type
    assert isinstance(t, MemRefType)
    return [new_array(t, [fr.index(v) for v in op.length])]


@INTERPRET.register(k.SeqStoreOp)
def _seqstore(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, k.SeqStoreOp)
    value = fr.get(op.input)
    # The sequence owns a copy of the element, like onnx-mlir's lowering.
    value = value.copy() if isinstance(value, np.ndarray) else value
    store_element(fr, value, op.seq, [fr.index(op.index)], "krnl.seqstore")


@INTERPRET.register(k.SeqExtractOp)
def _seqextract(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.SeqExtractOp)
    seq = array_of(fr, op.seq)
    i = checked_index(op.seq, seq, [fr.index(op.index)], "krnl.seqextract")
    x = seq[i]
    if x is None:
        raise Fail(f"krnl.seqextract reads element {i[0]} of {show_value(op.seq)}, never stored")
    copy = op.copy is None or op.copy.value.data != 0
    return [x.copy() if copy and isinstance(x, np.ndarray) else x]


@INTERPRET.register(k.GetLinearOffsetIndexOp)
def _linear_offset(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.GetLinearOffsetIndexOp)
    t = op.memref.type
    if isinstance(t, MemRefType) and not has_identity_layout(t):
        raise Fail(
            f"krnl.get_linear_offset_index of {show_value(op.memref)}, whose layout is not "
            f"the identity ({t.layout})",
            "onnx-mlir computes it once the memref is normalized (onnx-mlir-opt "
            "--normalize-memrefs), as polykrnl's reader does, but not here: "
            f"{it.module.layouts_kept or 'the module was not read from text'}; "
            "give polykrnl the normalized function",
        )
    shape = logical_shape(op.memref, array_of(fr, op.memref))
    offset = 0
    for i, n in zip(eval_map(op.map.data, [fr.index(v) for v in op.indices]), shape, strict=True):
        offset = offset * n + i  # row-major: each dimension's stride is the product after it
    return [offset]


# krnl's scalar math ops mean what their math-dialect namesakes mean.
_KRNL_UNARY: dict[type[Operation], Callable[[Any], Any]] = {
    k.AcosOp: np.arccos,
    k.AcoshOp: np.arccosh,
    k.AsinOp: np.arcsin,
    k.AsinhOp: np.arcsinh,
    k.AtanOp: np.arctan,
    k.AtanhOp: np.arctanh,
    k.TanOp: np.tan,
    k.ErfOp: erf,
    k.RoundEvenOp: np.rint,  # ties to even
}
for _op, _f in _KRNL_UNARY.items():
    INTERPRET.add(unary_float(_f), _op)
INTERPRET.add(float_predicate(np.isinf), k.IsInfOp)
INTERPRET.add(float_predicate(np.isnan), k.IsNaNOp)

"""Krnl's memory ops in generated kernels: helper functions written into the module.

Each helper has the interpreter's semantics (``polykrnl/interpreter/``)
for in-bounds operands; the bounds checks are the interpreter's job (a kernel
run with out-of-bounds starts is undefined, as in the compiled code).
The kernels call them with the op's static attributes as constants.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from xdsl.dialects import vector
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.codegen.bounds_guard import BOUNDS_ERROR, BOUNDS_ERROR_SOURCE
from polykrnl.dialect import krnl as k
from polykrnl.dialect.std_vector import transfer_dims
from polykrnl.interpreter import scalar_dtype
from polykrnl.interpreter.krnl import attr_to_py
from polykrnl.interpreter.runtime_calls import RUNTIME_ARITY, RUNTIME_CALLS, RUNTIME_HELPERS
from polykrnl.ir import int_list
from polykrnl.transforms.matmul_fold import compute_tile

HELPERS: dict[str, str] = {
    BOUNDS_ERROR: BOUNDS_ERROR_SOURCE,
    "_pk_parallel": """\
def _pk_parallel(body, iterations, min_seconds=5e-4):
    # The first iteration runs alone and is timed: threads only pay off when one
    # iteration is long (NumPy releases the GIL inside large array operations;
    # the Python code between them holds it). Then interleaved shares, one per
    # thread (balanced when the work grows with the iteration).
    global _pk_pool
    import concurrent.futures
    import os
    import time
    start = time.perf_counter()
    body(iterations[:1])
    rest = iterations[1:]
    workers = min(os.cpu_count() or 1, len(rest))
    if workers < 2 or time.perf_counter() - start < min_seconds:
        body(rest)
        return
    pool = globals().get("_pk_pool")
    if pool is None or pool[0] < workers:
        pool = _pk_pool = (workers, concurrent.futures.ThreadPoolExecutor(workers))
    shares = [pool[1].submit(body, rest[w::workers]) for w in range(workers)]
    # Every share ends before an error is raised: no thread writes after the call.
    concurrent.futures.wait(shares)
    for done in shares:
        done.result()
""",
    "_pk_constant": """\
def _pk_constant(data, shape):
    # krnl.global: constant data, read-only as in the interpreter
    a = data.reshape(shape)
    a.flags.writeable = False
    return a
""",
    "_pk_transfer": """\
def _pk_transfer(mem, starts, dims, shape, mask):
    # vector.transfer_read/write: per lane, the element it moves, and whether it moves
    # (mask on, inside the memref along the dimensions not declared in bounds)
    lanes = np.indices(shape).reshape(len(shape), -1)
    at = [np.full(lanes.shape[1], s) for s in starts]
    ok = np.ones(lanes.shape[1], dtype=bool)
    for k, d in enumerate(dims):
        if d is not None:
            at[d] = starts[d] + lanes[k]
            ok &= (at[d] >= 0) & (at[d] < mem.shape[d])
    if mask is not None:
        ok &= np.asarray(mask).reshape(-1)
    return tuple(a[ok] for a in at), ok
""",
    "_pk_transfer_read": """\
def _pk_transfer_read(mem, starts, dims, shape, pad, mask):
    out = np.full(shape, pad, dtype=mem.dtype)
    at, ok = _pk_transfer(mem, starts, dims, shape, mask)
    out.reshape(-1)[ok] = mem[at]
    return out
""",
    "_pk_transfer_write": """\
def _pk_transfer_write(mem, value, starts, dims, mask):
    value = np.asarray(value)
    at, ok = _pk_transfer(mem, starts, dims, value.shape, mask)
    mem[at] = value.reshape(-1)[ok]
""",
    "_pk_masked_load": """\
def _pk_masked_load(mem, starts, mask, passthru):
    # vector.maskedload: a run along the last dimension; lanes off are never read
    out = np.array(passthru, dtype=mem.dtype)
    lanes = np.flatnonzero(np.asarray(mask))
    out.reshape(-1)[lanes] = mem[(*starts[:-1], starts[-1] + lanes)]
    return out
""",
    "_pk_masked_store": """\
def _pk_masked_store(mem, value, starts, mask):
    lanes = np.flatnonzero(np.asarray(mask))
    mem[(*starts[:-1], starts[-1] + lanes)] = np.asarray(value).reshape(-1)[lanes]
""",
    "_pk_seqstore": """\
def _pk_seqstore(seq, i, value):
    # krnl.seqstore: the sequence owns a copy of the element
    seq[i] = value.copy() if isinstance(value, np.ndarray) else value
""",
    "_pk_seqextract": """\
def _pk_seqextract(seq, i, copy):
    # krnl.seqextract: the element (a copy unless copy = 0)
    x = seq[i]
    return x.copy() if copy and isinstance(x, np.ndarray) else x
""",
    "_pk_memcpy": """\
def _pk_memcpy(dest, src, n, d0, s0):
    # .flat is row-major even for views; the read is a copy (memmove semantics)
    dest.flat[d0:d0 + n] = src.flat[s0:s0 + n]
""",
    "_pk_copy_to_tile": """\
def _pk_copy_to_tile(buf, src, starts, pad, tile, pads, transpose):
    off = src.ndim - buf.ndim
    tile = tile or buf.shape
    pads = pads or (1,) * buf.ndim
    src_dim = list(range(src.ndim))
    if transpose:
        src_dim[-2], src_dim[-1] = src_dim[-1], src_dim[-2]
    read = []
    ext = []
    for d in range(buf.ndim):
        s = src_dim[off + d]
        r = max(0, min(src.shape[s] - starts[s], tile[d]))
        read.append(r)
        p = pads[d]
        ext.append(tile[d] if p == tile[d] else min(-(-r // p) * p, tile[d]))
    buf[tuple(slice(0, e) for e in ext)] = pad
    index = [starts[s] for s in range(off)]
    for s in range(off, src.ndim):
        d = src_dim.index(s) - off
        index.append(slice(starts[s], starts[s] + read[d]))
    block = src[tuple(index)]
    if transpose:
        block = np.swapaxes(block, -1, -2)
    buf[tuple(slice(0, r) for r in read)] = block
""",
    "_pk_copy_from_tile": """\
def _pk_copy_from_tile(buf, dest, starts, tile):
    off = dest.ndim - buf.ndim
    tile = tile or buf.shape
    index = [starts[s] for s in range(off)]
    sizes = []
    for s in range(off, dest.ndim):
        w = max(0, min(dest.shape[s] - starts[s], tile[s - off]))
        sizes.append(w)
        index.append(slice(starts[s], starts[s] + w))
    dest[tuple(index)] = buf[tuple(slice(0, w) for w in sizes)]
""",
    "_pk_matmul": """\
def _pk_matmul(A, B, C, a_mem, b_mem, c_mem, starts, ubs, compute):
    i0, j0, k0 = starts
    ni = max(0, min(ubs[0] - i0, compute[0]))
    nj = max(0, min(ubs[1] - j0, compute[1]))
    nk = max(0, min(ubs[2] - k0, compute[2]))
    if ni == 0 or nj == 0:
        return

    def block(arr, mem, r0, c0, nr, nc):
        return arr[(*mem[:-2], slice(r0, r0 + nr), slice(c0, c0 + nc))]

    a = block(A, a_mem, i0 - a_mem[-2], k0 - a_mem[-1], ni, nk)
    b = block(B, b_mem, k0 - b_mem[-2], j0 - b_mem[-1], nk, nj)
    c = block(C, c_mem, i0 - c_mem[-2], j0 - c_mem[-1], ni, nj)
    acc = c.copy()
    for kk in range(nk):
        # one multiply and one add per k in C's type: the scalar loop's roundings
        acc = np.multiply(a[:, kk:kk + 1], b[kk:kk + 1, :], dtype=C.dtype) + acc
    c[...] = acc
""",
    "_pk_call": """\
# krnl.call targets: fill this dict with name -> Python function before calling
# the kernel (in-process, polykrnl uses the functions of polykrnl.register_call).
_pk_calls = {}


def _pk_call(name, args, kwargs, dtypes):
    out = _pk_calls[name](*args, **kwargs)
    if not dtypes:
        return None
    values = list(out) if len(dtypes) > 1 else [out]
    cast = [int(v) if d == "index" else np.dtype(d).type(v) for v, d in zip(values, dtypes)]
    return tuple(cast) if len(cast) > 1 else cast[0]
""",
}


def _ints(vals: list[int] | None) -> ast.expr:
    if vals is None:
        return ast.Constant(None)
    return ast.Tuple([ast.Constant(v) for v in vals], ast.Load())


def _tuple(xs: list[ast.expr]) -> ast.Tuple:
    return ast.Tuple(xs, ast.Load())


# onnx-mlir's runtime calls: the interpreter's own functions, their source as written.
HELPERS |= {RUNTIME_HELPERS[name]: "\n" + inspect.getsource(f) for name, f in RUNTIME_CALLS.items()}

#: helpers that call other helpers
NEEDS: dict[str, tuple[str, ...]] = {
    "_pk_om_topk": ("_pk_om_sort",),
    "_pk_transfer_read": ("_pk_transfer",),
    "_pk_transfer_write": ("_pk_transfer",),
}


def memory_call(
    op: Operation, value: Callable[[SSAValue], ast.expr]
) -> tuple[str, ast.expr] | None:
    """(helper, call expression) for a Krnl memory op or a vector transfer / masked access,
    or None if `op` is not one (or not one the helpers handle)."""
    if isinstance(op, k.MemcpyOp):
        args = [value(x) for x in (op.dest, op.src, op.num_elems, op.dest_offset, op.src_offset)]
        return "_pk_memcpy", _call("_pk_memcpy", args)
    if isinstance(op, k.CopyToTileBufferOp):
        transpose = op.transpose is not None and bool(op.transpose.value.data)
        args = [
            value(op.buffer),
            value(op.source),
            _tuple([value(x) for x in op.starts]),
            value(op.padValue),
            _ints(int_list(op.tileSize)),
            _ints(int_list(op.padToNext)),
            ast.Constant(transpose),
        ]
        return "_pk_copy_to_tile", _call("_pk_copy_to_tile", args)
    if isinstance(op, k.CopyFromTileBufferOp):
        args = [
            value(op.buffer),
            value(op.dest),
            _tuple([value(x) for x in op.starts]),
            _ints(int_list(op.tileSize)),
        ]
        return "_pk_copy_from_tile", _call("_pk_copy_from_tile", args)
    if isinstance(op, k.MatMulOp):
        compute = compute_tile(op)
        args = [
            value(op.A),
            value(op.B),
            value(op.C),
            _tuple([value(x) for x in op.aGlobalIndexMemStart]),
            _tuple([value(x) for x in op.bGlobalIndexMemStart]),
            _tuple([value(x) for x in op.cGlobalIndexMemStart]),
            _tuple(
                [
                    value(x)
                    for x in (
                        op.iGlobalIndexComputeStart,
                        op.jGlobalIndexComputeStart,
                        op.kGlobalIndexComputeStart,
                    )
                ]
            ),
            _tuple([value(x) for x in (op.iGlobalUB, op.jGlobalUB, op.kGlobalUB)]),
            _ints(compute),
        ]
        return "_pk_matmul", _call("_pk_matmul", args)
    if isinstance(op, vector.TransferReadOp | vector.TransferWriteOp):
        return _transfer(op, value)
    if isinstance(op, vector.MaskedLoadOp):
        args = [value(op.base), _tuple([value(x) for x in op.indices]), value(op.mask)]
        return "_pk_masked_load", _call("_pk_masked_load", [*args, value(op.pass_thru)])
    if isinstance(op, vector.MaskedStoreOp):
        args = [value(op.base), value(op.value_to_store), _tuple([value(x) for x in op.indices])]
        return "_pk_masked_store", _call("_pk_masked_store", [*args, value(op.mask)])
    if isinstance(op, k.CallOp) and op.funcName.data in RUNTIME_HELPERS:
        if len(op.parameters) != RUNTIME_ARITY[op.funcName.data]:
            return None
        helper = RUNTIME_HELPERS[op.funcName.data]
        return helper, _call(helper, [value(x) for x in op.parameters])
    if isinstance(op, k.CallOp):
        kwargs = {
            n: attr_to_py(a)
            for n, a in {**op.attributes, **op.properties}.items()
            if n not in ("funcName", "numOfOutput")
        }
        if not all(_literal(v) for v in kwargs.values()):
            return None
        dtypes = [
            "index" if isinstance(r.type, IndexType) else scalar_dtype(r.type).name
            for r in op.results
        ]
        args = [
            ast.Constant(op.funcName.data),
            _tuple([value(x) for x in op.parameters]),
            ast.Dict([ast.Constant(n) for n in kwargs], [_literal_ast(v) for v in kwargs.values()]),
            _tuple([ast.Constant(d) for d in dtypes]),
        ]
        return "_pk_call", _call("_pk_call", args)
    return None


def _transfer(
    op: vector.TransferReadOp | vector.TransferWriteOp, value: Callable[[SSAValue], ast.expr]
) -> tuple[str, ast.expr] | None:
    dims = transfer_dims(op)
    if dims is None or not isinstance(op.source.type, MemRefType):
        return None  # a map MLIR refuses, or a tensor (not Krnl)
    if isinstance(op, vector.TransferWriteOp) and None in dims:
        return None  # a write cannot broadcast
    rank = len(op.indices)
    if op.mask is not None and dims != list(range(rank - len(dims), rank)):
        return None  # the interpreter reads a mask only with a minor identity map too
    mask = value(op.mask) if op.mask is not None else ast.Constant(None)
    starts = _tuple([value(x) for x in op.indices])
    dims_ast = _tuple([ast.Constant(d) for d in dims])
    if isinstance(op, vector.TransferWriteOp):
        args = [value(op.source), value(op.vector), starts, dims_ast, mask]
        return "_pk_transfer_write", _call("_pk_transfer_write", args)
    shape = _ints(list(op.result.type.get_shape()))
    args = [value(op.source), starts, dims_ast, shape, value(op.padding), mask]
    return "_pk_transfer_read", _call("_pk_transfer_read", args)


def _literal(v: object) -> bool:
    if isinstance(v, bool | int | float | str):
        return True
    return isinstance(v, list) and all(_literal(x) for x in v)


def _literal_ast(v: Any) -> ast.expr:
    if isinstance(v, list):
        return ast.List([_literal_ast(x) for x in v], ast.Load())
    return ast.Constant(v)


def _call(fn: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Name(fn, ast.Load()), args, [])

"""Krnl's memory ops in generated kernels: helper functions written into the module.

Each helper has the interpreter's semantics (``polykrnl/model/interpreter/``)
for in-bounds operands; the bounds checks are the interpreter's job (a kernel
run with out-of-bounds starts is undefined, as in the compiled code).
The kernels call them with the op's static attributes as constants.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from polykrnl.model import dialect as k
from polykrnl.model.interpreter import scalar_dtype
from polykrnl.model.interpreter.krnl import attr_to_py
from polykrnl.model.ir import int_list

HELPERS: dict[str, str] = {
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


def memory_call(
    op: Operation, value: Callable[[SSAValue], ast.expr]
) -> tuple[str, ast.expr] | None:
    """(helper, call expression) for a Krnl memory op, or None if `op` is not one."""
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
        a_t, c_t = op.A.type, op.C.type
        shape_a = list(a_t.get_shape())  # type: ignore[attr-defined]
        shape_c = list(c_t.get_shape())  # type: ignore[attr-defined]
        a_tile = int_list(op.aTileSize) or shape_a[-2:]
        c_tile = int_list(op.cTileSize) or shape_c[-2:]
        compute = int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]
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

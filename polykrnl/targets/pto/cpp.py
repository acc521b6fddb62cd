"""C++ for a tile :class:`~polykrnl.targets.pto.program.Program`: the kernel and a test harness.

The kernel is written the way pto-isa's own kernels are (the form both the NPU build and the
``-D__CPU_SIM`` build accept)::

    #include <pto/pto-inst.hpp>
    using namespace pto;
    __global__ AICORE void name(__gm__ float* A, ..., int64_t N, ...) { ... }

Tiles are declared once at the top with their TASSIGN; a tile with a dynamic valid shape is
constructed with its full static extents and changed per iteration with ``SetValidShape`` /
``SetValidRow`` / ``SetValidCol``. Each TLOAD/TSTORE gets a ``GlobalTensor`` view of its
tensor argument (pointer + element offset, ``Shape<1, 1, 1, rows, cols>``, ``Stride<1, 1, 1,
ld, 1>``; a dimension that is not a constant is dynamic, ``-1``, and given to the constructor).

Index arithmetic is ``int64_t``. Floor division is printed as C++ ``/``, which is the same for
the non-negative values that tile offsets and extents take.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy  # type: ignore[import-untyped]

from polykrnl.codegen.safe_text import CPP_KEYWORDS, cpp_comment_text
from polykrnl.errors import PtoError
from polykrnl.targets.pto.dtypes import DType
from polykrnl.targets.pto.program import (
    Barrier,
    GlobalView,
    Instr,
    Item,
    Loop,
    Program,
    Scalar,
    SetFlag,
    SetValid,
    WaitFlag,
    eval_expr,
    walk,
)
from polykrnl.targets.pto.types import GlobalTensorType, Layout

__all__ = ["cpp_expr", "harness", "to_cpp"]

_INDENT = "    "


def _ident(name: str, what: str) -> str:
    if not name.isidentifier() or not name.isascii() or name in CPP_KEYWORDS:
        raise PtoError(
            f"{what} {name!r} is not usable as a C++ identifier",
            hint="rename it (letters, digits and _, not a C++ keyword)",
        )
    return name


# --------------------------------------------------------------------------- expressions


def cpp_expr(e: sympy.Expr) -> str:
    """C++ text of an integer expression (operands of / and % are non-negative)."""
    return _expr(sympy.sympify(e), 0)


# precedence levels: 0 any, 1 additive operand, 2 multiplicative operand
def _expr(e: sympy.Expr, ctx: int) -> str:
    if isinstance(e, sympy.Integer):
        s = str(int(e))
        return f"({s})" if int(e) < 0 and ctx > 0 else s
    if isinstance(e, sympy.Symbol):
        return e.name
    if isinstance(e, sympy.Add):
        terms = sorted(e.args, key=lambda t: (_is_negative(t), sympy.default_sort_key(t)))
        parts: list[str] = []
        for k, t in enumerate(terms):
            if _is_negative(t):
                body = _expr(-t, 2 if isinstance(-t, sympy.Add) else 1)
                parts.append(f"- {body}" if k else f"-{_paren(body, -t)}")
            else:
                parts.append(("+ " if k else "") + _expr(t, 1))
        s = " ".join(parts)
        return f"({s})" if ctx > 0 else s
    if isinstance(e, sympy.Mul):
        num, den = sympy.fraction(e)
        if den != 1:
            raise PtoError(
                f"expression {e} is not an integer expression",
                hint="divide with floor(...) (C++ integer division)",
            )
        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            s = "-" + _expr(rest, 2)
            return f"({s})" if ctx > 0 else s
        factors = [_expr(f, 2) for f in sympy.Mul.make_args(e)]
        s = " * ".join(factors)
        return f"({s})" if ctx > 1 else s
    if isinstance(e, sympy.floor | sympy.ceiling):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        n, d = _expr(num, 2), _expr(den, 2)
        if isinstance(e, sympy.ceiling):
            n = f"({_expr(num, 1)} + {_expr(den - 1, 1)})"
        s = f"{n} / {d}"
        return f"({s})" if ctx > 1 else s
    if isinstance(e, sympy.Mod):
        s = f"{_expr(e.args[0], 2)} % {_expr(e.args[1], 2)}"
        return f"({s})" if ctx > 1 else s
    if isinstance(e, sympy.Min | sympy.Max):
        fn = "std::min" if isinstance(e, sympy.Min) else "std::max"
        args = sorted(e.args, key=sympy.default_sort_key)
        s = _expr(args[0], 0)
        for a in args[1:]:
            s = f"{fn}<int64_t>({s}, {_expr(a, 0)})"
        return s
    if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and int(e.exp) > 0:
        return _expr(sympy.Mul(*([e.base] * int(e.exp)), evaluate=False), ctx)
    raise PtoError(
        f"expression {e}: cannot print {type(e).__name__} as C++",
        hint="use integers, names, +, -, *, floor, ceiling, Mod, Min and Max",
    )


def _is_negative(t: sympy.Expr) -> bool:
    c, _ = t.as_coeff_Mul()
    return bool(c.is_negative)


def _paren(s: str, e: sympy.Expr) -> str:
    return f"({s})" if isinstance(e, sympy.Add) else s


# --------------------------------------------------------------------------- kernel


def _scalar(s: Scalar, dt: DType) -> str:
    v = s.value
    if isinstance(v, sympy.Expr):
        text = cpp_expr(v)
    elif isinstance(v, bool):
        raise PtoError(f"scalar {v!r} is not a number")
    elif isinstance(v, int):
        text = str(v)
    else:
        f = float(v)
        text = "INFINITY" if f == float("inf") else "-INFINITY" if f == float("-inf") else repr(f)
        if text == "nan":
            text = "NAN"
    return f"static_cast<{dt.cpp}>({text})"


class _Printer:
    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.lines: list[str] = []
        self.nviews = 0
        self.pingpong = {t.name: t.pingpong for t in prog.tiles if t.pingpong is not None}
        self.pingpong_loops: set[str] = set(self.pingpong.values()) | {
            it.pingpong
            for it in walk(prog.body)
            if isinstance(it, SetFlag | WaitFlag) and it.pingpong is not None
        }

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(_INDENT * depth + text if text else "")

    def kernel(self) -> None:
        p = self.prog
        _ident(p.name, "kernel name")
        args = [f"__gm__ {t.dtype.cpp}* {_ident(t.name, 'tensor')}" for t in p.tensors]
        args += [f"int64_t {_ident(n, 'parameter')}" for n in p.params]
        self.emit(0, f"__global__ AICORE void {p.name}({', '.join(args)})")
        self.emit(0, "{")
        for d in p.tiles:
            _ident(d.name, "tile")
            tt = d.type
            ctor = [
                str(n) for n, v in ((tt.rows, tt.valid_row), (tt.cols, tt.valid_col)) if v is None
            ]
            init = f"({', '.join(ctor)})" if ctor else ""
            if d.pingpong is None:
                self.emit(1, f"{tt.cpp} {d.name}{init};")
                self.emit(
                    1,
                    f"TASSIGN({d.name}, 0x{d.offset:x});  "
                    f"// {_one_line(d.buffer.value)} [{d.offset}, {d.end})",
                )
                continue
            copies = ", ".join([f"{tt.cpp}{init}"] * d.copies) if ctor else ""
            self.emit(
                1,
                f"{tt.cpp} {d.name}[{d.copies}]{f' = {{{copies}}}' if copies else ''};  "
                f"// double-buffered in loop {_one_line(d.pingpong)}",
            )
            for k in range(d.copies):
                off = d.copy_offset(k)
                self.emit(
                    1,
                    f"TASSIGN({d.name}[{k}], 0x{off:x});  "
                    f"// {_one_line(d.buffer.value)} [{off}, {off + tt.bytes})",
                )
        for var in sorted(self.pingpong_loops):
            self.emit(
                1,
                f"int64_t {_counter(var)} = 0;  // iterations over {var}, whichever loop: "
                "double buffering alternates copies along them",
            )
        if p.tiles:
            self.emit(0, "")
        self.items(p.body, 1)
        self.emit(0, "}")

    def items(self, items: tuple[Item, ...], depth: int) -> None:
        for it in items:
            if isinstance(it, Loop):
                v = _ident(it.var, "loop iterator")
                if it.comment:
                    self.emit(depth, f"// {_one_line(it.comment)}")
                self.emit(
                    depth,
                    f"for (int64_t {v} = {cpp_expr(it.start)}; {v} < {cpp_expr(it.stop)}; "
                    f"{v} += {cpp_expr(it.step)}) {{",
                )
                if it.var in self.pingpong_loops:
                    self.emit(
                        depth + 1,
                        f"const int64_t {_parity(it.var)} = {_counter(it.var)}++ % 2;  "
                        "// the copy in use",
                    )
                self.items(it.body, depth + 1)
                self.emit(depth, "}")
            elif isinstance(it, SetValid):
                self.emit(depth, self.set_valid(it))
            elif isinstance(it, SetFlag | WaitFlag):
                kind = "set_flag" if isinstance(it, SetFlag) else "wait_flag"
                event = f"EVENT_ID{it.event}"
                if it.pingpong is not None:
                    event = f"(event_t)({event} + {_parity(it.pingpong)})"
                self.emit(depth, f"{kind}({it.src.cpp}, {it.dst.cpp}, {event});")
            elif isinstance(it, Barrier):
                self.emit(depth, f"pipe_barrier({it.pipe.cpp});")
            else:
                self.instr(it, depth)

    def ref(self, tile: str) -> str:
        """A tile as the body names it: a double-buffered one, the copy in use."""
        var = self.pingpong.get(tile)
        return tile if var is None else f"{tile}[{_parity(var)}]"

    def set_valid(self, it: SetValid) -> str:
        t = self.ref(it.tile)
        if it.rows is not None and it.cols is not None:
            return f"{t}.SetValidShape({cpp_expr(it.rows)}, {cpp_expr(it.cols)});"
        if it.rows is not None:
            return f"{t}.SetValidRow({cpp_expr(it.rows)});"
        if it.cols is not None:
            return f"{t}.SetValidCol({cpp_expr(it.cols)});"
        return f"// {_one_line(it.tile)}: valid shape unchanged"

    def view(self, v: GlobalView, depth: int) -> str:
        t = self.prog.tensor(v.tensor)
        self.nviews += 1
        name = f"{t.name}_v{self.nviews}"
        dims = [_static(v.rows), _static(v.cols), _static(v.row_stride)]
        gt = GlobalTensorType.matrix(t.dtype, dims[0], dims[1], dims[2])
        ptr = t.name if v.offset == 0 else f"{t.name} + {_expr(v.offset, 1)}"
        if dims[0] is None or dims[1] is None or dims[2] is None:
            shape = f"{gt.shape_cpp}(1, 1, 1, {cpp_expr(v.rows)}, {cpp_expr(v.cols)})"
            stride = f"{gt.stride_cpp}(1, 1, 1, {cpp_expr(v.row_stride)}, 1)"
            self.emit(depth, f"{gt.cpp} {name}({ptr}, {shape}, {stride});")
        else:
            self.emit(depth, f"{gt.cpp} {name}({ptr});")
        return name

    def conv_view(self, tile: str, layout: Layout, shape: tuple[int, ...], depth: int) -> str:
        """Declare a ConvTile over `tile`'s bytes (same buffer offset); its name."""
        d = self.prog.tile(tile)
        name = f"{tile}_{layout.name.lower()}"
        dims = ", ".join(map(str, shape))
        self.emit(
            depth,
            f"ConvTile<{d.type.loc.cpp}, {d.type.dtype.cpp}, {d.type.bytes}, {layout.cpp}, "
            f"ConvTileShape<{dims}>> {name};",
        )
        at = f"0x{d.offset:x}"
        if d.pingpong is not None:
            at += f" + {_parity(d.pingpong)} * 0x{d.stride:x}"
        self.emit(depth, f"TASSIGN({name}, {at});  // the bytes of {_one_line(self.ref(tile))}")
        return name

    def instr(self, ins: Instr, depth: int) -> None:
        kind = ins.info.kind
        args: list[str] = []
        dst_dt: DType | None = None
        if isinstance(ins.dst, GlobalView):
            args.append(self.view(ins.dst, depth))
        else:
            args.append(self.ref(ins.dst))
            dst_dt = self.prog.tile(ins.dst).type.dtype
        for s in ins.srcs:
            if isinstance(s, GlobalView):
                args.append(self.view(s, depth))
            elif isinstance(s, Scalar):
                tile_srcs = [x for x in ins.srcs if isinstance(x, str)]
                dt = self.prog.tile(tile_srcs[0]).type.dtype if tile_srcs else dst_dt
                assert dt is not None
                args.append(_scalar(s, dt))
            else:
                args.append(self.ref(s))
        if kind == "matmul_acc":
            # the 4-argument form (c_out, c_in, a, b): the CPU simulator implements only this one
            args.insert(1, args[0])
        if ins.conv is not None:
            # the tiles' bytes seen as ConvTiles of the conversion's layouts
            dst, src = args[0], args[1]
            args[0] = self.conv_view(dst, ins.conv.dst_layout, ins.conv.dst_shape, depth)
            args[1] = self.conv_view(src, ins.conv.src_layout, ins.conv.src_shape, depth)
        if ins.tmp is not None:
            args.append(self.ref(ins.tmp))
        line = f"{ins.op}{self.atomic(ins)}({', '.join(args)});"
        pipe = self.prog.pipe_of(ins)
        note = f"  // {pipe.cpp}" + (f": {_one_line(ins.comment)}" if ins.comment else "")
        self.emit(depth, line + note)

    def atomic(self, ins: Instr) -> str:
        """The template arguments of a store that adds to global memory: the atomic mode is
        the third, after the tile and GlobalTensor types (pto_instr.hpp has no overload that
        takes it alone)."""
        if not ins.atomic_add:
            return ""
        assert isinstance(ins.dst, GlobalView) and isinstance(ins.srcs[0], str)
        v = ins.dst
        dims = [_static(v.rows), _static(v.cols), _static(v.row_stride)]
        gt = GlobalTensorType.matrix(self.prog.tensor(v.tensor).dtype, dims[0], dims[1], dims[2])
        return f"<{self.prog.tile(ins.srcs[0]).type.cpp}, {gt.cpp}, AtomicType::AtomicAdd>"


def _counter(var: str) -> str:
    return f"{var}_count"


def _parity(var: str) -> str:
    return f"{var}_pp"


def _static(e: sympy.Expr) -> int | None:
    return int(e) if isinstance(e, sympy.Integer) else None


def _one_line(s: str) -> str:
    """`s` for a `//` comment: one line (runs of white space as one space), escaped."""
    return cpp_comment_text(" ".join(s.split()))


def to_cpp(prog: Program) -> str:
    """Complete C++ source of the kernel (includes, ``using namespace pto``, the function)."""
    pr = _Printer(prog)
    head = [
        f"// PTO kernel {_one_line(prog.name)} for {prog.arch.title}, generated by polykrnl.",
        *(f"// {_one_line(n)}" for n in prog.notes),
        "#include <pto/pto-inst.hpp>",
        "#include <algorithm>",
        "#include <cmath>",
        "#include <cstdint>",
        "",
        "using namespace pto;",
        "",
    ]
    pr.kernel()
    return "\n".join(head + pr.lines) + "\n"


def harness(prog: Program, params: Mapping[str, int]) -> str:
    """The kernel plus a ``main`` for the CPU simulator: ``./prog ARG0.bin ARG1.bin ...``, one
    raw little-endian file per tensor argument in order (NumPy ``.tofile`` layout); it reads
    them all, runs the kernel with the problem sizes fixed here, and writes them all back.
    Exit status 2 with a message on a missing file or a file of the wrong size."""
    missing = [n for n in prog.params if n not in params]
    if missing:
        raise PtoError(
            f"kernel {prog.name}: no value for problem size(s) {', '.join(missing)}",
            hint="give them, e.g. --param " + " ".join(f"{n}=64" for n in missing),
        )
    env = {n: int(params[n]) for n in prog.params}
    lines = [
        "",
        "#include <cstdio>",
        "#include <vector>",
        "",
        "static bool polykrnl_io(const char* path, std::vector<unsigned char>& buf, bool write)",
        "{",
        '    std::FILE* f = std::fopen(path, write ? "wb" : "rb");',
        "    if (f == nullptr) {",
        '        std::fprintf(stderr, "error: cannot open %s\\n", path);',
        "        return false;",
        "    }",
        "    bool ok = true;",
        "    if (write) {",
        "        ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();",
        "    } else {",
        "        ok = std::fread(buf.data(), 1, buf.size(), f) == buf.size();",
        "        ok = ok && std::fgetc(f) == EOF;",
        "        if (!ok) {",
        '            std::fprintf(stderr, "error: %s does not hold exactly %zu bytes\\n", path, '
        "buf.size());",
        "        }",
        "    }",
        "    std::fclose(f);",
        "    return ok;",
        "}",
        "",
        "int main(int argc, char** argv)",
        "{",
    ]
    for n in prog.params:
        lines.append(f"    const int64_t {n} = {env[n]};")
    n_t = len(prog.tensors)
    usage = " ".join(f"{t.name}.bin" for t in prog.tensors)
    lines += [
        f"    if (argc != {n_t + 1}) {{",
        f'        std::fprintf(stderr, "usage: %s {usage}\\n", argv[0]);',
        "        return 2;",
        "    }",
    ]
    for k, t in enumerate(prog.tensors):
        nbytes = eval_expr(t.numel, env) * t.dtype.size
        lines.append(f"    std::vector<unsigned char> {t.name}_buf({nbytes});  // {t.dtype}")
        lines.append(f"    if (!polykrnl_io(argv[{k + 1}], {t.name}_buf, false)) return 2;")
    call = [f"reinterpret_cast<{t.dtype.cpp}*>({t.name}_buf.data())" for t in prog.tensors]
    call += list(prog.params)
    lines.append(f"    {prog.name}({', '.join(call)});")
    for k, t in enumerate(prog.tensors):
        lines.append(f"    if (!polykrnl_io(argv[{k + 1}], {t.name}_buf, true)) return 2;")
    lines += ["    return 0;", "}"]
    return to_cpp(prog) + "\n".join(lines) + "\n"

"""Round trip of the hand-written Krnl corpus (tests/corpus/*.mlir).

For every corpus file: parse -> print is a fixpoint, the generic print re-parses
to the same custom text, the IR passes xDSL's op verification, and the CLI
`print` / `print --generic` succeed. Also: the corpus covers every op of the
Krnl op reference and every syntax form it is meant to exercise, and the
programs marked `// polykrnl: semantic` keep the rules that the verifier,
interpreter and polyhedral model rely on.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from polykrnl.cli import main
from polykrnl.dialect.krnl import (
    DefineLoopsOp,
    GetInductionVarValueOp,
    IterateOp,
    Krnl,
    LoadOp,
    RegionOp,
    StoreOp,
)
from polykrnl.ir import Module
from polykrnl.reader.parser import parse
from tests.parsed import load as parsed

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FILES = sorted(CORPUS.glob("*.mlir"))
IDS = [f.stem for f in FILES]
# `parsed`: each file parsed once in the session (the CLI runs below parse their own);
# parsing is most of these tests' time.

# The op list of record: every `krnl.*` heading of the Krnl op reference
# (onnx-mlir's docs/Dialects/krnl.md), in its order.
REFERENCE_OPS = (
    "krnl.acos",
    "krnl.acosh",
    "krnl.asin",
    "krnl.asinh",
    "krnl.atan",
    "krnl.atanh",
    "krnl.block",
    "krnl.call",
    "krnl.copy_from_tile_buffer",
    "krnl.copy_to_tile_buffer",
    "krnl.define_loops",
    "krnl.dim",
    "krnl.entry_point",
    "krnl.erf",
    "krnl.find_index",
    "krnl.get_induction_var_value",
    "krnl.get_linear_offset_index",
    "krnl.getref",
    "krnl.global",
    "krnl.runtime_instrument",
    "krnl.isinf",
    "krnl.isnan",
    "krnl.iterate",
    "krnl.load",
    "krnl.matmul",
    "krnl.memcpy",
    "krnl.memset",
    "krnl.movable",
    "krnl.parallel",
    "krnl.permute",
    "krnl.prefetch",
    "krnl.print",
    "krnl.print_tensor",
    "krnl.random_normal",
    "krnl.region",
    "krnl.round_even",
    "krnl.seqalloc",
    "krnl.seqdealloc",
    "krnl.seqextract",
    "krnl.seqstore",
    "krnl.shape",
    "krnl.specialized_kernel",
    "krnl.store",
    "krnl.strlen",
    "krnl.strncmp",
    "krnl.tan",
    "krnl.terminate",
    "krnl.unroll",
    "krnl.vector_type_cast",
)
# Not a heading of the reference, but the terminator of iterate bodies with iter_args.
EXTRA_OPS = ("krnl.yield",)

MARKER = re.compile(r"^// polykrnl: (semantic|syntax-only)$", re.MULTILINE)

# Syntax forms the corpus promises to exercise: (what, regex over the source text).
FEATURES: tuple[tuple[str, str], ...] = (
    ("define_loops bound to a name list", r"%\w+, %\w+ = krnl\.define_loops 2"),
    ("define_loops bound to %x:N", r"%\w+:[23] = krnl\.define_loops [23]"),
    ("define_loops bound to %0:N", r"%0:\d = krnl\.define_loops"),
    ("integer bound", r"-> %\w+ = 0 to 10\b"),
    ("SSA value bound", r"-> %\w+ = 0 to %[a-zA-Z]\w*[,)]"),
    (
        "affine map bound with dims and symbols",
        r"to affine_map<\(d0\)\[s0\] -> [^>]*>\(%\w+\)\[%\w+\]",
    ),
    ("symbol-only affine map bound", r"to affine_map<\(\)\[s0\] -> [^>]*>\(\)\[%\w+\]"),
    ("max lower bound", r"= max affine_map<"),
    ("min upper bound", r"to min affine_map<"),
    ("triangular bound on an outer induction variable", r"-> %j = %i to"),
    ("nested iterate with an empty with list", r"krnl\.iterate\(%\w+\) with \(\) \{"),
    ("iter_args with one value", r"iter_args\(%\w+ = %\w+\) -> \(f32\)"),
    ("iter_args with two values", r"iter_args\(%\w+ = %\w+, %\w+ = %\w+\) -> \(f32, f32\)"),
    ("krnl.yield with a value", r"krnl\.yield %\w+ : f32"),
    ("short krnl.parallel", r"krnl\.parallel %\w+ : !krnl\.loop"),
    ("krnl.parallel with num_threads", r"krnl\.parallel\(%\w+, %\w+\), num_threads\(%\w+\)"),
    ("krnl.parallel with proc_bind", r'proc_bind = "spread"'),
    ("3-D tiling permute", r"krnl\.permute\(%ib, %il, %jb, %jl, %kb, %kl\) \[0, 3, 1, 4, 2, 5\]"),
    ("matmul panel permute", r"\[0, 3, 6, 1, 4, 7, 2, 5, 8\]"),
    ("krnl.region with loops", r'"krnl\.region"\(\) \(\{\n(.*\n)*?\s+krnl\.iterate'),
    ("krnl.movable", r"krnl\.movable \{"),
    ("explicit krnl.terminate", r'"krnl\.terminate"\(\) : \(\) -> \(\)'),
    ("fully generic module", r'^"builtin\.module"\(\) \(\{'),
    ("generic krnl.iterate", r'"krnl\.iterate"\('),
    ("generic krnl.matmul", r'"krnl\.matmul"\('),
    ("func.call", r"func\.call @"),
    ("memref.alloc", r"memref\.alloc\(\)"),
    ("memref.alloca", r"memref\.alloca\(\)"),
    ("memref.dealloc", r"memref\.dealloc"),
    ("memref.dim", r"memref\.dim"),
    ("affine.apply", r"affine\.apply"),
    ("affine.load", r"affine\.load"),
    ("affine.store", r"affine\.store"),
    ("affine.for", r"affine\.for"),
    ("scf.for", r"scf\.for"),
    ("scf.if", r"scf\.if"),
    ("math dialect", r"math\.(exp|sqrt|tanh)"),
)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _header(path: Path) -> str:
    """The leading comment block of a corpus file."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("//"):
            break
        lines.append(line)
    return "\n".join(lines)


def _marker(path: Path) -> str:
    m = MARKER.search(_header(path))
    assert m is not None, f"{path.name}: no `// polykrnl: semantic|syntax-only` line"
    return m.group(1)


def _op_names(module: Module) -> set[str]:
    return {op.name for op in module.op.walk()}


# --------------------------------------------------------------------- the corpus


def test_corpus_has_at_least_25_programs() -> None:
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_header(path: Path) -> None:
    header = _header(path)
    assert _marker(path) in ("semantic", "syntax-only")
    assert "Covers:" in header, f"{path.name}: the top comment must say what it covers"


def test_corpus_has_both_kinds() -> None:
    kinds = Counter(_marker(p) for p in FILES)
    assert kinds["semantic"] >= 20
    assert kinds["syntax-only"] >= 1


# ------------------------------------------------------------------ round trip


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_print_is_a_fixpoint(path: Path) -> None:
    printed = parsed(path).print()
    assert parse(printed, str(path)).print() == printed


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_generic_print_reparses_to_the_same_text(path: Path) -> None:
    module = parsed(path)
    custom = module.print()
    generic = module.print(generic=True)
    assert generic.startswith('"builtin.module"() ({')
    assert generic != custom
    reparsed = parse(generic, str(path))
    assert reparsed.print() == custom
    assert reparsed.print(generic=True) == generic


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_parsed_ir_passes_xdsl_verification(path: Path) -> None:
    parsed(path).op.verify()


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_cli_print(path: Path) -> None:
    code, out, err = _cli("print", str(path))
    assert (code, err) == (0, "")
    assert out == parsed(path).print()


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_cli_print_generic(path: Path) -> None:
    code, out, err = _cli("print", "--generic", str(path))
    assert (code, err) == (0, "")
    assert out == parsed(path).print(generic=True)


@pytest.mark.slow  # a new process, ~1 s to import polykrnl (fast tier: tests/test_cli_numpy.py)
def test_cli_print_in_a_subprocess() -> None:
    path = CORPUS / "matmul_panel.mlir"
    proc = subprocess.run(
        [sys.executable, "-m", "polykrnl.cli", "print", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == parsed(path).print()


# -------------------------------------------------------------------- coverage


def test_reference_op_list_matches_the_dialect() -> None:
    registered = {op.name for op in Krnl.operations}
    assert registered == set(REFERENCE_OPS) | set(EXTRA_OPS)


def test_corpus_covers_every_reference_op() -> None:
    seen: set[str] = set()
    for path in FILES:
        seen |= _op_names(parsed(path))
    missing = [name for name in (*REFERENCE_OPS, *EXTRA_OPS) if name not in seen]
    assert missing == []


@pytest.mark.parametrize(("what", "pattern"), FEATURES, ids=[f[0] for f in FEATURES])
def test_corpus_exercises(what: str, pattern: str) -> None:
    rx = re.compile(pattern, re.MULTILINE)
    assert any(rx.search(p.read_text()) for p in FILES), f"no corpus file has a {what}"


# ------------------------------------------- rules kept by the semantic programs

SEMANTIC = [p for p in FILES if _marker(p) == "semantic"]


def _is_valid_bound_operand(value: SSAValue, iterate: IterateOp) -> bool:
    """A constant/argument/top-level value of an enclosing scope, or an outer IV (as a
    block argument or through krnl.get_induction_var_value)."""
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if isinstance(owner, func.FuncOp):
            return True
        return (
            isinstance(owner, IterateOp)
            and owner is not iterate
            and value in owner.induction_vars
            and owner.is_ancestor(iterate)
        )
    assert isinstance(value, OpResult)
    scope = value.op.parent_op()
    if isinstance(value.op, GetInductionVarValueOp):
        # onnx-mlir's way to name an enclosing loop's IV (Conv's window bounds).
        return isinstance(scope, IterateOp) and scope is not iterate and scope.is_ancestor(iterate)
    return isinstance(scope, func.FuncOp | RegionOp) and scope.is_ancestor(iterate)


def _memref_rank(value: SSAValue) -> int:
    assert isinstance(value.type, MemRefType)
    return len(value.type.get_shape())


@pytest.mark.parametrize("path", SEMANTIC, ids=[p.stem for p in SEMANTIC])
def test_semantic_program_rules(path: Path) -> None:
    module = parsed(path)
    problems: list[str] = []

    def where(op: Operation) -> str:
        loc = module.location(op)
        return f"{path.name}:{loc.line if loc else '?'} {op.name}"

    for function in module.functions:
        handles: Counter[SSAValue] = Counter()
        for op in function.op.walk():
            if isinstance(op, DefineLoopsOp):
                handles.update({h: 0 for h in op.loops})
            elif isinstance(op, IterateOp):
                for entry in op.entries:
                    if not isinstance(entry.handle, OpResult) or not isinstance(
                        entry.handle.op, DefineLoopsOp
                    ):
                        problems.append(f"{where(op)}: `with` handle not from define_loops")
                    handles[entry.handle] += 1
                    for v in (*entry.lb_operands, *entry.ub_operands):
                        if not _is_valid_bound_operand(v, op):
                            problems.append(f"{where(op)}: invalid bound operand {v.name_hint}")
            elif isinstance(op, LoadOp | StoreOp) and len(op.indices) != _memref_rank(op.memref):
                problems.append(f"{where(op)}: index count differs from the memref rank")
        for handle, count in handles.items():
            if count != 1:
                problems.append(
                    f"{path.name} @{function.name}: %{handle.name_hint} is bound by "
                    f"{count} `with` entries"
                )
    assert not problems, "\n".join(problems)

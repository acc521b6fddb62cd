"""The verifier: one bad program per rule (and per loop-nest message), each
giving a stable message at the offending op with a hint, all of them through
the CLI too; valid programs, including every semantic corpus file, verify
clean.

In each bad program the offending line ends with `// ERR`; the expected
column is where the named op starts on that line.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.utils.exceptions import VerifyException

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.dialect.krnl.checks import SelfChecks
from polykrnl.errors import VerifyError
from polykrnl.nest.loops import build_nest, constant_trip_count, trip_count_divisor
from polykrnl.reader.parser import parse
from polykrnl.verifier import diagnostics, verify
from tests.parsed import load

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


@dataclass(frozen=True)
class Bad:
    id: str
    source: str
    message: str  # a stable substring of the message
    op: str  # the op text the location points at, on the `// ERR` line
    hint: str  # a stable substring of the hint

    @property
    def line(self) -> int:
        lines = [i for i, t in enumerate(self.source.splitlines(), 1) if t.endswith("// ERR")]
        assert len(lines) == 1, f"{self.id}: mark exactly one line with // ERR"
        return lines[0]

    @property
    def column(self) -> int:
        text = self.source.splitlines()[self.line - 1]
        return text.index(self.op) + 1


def fn(body: str, args: str = "%A: memref<16xf32>, %N: index", result: str = "") -> str:
    """A function @f with `body` (already indented) and a return."""
    ret = f" -> {result}" if result else ""
    return f"func.func @f({args}){ret} {{\n{body}  return\n}}\n"


L = "!krnl.loop"

CASES: tuple[Bad, ...] = (
    Bad(
        "dim_index_beyond_rank",
        fn("  %c5 = arith.constant 5 : index\n  %n = memref.dim %A, %c5 : memref<16xf32> // ERR\n"),
        "memref.dim of %A: dimension 5 is out of range for memref<16xf32> (rank 1)",
        "memref.dim",
        "dimensions are numbered 0 to 0",
    ),
    # ---------------------------------------------------------------- rule 1: xDSL, dominance
    Bad(
        "xdsl_define_loops_count",
        fn(
            '  %a = "krnl.define_loops"() {num_loops = 3 : i64} : () -> (!krnl.loop) // ERR\n'
            "  krnl.iterate(%a) with (%a -> %i = 0 to 4) {\n  }\n"
        ),
        "krnl.define_loops 3 defines 1 handles",
        "krnl.define_loops",
        "must equal the number of handles",
    ),
    Bad(
        "xdsl_return_types",
        "func.func @f(%x: f32) -> f32 {\n  return // ERR\n}\n",
        "func.return: Expected arguments to have the same types as the function output types",
        "return",
        "check the operand, result and attribute types",
    ),
    Bad(
        "use_before_definition",
        fn("  %x = arith.addf %y, %y : f32 // ERR\n  %y = arith.constant 1.0 : f32\n"),
        "%y is used before it is defined (by the arith.constant at line 3)",
        "arith.addf",
        "move the definition of %y above its first use",
    ),
    # ---------------------------------------------------------------- rule 2: nest.py
    Bad(
        "nest_used_after_blocked",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            f"  krnl.permute(%ii) [0] : {L} // ERR\n"
            "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "loop handle %ii is used after it was blocked",
        "krnl.permute",
        "use the tile or point handle instead",
    ),
    Bad(
        "nest_never_bound",
        fn(
            "  %ii, %jj = krnl.define_loops 2\n"
            f"  krnl.unroll %jj : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "loop handle %jj is never bound to bounds by a krnl.iterate `with` entry",
        "krnl.unroll",
        "add `%jj -> %iv = LB to UB`",
    ),
    Bad(
        "nest_bound_twice",
        fn(
            "  %ii = krnl.define_loops 1\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
            "  krnl.iterate(%ii) with (%ii -> %j = 0 to 16) { // ERR\n  }\n"
        ),
        "loop handle %ii is bound by more than one `with` entry",
        "krnl.iterate",
        "define a new handle with krnl.define_loops",
    ),
    Bad(
        "nest_tile_size_zero",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 0 : ({L}) -> ({L}, {L}) // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "tile size 0 of krnl.block %ii must be a positive integer",
        "krnl.block",
        "krnl.block takes a constant tile size >= 1",
    ),
    Bad(
        "nest_permute_map_not_permutation",
        fn(
            "  %ii, %jj = krnl.define_loops 2\n"
            f"  krnl.permute(%ii, %jj) [0, 0] : {L}, {L} // ERR\n"
            "  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {\n  }\n"
        ),
        "permute map [0, 0] is not a permutation of 0..1",
        "krnl.permute",
        "give each position 0..1 exactly once",
    ),
    Bad(
        "nest_permute_repeated_handle",
        fn(
            "  %ii, %jj = krnl.define_loops 2\n"
            f"  krnl.permute(%ii, %ii) [1, 0] : {L}, {L} // ERR\n"
            "  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {\n  }\n"
        ),
        "loop %ii is listed twice in krnl.permute",
        "krnl.permute",
        "list each loop once",
    ),
    Bad(
        "nest_permute_not_a_chain",
        fn(
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            f"  krnl.permute(%ii, %kk) [1, 0] : {L}, {L} // ERR\n"
            "  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n  }\n"
        ),
        "krnl.permute operands must form a perfectly nested chain in the current order, "
        "but %kk is not directly inside %ii",
        "krnl.permute",
        "the current order is %ii > %jj > %kk",
    ),
    Bad(
        "nest_block_after_parallel",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.parallel %ii : {L}\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L}) // ERR\n"
            "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "krnl.block of loop %ii after it was made parallel",
        "krnl.block",
        "krnl.parallel must come last",
    ),
    Bad(
        "nest_point_loop_outside_tile",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            f"  krnl.permute(%ib, %il) [1, 0] : {L}, {L} // ERR\n"
            "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "krnl.permute puts loop %il outside loop %ib, but its bounds use the induction "
        "variable of %ib",
        "krnl.permute",
        "a point loop must stay inside its tile loop",
    ),
    Bad(
        "nest_misplaced_anchor",
        fn(
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n"
            "    krnl.iterate(%kk) with () { // ERR\n    }\n  }\n"
        ),
        "krnl.iterate(%kk) with () must name the loop directly inside the loop of %ii",
        "krnl.iterate",
        "the loop order is %ii > %jj > %kk",
    ),
    Bad(
        "nest_anchor_inside_other_region",
        fn(
            "  %ii, %jj = krnl.define_loops 2\n"
            "  %c = arith.constant true\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {\n"
            "    scf.if %c {\n"
            "      krnl.iterate(%jj) with () { // ERR\n      }\n"
            "    }\n  }\n"
        ),
        "krnl.iterate(%jj) with () is not directly in the body of the krnl.iterate",
        "krnl.iterate",
        "not inside another op's region",
    ),
    Bad(
        "nest_not_a_loop_handle",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %h : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {\n  }\n",
            args=f"%A: memref<16xf32>, %h: {L}",
        ),
        "%h is not a loop handle from krnl.define_loops or krnl.block",
        "krnl.unroll",
        "loop handles come from krnl.define_loops",
    ),
    Bad(
        "nest_with_binds_tile_handle",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib) with (%ib -> %i = 0 to 16) { // ERR\n  }\n"
        ),
        "`with` entry %ib -> %i binds %ib, a handle made by krnl.block",
        "krnl.iterate",
        "a `with` entry binds an original loop of krnl.define_loops",
    ),
    # ---------------------------------------------------------------- rule 3: handles
    Bad(
        "handle_never_bound_unused",
        fn(
            "  %0:2 = krnl.define_loops 2 // ERR\n"
            "  krnl.iterate(%0#0) with (%0#0 -> %i = 0 to 4) {\n  }\n"
        ),
        "loop handle %0#1 of krnl.define_loops is never bound by a krnl.iterate `with` entry",
        "krnl.define_loops",
        "define one loop fewer",
    ),
    # ---------------------------------------------------------------- rule 4: unroll
    Bad(
        "unroll_symbolic_bounds",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %ii : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {\n  }\n"
        ),
        "krnl.unroll %ii needs a constant trip count, but the bounds of loop %ii are not constant",
        "krnl.unroll",
        "unroll a loop with constant bounds",
    ),
    Bad(
        "unroll_then_block",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %ii : {L} // ERR\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "krnl.unroll %ii: the krnl.block at line 4 blocks %ii afterwards",
        "krnl.unroll",
        "unroll the tile handle %ib or the point handle %il instead",
    ),
    # ---------------------------------------------------------------- rule 5: index counts
    Bad(
        "krnl_load_index_count",
        fn(
            "  %ii = krnl.define_loops 1\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n"
            "    %v = krnl.load %A[%i, %i] : memref<16xf32> // ERR\n  }\n"
        ),
        "krnl.load of %A has 2 indices, but memref<16xf32> has rank 1",
        "krnl.load",
        "give one index per dimension (1)",
    ),
    Bad(
        "krnl_store_index_count",
        fn(
            "  %c = arith.constant 0.0 : f32\n  krnl.store %c, %B[%N] : memref<4x4xf32> // ERR\n",
            args="%B: memref<4x4xf32>, %N: index",
        ),
        "krnl.store of %B has 1 index, but memref<4x4xf32> has rank 2",
        "krnl.store",
        "give one index per dimension (2): %B[%i0, %i1]",
    ),
    Bad(
        "affine_load_index_count",
        fn("  %v = affine.load %A[%N, %N] : memref<16xf32> // ERR\n"),
        "affine.load of %A has 2 indices, but memref<16xf32> has rank 1",
        "affine.load",
        "give one index per dimension",
    ),
    Bad(
        "memref_load_index_count",
        fn("  %v = memref.load %A[] : memref<16xf32> // ERR\n"),
        "memref.load of %A has 0 indices, but memref<16xf32> has rank 1",
        "memref.load",
        "give one index per dimension",
    ),
    # ---------------------------------------------------------------- rule 6: matmul
    Bad(
        "matmul_rank_one",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate() with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n  }\n"
            "  krnl.matmul %V[%c0], %B[%c0, %c0], %C[%c0, %c0], (%ii, %jj, %kk), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) : memref<4xf32>, memref<4x4xf32>, "
            f"memref<4x4xf32>, ({L}, {L}, {L}) // ERR\n",
            args="%V: memref<4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "krnl.matmul needs matrices of rank >= 2, but A (%V: memref<4xf32>) has rank 1",
        "krnl.matmul",
        "give A, B and C as 2-D",
    ),
    Bad(
        "matmul_start_count",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate() with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n  }\n"
            "  krnl.matmul %A[%c0, %c0], %B[%c0], %C[%c0, %c0], (%ii, %jj, %kk), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) : memref<4x4xf32>, memref<4x4xf32>, "
            f"memref<4x4xf32>, ({L}, {L}, {L}) // ERR\n",
            args="%A: memref<4x4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "krnl.matmul gives 1 global start indices for B (%B), but memref<4x4xf32> has rank 2",
        "krnl.matmul",
        "give one start index per dimension of B",
    ),
    Bad(
        "matmul_two_loops",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj = krnl.define_loops 2\n"
            "  krnl.iterate() with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {\n  }\n"
            "  krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%ii, %jj), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) : memref<4x4xf32>, memref<4x4xf32>, "
            f"memref<4x4xf32>, ({L}, {L}) // ERR\n",
            args="%A: memref<4x4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "krnl.matmul takes exactly 3 loop handles (i, j, k), got 2",
        "krnl.matmul",
        "pass the point handles of the i, j and k loops",
    ),
    Bad(
        "matmul_compute_tile_size",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate() with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n  }\n"
            "  krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%ii, %jj, %kk), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) {computeTileSize = [2, 2]} : memref<4x4xf32>, "
            f"memref<4x4xf32>, memref<4x4xf32>, ({L}, {L}, {L}) // ERR\n",
            args="%A: memref<4x4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "krnl.matmul computeTileSize has 2 values; it takes 0 or 3",
        "krnl.matmul",
        "give the 3 sizes (I, J, K)",
    ),
    Bad(
        "matmul_a_tile_size",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate() with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n  }\n"
            "  krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%ii, %jj, %kk), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) {aTileSize = [4]} : memref<4x4xf32>, "
            f"memref<4x4xf32>, memref<4x4xf32>, ({L}, {L}, {L}) // ERR\n",
            args="%A: memref<4x4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "krnl.matmul aTileSize has 1 values; it takes 0 or 2",
        "krnl.matmul",
        "give the 2 sizes of A's last two dimensions",
    ),
    # ---------------------------------------------------------------- rule 7: tile buffers
    Bad(
        "copy_dynamic_buffer",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %f = arith.constant 0.0 : f32\n"
            "  krnl.copy_to_tile_buffer %T, %S[%c0, %c0], %f : memref<?x4xf32>, "
            "memref<8x8xf32> // ERR\n",
            args="%T: memref<?x4xf32>, %S: memref<8x8xf32>",
        ),
        "krnl.copy_to_tile_buffer needs a buffer of static shape, but %T has type memref<?x4xf32>",
        "krnl.copy_to_tile_buffer",
        "allocate the tile buffer with constant sizes",
    ),
    Bad(
        "copy_start_count",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  krnl.copy_from_tile_buffer %T, %S[%c0] : memref<4x4xf32>, memref<8x8xf32> "
            "// ERR\n",
            args="%T: memref<4x4xf32>, %S: memref<8x8xf32>",
        ),
        "krnl.copy_from_tile_buffer gives 1 start indices, but the destination %S has rank 2",
        "krnl.copy_from_tile_buffer",
        "give one start index per dimension of the destination",
    ),
    Bad(
        "copy_source_rank_smaller",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %f = arith.constant 0.0 : f32\n"
            "  krnl.copy_to_tile_buffer %T, %S[%c0], %f : memref<4x4xf32>, memref<8xf32> "
            "// ERR\n",
            args="%T: memref<4x4xf32>, %S: memref<8xf32>",
        ),
        "the source %S has rank 1, smaller than the rank 2 of the buffer %T",
        "krnl.copy_to_tile_buffer",
        "give it at most 1 dimensions",
    ),
    Bad(
        "copy_pad_to_next_rank",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %f = arith.constant 0.0 : f32\n"
            "  krnl.copy_to_tile_buffer %T, %S[%c0, %c0], %f {padToNext = [1, 1, 1]} : "
            "memref<4x4xf32>, memref<8x8xf32> // ERR\n",
            args="%T: memref<4x4xf32>, %S: memref<8x8xf32>",
        ),
        "krnl.copy_to_tile_buffer padToNext has 3 values, but the buffer %T has rank 2",
        "krnl.copy_to_tile_buffer",
        "give one padToNext value per buffer dimension (2)",
    ),
    Bad(
        "copy_transpose_rank_one",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %f = arith.constant 0.0 : f32\n"
            "  krnl.copy_to_tile_buffer %T, %S[%c0, %c0], %f {transpose = true} : "
            "memref<4xf32>, memref<8x8xf32> // ERR\n",
            args="%T: memref<4xf32>, %S: memref<8x8xf32>",
        ),
        "krnl.copy_to_tile_buffer with transpose needs a buffer of rank >= 2, but %T has rank 1",
        "krnl.copy_to_tile_buffer",
        "transpose swaps the last two dimensions",
    ),
    Bad(
        "copy_tile_size_larger_than_buffer",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  krnl.copy_from_tile_buffer %T, %S[%c0, %c0] {tileSize = [4, 8]} : "
            "memref<4x4xf32>, memref<8x8xf32> // ERR\n",
            args="%T: memref<4x4xf32>, %S: memref<8x8xf32>",
        ),
        "krnl.copy_from_tile_buffer tileSize [4, 8] is larger than the buffer %T",
        "krnl.copy_from_tile_buffer",
        "at most the buffer size in that dimension",
    ),
    # ---------------------------------------------------------------- rule 8: bound scoping
    Bad(
        "bound_defined_in_body",
        fn(
            "  %c1 = arith.constant 1 : index\n"
            "  %ii, %jj = krnl.define_loops 2\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {\n"
            "    %n = arith.addi %i, %c1 : index\n"
            "    krnl.iterate(%jj) with (%jj -> %j = 0 to %n) { // ERR\n    }\n  }\n"
        ),
        "%n cannot be used as a symbol or dimension in the bound of loop %j",
        "krnl.iterate",
        "define %n at function level, or wrap the loop in a krnl.region",
    ),
    Bad(
        "bound_is_iter_arg",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj = krnl.define_loops 2\n"
            "  %r = krnl.iterate(%ii) with (%ii -> %i = 0 to 4) iter_args(%acc = %c0) "
            "-> (index) {\n"
            "    krnl.iterate(%jj) with (%jj -> %j = 0 to %acc) { // ERR\n    }\n"
            "    krnl.yield %acc : index\n  }\n"
        ),
        "%acc cannot be used as a symbol or dimension in the bound of loop %j",
        "krnl.iterate",
        "wrap the loop in a krnl.region",
    ),
    # ---------------------------------------------------------------- rule 9: movable
    Bad(
        "movable_outside_iterate",
        fn("  krnl.movable { // ERR\n  }\n"),
        "krnl.movable is outside any krnl.iterate",
        "krnl.movable",
        "inside the krnl.iterate whose loop they belong to",
    ),
    Bad(
        "movable_in_loopless_iterate",
        fn("  krnl.iterate() with () {\n    krnl.movable { // ERR\n    }\n  }\n"),
        "krnl.movable is in a krnl.iterate() with (), which has no loop to move into",
        "krnl.movable",
        "list the handle of the destination loop",
    ),
    Bad(
        "movable_in_unrolled_loop",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %ii : {L}\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {\n"
            "    krnl.movable { // ERR\n    }\n  }\n"
        ),
        "krnl.movable inside the loop of %ii, which krnl.unroll unrolls",
        "krnl.movable",
        "do not unroll the loop",
    ),
    # ---------------------------------------------------------------- rule 10: placement
    Bad(
        "iv_used_at_tile_level",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib) with (%ii -> %i = 0 to 16) {\n"
            "    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index\n"
            "    krnl.iterate(%il) with () {\n"
            "      %v = krnl.load %A[%i] : memref<16xf32>\n    }\n"
            "    %w = krnl.load %A[%i] : memref<16xf32> // ERR\n  }\n"
        ),
        "%i is used outside the loop that carries it: krnl.load runs in the loop of %ib, "
        "but %i is the induction variable of loop %il",
        "krnl.load",
        "or use krnl.get_induction_var_value(%ib) for the start of the enclosing tile",
    ),
    Bad(
        "iv_of_unused_point_loop",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib) with (%ii -> %i = 0 to 16) {\n"
            "    %v = krnl.load %A[%i] : memref<16xf32> // ERR\n  }\n"
        ),
        "%i is used, but its loop never materializes: the point handle %il of the krnl.block "
        "at line 3 is never used",
        "krnl.load",
        "list %il in the krnl.iterate, or use krnl.get_induction_var_value(%ib)",
    ),
    Bad(
        "get_iv_outside_its_loop",
        fn(
            "  %ii, %jj = krnl.define_loops 2\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {\n"
            "    %x = krnl.get_induction_var_value(%jj) : (!krnl.loop) -> index // ERR\n  }\n"
        ),
        "krnl.get_induction_var_value(%jj) is outside the loop of %jj",
        "krnl.get_induction_var_value",
        "list %jj in the krnl.iterate",
    ),
    Bad(
        "value_used_outside_its_loop",
        # The inner body goes to the loop of its last handle, %ii, outside %jj.
        fn(
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n"
            "    %x = krnl.get_induction_var_value(%jj) : (!krnl.loop) -> index\n"
            "    krnl.iterate(%kk, %ii) with () {\n"
            "      %v = krnl.load %A[%x] : memref<16xf32> // ERR\n    }\n  }\n"
        ),
        "%x is used outside the loop it is defined in: it is defined in the loop of %jj, "
        "and krnl.load runs in the loop of %ii",
        "krnl.load",
        "list the handles in nesting order",
    ),
    # ---------------------------------------------------------------- rule 11: iter_args, get_iv
    Bad(
        "yield_count",
        fn(
            "  %z = arith.constant 0.0 : f32\n"
            "  %ii = krnl.define_loops 1\n"
            "  %r = krnl.iterate(%ii) with (%ii -> %i = 0 to 16) iter_args(%acc = %z) "
            "-> (f32) { // ERR\n"
            "    %v = krnl.load %A[%i] : memref<16xf32>\n  }\n"
        ),
        "krnl.yield passes 0 value(s), but the krnl.iterate carries 1 iter_args (%acc: f32)",
        "krnl.iterate",
        "one krnl.yield value per iter_args entry",
    ),
    Bad(
        "yield_type",
        fn(
            "  %z = arith.constant 0.0 : f32\n"
            "  %ii = krnl.define_loops 1\n"
            "  %r = krnl.iterate(%ii) with (%ii -> %i = 0 to 16) iter_args(%acc = %z) "
            "-> (f32) {\n"
            "    krnl.yield %i : index // ERR\n  }\n"
        ),
        "krnl.yield value %i has type index, but iter_args %acc has type f32",
        "krnl.yield",
        "yield a value of type f32 in position 0",
    ),
    Bad(
        "get_iv_of_blocked_handle",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) {\n"
            "    %x = krnl.get_induction_var_value(%ii) : (!krnl.loop) -> index // ERR\n  }\n"
        ),
        "krnl.get_induction_var_value uses loop handle %ii, which has no loop: the krnl.block "
        "at line 3 replaces it",
        "krnl.get_induction_var_value",
        "use the tile handle %ib or the point handle %il instead",
    ),
    Bad(
        "get_iv_result_type",
        fn(
            "  %ii = krnl.define_loops 1\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n"
            "    %x = krnl.get_induction_var_value(%ii) : (!krnl.loop) -> i32 // ERR\n  }\n"
        ),
        "krnl.get_induction_var_value of 1 handle(s) must give 1 index value(s), got 1 "
        "result(s) of type i32",
        "krnl.get_induction_var_value",
        "write one index result per handle",
    ),
    # ---------------------------------------------------------------- rule 12: the rest
    Bad(
        "proc_bind",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f'  krnl.parallel(%ii) {{proc_bind = "far"}} : {L} // ERR\n'
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        'krnl.parallel proc_bind "far" is not one of "primary", "close", "spread"',
        "krnl.parallel",
        'write proc_bind = "primary", "close" or "spread"',
    ),
    Bad(
        "parallel_twice",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.parallel %ii : {L}\n"
            f"  krnl.parallel %ii : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "loop %ii is made parallel twice (first by the krnl.parallel at line 3)",
        "krnl.parallel",
        "remove one of the krnl.parallel ops",
    ),
    Bad(
        "parallel_after_unroll",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %ii : {L}\n"
            f"  krnl.parallel %ii : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "krnl.parallel of loop %ii, which the krnl.unroll at line 3 unrolls",
        "krnl.parallel",
        "a loop is either unrolled or parallel",
    ),
    Bad(
        "unroll_twice",
        fn(
            "  %ii = krnl.define_loops 1\n"
            f"  krnl.unroll %ii : {L}\n"
            f"  krnl.unroll %ii : {L} // ERR\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {\n  }\n"
        ),
        "loop %ii is unrolled twice (first by the krnl.unroll at line 3)",
        "krnl.unroll",
        "a loop is fully unrolled once",
    ),
    Bad(
        "matmul_loop_holds_statements",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            "  krnl.iterate(%ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4, "
            "%kk -> %k = 0 to 4) {\n"
            "    %v = krnl.load %A[%i, %i] : memref<4x4xf32>\n  }\n"
            "  krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%ii, %jj, %kk), "
            "(%c0, %c0, %c0), (%c0, %c0, %c0) : memref<4x4xf32>, memref<4x4xf32>, "
            f"memref<4x4xf32>, ({L}, {L}, {L}) // ERR\n",
            args="%A: memref<4x4xf32>, %B: memref<4x4xf32>, %C: memref<4x4xf32>",
        ),
        "the loop of %ii, which krnl.matmul replaces, also holds other statements",
        "krnl.matmul",
        "do not list the handles of a krnl.matmul in a krnl.iterate",
    ),
    Bad(
        # Without a permute the point loop %il sits between %ib and %jb, so the
        # iterate body (and the matmul in it) runs inside a loop the matmul erases.
        "nest_kernel_inside_its_loop",
        fn(
            "  %c0 = arith.constant 0 : index\n"
            "  %c8 = arith.constant 8 : index\n"
            "  %ii, %jj, %kk = krnl.define_loops 3\n"
            f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
            f"  %jb, %jl = krnl.block %jj 4 : ({L}) -> ({L}, {L})\n"
            "  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 8, "
            "%kk -> %k = 0 to 8) {\n"
            "    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb)"
            f" : ({L}, {L}) -> (index, index)\n"
            "    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kk), "
            "(%i0, %j0, %c0), (%c8, %c8, %c8) : memref<8x8xf32>, memref<8x8xf32>, "
            f"memref<8x8xf32>, ({L}, {L}, {L}) // ERR\n"
            "  }\n",
            args="%A: memref<8x8xf32>, %B: memref<8x8xf32>, %C: memref<8x8xf32>",
        ),
        "krnl.matmul computes loop %il itself, but that loop encloses the op",
        "krnl.matmul",
        "move them inside the iterated loops with krnl.permute",
    ),
)


def _diagnostic(case: Bad) -> pk.VerifyError:
    module = parse(case.source, "bad.mlir")
    with pytest.raises(VerifyError) as info:
        verify(module)
    return info.value


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_program_is_reported_at_the_op(case: Bad) -> None:
    err = _diagnostic(case)
    matching = [d for d in err.errors if case.message in d.message]
    assert matching, f"no diagnostic says {case.message!r}; got:\n{err.render()}"
    d = matching[0]
    assert d.location is not None
    assert (d.location.file, d.location.line, d.location.column) == (
        "bad.mlir",
        case.line,
        case.column,
    ), err.render()
    assert d.hint is not None and case.hint in d.hint, d.hint


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_reports_bad_program(case: Bad, tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(case.source)
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", str(path)], out=out, err=err) == 2
    text = err.getvalue()
    assert out.getvalue() == ""
    assert f"error: {path}:{case.line}:{case.column}: " in text
    lines = text.splitlines()
    shown = case.source.splitlines()[case.line - 1]
    at = lines.index(f"  {shown}")
    assert lines[at + 1].startswith("  " + " " * (case.column - 1) + "^"), text
    assert "hint: " in text
    assert "Traceback" not in text


@pytest.mark.slow  # a new process, ~1 s to import polykrnl (fast tier: tests/test_cli_numpy.py)
def test_no_traceback_in_a_separate_process(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == "iv_of_unused_point_loop")
    path = tmp_path / "bad.mlir"
    path.write_text(case.source)
    proc = subprocess.run(
        [sys.executable, "-m", "polykrnl.cli", "verify", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {path}:{case.line}:{case.column}: "), proc.stderr
    assert "^" in proc.stderr and "hint: " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_all_problems_in_program_order_first_is_the_message() -> None:
    source = fn(
        "  %ii = krnl.define_loops 1\n"
        f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
        f"  krnl.unroll %ib : {L}\n"
        "  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %N) {\n"
        "    %v = krnl.load %A[%i, %i] : memref<16xf32>\n"
        "  }\n"
        "  %w = memref.load %A[] : memref<16xf32>\n"
    )
    err = _diagnostic(Bad("order", source, "", "", ""))
    lines = [d.location.line for d in err.errors if d.location is not None]
    assert lines == [4, 6, 8], err.render()
    assert str(err).startswith("bad.mlir:4:3: krnl.unroll %ib needs a constant trip count")
    assert err.message == err.errors[0].message
    assert diagnostics(parse(source, "bad.mlir")) == list(err.errors)


def test_names_come_from_the_source_text() -> None:
    # xDSL keeps no name for %0#1 and shortens %t_1 to "t": messages use the source names.
    source = fn(
        "  %0:2 = krnl.define_loops 2\n"
        f"  krnl.unroll %0#0 : {L}\n"
        f"  %t_1, %p_1 = krnl.block %0#0 4 : ({L}) -> ({L}, {L})\n"
        "  krnl.iterate(%t_1, %p_1) with (%0#0 -> %i = 0 to 16, %0#1 -> %j = 0 to 4) {\n  }\n"
    )
    err = _diagnostic(Bad("names", source, "", "", ""))
    assert [d.message for d in err.errors] == [
        "krnl.unroll %0#0: the krnl.block at line 4 blocks %0#0 afterwards, so it has no "
        "loop left to unroll"
    ]
    assert (err.errors[0].hint or "").endswith(
        "unroll the tile handle %t_1 or the point handle %p_1 instead"
    )


def test_induction_variable_names_come_from_the_source_text() -> None:
    source = fn(
        "  %ii = krnl.define_loops 1\n"
        f"  %ib, %il = krnl.block %ii 4 : ({L}) -> ({L}, {L})\n"
        "  krnl.iterate(%ib) with (%ii -> %i_1 = 0 to 16) {\n"
        "    %v = krnl.load %A[%i_1] : memref<16xf32>\n  }\n"
    )
    err = _diagnostic(Bad("iv_names", source, "", "", ""))
    assert err.errors[0].message.startswith("%i_1 is used, but its loop never materializes")


# ------------------------------------------------------------------ valid programs

GEMM = """\
func.func @gemm(%A: memref<64x32xf32>, %B: memref<32x48xf32>, %C: memref<64x48xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kk) [0, 2, 1, 3, 4] : !krnl.loop, !krnl.loop, \
!krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel(%ib) {proc_bind = "spread"} : !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl, %kk) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 48, \
%kk -> %k = 0 to 32) {
    %a = krnl.load %A[%i, %k] : memref<64x32xf32>
    %b = krnl.load %B[%k, %j] : memref<32x48xf32>
    %c = krnl.load %C[%i, %j] : memref<64x48xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<64x48xf32>
  }
  return
}
"""

# The op reference's matmul panel example, with nested `with ()` iterates.
MATMUL_PANEL = """\
func.func @panel(%A: memref<40x60xf32>, %B: memref<60x80xf32>, %C: memref<40x80xf32>) {
  %f0 = arith.constant 0.0 : f32
  %c40 = arith.constant 40 : index
  %c60 = arith.constant 60 : index
  %c80 = arith.constant 80 : index
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ilb, %ill = krnl.block %il 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jlb, %jll = krnl.block %jl 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %klb, %kll = krnl.block %kl 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %ilb, %ill, %jb, %jlb, %jll, %kb, %klb, %kll) [0, 3, 6, 1, 4, 7, 2, 5, 8] \
: !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, \
!krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 40, %jj -> %j = 0 to 80, %kk -> %k = 0 to 60) {
    %i1, %j1 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> \
(index, index)
    %Cbuff = memref.alloca() : memref<10x8xf32>
    krnl.copy_to_tile_buffer %Cbuff, %C[%i1, %j1], %f0 : memref<10x8xf32>, memref<40x80xf32>
    krnl.iterate(%kb) with () {
      %k1 = krnl.get_induction_var_value(%kb) : (!krnl.loop) -> (index)
      %Abuff = memref.alloca() : memref<10x10xf32>
      %Bbuff = memref.alloca() : memref<10x8xf32>
      krnl.copy_to_tile_buffer %Abuff, %A[%i1, %k1], %f0 : memref<10x10xf32>, memref<40x60xf32>
      krnl.copy_to_tile_buffer %Bbuff, %B[%k1, %j1], %f0 : memref<10x8xf32>, memref<60x80xf32>
      krnl.iterate(%ilb, %jlb, %klb) with () {
        %i2, %j2, %k2 = krnl.get_induction_var_value(%ilb, %jlb, %klb) : \
(!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
        krnl.matmul %Abuff[%i1, %k1], %Bbuff[%k1, %j1], %Cbuff[%i1, %j1], (%ill, %jll, %kll), \
(%i2, %j2, %k2), (%c40, %c80, %c60) {computeTileSize = [5, 4, 5], simdize = false, \
unroll = false} : memref<10x10xf32>, memref<10x8xf32>, memref<10x8xf32>, \
(!krnl.loop, !krnl.loop, !krnl.loop)
      }
    }
    krnl.copy_from_tile_buffer %Cbuff, %C[%i1, %j1] : memref<10x8xf32>, memref<40x80xf32>
  }
  return
}
"""

TRIANGULAR = """\
func.func @tri(%A: memref<?x?xf32>, %N: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %A[%i, %j] : memref<?x?xf32>
      krnl.store %v, %A[%j, %i] : memref<?x?xf32>
    }
  }
  return
}
"""

# Unrolling needs a constant trip count: 16 by 4 has full tiles only.
ITER_ARGS = """\
func.func @sum(%A: memref<16xf32>) -> f32 {
  %z = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %il : !krnl.loop
  %r = krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) iter_args(%acc = %z) -> (f32) {
    %v = krnl.load %A[%i] : memref<16xf32>
    %s = arith.addf %acc, %v : f32
    krnl.yield %s : f32
  }
  return %r : f32
}
"""

# %m is computed inside a loop body: valid as a bound only inside the krnl.region.
REGION = """\
func.func @reg(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    "krnl.region"() ({
      %n = memref.dim %A, %c0 : memref<?xf32>
      %m = arith.addi %n, %i : index
      %jj = krnl.define_loops 1
      krnl.iterate(%jj) with (%jj -> %j = 0 to %m) {
        %v = krnl.load %A[%j] : memref<?xf32>
        krnl.store %v, %A[%j] : memref<?xf32>
      }
    }) : () -> ()
  }
  return
}
"""

# A strided loop: the point handle is unused, the body reads the tile start.
STRIDED = """\
func.func @strided(%A: memref<?xf32>, %N: index) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to %N) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %v = krnl.load %A[%t] : memref<?xf32>
    krnl.store %v, %A[%t] : memref<?xf32>
  }
  return
}
"""

VALID = {
    "gemm": GEMM,
    "matmul_panel": MATMUL_PANEL,
    "triangular": TRIANGULAR,
    "iter_args": ITER_ARGS,
    "region": REGION,
    "strided": STRIDED,
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_program_verifies(name: str, tmp_path: Path) -> None:
    module = parse(VALID[name], f"{name}.mlir")
    assert diagnostics(module) == []
    pk.verify(module)  # does not raise
    path = tmp_path / f"{name}.mlir"
    path.write_text(VALID[name])
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", str(path)], out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == "ok\n"


def test_cli_verifies_several_files_in_one_run(tmp_path: Path) -> None:
    # Each file gets its line or its located error; a bad file does not stop the others.
    good = sorted(VALID)[:2]
    paths = [tmp_path / f"{name}.mlir" for name in good]
    for path, name in zip(paths, good, strict=True):
        path.write_text(VALID[name])
    case = CASES[0]
    bad = tmp_path / "bad.mlir"
    bad.write_text(case.source)
    missing = tmp_path / "missing.mlir"
    argv = ["verify", str(paths[0]), str(bad), str(missing), str(paths[1])]
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, out=out, err=err) == 2
    assert out.getvalue() == f"{paths[0]}: ok\n{paths[1]}: ok\n"
    text = err.getvalue()
    assert f"error: {bad}:{case.line}:{case.column}: " in text
    assert f"error: {missing}: cannot read" in text
    assert text.rstrip().endswith("error: 2 of 4 files failed verification")
    assert "Traceback" not in text
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", *map(str, paths)], out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == "".join(f"{p}: ok\n" for p in paths)
    assert err.getvalue() == ""


def test_region_is_what_makes_the_bound_valid() -> None:
    # The same program without krnl.region: %m is no longer a valid symbol.
    source = REGION.replace('    "krnl.region"() ({\n', "").replace("    }) : () -> ()\n", "")
    found = diagnostics(parse(source, "r.mlir"))
    assert [d.message for d in found] == [
        "%m cannot be used as a symbol or dimension in the bound of loop %j"
    ]


def _semantic_corpus() -> list[Path]:
    return sorted(
        p
        for p in CORPUS.glob("*.mlir")
        if re.match(r"//\s*polykrnl:\s*semantic\b", p.read_text().lstrip())
    )


def test_corpus_has_semantic_programs() -> None:
    assert len(_semantic_corpus()) >= 10


@pytest.mark.parametrize("path", _semantic_corpus(), ids=lambda p: p.name)
def test_semantic_corpus_verifies(path: Path) -> None:
    found = diagnostics(load(path))
    assert found == [], "\n".join(d.render() for d in found)


# ------------------------------------------------------------------ trip counts


@pytest.mark.parametrize(
    ("ub", "size", "tile", "point", "divisor"),
    [
        ("16", 4, 4, 4, 4),  # divides: full tiles
        ("10", 4, 3, None, 1),  # partial last tile
        ("3", 4, 1, 3, 3),  # smaller than the tile: the trip count
        ("%N", 4, None, None, 1),  # symbolic, no known divisor
        ("affine_map<()[s0] -> (s0 * 8)>()[%N]", 8, None, 8, 8),  # 8*N by 8
        ("affine_map<()[s0] -> (s0 * 8)>()[%N]", 4, None, 4, 4),  # 8*N by 4
        ("%c12", 4, 3, 4, 4),  # an arith.constant bound counts as its value
    ],
)
def test_constant_trip_count(
    ub: str, size: int, tile: int | None, point: int | None, divisor: int
) -> None:
    source = fn(
        "  %c12 = arith.constant 12 : index\n"
        "  %ii = krnl.define_loops 1\n"
        f"  %ib, %il = krnl.block %ii {size} : ({L}) -> ({L}, {L})\n"
        f"  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to {ub}) {{\n  }}\n"
    )
    nest = build_nest(parse(source).functions[0])
    tile_loop = next(lp for lp in nest.loops() if lp.kind == "tile")
    point_loop = next(lp for lp in nest.loops() if lp.kind == "point")
    assert constant_trip_count(tile_loop) == tile
    assert constant_trip_count(point_loop) == point
    assert trip_count_divisor(point_loop) == divisor


def test_constant_trip_count_of_reblocked_and_shifted_loops() -> None:
    source = fn(
        "  %ii, %jj = krnl.define_loops 2\n"
        f"  %ib, %il = krnl.block %ii 8 : ({L}) -> ({L}, {L})\n"
        f"  %ilb, %ill = krnl.block %il 2 : ({L}) -> ({L}, {L})\n"
        "  krnl.iterate(%ib, %ilb, %ill, %jj) with (%ii -> %i = 0 to 32, "
        "%jj -> %j = affine_map<()[s0] -> (s0)>()[%N] to affine_map<()[s0] -> (s0 + 5)>()[%N]) "
        "{\n  }\n"
    )
    nest = build_nest(parse(source).functions[0])
    counts = {lp.name: constant_trip_count(lp) for lp in nest.loops()}
    # 32 by 8: 4 tiles of 8; the point loop (8) by 2: 4 tiles of 2; %j: N to N+5 is 5.
    assert counts == {"ib": 4, "ilb": 4, "ill": 2, "j": 5}


def _self_checked(case: Bad) -> bool:
    mod = pk.parse(case.source, "bad.mlir")
    return any(isinstance(op, SelfChecks) and any(op.problems()) for op in mod.op.walk())


# The cases whose problem the op finds in itself (the others need the loop nest).
SELF_CHECKED = [c for c in CASES if c.id.startswith(("matmul_", "copy_")) and _self_checked(c)]


def test_the_op_local_cases_are_found() -> None:
    assert len(SELF_CHECKED) >= 8


@pytest.mark.parametrize("case", SELF_CHECKED, ids=[c.id for c in SELF_CHECKED])
def test_op_local_checks_live_in_the_op_class(case: Bad) -> None:
    # The op's own verify_ (what xDSL runs) raises its first problem, and polykrnl's
    # verifier reports the problem once, with the source's names, not again as xDSL's.
    mod = pk.parse(case.source, "bad.mlir")
    for op in mod.op.walk():
        if isinstance(op, SelfChecks) and any(op.problems()):
            first, _ = next(iter(op.problems()))
            with pytest.raises(VerifyException, match=re.escape(first)):
                op.verify(verify_nested_ops=False)
    err = _diagnostic(case)
    assert sum(case.message in d.message for d in err.errors) == 1, err.render()

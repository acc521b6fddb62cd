"""The MLIR target: a Schedule as standard MLIR (`scf`, `arith`, `math`, `memref`), run
natively through LLVM 19's tools (`mlir-opt-19`, `mlir-translate-19`, `clang-19`).

`to_mlir(schedule)` writes the function (:mod:`.emit`, the ops through the op table
:data:`MLIR` of :mod:`.ops`) and gives an :class:`MlirKernel`, whose call compiles and
loads it (:mod:`.native`).
"""

from polykrnl.targets.mlir.kernel import MlirKernel, to_mlir
from polykrnl.targets.mlir.native import missing_tools
from polykrnl.targets.mlir.ops import MLIR

__all__ = ["MLIR", "MlirKernel", "missing_tools", "to_mlir"]

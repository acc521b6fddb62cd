"""The MLIR target's entry into the Target protocol (polykrnl.targets)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from xdsl.ir import Operation

from polykrnl.targets.mlir.kernel import MlirKernel, to_mlir
from polykrnl.targets.mlir.native import INSTALL_HINT, missing_tools
from polykrnl.targets.mlir.ops import MLIR, STRUCTURAL
from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class MlirTarget:
    name: str = "mlir"
    label: str = "MLIR"
    # the options `build` takes, with their defaults
    defaults: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({"parallel": True, "check_bounds": True})
    )
    install_hint: str = INSTALL_HINT

    def supports(self, op: type[Operation]) -> bool:
        return op in MLIR or op in STRUCTURAL

    def missing(self) -> str | None:
        # The MLIR text is written anywhere; a kernel runs only with the tools (its call
        # says so), so building one never needs them.
        return None

    def tools_missing(self) -> list[str]:
        return missing_tools()

    def build(self, sched: Schedule, **options: Any) -> MlirKernel:
        return to_mlir(sched, **options)


TARGET = MlirTarget()

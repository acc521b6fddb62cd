"""The NumPy target: vectorized Python over NumPy arrays (polykrnl.codegen)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from xdsl.ir import Operation

from polykrnl.codegen.structural_ops import written
from polykrnl.targets.numpy.kernel import NumpyKernel, to_numpy
from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class NumpyTarget:
    name: str = "numpy"
    label: str = "NumPy"
    # the options `build` takes, with their defaults
    defaults: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType(
            {"vectorize": True, "reassociate": True, "parallel": False, "check_bounds": True}
        )
    )
    install_hint: str = ""

    def supports(self, op: type[Operation]) -> bool:
        return written(op)

    def missing(self) -> str | None:
        return None

    def build(self, sched: Schedule, **options: Any) -> NumpyKernel:
        return to_numpy(sched, **options)


TARGET = NumpyTarget()

"""The PTO target: C++ for the Ascend tile ISA, with a NumPy model (polykrnl.targets.pto)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from xdsl.ir import Operation

from polykrnl.targets.pto.kernel import PtoKernel, to_pto
from polykrnl.targets.pto.krnl_ops import RECOGNIZED
from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class PtoTarget:
    name: str = "pto"
    label: str = "PTO"
    # the options `build` takes, with their defaults
    defaults: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType(
            {"arch": "a2a3", "params": None, "double_buffer": True}
        )
    )
    install_hint: str = ""

    def supports(self, op: type[Operation]) -> bool:
        return op in RECOGNIZED

    def missing(self) -> str | None:
        return None  # the C++ is written anywhere; its NumPy model runs anywhere

    def build(self, sched: Schedule, **options: Any) -> PtoKernel:
        arch = options.pop("arch", "a2a3")
        # Sizes come as a mapping or as sorted pairs (hashable, for the kernel cache).
        params = options.pop("params", None)
        return to_pto(sched, arch, None if params is None else dict(params), **options)


TARGET = PtoTarget()

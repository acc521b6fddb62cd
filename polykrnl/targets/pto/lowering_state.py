"""What the lowering of one schedule keeps while it walks the nests: the kernel's tensors,
the tiles declared so far (in declaration order, which is their buffer order), the tmp tiles
still to size, and the refusal every pattern raises."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import sympy  # type: ignore[import-untyped]
from xdsl.ir import SSAValue

from polykrnl.errors import PtoError
from polykrnl.poly import Statement
from polykrnl.targets.pto.dtypes import DType
from polykrnl.targets.pto.program import ConvForm, TensorParam
from polykrnl.targets.pto.types import Arch, TileType
from polykrnl.transforms.core import LoopInfo, Schedule

__all__ = ["Axis", "DeclaredTile", "KernelBuilder", "lowering_error", "round_up"]


def lowering_error(s: Statement | None, message: str, hint: str | None = None) -> PtoError:
    """The refusal of a pattern, at statement `s` (None: the caller names the nest's first)."""
    where = f"{s.label}: " if s is not None else ""
    return PtoError(
        f"PTO code generation: {where}{message}",
        location=s.location if s is not None else None,
        hint=hint or "run it with to_numpy() or pk.run_reference, or rewrite the nest",
    )


@dataclass
class Axis:
    """One original loop of the nest, as a tile axis."""

    origin: str
    start: sympy.Expr  # global index of the tile's first element along the axis
    extent: sympy.Expr  # elements of this tile along the axis (partial at the edges)
    size: int  # static extent of tiles along the axis (the block size, or the whole range)
    tile_loop: LoopInfo | None  # None: not blocked, the tile covers the whole range


@dataclass
class DeclaredTile:
    """A tile of the kernel; its type may still change (a tile buffer learns its pad value)."""

    name: str
    type: TileType
    kind: str  # "tile", "col" (one value per row), "mat", "left", "right", "acc"


@dataclass
class KernelBuilder:
    """The kernel under construction: tensors, tiles in declaration order, tmp needs."""

    sched: Schedule
    arch: Arch
    params: Mapping[str, int]
    tensors: dict[str, TensorParam]
    tensor_of_value: dict[SSAValue, str]
    tiles: list[DeclaredTile] = field(default_factory=list)
    tmp_needs: dict[str, tuple[str, DType, Statement, str, str]] = field(default_factory=dict)
    tmp_static: dict[str, tuple[int, int]] = field(default_factory=dict)  # static rows, cols
    shaping: set[str] = field(default_factory=set)  # params that fixed a static tile extent
    # tmp tiles of layout conversions: their form (static shapes) and element type
    tmp_conv: dict[str, tuple[ConvForm, DType]] = field(default_factory=dict)
    counter: int = 0

    def snapshot(self) -> KernelBuilder:
        """A copy of what lowering a nest changes, to undo a failed attempt (`restore`)."""
        return replace(
            self, tiles=list(self.tiles), tmp_needs=dict(self.tmp_needs),
            tmp_static=dict(self.tmp_static), shaping=set(self.shaping),
            tmp_conv=dict(self.tmp_conv),
        )  # fmt: skip

    def restore(self, state: KernelBuilder) -> None:
        self.tiles, self.tmp_needs, self.tmp_static = state.tiles, state.tmp_needs, state.tmp_static
        self.shaping, self.tmp_conv, self.counter = state.shaping, state.tmp_conv, state.counter

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}{self.counter}"

    def tile(self, base: str, tt: TileType, kind: str) -> str:
        name = self.fresh(base)
        self.tiles.append(DeclaredTile(name, tt, kind))
        return name


def round_up(n: int, m: int) -> int:
    return -(-n // m) * m

"""The Vec tiles of a tile-wise nest: one row axis, one column range, a static shape and a
valid shape that is static when every tile has it (else set per tile with SetValid); and
the tmp tiles their instructions take."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

import sympy  # type: ignore[import-untyped]
from xdsl.ir import SSAValue

from polykrnl.poly import Statement
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.dtypes import ALIGN_BYTES, DType
from polykrnl.targets.pto.loop_bounds import static_value
from polykrnl.targets.pto.lowering_state import Axis, KernelBuilder, lowering_error, round_up
from polykrnl.targets.pto.program import Instr, Item, SetValid
from polykrnl.targets.pto.types import BLayout, Loc, TileType

__all__ = ["TileValue", "TilewiseNest", "check_same_dtype", "tmp_tile_for", "transposed_tile"]


@dataclass
class TileValue:
    """What an SSA value is on the tile: a tile, a column of per-row values, or a scalar."""

    kind: str  # "tile", "col" (one value per row), "row" (one per column), "scalar"
    tile: str = ""
    scalar: float | int = 0.0


@dataclass
class TilewiseNest:
    """A nest run tile-wise: its axes, the items emitted so far and what each value is."""

    b: KernelBuilder
    axes: dict[str, Axis]
    row: Axis
    col: Axis | None
    dt: DType | None = None
    items: list[Item] = field(default_factory=list)
    env: dict[SSAValue, TileValue] = field(default_factory=dict)
    virtual: dict[str, TileValue] = field(default_factory=dict)  # virtual array -> value
    inits: dict[str, float | int] = field(default_factory=dict)  # iter_args initial constants
    col_names: set[str] = field(default_factory=set)  # the column loops (one range)
    # Each nest's row and column loops -> the axes' (several nests when fused by
    # nest_plan.lower_group, several column loops in one nest).
    alias: dict[str, str] = field(default_factory=dict)
    fused: bool = False
    temps: Set[str] = frozenset()  # function-level temporaries, kept in UB
    # (array, subscript loops) -> the value a statement of this tile stored there: read
    # back from UB instead of loaded from GM (temporaries live only there)
    stored: dict[tuple[str, tuple[str, ...]], TileValue] = field(default_factory=dict)
    # (tensor, subscript loops) -> the tile a statement of this tile loaded: loaded once
    loaded: dict[tuple[str, tuple[str, ...]], TileValue] = field(default_factory=dict)
    # (tensor, subscript loops) -> the TSTORE of the last store there in this tile
    store_instr: dict[tuple[str, tuple[str, ...]], Instr] = field(default_factory=dict)

    def canon(self, loop: str) -> str:
        """The axis a (fused) nest's original loop runs along."""
        return self.alias.get(loop, loop)

    def shape(self) -> tuple[int, int]:
        assert self.dt is not None
        per_block = ALIGN_BYTES // self.dt.size
        cols = self.col.size if self.col is not None else 1
        # Rows rounded like a column tile's (its rows fill 32-byte blocks): the row
        # reductions and expansions need the same static row count on both sides.
        return round_up(self.row.size, per_block), round_up(cols, per_block)

    def valid(self) -> tuple[sympy.Expr, sympy.Expr]:
        cols = self.col.extent if self.col is not None else sympy.Integer(1)
        return self.row.extent, cols

    def new_tile(self, base: str) -> str:
        rows, cols = self.shape()
        tiled = (
            self.row.tile_loop is not None,
            self.col is not None and self.col.tile_loop is not None,
        )
        return self.declare(base, rows, cols, self.valid(), tiled, BLayout.RowMajor, "tile")

    def new_col(self, base: str) -> str:
        assert self.dt is not None
        rows = round_up(self.row.size, ALIGN_BYTES // self.dt.size)
        valid = (self.row.extent, sympy.Integer(1))
        tiled = (self.row.tile_loop is not None, False)
        return self.declare(base, rows, 1, valid, tiled, BLayout.ColMajor, "col")

    def new_row(self, base: str) -> str:
        """One row of per-column values (`V[j]`): a 1 x columns row-major tile."""
        assert self.dt is not None and self.col is not None
        cols = round_up(self.col.size, ALIGN_BYTES // self.dt.size)
        valid = (sympy.Integer(1), self.col.extent)
        tiled = (False, self.col.tile_loop is not None)
        return self.declare(base, 1, cols, valid, tiled, BLayout.RowMajor, "row")

    def declare(
        self,
        base: str,
        rows: int,
        cols: int,
        valid: tuple[sympy.Expr, sympy.Expr],
        tiled: tuple[bool, bool],
        layout: BLayout,
        kind: str,
    ) -> str:
        """A Vec tile of the nest: a valid dimension is static when it is the same on
        every tile (not blocked, constant), else set per iteration with SetValid."""
        assert self.dt is not None
        static = [None if t else static_value(v, {}) for v, t in zip(valid, tiled, strict=True)]
        tt = TileType(Loc.Vec, self.dt, rows, cols, layout, static[0], static[1])
        name = self.b.tile(base, tt, kind)
        if None in static:
            self.items.append(
                SetValid(
                    name,
                    valid[0] if static[0] is None else None,
                    valid[1] if static[1] is None else None,
                )
            )
        return name


def check_same_dtype(t: TilewiseNest, s: Statement, dt: DType) -> None:
    if t.dt is None:
        t.dt = dt
    elif t.dt != dt:
        raise lowering_error(
            s, f"values of {t.dt} and {dt} in one nest (PTO ops keep one element type)"
        )


def transposed_tile(t: TilewiseNest, s: Statement, base: str) -> str:
    """A tile of the transposed shape (cols x rows) for a TLOAD before TTRANS."""
    assert t.dt is not None and t.col is not None
    cols = round_up(t.row.size, ALIGN_BYTES // t.dt.size)
    valid = (t.col.extent, t.row.extent)
    tiled = (t.col.tile_loop is not None, t.row.tile_loop is not None)
    return t.declare(base, t.col.size, cols, valid, tiled, BLayout.RowMajor, "tile")


def tmp_tile_for(
    t: TilewiseNest, s: Statement, instr: str, rows: Axis, cols: Axis | None
) -> str | None:
    """A tmp tile for `instr` whose source tile has `rows` x `cols` (None: one column), at
    the nest's static tile size (None when the instruction takes none); its symbolic size
    is derived over the tiles from the same axes."""
    assert t.dt is not None
    rule = tmp_rules.TMP_RULES.get(instr)
    if rule is None:
        return None
    sizes: dict[str, int] = {}
    if "valid_row" in rule.params:
        sizes["valid_row"] = rows.size
    if "valid_col" in rule.params:
        sizes["valid_col"] = cols.size if cols is not None else 1
    tt = tmp_rules.tmp_tile(instr, t.b.arch, dtype=t.dt, **sizes)
    name = t.b.tile(f"{instr.lower()}_tmp", tt, "tmp")
    # tmp_sizes reads the tile's extents by the statement's own dimension names (a nest
    # whose loops reuse another nest's names has origins i_2, j_2 but dimensions i, j)
    own = {t.canon(o): d for o, d in zip(s.dim_origins or s.dims, s.dims, strict=True)}
    row_dim = own.get(rows.origin, rows.origin)
    col_dim = own.get(cols.origin, cols.origin) if cols is not None else ""
    t.b.tmp_needs[name] = (instr, t.dt, s, row_dim, col_dim)
    t.b.tmp_static[name] = (rows.size, cols.size if cols is not None else 1)
    return name

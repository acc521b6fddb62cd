"""The instruction table (targets/pto/instructions.py) against the code that reads it: every
entry runs in the NumPy model on a small tile (a computing one computes its own
``semantics``), its forms and tmp facts agree with the rest of the table, and the op-class
maps of krnl_ops are the table's. An entry added without a model, a setup here for its kind
or a tmp rule makes one of these fail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np
import pytest
from xdsl.dialects import arith

from polykrnl.errors import TileConstraintError
from polykrnl.targets.pto import krnl_ops, tmp_rules
from polykrnl.targets.pto.instructions import (
    BY_CLASS_KINDS,
    COMPUTE_KINDS,
    INSTRUCTIONS,
    TABLE,
    Instruction,
    Kind,
    by_op_class,
)
from polykrnl.targets.pto.interpret import run_instr, simulate
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Program,
    Scalar,
    TensorParam,
    plan_offsets,
)
from polykrnl.targets.pto.sim import SimTile
from polykrnl.targets.pto.types import (
    TMP_INSTRUCTIONS,
    BLayout,
    Loc,
    PadValue,
    TileType,
    acc_tile,
    left_tile,
    right_tile,
    vec_tile,
)

Array = np.ndarray[Any, Any]
RNG = np.random.default_rng(11)

TILE = vec_tile("f32", 8, 16)
COL = TileType(Loc.Vec, "f32", 8, 1, BLayout.ColMajor, None, 1)  # one value per row
ROW = vec_tile("f32", 1, 16)  # one value per column
SCALAR = 1.5


def _tile(name: str, tt: TileType) -> SimTile:
    # positive values away from 0: exp, log, sqrt, reciprocals and divisions are all defined
    t = SimTile.new(name, tt)
    t.data[...] = RNG.uniform(0.5, 2.0, t.data.shape).astype(t.data.dtype)
    return t


@dataclass(frozen=True)
class Case:
    """Tiles, the instruction on them, and what its destination must then hold (computed
    from the inputs before the run)."""

    tiles: dict[str, SimTile]
    instr: Instr
    want: Array


def _run(c: Case) -> Array:
    prog = Program("k", (), (), plan_offsets([(n, t.type) for n, t in c.tiles.items()]), ())
    run_instr(prog, c.instr, c.tiles, {})
    assert isinstance(c.instr.dst, str)
    return c.tiles[c.instr.dst].region()


def _unary(i: Instruction) -> Case:
    a, d = _tile("a", TILE), _tile("d", TILE)
    assert i.semantics is not None
    return Case({"a": a, "d": d}, Instr(i.name, "d", ("a",)), i.semantics(a.region().copy()))


def _binary(i: Instruction) -> Case:
    a, b, d = _tile("a", TILE), _tile("b", TILE), _tile("d", TILE)
    assert i.semantics is not None
    want = i.semantics(a.region().copy(), b.region().copy())
    return Case({"a": a, "b": b, "d": d}, Instr(i.name, "d", ("a", "b")), want)


def _scalar(i: Instruction) -> Case:
    a, d = _tile("a", TILE), _tile("d", TILE)
    assert i.semantics is not None
    want = i.semantics(a.region().copy(), np.float32(SCALAR))
    return Case({"a": a, "d": d}, Instr(i.name, "d", ("a", Scalar(SCALAR))), want)


def _rowreduce(i: Instruction) -> Case:
    s, d = _tile("s", TILE), _tile("d", COL)
    tmp = _tile("tmp", tmp_rules.tmp_tile(i.name, "a2a3", dtype="f32", valid_row=8, valid_col=16))
    assert i.semantics is not None
    want = i.semantics(s.region().astype(np.float64))[:, None]
    return Case({"s": s, "d": d, "tmp": tmp}, Instr(i.name, "d", ("s",), tmp="tmp"), want)


def _rowexpand_bin(i: Instruction) -> Case:
    f, c, d = _tile("f", TILE), _tile("c", COL), _tile("d", TILE)
    assert i.semantics is not None
    want = i.semantics(f.region().copy(), np.repeat(c.region(), 16, axis=1))
    return Case({"f": f, "c": c, "d": d}, Instr(i.name, "d", ("f", "c")), want)


def _colexpand_bin(i: Instruction) -> Case:
    f, r, d = _tile("f", TILE), _tile("r", ROW), _tile("d", TILE)
    assert i.semantics is not None
    want = i.semantics(f.region().copy(), np.repeat(r.region(), 8, axis=0))
    return Case({"f": f, "r": r, "d": d}, Instr(i.name, "d", ("f", "r")), want)


def _rowexpand(i: Instruction) -> Case:
    s, d = _tile("s", TILE), _tile("d", TILE)
    want = np.repeat(s.data[:, :1], 16, axis=1)
    return Case({"s": s, "d": d}, Instr(i.name, "d", ("s",)), want)


def _expands(i: Instruction) -> Case:
    d = _tile("d", TILE)
    return Case({"d": d}, Instr(i.name, "d", (Scalar(SCALAR),)), np.full((8, 16), SCALAR))


def _trans(i: Instruction) -> Case:
    sq = vec_tile("f32", 16, 16)
    s, d = _tile("s", sq), _tile("d", sq)
    tmp = _tile("tmp", tmp_rules.tmp_tile(i.name, "a2a3", dtype="f32", valid_row=16, valid_col=16))
    return Case({"s": s, "d": d, "tmp": tmp}, Instr(i.name, "d", ("s",), tmp="tmp"), s.data.T)


def _mov(i: Instruction) -> Case:
    s, d = _tile("s", TILE), _tile("d", TILE)
    return Case({"s": s, "d": d}, Instr(i.name, "d", ("s",)), s.data.copy())


def _matmul(i: Instruction) -> Case:
    lt, rt = _tile("l", left_tile("f16", 16, 16, "a2a3")), _tile("r", right_tile("f16", 16, 16))
    c = _tile("c", acc_tile("f32", 16, 16))
    want = lt.data.astype(np.float64) @ rt.data.astype(np.float64)
    if i.kind == "matmul_acc":
        want = want + c.data
    return Case({"l": lt, "r": rt, "c": c}, Instr(i.name, "c", ("l", "r")), want)


def _fillpad(i: Instruction) -> Case:
    s = _tile("s", vec_tile("f32", 8, 16, 3, 7))
    d = _tile("d", vec_tile("f32", 8, 16, pad=PadValue.Zero))
    want = np.zeros((8, 16))
    want[:3, :7] = s.region()
    return Case({"s": s, "d": d}, Instr(i.name, "d", ("s",)), want)


_CASES: dict[Kind, Callable[[Instruction], Case]] = {
    "unary": _unary,
    "binary": _binary,
    "scalar": _scalar,
    "rowreduce": _rowreduce,
    "rowexpand_bin": _rowexpand_bin,
    "colexpand_bin": _colexpand_bin,
    "rowexpand": _rowexpand,
    "expands": _expands,
    "trans": _trans,
    "mov": _mov,
    "matmul": _matmul,
    "matmul_acc": _matmul,
    "fillpad": _fillpad,
}
#: Global memory is the simulator's, not a tile's: these two run as one program.
_GLOBAL_KINDS = {"load", "store"}


def test_every_kind_has_a_case() -> None:
    assert set(_CASES) | _GLOBAL_KINDS == set(get_args(Kind))


@pytest.mark.parametrize("info", TABLE, ids=[i.name for i in TABLE])
def test_every_instruction_runs_in_the_model(info: Instruction) -> None:
    if info.kind in COMPUTE_KINDS:
        assert info.semantics is not None, f"{info.name} has no NumPy model"
    if info.kind in _GLOBAL_KINDS:
        _load_store_round_trip()
        return
    case = _CASES[info.kind](info)
    got = _run(case)
    assert got.shape == case.want.shape
    np.testing.assert_allclose(got, case.want, rtol=2e-3 if info.kind == "matmul" else 1e-6)


def _load_store_round_trip() -> None:
    a, b = TensorParam("A", "f32", (8, 16)), TensorParam("B", "f32", (8, 16))
    kinds = {k: [i.name for i in TABLE if i.kind == k] for k in _GLOBAL_KINDS}
    (load,), (store,) = kinds["load"], kinds["store"]
    body = (
        Instr(load, "t", (GlobalView.of(a, 0, 0, 8, 16),)),
        Instr(store, GlobalView.of(b, 0, 0, 8, 16), ("t",)),
    )
    prog = Program("k", (a, b), (), plan_offsets([("t", TILE)]), body)
    x = RNG.uniform(0.5, 2.0, (8, 16)).astype(np.float32)
    y = np.zeros_like(x)
    tiles = simulate(prog, {"A": x, "B": y}, check_races=False)
    np.testing.assert_array_equal(tiles["t"].data, x)
    np.testing.assert_array_equal(y, x)


def test_float_only_instructions_refuse_integer_tiles() -> None:
    for info in TABLE:
        if not info.float_only:
            continue
        a, d = _tile("a", vec_tile("i32", 8, 16)), _tile("d", vec_tile("i32", 8, 16))
        case = Case({"a": a, "d": d}, Instr(info.name, "d", ("a",)), a.data)
        with pytest.raises(TileConstraintError, match="takes float tiles"):
            _run(case)


# --------------------------------------------------------------------------- the table itself


def test_op_class_maps_are_the_tables() -> None:
    maps = {
        "unary": krnl_ops.UNARY_INSTR,
        "binary": krnl_ops.BINARY_INSTR,
        "rowreduce": krnl_ops.ROW_REDUCE_INSTR,
    }
    assert set(maps) == BY_CLASS_KINDS
    for kind, m in maps.items():
        want = {cls: i.name for i in TABLE if i.kind == kind for cls in i.implements}
        assert m == want, kind
        assert set(m) <= krnl_ops.RECOGNIZED
    # the maps are not empty by accident: what onnx-mlir's softmax needs is there
    assert krnl_ops.BINARY_INSTR[arith.MaxnumfOp] == "TMAX"
    assert krnl_ops.ROW_REDUCE_INSTR[arith.AddfOp] == "TROWSUM"


def test_two_instructions_claiming_one_op_class_are_refused() -> None:
    add = INSTRUCTIONS["TADD"]
    twin = Instruction("TADD2", "binary", semantics=add.semantics, implements=add.implements)
    with pytest.raises(ValueError, match="AddfOp is implemented by TADD and TADD2"):
        by_op_class("binary", (add, twin))


def test_an_entry_without_semantics_is_refused() -> None:
    with pytest.raises(ValueError, match="needs semantics"):
        Instruction("TFOO", "unary")
    with pytest.raises(ValueError, match="no lowering pattern"):
        Instruction("TFOOS", "scalar", semantics=np.add, implements=(arith.AddfOp,))


def test_forms_compute_what_their_binary_computes() -> None:
    for info in TABLE:
        for form in (info.scalar_form, info.rowexpand_form, info.colexpand_form):
            if form is not None:
                assert INSTRUCTIONS[form].semantics is info.semantics, (info.name, form)
        if info.combine is not None:
            # combining partial reductions must not change them: start at the identity
            f = INSTRUCTIONS[info.combine].semantics
            assert f is not None and info.semantics is not None
            x = np.array([[0.5, 2.0, 1.0]])
            assert f(info.semantics(x), np.array([info.identity])) == info.semantics(x)


def test_tmp_facts_agree_with_tmp_rules() -> None:
    for info in TABLE:
        if info.tmp != "none":
            assert info.name in tmp_rules.TMP_RULES, info.name
            assert info.name in TMP_INSTRUCTIONS, info.name


def test_only_stores_and_moves_take_their_pipe_from_the_tiles() -> None:
    assert {i.kind for i in TABLE if i.pipe is None} == {"store", "mov"}

"""Which ops each stage of polykrnl supports: the table `polykrnl ops` prints.

The table is read from the stages' own op tables (:mod:`polykrnl.dialect.registry`),
so it cannot disagree with what the stages do: a row says the op parses (its
class is in the parsing context, with its structural checks in the class) and,
per stage, whether the stage has an entry for its class; per code generation target
(:mod:`polykrnl.targets`), whether the target translates it (the NumPy target also
handles loops and memory ops by their structure,
:data:`polykrnl.codegen.structural_ops.STRUCTURAL_OPS`; Numba refuses a few of those;
PTO's column is what its patterns recognize).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from xdsl.ir import Operation

# The stages' op tables fill as their modules load.
import polykrnl.interpreter
import polykrnl.poly  # noqa: F401
from polykrnl.dialect.registry import TABLES
from polykrnl.display import html_table
from polykrnl.reader.parser import context
from polykrnl.targets import registry


@dataclass(frozen=True)
class OpSupport:
    """One op and the stages that support it."""

    name: str
    stages: tuple[tuple[str, bool], ...]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def supports(self, stage: str) -> bool:
        return dict(self.stages)[stage]


@dataclass(frozen=True)
class SupportTable:
    """Every op polykrnl parses, by name, with what each stage does with it.

    `table[name]` is the op's row, `str(table)` the text `polykrnl ops` prints,
    `table.to_json()` the same as data.

    Examples
    --------
    >>> import polykrnl as pk
    >>> row = pk.supported_ops()["affine.parallel"]
    >>> dict(row.stages)
    {'interpret': False, 'poly': True, 'numpy': False, 'numba': False, 'pto': False, 'mlir': False}
    """

    stages: tuple[str, ...]
    rows: tuple[OpSupport, ...]

    def __getitem__(self, name: str) -> OpSupport:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"polykrnl does not parse an op named {name!r}")

    def to_json(self) -> str:
        return json.dumps(
            [{"op": r.name, **{s: ok for s, ok in r.stages}} for r in self.rows], indent=1
        )

    def __str__(self) -> str:
        width = max(len(r.name) for r in self.rows)
        head = "op".ljust(width) + "  parse  " + "  ".join(self.stages)
        lines = [head]
        for r in self.rows:
            marks = "  ".join(("yes" if ok else "-").ljust(len(s)) for s, ok in r.stages)
            lines.append(f"{r.name.ljust(width)}  yes    {marks}".rstrip())
        counts = ", ".join(f"{s} {sum(r.supports(s) for r in self.rows)}" for s in self.stages)
        lines.append(f"{len(self.rows)} ops parse; supported by {counts}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return html_table(
            ["op", "parse", *self.stages],
            [[r.name, "yes", *("yes" if ok else "" for _, ok in r.stages)] for r in self.rows],
        )


#: the analyses in pipeline order (the first columns of the table; the targets follow)
_ANALYSES = ("interpret", "poly")


def supported_ops() -> SupportTable:
    """The table of ops x stages: every op class that parses, and who supports it.

    `polykrnl ops` prints the same table. The stages are the reference interpreter, the
    polyhedral model, then one column per code generation target
    (:func:`polykrnl.targets.registry`, each from its own op table).

    Examples
    --------
    >>> import polykrnl as pk
    >>> table = pk.supported_ops()
    >>> table.stages
    ('interpret', 'poly', 'numpy', 'numba', 'pto', 'mlir')
    >>> table["krnl.matmul"].supports("numpy"), table["krnl.matmul"].supports("pto")
    (True, True)
    """
    ops: list[type[Operation]] = sorted(context().loaded_ops, key=lambda o: o.name)
    tables = [t for t in TABLES if t.stage in _ANALYSES]
    tables.sort(key=lambda t: _ANALYSES.index(t.stage))
    stages = (*(t.stage for t in tables), *registry())
    rows = tuple(
        OpSupport(
            op.name,
            (
                *((t.stage, op in t) for t in tables),
                *((name, target.supports(op)) for name, target in registry().items()),
            ),
        )
        for op in ops
        if not op.name.startswith("builtin.")
    )
    return SupportTable(stages, rows)

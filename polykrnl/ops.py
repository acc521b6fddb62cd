"""Which ops each stage of polykrnl supports: the table `polykrnl ops` prints.

The table is read from the stages' own op tables (:mod:`polykrnl.model.registry`),
so it cannot disagree with what the stages do: a row says the op parses (its
class is in the parsing context, with its structural checks in the class) and,
per stage, whether the stage has an entry for its class. NumPy code generation
also handles loops and memory ops by their structure
(:data:`polykrnl.codegen.structural_ops.STRUCTURAL_OPS`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from xdsl.ir import Operation

# The stages' op tables fill as their modules load.
import polykrnl.codegen.numpy_ops
import polykrnl.model.interpreter
import polykrnl.model.poly  # noqa: F401
from polykrnl.codegen.structural_ops import STRUCTURAL_OPS
from polykrnl.display import html_table
from polykrnl.model.parser import context
from polykrnl.model.registry import TABLES
from polykrnl.targets.mlir.ops import STRUCTURAL as MLIR_STRUCTURAL


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
    """Every op polykrnl parses, by name, with what each stage does with it."""

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


#: the stages in pipeline order (the columns of the table)
_PIPELINE = ("interpret", "poly", "numpy", "mlir")


def supported_ops() -> SupportTable:
    """The table of ops x stages: every op class that parses, and who supports it."""
    ops: list[type[Operation]] = sorted(context().loaded_ops, key=lambda o: o.name)
    tables = sorted(TABLES, key=lambda t: _PIPELINE.index(t.stage))
    stages = tuple(t.stage for t in tables)
    structural = {"numpy": frozenset(STRUCTURAL_OPS), "mlir": MLIR_STRUCTURAL}
    rows = tuple(
        OpSupport(
            op.name,
            tuple((t.stage, op in t or op in structural.get(t.stage, ())) for t in tables),
        )
        for op in ops
        if not op.name.startswith("builtin.")
    )
    return SupportTable(stages, rows)

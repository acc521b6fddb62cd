"""Krnl's loop ops: define_loops, the recipe (block, permute, parallel, unroll), iterate and its
scopes (yield, terminate, region, movable), get_induction_var_value, entry points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    Region,
    SSAValue,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------- types
from polykrnl.dialect.krnl.bounds import parse_bound, print_bound
from polykrnl.dialect.krnl.types import INDEX, LOOP, LoopType

# --------------------------------------------------------------------- loop recipe


@irdl_op_definition
class DefineLoopsOp(IRDLOperation):
    """`%a, %b = krnl.define_loops 2`."""

    name = "krnl.define_loops"

    num_loops = prop_def(IntegerAttr[IntegerType])
    loops = var_result_def(LoopType)

    def __init__(self, count: int):
        super().__init__(
            result_types=[[LOOP] * count],
            properties={"num_loops": IntegerAttr(count, i64)},
        )

    def verify_(self) -> None:
        if self.num_loops.value.data != len(self.loops):
            raise VerifyException(
                f"krnl.define_loops {self.num_loops.value.data} defines {len(self.loops)} handles"
            )

    @classmethod
    def parse(cls, parser: Parser) -> DefineLoopsOp:
        pos = parser.pos
        count = parser.parse_integer(allow_boolean=False, allow_negative=False)
        if count < 0:
            parser.raise_error("krnl.define_loops needs a non-negative loop count", pos)
        attrs = parser.parse_optional_attr_dict()
        op = cls(count)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {len(self.loops)}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class BlockOp(IRDLOperation):
    """`%t, %p = krnl.block %L 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)`."""

    name = "krnl.block"

    loop = operand_def()
    tile_size = prop_def(IntegerAttr[IntegerType])
    loop_block = result_def()
    loop_local = result_def()

    def __init__(self, loop: SSAValue | Operation, tile_size: int):
        super().__init__(
            operands=[loop],
            result_types=[LOOP, LOOP],
            properties={"tile_size": IntegerAttr(tile_size, i64)},
        )

    @property
    def size(self) -> int:
        return self.tile_size.value.data

    # Hand-written for the same reason as permute: `4 : (...)` is a typed literal.
    @classmethod
    def parse(cls, parser: Parser) -> BlockOp:
        pos = parser.pos
        loop_u = parser.parse_unresolved_operand()
        size = parser.parse_integer(allow_boolean=False)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ftype = parser.parse_function_type()
        if len(ftype.inputs.data) != 1 or len(ftype.outputs.data) != 2:
            parser.raise_error(
                "krnl.block has the type (!krnl.loop) -> (!krnl.loop, !krnl.loop)", pos
            )
        (loop,) = parser.resolve_operands([loop_u], ftype.inputs.data, pos)
        op = cls.build(
            operands=[loop],
            result_types=list(ftype.outputs.data),
            properties={"tile_size": IntegerAttr(size, i64)},
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.loop)
        printer.print_string(f" {self.size}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_attribute(self.loop.type)
        printer.print_string(") -> (")
        printer.print_list(self.result_types, printer.print_attribute)
        printer.print_string(")")


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """`krnl.permute(%a, %b) [1, 0] : !krnl.loop, !krnl.loop` (scatter map)."""

    name = "krnl.permute"

    loops = var_operand_def()
    map = prop_def(ArrayAttr[IntegerAttr[IntegerType]])

    def __init__(self, loops: Sequence[SSAValue | Operation], perm: Sequence[int]):
        super().__init__(
            operands=[list(loops)],
            properties={"map": ArrayAttr([IntegerAttr(p, i64) for p in perm])},
        )

    # Hand-written: a declarative `$map` would read the `:` that follows the
    # array as the start of a typed integer literal.
    @classmethod
    def parse(cls, parser: Parser) -> PermuteOp:
        pos = parser.pos
        unresolved = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        perm = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        op = cls(parser.resolve_operands(unresolved, types, pos), perm)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        with printer.in_parens():
            printer.print_list(self.loops, printer.print_operand)
        printer.print_string(" [" + ", ".join(map(str, self.perm)) + "]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list(self.loops.types, printer.print_attribute)

    @property
    def perm(self) -> tuple[int, ...]:
        return tuple(a.value.data for a in self.map.data)


@irdl_op_definition
class UnrollOp(IRDLOperation):
    """`krnl.unroll %h : !krnl.loop`."""

    name = "krnl.unroll"

    loop = operand_def()

    assembly_format = "$loop attr-dict `:` type($loop)"

    def __init__(self, loop: SSAValue | Operation):
        super().__init__(operands=[loop])


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """Mark loops parallel.

    Two spellings are accepted: the op reference's `krnl.parallel %h : !krnl.loop`
    and today's `krnl.parallel(%a, %b), num_threads(%n) {proc_bind = "spread"} :
    !krnl.loop, !krnl.loop`. A single loop with no clause prints in the first
    form, everything else in the second; both re-parse to the same op.
    """

    name = "krnl.parallel"

    loops = var_operand_def()
    num_threads = opt_operand_def(I32)
    proc_bind = opt_prop_def(StringAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    PROC_BINDS: ClassVar[tuple[str, ...]] = ("primary", "close", "spread")

    def __init__(
        self,
        loops: Sequence[SSAValue | Operation],
        num_threads: SSAValue | Operation | None = None,
        proc_bind: str | None = None,
    ):
        props: dict[str, Attribute] = {}
        if proc_bind is not None:
            props["proc_bind"] = StringAttr(proc_bind)
        super().__init__(
            operands=[list(loops), [] if num_threads is None else [num_threads]],
            properties=props,
        )

    def verify_(self) -> None:
        if self.proc_bind is not None and self.proc_bind.data not in self.PROC_BINDS:
            raise VerifyException(
                f"proc_bind must be one of {', '.join(self.PROC_BINDS)}, "
                f'got "{self.proc_bind.data}"'
            )

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        pos = parser.pos
        if parser.parse_optional_punctuation("(") is not None:
            unresolved = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(")")
        else:
            unresolved = [parser.parse_unresolved_operand()]
        num_threads: SSAValue | None = None
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("num_threads")
            parser.parse_punctuation("(")
            num_threads = parser.parse_operand(IntegerType(32))
            parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        loops = parser.resolve_operands(unresolved, types, pos)
        proc_bind = attrs.pop("proc_bind", None)
        op = cls(loops, num_threads)
        if proc_bind is not None:
            op.properties["proc_bind"] = proc_bind
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        short = len(self.loops) == 1 and self.num_threads is None and self.proc_bind is None
        if short:
            printer.print_string(" ")
            printer.print_operand(self.loops[0])
        else:
            with printer.in_parens():
                printer.print_list(self.loops, printer.print_operand)
            if self.num_threads is not None:
                printer.print_string(", num_threads(")
                printer.print_operand(self.num_threads)
                printer.print_string(")")
        attrs = dict(self.attributes)
        if self.proc_bind is not None:
            attrs["proc_bind"] = self.proc_bind
        printer.print_op_attributes(attrs)
        printer.print_string(" : ")
        printer.print_list(self.loops.types, printer.print_attribute)


@irdl_op_definition
class GetInductionVarValueOp(IRDLOperation):
    """`%v = krnl.get_induction_var_value(%h) : (!krnl.loop) -> index`."""

    name = "krnl.get_induction_var_value"

    loops = var_operand_def()
    ind_var_vals = var_result_def()

    assembly_format = "`(` $loops `)` attr-dict `:` functional-type($loops, results)"

    def __init__(self, loops: Sequence[SSAValue | Operation]):
        super().__init__(operands=[list(loops)], result_types=[[INDEX] * len(loops)])


@irdl_op_definition
class SpecializedKernelOp(IRDLOperation):
    name = "krnl.specialized_kernel"

    loops = var_operand_def()

    assembly_format = "`(` $loops `)` attr-dict `:` type($loops)"


# ------------------------------------------------------------------ control flow


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a krnl.iterate body; carries iter_args values."""

    name = "krnl.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator())

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue | Operation] = ()):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, IterateOp):
            raise VerifyException("krnl.yield only terminates krnl.iterate bodies")
        if tuple(self.values.types) != tuple(parent.result_types):
            raise VerifyException(
                "krnl.yield operand types must match the iterate's result types "
                f"({', '.join(map(str, parent.result_types)) or 'none'})"
            )


@irdl_op_definition
class TerminateOp(IRDLOperation):
    """Implicit terminator of krnl.movable (and of old krnl.iterate bodies)."""

    name = "krnl.terminate"

    traits = traits_def(IsTerminator())


EntrySpec = tuple[SSAValue, AffineMap, Sequence[SSAValue], AffineMap, Sequence[SSAValue]]
"""(handle, lb map, lb operands, ub map, ub operands) of one `with` entry."""


@dataclass(frozen=True)
class IterateEntry:
    """One `%handle -> %iv = LB to UB` entry of a krnl.iterate `with` list."""

    handle: SSAValue
    iv: BlockArgument
    lb_map: AffineMap
    lb_operands: tuple[SSAValue, ...]
    ub_map: AffineMap
    ub_operands: tuple[SSAValue, ...]


@irdl_op_definition
class IterateOp(IRDLOperation):
    """`krnl.iterate(%o...) with (%h -> %i = LB to UB, ...) [iter_args(...) -> (T)] {}`.

    Operands, in order (as in onnx-mlir): the optimized loop handles, then for
    each `with` entry the original handle followed by the operands of its lower
    and upper bound maps, then the iter_args initial values. `bounds` holds two
    affine maps per entry.
    """

    name = "krnl.iterate"

    all_operands = var_operand_def()
    results_ = var_result_def()
    bounds = prop_def(ArrayAttr[AffineMapAttr])
    num_optimized_loops = prop_def(IntegerAttr[IntegerType])
    body = region_def("single_block")

    # --- structured views over the flat operand list
    @property
    def optimized_loops(self) -> tuple[SSAValue, ...]:
        return tuple(self.operands[: self.num_optimized_loops.value.data])

    @property
    def entries(self) -> tuple[IterateEntry, ...]:
        maps = [m.data for m in self.bounds.data]
        pos = self.num_optimized_loops.value.data
        ivs = self.body.block.args
        out: list[IterateEntry] = []
        for n in range(len(maps) // 2):
            handle = self.operands[pos]
            pos += 1
            lb, ub = maps[2 * n], maps[2 * n + 1]
            k = lb.num_dims + lb.num_symbols
            lb_ops = tuple(self.operands[pos : pos + k])
            pos += k
            k = ub.num_dims + ub.num_symbols
            ub_ops = tuple(self.operands[pos : pos + k])
            pos += k
            out.append(IterateEntry(handle, ivs[n], lb, lb_ops, ub, ub_ops))
        return tuple(out)

    @property
    def iter_inits(self) -> tuple[SSAValue, ...]:
        n = len(self.results)
        return tuple(self.operands[len(self.operands) - n :]) if n else ()

    @property
    def induction_vars(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[: len(self.bounds.data) // 2])

    @property
    def iter_args(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[len(self.bounds.data) // 2 :])

    @staticmethod
    def make(
        optimized: Sequence[SSAValue],
        entries: Sequence[EntrySpec],
        iter_inits: Sequence[SSAValue] = (),
        body: Region | None = None,
    ) -> IterateOp:
        """Build an iterate op; `body` defaults to a block with the right arguments."""
        operands: list[SSAValue] = list(optimized)
        maps: list[AffineMapAttr] = []
        for handle, lb, lb_ops, ub, ub_ops in entries:
            operands += [handle, *lb_ops, *ub_ops]
            maps += [AffineMapAttr(lb), AffineMapAttr(ub)]
        operands += list(iter_inits)
        if body is None:
            body = Region(Block(arg_types=[INDEX] * len(entries) + [v.type for v in iter_inits]))
        return IterateOp.build(
            operands=[operands],
            result_types=[[v.type for v in iter_inits]],
            properties={
                "bounds": ArrayAttr(maps),
                "num_optimized_loops": IntegerAttr(len(optimized), i64),
            },
            regions=[body],
        )

    def verify_(self) -> None:
        maps = self.bounds.data
        if len(maps) % 2:
            raise VerifyException("krnl.iterate needs two bound maps (lb, ub) per loop")
        n_loops = len(maps) // 2
        n_opt = self.num_optimized_loops.value.data
        expected = n_opt + n_loops + sum(m.data.num_dims + m.data.num_symbols for m in maps)
        expected += len(self.results)
        if expected != len(self.operands):
            raise VerifyException(
                f"krnl.iterate has {len(self.operands)} operands, its bounds describe {expected}"
            )
        block = self.body.block
        want = [INDEX] * n_loops + list(self.result_types)
        if list(block.arg_types) != want:
            raise VerifyException(
                "krnl.iterate body arguments must be one index per loop followed by the iter_args"
            )
        for v in self.optimized_loops:
            if not isinstance(v.type, LoopType):
                raise VerifyException("krnl.iterate optimized loops must be !krnl.loop")
        for e in self.entries:
            if not isinstance(e.handle.type, LoopType):
                raise VerifyException("krnl.iterate `with` handles must be !krnl.loop")
            for v in (*e.lb_operands, *e.ub_operands):
                if not isinstance(v.type, IndexType):
                    raise VerifyException(
                        f"loop bound operands must be of type index, got {v.type}"
                    )
        for m in (e for p in maps for e in [p.data]):
            if not m.results:
                raise VerifyException("krnl.iterate bound maps need at least one result")
        for v, r in zip(self.iter_inits, self.result_types, strict=True):
            if v.type != r:
                raise VerifyException("iter_args initial values must match the result types")
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("krnl.iterate body must end with krnl.yield")

    @classmethod
    def parse(cls, parser: Parser) -> IterateOp:
        pos = parser.pos
        optimized_u = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        optimized = parser.resolve_operands(optimized_u, [LOOP] * len(optimized_u), pos)
        parser.parse_keyword("with")

        entries: list[EntrySpec] = []
        ivs: list[Parser.UnresolvedArgument] = []

        def reject_own_values(used: Sequence[SSAValue], start: int, what: str) -> None:
            # A name of this iterate's own induction variables (or iter_args) is not
            # defined yet where bounds and initial values are read: xDSL would leave a
            # forward reference that the body's block argument later "resolves".
            for arg in (*ivs, *iter_args):
                name = arg.name.text[1:]
                refs = parser.forward_ssa_references.get(name, {})
                if any(r is v for r in refs.values() for v in used):
                    text = parser.lexer.input.content[start : parser.pos].rstrip()
                    parser.raise_error(
                        f"{what} uses %{name}, which this same krnl.iterate defines: "
                        "bounds and iter_args initial values may only use values "
                        "defined outside it (e.g. induction variables of an enclosing "
                        "krnl.iterate)",
                        start,
                        start + max(1, len(text)),
                    )

        def parse_entry() -> None:
            handle = parser.parse_operand(LOOP)
            parser.parse_punctuation("->")
            ivs.append(parser.parse_argument(expect_type=False))
            parser.parse_punctuation("=")
            start = parser.pos
            lb, lb_ops = parse_bound(parser, "max")
            reject_own_values(lb_ops, start, "the lower bound")
            parser.parse_keyword("to")
            start = parser.pos
            ub, ub_ops = parse_bound(parser, "min")
            reject_own_values(ub_ops, start, "the upper bound")
            entries.append((handle, lb.data, lb_ops, ub.data, ub_ops))

        iter_args: list[Parser.UnresolvedArgument] = []

        parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_entry)

        inits: list[SSAValue] = []
        if parser.parse_optional_keyword("iter_args") is not None:
            pairs_pos = parser.pos

            def parse_pair() -> tuple[Parser.UnresolvedArgument, UnresolvedOperand]:
                arg = parser.parse_argument(expect_type=False)
                parser.parse_punctuation("=")
                return arg, parser.parse_unresolved_operand()

            pairs = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_pair)
            parser.parse_punctuation("->")
            if parser.parse_optional_punctuation("(") is not None:
                types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
                parser.parse_punctuation(")")
            else:
                types = [parser.parse_type()]
            if len(types) != len(pairs):
                parser.raise_error(
                    f"iter_args has {len(pairs)} values but {len(types)} result types",
                    pairs_pos,
                )
            iter_args = [a for a, _ in pairs]
            inits = list(parser.resolve_operands([u for _, u in pairs], types, pairs_pos))
            reject_own_values(inits, pairs_pos, "iter_args")

        args = [a.resolve(INDEX) for a in ivs] + [
            a.resolve(v.type) for a, v in zip(iter_args, inits, strict=True)
        ]
        body = parser.parse_region(args)
        block = body.block
        if not isinstance(block.last_op, YieldOp):
            block.add_op(YieldOp())
        attrs = parser.parse_optional_attr_dict()
        op = cls.make(optimized, entries, inits, body)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        with printer.in_parens():
            printer.print_list(self.optimized_loops, printer.print_operand)
        printer.print_string(" with ")

        def print_entry(e: IterateEntry) -> None:
            printer.print_operand(e.handle)
            printer.print_string(" -> ")
            printer.print_block_argument(e.iv, print_type=False)
            printer.print_string(" = ")
            print_bound(printer, AffineMapAttr(e.lb_map), e.lb_operands, "max")
            printer.print_string(" to ")
            print_bound(printer, AffineMapAttr(e.ub_map), e.ub_operands, "min")

        with printer.in_parens():
            printer.print_list(self.entries, print_entry)
        has_iter = bool(self.results)
        if has_iter:
            printer.print_string(" iter_args(")

            def print_pair(p: tuple[BlockArgument, SSAValue]) -> None:
                printer.print_block_argument(p[0], print_type=False)
                printer.print_string(" = ")
                printer.print_operand(p[1])

            printer.print_list(zip(self.iter_args, self.iter_inits, strict=True), print_pair)
            printer.print_string(") -> (")
            printer.print_list(self.result_types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_empty_block=False,
            print_block_terminators=has_iter,
        )
        printer.print_op_attributes(self.attributes)


def _implicit_terminated_region(parser: Parser) -> Region:
    region = parser.parse_region()
    if not region.blocks:
        region.add_block(Block())
    block = region.block
    if not isinstance(block.last_op, TerminateOp):
        block.add_op(TerminateOp())
    return region


@irdl_op_definition
class MovableOp(IRDLOperation):
    """`krnl.movable { ... }`: statements waiting for their destination loop."""

    name = "krnl.movable"

    region = region_def()

    def __init__(self, region: Region | None = None):
        if region is None:
            region = Region(Block([TerminateOp()]))
        super().__init__(regions=[region])

    def verify_(self) -> None:
        if len(self.region.blocks) != 1:
            raise VerifyException("krnl.movable holds exactly one block")
        if not isinstance(self.region.block.last_op, TerminateOp):
            raise VerifyException("krnl.movable body must end with krnl.terminate")

    @classmethod
    def parse(cls, parser: Parser) -> MovableOp:
        region = _implicit_terminated_region(parser)
        op = cls(region)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_region(self.region, print_block_terminators=False)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class RegionOp(IRDLOperation):
    """`krnl.region`: an affine scope (values at its top level are valid symbols)."""

    name = "krnl.region"

    body_region = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, region: Region | None = None):
        super().__init__(regions=[region if region is not None else Region(Block())])


@irdl_op_definition
class EntryPointOp(IRDLOperation):
    """`krnl.entry_point` with `func`, `numInputs`, `numOutputs`, `signature` attributes."""

    name = "krnl.entry_point"

    def __init__(self, func: str, num_inputs: int, num_outputs: int, signature: str):
        super().__init__(
            attributes={
                "func": SymbolRefAttr(func),
                "numInputs": IntegerAttr(num_inputs, IntegerType(32)),
                "numOutputs": IntegerAttr(num_outputs, IntegerType(32)),
                "signature": StringAttr(signature),
            }
        )

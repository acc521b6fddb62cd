"""isl AST loops read with the Krnl loops they are (their marks) and what their bodies hold."""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polykrnl.codegen.isl_ast import FOR_NODE, IF_NODE


def ast_ids(e: isl.AstExpr) -> set[str]:
    """The identifiers an isl expression uses."""
    t = e.get_type()
    if t == isl.ast_expr_type.id:
        return {e.id_get_id().get_name()}
    if t == isl.ast_expr_type.op:
        out: set[str] = set()
        for i in range(e.op_get_n_arg()):
            out |= ast_ids(e.op_get_arg(i))
        return out
    return set()


@dataclass
class AstLoop:
    """A loop of isl's AST with the Krnl loop it is, and what its body holds."""

    mark: str
    node: isl.AstNode
    items: list[AstLoop | isl.AstExpr]  # inner loops and statement calls, in order

    def chain(self) -> list[AstLoop] | None:
        """The perfectly nested loops from this one down, if its body is only statements."""
        out = [self]
        while len(out[-1].items) == 1 and isinstance(out[-1].items[0], AstLoop):
            out.append(out[-1].items[0])
        return out if not any(isinstance(x, AstLoop) for x in out[-1].items) else None


def loop_tree_at(n: isl.AstNode, mark: str | None) -> AstLoop | None:
    if mark is None:
        return None
    body, inner = unmark(n.for_get_body())
    parts = [body] if body.get_type() != isl.ast_node_type.block else children(body)
    items: list[AstLoop | isl.AstExpr] = []
    for p in parts:
        c, m = (p, inner) if p is body else unmark(p)
        t = c.get_type()
        if t == isl.ast_node_type.user:
            items.append(c.user_get_expr())
        elif t == FOR_NODE:
            sub = loop_tree_at(c, m)
            if sub is None:
                return None
            items.append(sub)
        else:
            return None
    return AstLoop(mark, n, items)


def copied_statements(root: isl.AstNode) -> frozenset[str]:
    """The statements that appear in more than one user node of the AST."""
    seen: set[str] = set()
    twice: set[str] = set()

    def visit(n: isl.AstNode) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.user:
            name = n.user_get_expr().op_get_arg(0).id_get_id().get_name()
            (twice if name in seen else seen).add(name)
        elif t == isl.ast_node_type.block:
            for c in children(n):
                visit(c)
        elif t == isl.ast_node_type.mark:
            visit(n.mark_get_node())
        elif t == FOR_NODE:
            visit(n.for_get_body())
        elif t == IF_NODE:
            visit(n.if_get_then_node())
            if n.if_has_else_node():
                visit(n.if_get_else_node())

    visit(root)
    return frozenset(twice)


def statements_of(item: AstLoop | isl.AstExpr) -> set[str]:
    if isinstance(item, AstLoop):
        out: set[str] = set()
        for x in item.items:
            out |= statements_of(x)
        return out
    return {item.op_get_arg(0).id_get_id().get_name()}


def children(n: isl.AstNode) -> list[isl.AstNode]:
    children = n.block_get_children()
    return [children.get_at(i) for i in range(children.n_ast_node())]


def unmark(n: isl.AstNode) -> tuple[isl.AstNode, str | None]:
    mark = None
    while n.get_type() == isl.ast_node_type.mark:
        mark = n.mark_get_id().get_name()
        n = n.mark_get_node()
    return n, mark

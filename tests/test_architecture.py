"""The shape of the package (docs/architecture.md): one-way imports, no cycles, small modules."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polykrnl"
# Order of the pipeline: a module in stage k may import stages 0..k only. `display`
# (HTML/LaTeX helpers of the rich displays) comes right after errors: every stage may use it.
# The reference interpreter comes before the polyhedral model: it needs no isl.
STAGES = (
    "errors",
    "display",
    "ir",
    "dialect",
    "reader",
    "builder",
    "nest",
    "verifier",
    "interpreter",
    "poly",
    "transforms",
    "codegen",
    "targets",
    "viz",
)


def _stage(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "polykrnl" or len(parts) < 2:
        return None
    name = parts[1]
    return STAGES.index(name) if name in STAGES else None


@cache  # every test reads the same files: parse each once
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _imports(path: Path) -> list[str]:
    tree = _parsed(path)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


FILES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_imports_flow_one_way(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    own = _stage("polykrnl." + ".".join(rel.with_suffix("").parts))
    if own is None:
        return  # cli, demo, runner, __init__: the top, may import anything
    for mod in _imports(path):
        other = _stage(mod)
        assert other is None or other <= own, f"{rel} imports {mod}, a later stage"


def test_stage_detection() -> None:
    # The check above must be able to fail: a model module importing codegen is caught.
    assert _stage("polykrnl.codegen.numpy") == STAGES.index("codegen")
    assert _stage("polykrnl.ir") == STAGES.index("ir")
    assert _stage("numpy") is None


# ------------------------------------------------------------------ the shape of the package


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in FILES}


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines of `if TYPE_CHECKING:` blocks: imports for annotations only, never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


@cache
def _edges(path: Path, annotations: bool = False) -> list[tuple[str, str, int]]:
    """(imported polykrnl module, imported name or '', line) for every import that runs,
    at module level or inside a function alike (with `annotations`, also those under
    `if TYPE_CHECKING:`)."""
    tree = _parsed(path)
    skip = set() if annotations else _type_checking_lines(tree)
    own = _module_name(path)
    package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
    out: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.startswith("polykrnl")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if not mod.startswith("polykrnl"):
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub if sub in MODULES else mod, a.name, node.lineno))
    return out


def _graph(annotations: bool = False) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m, p in MODULES.items():
        for target, _, _ in _edges(p, annotations):
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in MODULES and target != m:
                graph[m].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    # A package's __init__ importing its own submodules is how a package is assembled,
    # not a cycle between ideas: those edges are left out. Imports for annotations only
    # (`if TYPE_CHECKING:`) count: a circle of types is a circle of ideas too.
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in _graph(True).items()}
    assert _cycles(graph) == []


def test_the_cycle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_private_name_imported_from_another_module() -> None:
    found = [
        f"{p.relative_to(PACKAGE)}:{line} imports {name} from {mod}"
        for p in FILES
        for mod, name, line in _edges(p)
        if name.startswith("_") and not name.startswith("__")
    ]
    assert found == []


MAX_FUNCTION_LINES = 100


def _long_functions(tree: ast.Module, limit: int) -> list[tuple[str, int]]:
    return [
        (n.name, n.end_lineno - n.lineno + 1)
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and n.end_lineno is not None
        and n.end_lineno - n.lineno + 1 > limit
    ]


def test_no_function_over_100_lines() -> None:
    # A long function is the smell: modules are split where a concept ends, functions
    # where a step of the work does.
    found = {
        f"{p.relative_to(PACKAGE)}:{name}": n
        for p in FILES
        for name, n in _long_functions(_parsed(p), MAX_FUNCTION_LINES)
    }
    assert found == {}


def test_the_function_length_rule_can_fail() -> None:
    long = "def f() -> None:\n" + "    x = 1\n" * 101
    assert _long_functions(ast.parse(long), MAX_FUNCTION_LINES) == [("f", 102)]


# A comparison with an op name, `op.name == "x.y"` or `n in ("x.y", ...)` whatever
# holds the name: op semantics belong in the op tables of polykrnl.dialect.registry,
# looked up by class, or in isinstance tests.
_NAME_TEST = re.compile(r"""(==|!=|\bin\b)\s*[(\[{]?\s*["'][a-z_]+\.[a-z_]+["']""")


def test_no_dispatch_on_op_names() -> None:
    found = {str(p.relative_to(PACKAGE)): len(_NAME_TEST.findall(p.read_text())) for p in FILES}
    assert {f: n for f, n in found.items() if n} == {}


def test_the_name_dispatch_pattern() -> None:
    assert _NAME_TEST.search('if op.name == "arith.addi":')
    assert _NAME_TEST.search('elif n in ("memref.alloc", "x.y")')  # a local holding the name
    assert _NAME_TEST.search('v.op.name in ("arith.mulf", "arith.muli")')
    assert _NAME_TEST.search("op.name == other.name") is None


def test_no_private_name_imported_from_a_library() -> None:
    # A library's private names (xDSL's `_parse_...`) change without notice.
    found = []
    for p in FILES:
        for node in ast.walk(_parsed(p)):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                parts = (node.module or "").split(".")
                names = [a.name for a in node.names]
                if any(x.startswith("_") for x in [*parts, *names] if not x.startswith("__")):
                    found.append(f"{p.relative_to(PACKAGE)}:{node.lineno}: {node.module}")
    assert found == []


def _target_of(module: str) -> str | None:
    """The target package a module belongs to (polykrnl.targets.<name>...), or None."""
    parts = module.split(".")
    if parts[:2] != ["polykrnl", "targets"] or len(parts) < 3 or parts[2] == "base":
        return None
    return parts[2]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_targets_import_no_other_target(path: Path) -> None:
    # A target's package builds on the shared lowering (codegen/) and the protocol
    # (targets/base.py), never on another target: what two targets share lives once,
    # below both. The registry loads them by name (base.ENTRIES).
    own = _target_of(_module_name(path))
    for mod in _imports(path):
        other = _target_of(mod)
        assert other is None or own is None or other == own, f"{path} imports {mod}"


def test_target_detection() -> None:
    assert _target_of("polykrnl.targets.numba.kernel") == "numba"
    assert _target_of("polykrnl.targets.base") is None
    assert _target_of("polykrnl.codegen.kernel") is None

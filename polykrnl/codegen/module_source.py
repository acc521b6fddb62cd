"""The standalone Python module `polykrnl emit numpy` / `emit numba` writes.

It imports only what the kernels' form requires (numpy, and numba for Numba kernels); a
docstring says how to call each entry function. Every name of the input in it (function
names, the file's name, types) is written through `safe_text.comment_text`: an input
cannot end the docstring or a comment and become code that importing the module runs.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, VectorType
from xdsl.ir import Attribute

from polykrnl.codegen.kernel import helper_order, schedule_comment
from polykrnl.codegen.python_form import PythonForm
from polykrnl.codegen.safe_text import comment_text
from polykrnl.dialect.krnl import StringType
from polykrnl.errors import PolykrnlError, UnsupportedError
from polykrnl.interpreter import memref_dtype, memref_shape, scalar_dtype

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule

__all__ = ["PythonKernel", "standalone_module"]


class PythonKernel(Protocol):
    """What a module needs of a kernel of a Python target (NumPy's, Numba's): read-only
    attributes, as the kernels are frozen."""

    @property
    def schedule(self) -> Schedule: ...
    @property
    def source(self) -> str: ...
    @property
    def entry(self) -> str: ...
    @property
    def exact(self) -> bool: ...
    @property
    def cache(self) -> bool:
        """Whether compiled code may be cached on disk."""
        ...

    @property
    def helpers(self) -> frozenset[str]: ...
    @property
    def function_source(self) -> str: ...
    @property
    def form(self) -> PythonForm:
        """The form of Python its source is written in."""
        ...

    @property
    def imports(self) -> str:
        """The import lines of its module."""
        ...

    def helper_sources(self, helpers: Sequence[str], cache: bool) -> list[str]:
        """The source of each helper, as a module of such kernels defines it."""
        ...


def standalone_module(kernels: Sequence[PythonKernel], source_name: str) -> str:
    """One standalone Python module (imports only numpy, and numba for Numba kernels) with
    the entry of every kernel.

    A docstring says how to call each entry function. One kernel: its `.source`
    as is. Several: the imports once, each helper and each function once
    (a callee that another kernel calls too is defined once), each entry after
    the comment with its schedule.
    """
    doc = _module_docstring(kernels, source_name)
    if len(kernels) == 1:
        return doc + "\n" + kernels[0].source
    helpers = helper_order(set().union(*(k.helpers for k in kernels)))
    functions: dict[str, str] = {}
    owner: dict[str, str] = {}
    for k in kernels:
        for name, text in _top_level_functions(k.function_source):
            if functions.setdefault(name, text) != text:
                raise UnsupportedError(
                    f"two different generated functions are both named {name} "
                    f"(one of them for @{k.schedule.program.function.name})",
                    hint="emit the functions one at a time with --func NAME",
                )
        owner[k.entry] = _schedule_comment(k)
    # One module holds kernels of one form (emit numpy or emit numba).
    blocks = kernels[0].helper_sources(helpers, cache=all(k.cache for k in kernels))
    imports = kernels[0].imports
    blocks += [owner.get(name, "") + text for name, text in functions.items()]
    return doc + f"\n{imports}\n" + "".join("\n\n" + b.rstrip("\n") + "\n" for b in blocks)


def _schedule_comment(kernel: PythonKernel) -> str:
    name = comment_text(kernel.schedule.program.function.name)
    lines = [
        f"# polykrnl {kernel.form.label} kernel of @{name}",
        "# schedule:",
        *schedule_comment(kernel.schedule),
    ]
    return "\n".join(lines) + "\n"


def _top_level_functions(source: str) -> list[tuple[str, str]]:
    """The `def` blocks of generated functions: (name, text ending with one newline)."""
    blocks: list[list[str]] = []
    for line in source.splitlines():
        if line.startswith(("def ", "@")) and not (blocks and blocks[-1][-1].startswith("@")):
            blocks.append([])
        elif not blocks and not line.strip():
            continue
        assert blocks, f"generated source before its first def: {line!r}"
        blocks[-1].append(line)
    out = []
    for lines in blocks:
        header = next(ln for ln in lines if ln.startswith("def "))
        name = header[4:].split("(", 1)[0]
        out.append((name, "\n".join(lines).rstrip("\n") + "\n"))
    return out


def _module_docstring(kernels: Sequence[PythonKernel], source_name: str) -> str:
    """How to call the kernels: argument order, names and what each one takes."""
    names = [f"@{comment_text(k.schedule.program.function.name)}" for k in kernels]
    what = f"kernel of {names[0]}" if len(names) == 1 else "kernels of " + ", ".join(names)
    form = kernels[0].form
    lines = [
        f"{form.label} {what} (after the Krnl recipe),",
        f"generated by polykrnl from {comment_text(source_name)}.",
        "",
        "Standalone: this module imports only "
        + " and ".join(form.requires)
        + ". Call an entry function with the arguments in the",
        "order shown, positionally. Arrays must have exactly the dtype and shape shown "
        "(`?`: any size)",
        "and are updated in place. Each entry checks that the arrays fit its accesses",
        "before touching memory (PkBoundsError, an IndexError, if not); dtypes are not",
        "checked here (pk.compile(fn) makes a kernel that checks them too).",
        "polykrnl runs kernels under np.errstate(all='ignore'): do the same to silence "
        "floating-point",
        "warnings.",
    ]
    for k in kernels:
        fn = k.schedule.program.function
        params = _entry_parameters(k)
        lines += ["", f"{k.entry}({', '.join(params)})  # @{comment_text(fn.name)}"]
        for p, a in zip(params, fn.arguments, strict=True):
            lines.append(f"    {p}: " + comment_text(f"{a.type}, {_how_to_pass(a.type)}"))
        results = comment_text(", ".join(str(t) for t in fn.result_types))
        lines.append(f"    returns: {results or 'nothing'}")
        if not k.exact:
            why = getattr(k, "inexact_reason", lambda: "reductions are reassociated")()
            lines.append(f"    ({comment_text(why)}: floating-point results may differ from")
            lines.append("    the reference interpreter's in the last bits)")
    text = "\n".join(lines) + "\n"
    # The names are escaped already (no line breaks); the literal's own escapes keep the
    # backslashes of those escapes and let no quote end the docstring.
    return '"""' + text.replace("\\", "\\\\").replace('"', '\\"') + '"""\n'


def _entry_parameters(kernel: PythonKernel) -> list[str]:
    for node in ast.parse(kernel.function_source).body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel.entry:
            return [a.arg for a in node.args.args]
    raise AssertionError(f"no def {kernel.entry} in the generated source")


def _how_to_pass(t: Attribute) -> str:
    if isinstance(t, MemRefType):
        shape = ", ".join("?" if d is None else str(d) for d in memref_shape(t))
        shape += "," if len(memref_shape(t)) == 1 else ""
        return f"a NumPy {memref_dtype(t)} array of shape ({shape})"
    if isinstance(t, IndexType):
        return "an int"
    if isinstance(t, IntegerType):
        return f"an int in the range of {t}"
    if isinstance(t, StringType):
        return "a str"
    if isinstance(t, VectorType):
        return f"a NumPy {scalar_dtype(t)} array of shape {tuple(t.get_shape())}"
    try:
        return f"a np.{scalar_dtype(t)} scalar"
    except PolykrnlError:
        return "a value of that type"

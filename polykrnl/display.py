"""HTML and LaTeX building blocks for the rich displays of polykrnl objects in Jupyter.

Every stage may use this module (it imports nothing of polykrnl but errors), so
that Module, Schedule, LegalityReport, NumpyKernel, ... render alike:

* :func:`highlight` turns Krnl/MLIR, Python or C++ text into highlighted HTML
  with *inline* styles (pygments, ``noclasses``): it looks the same in a live
  notebook, in a static HTML export and where ``<style>`` tags are stripped
  (GitHub's notebook viewer);
* :func:`html_table`, :func:`section`, :func:`side_by_side` lay out the pieces;
* :class:`Html` marks text that is already HTML (everything else is escaped);
* :func:`latex_names` makes isl's LaTeX safe for MathJax (identifiers with
  underscores).

The top element of every display carries the class ``pk-display`` (and a
second class naming the object) so that a notebook's own CSS can restyle it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any, Literal

from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer, RegexLexer, bygroups, words
from pygments.lexers import CppLexer, PythonLexer
from pygments.token import (
    Comment,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
)

Language = Literal["mlir", "python", "cpp"]

# Colours readable on the light boxes below (a dark notebook theme keeps the boxes light).
FONT = "font-family: ui-sans-serif, system-ui, -apple-system, 'Segoe UI', sans-serif;"
MONO = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;"
GOOD = "#1a7f37"
BAD = "#cf222e"
BAD_BACKGROUND = "#ffebe9"
MUTED = "#57606a"
BORDER = "#d0d7de"
BOX = (
    f"{MONO} font-size: 12px; line-height: 1.4; background: #f6f8fa; color: #1f2328; "
    f"border: 1px solid {BORDER}; border-radius: 4px; padding: 6px 8px; margin: 4px 0; "
    "overflow: auto; max-height: 32em; white-space: pre; text-align: left;"
)


class Html(str):
    """Text that is already HTML: the helpers insert it as it is instead of escaping it."""

    __slots__ = ()


def escape(text: object) -> str:
    """`text` as HTML text (quotes too, so it is safe in attributes); Html stays as it is."""
    if isinstance(text, Html):
        return str(text)
    return html.escape(str(text), quote=True)


class MlirLexer(RegexLexer):
    """MLIR in its custom syntax, with the Krnl dialect, and polykrnl's loop-tree text.

    Ops (``krnl.iterate``, ``arith.addf``), SSA values (``%i``, ``%0#1``),
    symbols (``@f``), attribute aliases (``#map``), types (``memref<4x8xf32>``),
    affine keywords (``to``, ``step``, ``floordiv``), numbers, strings and
    ``//`` comments. The loop trees polykrnl prints (``for %i = 0 to 10 {``,
    ``S0: krnl.store B[%i] <- A[%i]``) read with the same rules.
    """

    name = "MLIR"
    aliases = ["mlir", "krnl"]  # noqa: RUF012  (pygments reads these class attributes)
    filenames = ["*.mlir"]  # noqa: RUF012

    tokens = {  # noqa: RUF012
        "root": [
            (r"\s+", Text),
            (r"//.*?$", Comment.Single),
            # polykrnl's marks on loops at fault (LegalityReport.marked_loops)
            (r"<--.*?$", Generic.Error),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"%[\w.$-]+(#\d+)?", Name.Variable),
            (r"\^[\w.$-]+", Name.Label),
            (r'@("[^"]*"|[\w.$-]+)', Name.Function),
            (r"#[\w.$-]+", Name.Constant),
            (r"![\w.$-]+", Keyword.Type),
            # `S0:` at the start of a loop-tree statement line
            (r"(S\d+)(:)", bygroups(Name.Label, Punctuation)),
            # dialect.op (also `"krnl.iterate"` in the generic form is a string above)
            (r"[a-z_][\w$]*(\.[\w$]+)+", Keyword),
            (r"(\d+|\?)(x)(?=[\d?a-z])", bygroups(Number.Integer, Punctuation)),
            (
                r"(memref|tensor|vector|index|none|tuple|complex|bf16|f16|f32|f64|f80|f128"
                r"|i\d+|si\d+|ui\d+)\b",
                Keyword.Type,
            ),
            (
                words(
                    (
                        "affine_map",
                        "affine_set",
                        "to",
                        "step",
                        "with",
                        "iter_args",
                        "min",
                        "max",
                        "floordiv",
                        "ceildiv",
                        "mod",
                        "for",
                        "dense",
                        "true",
                        "false",
                        "unit",
                        "loc",
                        "private",
                        "module",
                        "symbol",
                    ),
                    suffix=r"\b",
                ),
                Operator.Word,
            ),
            (r"-?\d+\.\d*([eE][+-]?\d+)?", Number.Float),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+", Number.Integer),
            (r"<-+|->|[*+\-=]", Operator),
            (r"[(){}\[\]<>,:]", Punctuation),
            (r"[A-Za-z_][\w$.]*", Name),
            (r".", Text),
        ]
    }


def _lexer(language: Language) -> Lexer:
    if language == "mlir":
        return MlirLexer()
    if language == "python":
        return PythonLexer()
    if language == "cpp":
        return CppLexer()
    raise ValueError(f"no highlighter for {language!r}: use 'mlir', 'python' or 'cpp'")


# One formatter: inline styles, no wrapping <div>/<pre> (we write our own box).
_FORMATTER = HtmlFormatter(noclasses=True, nowrap=True, style="default")


def highlight(code: str, language: Language) -> str:
    """`code` as a highlighted ``<pre class="pk-code">`` block with inline styles."""
    body = _pygments_highlight(code, _lexer(language), _FORMATTER).rstrip("\n")
    return f'<pre class="pk-code pk-{language}" style="{BOX}">{body}</pre>'


def preformatted(text: str) -> str:
    """`text` as an unhighlighted ``<pre class="pk-code">`` block (escaped)."""
    return f'<pre class="pk-code pk-text" style="{BOX}">{escape(text.rstrip())}</pre>'


def code(text: str) -> str:
    """Inline monospace text (escaped)."""
    return f'<code style="{MONO} font-size: 12px;">{escape(text)}</code>'


def section(title: object, body: str) -> str:
    """A small heading above `body` (HTML)."""
    head = f'<div style="font-weight: 600; margin: 8px 0 2px 0; color: {MUTED};">'
    return f"{head}{escape(title)}</div>{body}"


def display_box(kind: str, title: object, body: str, *, color: str = "#1f2328") -> str:
    """The outer element of a display: class ``pk-display pk-KIND``, a bold title, the body."""
    return (
        f'<div class="pk-display pk-{escape(kind)}" style="{FONT} font-size: 13px; '
        f'text-align: left;"><div style="font-weight: 700; color: {color};">'
        f"{escape(title)}</div>{body}</div>"
    )


def side_by_side(*parts: str) -> str:
    """HTML blocks next to each other (wrapping below each other when narrow)."""
    cells = "".join(
        f'<div style="flex: 1 1 22em; min-width: 0; margin-right: 12px;">{p}</div>' for p in parts
    )
    return f'<div style="display: flex; flex-wrap: wrap; align-items: flex-start;">{cells}</div>'


def html_table(
    header: Sequence[object],
    rows: Sequence[Sequence[object]],
    *,
    bad_rows: Sequence[int] = (),
    caption: object | None = None,
) -> str:
    """A table: cells are escaped unless they are :class:`Html`; `bad_rows` (indices) are
    shown in red on a light red background, and get the class ``pk-bad``."""
    cell = f"border: 1px solid {BORDER}; padding: 2px 8px; text-align: left; vertical-align: top;"
    head = "".join(f'<th style="{cell} background: #f6f8fa;">{escape(h)}</th>' for h in header)
    body: list[str] = []
    bad = set(bad_rows)
    for n, row in enumerate(rows):
        assert len(row) == len(header), "a table row needs one cell per column"
        cells = "".join(f'<td style="{cell}">{escape(c)}</td>' for c in row)
        if n in bad:
            body.append(
                f'<tr class="pk-bad" style="background: {BAD_BACKGROUND}; color: {BAD};">'
                f"{cells}</tr>"
            )
        else:
            body.append(f"<tr>{cells}</tr>")
    cap = (
        f'<caption style="caption-side: top; text-align: left; color: {MUTED};">'
        f"{escape(caption)}</caption>"
        if caption is not None
        else ""
    )
    return (
        f'<table class="pk-table" style="border-collapse: collapse; margin: 4px 0; '
        f'font-size: 12px;">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


# An identifier with an underscore, not a LaTeX command (no backslash before it).
_UNDERSCORED = re.compile(r"(?<![\\A-Za-z0-9_])([A-Za-z0-9]*_[A-Za-z0-9_]*)")
_SUBSCRIPT = re.compile(r"[A-Za-z]_[A-Za-z0-9]")


def isl_latex(obj: Any) -> str:
    """An isl set or map (basic, union or not) in isl's LaTeX notation, names made safe."""
    import islpy as isl

    if isinstance(obj, isl.Map):
        # Internal names of array dimensions (`_a0`) would print as `A(_a0 = i)`.
        n = obj.dim(isl.dim_type.out)
        if any(str(obj.get_dim_name(isl.dim_type.out, k) or "").startswith("_") for k in range(n)):
            ident = isl.Map.identity(isl.Space.alloc(obj.get_ctx(), 0, n, n))
            if obj.has_tuple_name(isl.dim_type.out):
                name = obj.get_tuple_name(isl.dim_type.out)
                ident = ident.set_tuple_name(isl.dim_type.in_, name)
                ident = ident.set_tuple_name(isl.dim_type.out, name)
            obj = obj.apply_range(ident)
    printer = isl.Printer.to_str(obj.get_ctx()).set_output_format(isl.format.LATEX)
    method: Any = {
        isl.BasicSet: printer.print_basic_set,
        isl.Set: printer.print_set,
        isl.UnionSet: printer.print_union_set,
        isl.BasicMap: printer.print_basic_map,
        isl.Map: printer.print_map,
        isl.UnionMap: printer.print_union_map,
    }[type(obj)]
    return latex_names(str(method(obj).get_str()))


def latex_names(tex: str) -> str:
    """isl's LaTeX with identifiers like ``i_t`` or ``A_d0`` as upright names.

    MathJax reads ``i_t`` as i with subscript t, and refuses ``a_b_c`` (double
    subscript); a name is one word, so it is written ``\\mathrm{i\\_t}``.
    """

    def upright(m: re.Match[str]) -> str:
        name = m.group(1)
        if _SUBSCRIPT.fullmatch(name):
            return name  # `i_t`, `o_0`: a letter with a one-character subscript reads well
        return r"\mathrm{" + name.replace("_", r"\_") + "}"

    return _UNDERSCORED.sub(upright, tex)


def latex_mono(text: object) -> str:
    """Text as a monospace name in LaTeX math (``\\mathtt``; works in MathJax and LaTeX)."""
    special = {
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "#": r"\#",
        "$": r"\$",
        "%": r"\%",
        "&": r"\&",
        " ": r"\ ",
        "\\": "/",
        "^": "",
        "~": "-",
    }
    return r"\mathtt{" + "".join(special.get(c, c) for c in str(text)) + "}"

"""Rich displays: the HTML parses (balanced tags) and holds the expected pieces; LaTeX is
delimited and holds the domains; the shared helpers escape and highlight."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import islpy as isl
import pytest

import polykrnl as pk
from polykrnl.display import Html, highlight, html_table, isl_latex, latex_mono, latex_names

LEGALITY = Path(__file__).resolve().parent.parent / "transforms" / "legality"
CORPUS = Path(__file__).resolve().parent.parent / "corpus"
VOID = {"br", "hr", "img", "meta", "input", "col", "wbr"}


class Page(HTMLParser):
    """Collects elements (tag, attributes, text inside) and checks that tags balance."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str], list[str]]] = []
        self.elements: list[tuple[str, dict[str, str], str]] = []
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed tags: {[t for t, _, _ in self.stack]}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append((tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1][0] == tag, f"</{tag}> closes nothing open"
        t, attrs, parts = self.stack.pop()
        text = "".join(parts)
        self.elements.append((t, attrs, text))
        if self.stack:
            self.stack[-1][2].append(text)

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.stack[-1][2].append(data)

    def texts(self, tag: str, cls: str | None = None) -> list[str]:
        return [
            text
            for t, attrs, text in self.elements
            if t == tag and (cls is None or cls in attrs.get("class", "").split())
        ]

    def style_of(self, text: str) -> str:
        """The style of the innermost span whose whole text is `text`."""
        found = [a.get("style", "") for t, a, x in self.elements if t == "span" and x == text]
        assert found, f"no span holds exactly {text!r}"
        return found[0]


def test_page_checker_can_fail() -> None:
    with pytest.raises(AssertionError):
        Page("<div><span>x</div>")
    with pytest.raises(AssertionError):
        Page("<div>x")


# ------------------------------------------------------------------ helpers


def test_mlir_highlighting_tells_tokens_apart() -> None:
    text = (
        "#map = affine_map<(d0) -> (d0 + 1)>\n"
        "// a comment\n"
        "krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {\n"
        "  krnl.store %v, %A[%i] : memref<4x8xf32>\n"
        "}\n"
    )
    page = Page(highlight(text, "mlir"))
    (pre,) = page.texts("pre", "pk-code")
    assert pre == text.rstrip("\n")  # highlighting keeps the text
    op = page.style_of("krnl.iterate")
    assert page.style_of("krnl.store") == op
    value = page.style_of("%ii")
    kinds = [op, value, page.style_of("#map"), page.style_of("memref")]
    kinds.append(page.style_of("// a comment"))
    assert len(set(kinds)) == len(kinds), kinds  # five different looks
    assert page.style_of("f32") == page.style_of("memref")  # the element type too
    assert "&lt;4x8xf32&gt;" not in pre  # parsed text is unescaped...
    assert "&lt;" in highlight(text, "mlir")  # ...because the HTML escaped it


def test_python_and_cpp_highlighting() -> None:
    page = Page(highlight("def f(x):\n    return x < 1\n", "python"))
    assert page.style_of("def") == page.style_of("return")
    page = Page(highlight("template <int N> void f() { return; }", "cpp"))
    assert page.style_of("void") != page.style_of("return")  # a type, a keyword
    assert page.texts("pre") == ["template <int N> void f() { return; }"]
    with pytest.raises(ValueError, match="no highlighter"):
        highlight("x", "rust")  # type: ignore[arg-type]


def test_html_table_escapes_and_marks_bad_rows() -> None:
    out = html_table(["a", "b"], [["x<y", Html("<b>bold</b>")], ["1", "2"]], bad_rows=[1])
    page = Page(out)
    assert page.texts("td") == ["x<y", "bold", "1", "2"]
    assert page.texts("b") == ["bold"]
    assert len(page.texts("tr", "pk-bad")) == 1 and "12" in page.texts("tr", "pk-bad")


def test_latex_names() -> None:
    # hand-written expectations: a letter with a one-character subscript stays,
    # longer names become upright words with escaped underscores
    assert latex_names(r"\mathrm{S0}(i_t, j) \le A_d0") == r"\mathrm{S0}(i_t, j) \le \mathrm{A\_d0}"
    assert latex_names(r"\mathrm{acc_1_x}") == r"\mathrm{\mathrm{acc\_1\_x}}"
    assert latex_mono("@jacobi_1d") == r"\mathtt{@jacobi\_1d}"


def test_isl_latex_drops_internal_array_dim_names() -> None:
    m = isl.Map("[N] -> { S0[t, i] -> A[_a0, _a1] : _a0 = t and _a1 = i - 1 and 0 <= t < N }")
    expected = r"N \to \{\, \mathrm{S0}(t, i) \to \mathrm{A}(t, -1 + i) \mid 0 \le t < N \,\}"
    assert isl_latex(m) == expected


# ------------------------------------------------------------------ objects


def _jacobi() -> pk.Function:
    return pk.load(LEGALITY / "jacobi_1d.mlir")["jacobi_1d"]


def test_module_and_function_html() -> None:
    mod = pk.load(CORPUS / "copy_2d.mlir")
    page = Page(mod._repr_html_())
    assert "@copy_2d" in page.texts("div")[0]
    (pre,) = page.texts("pre", "pk-code")
    assert pre == mod.print().rstrip("\n")
    assert page.style_of("krnl.iterate") == page.style_of("krnl.load")
    fn = mod["copy_2d"]
    page = Page(fn._repr_html_())
    assert any(t.startswith("@copy_2d(%src: memref<6x10xf32>") for t in page.texts("div"))
    assert page.texts("pre", "pk-code") == [fn.print().rstrip("\n")]
    assert repr(fn).startswith("<polykrnl.Function @copy_2d(")  # the plain repr stays short


def test_schedule_html_shows_loop_nest_and_schedule_tree() -> None:
    sched = pk.Schedule.from_function(_jacobi(), recipe=False).block("i", 4).parallel("i_t")
    page = Page(sched._repr_html_())
    assert "Schedule @jacobi_1d: t > i_t > i" in page.texts("div")
    codes = page.texts("code")
    assert "block('i', 4) \u2192 parallel('i_t')" in codes
    (nest,) = page.texts("pre", "pk-mlir")
    assert nest == str(sched.loops()).rstrip("\n")
    assert "for %i_t = 1 to 9 step 4 {  // parallel" in nest
    assert page.style_of("// parallel") != page.style_of("%i_t")
    (tree,) = page.texts("pre", "pk-text")
    assert 'mark: "i_t"' in tree and "coincident: [ 1 ]" in tree
    # original order: no steps
    page = Page(pk.Schedule.from_function(_jacobi(), recipe=False)._repr_html_())
    assert "none (original order)" in page.texts("code")


def test_looptree_html() -> None:
    tree = pk.Schedule.from_function(_jacobi(), recipe=False).block("t", 2).loops()
    page = Page(tree._repr_html_())
    assert page.texts("pre", "pk-code") == [str(tree).rstrip("\n")]
    assert "loop nest of @jacobi_1d" in page.texts("div")
    assert page.style_of("S0") != page.style_of("krnl.store")


def test_legality_report_html_illegal() -> None:
    sched = (
        pk.Schedule.from_function(_jacobi(), recipe=False)
        .block("t", 2)
        .block("i", 4)
        .reorder(["t_t", "i_t", "t", "i"], force=True)
    )
    report = sched.check()
    assert not report.legal
    page = Page(report._repr_html_())
    items = page.texts("li", "pk-violation")
    assert len(items) == len(report.violations) >= 1
    v = report.violations[0]
    src, snk = v.source.point, v.sink.point
    # The witness is a real violated RAW: S0(t, i) writes A[t + 1][i], S0(t', i') reads
    # A[t'][i' - 1 .. i' + 1] (jacobi_1d.mlir), and the schedule runs the sink first.
    assert snk["t"] == src["t"] + 1 and abs(snk["i"] - src["i"]) <= 1
    order = [p for _, p in sched.trace()]
    assert order.index(snk) < order.index(src)
    assert f"{v.source} must run before {v.sink}" in items[0]
    assert "the schedule runs" in items[0] and "hint:" in items[0]
    # The loop table: the loop at fault (it reverses the dependence) is the one in red.
    bad = page.texts("tr", "pk-bad")
    assert len(bad) == 1 and bad[0].startswith(v.loop or "?")
    assert v.loop == "i_t"  # tiles of i run before the tiles of t end: i_t flips (1, -1)
    (nest,) = page.texts("pre", "pk-mlir")
    assert "<-- reverses RAW on A" in nest
    assert page.style_of("<-- reverses RAW on A") != page.style_of("for")


def test_legality_report_html_legal() -> None:
    sched = pk.Schedule.from_function(_jacobi(), recipe=False).block("i", 4)
    page = Page(sched.check()._repr_html_())
    assert "@jacobi_1d: legal" in page.texts("div")
    assert page.texts("li") == [] and page.texts("tr", "pk-bad") == []
    # the loop table, outermost first, then the memory-safety table's array
    assert page.texts("code") == ["t", "i_t", "i", "A"]
    assert len(page.texts("table")) == 3  # loops, the band (t, i_t, i), memory safety


def test_poly_program_latex() -> None:
    prog = pk.poly_program(_jacobi())
    tex = prog._repr_latex_()
    assert tex.startswith("$$\\begin{array}{ll}") and tex.endswith("\\end{array}$$")
    # jacobi_1d.mlir: t = 0 to 4, i = 1 to 9; writes A[t + 1][i], reads A[t][i - 1 .. i + 1]
    assert r"\{\, \mathrm{S0}(t, i) \mid 0 \le t \le 3 \wedge 0 < i \le 8 \,\}" in tex
    assert r"\text{write} & \{\, \mathrm{S0}(t, i) \to \mathrm{A}(1 + t, i)" in tex
    assert tex.count(r"\text{read}") == 3
    assert tex.count("$") == 4  # only the delimiters
    # braces balance (MathJax refuses the whole formula otherwise)
    unescaped = re.sub(r"\\[{}]", "", tex)
    assert unescaped.count("{") == unescaped.count("}")


def test_poly_program_latex_names_with_underscores() -> None:
    text = """
    func.func @f(%a_in: memref<?xf32>, %n_max: index) {
      %ii = krnl.define_loops 1
      %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
      krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %n_max) {
        %v = krnl.load %a_in[%i] : memref<?xf32>
        krnl.store %v, %a_in[%i] : memref<?xf32>
      }
      return
    }
    """
    tex = pk.poly_program(pk.parse(text)["f"])._repr_latex_()
    assert r"\mathrm{n\_max}" in tex and "n_max" not in tex
    assert re.search(r"(?<!\\)_[A-Za-z0-9]{2}", tex) is None  # no multi-character subscript

"""PtoKernel's Jupyter display: the tile table, the tmp formulas (LaTeX) and numbers, the C++."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import polykrnl as pk

KERNELS = pk.load(Path(__file__).parent / "krnl" / "pto_kernels.mlir")


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.cells: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack.append(tag)
        if tag == "td":
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if "td" in self.stack:
            self.cells[-1] += data


def _parse(html: str) -> _Cells:
    p = _Cells()
    p.feed(html)
    p.close()
    assert not p.stack
    return p


def test_display_lists_tiles_tmp_formula_numbers_and_source() -> None:
    kernel = pk.schedule(KERNELS["transpose_f32"]).to_pto()
    p = _parse(kernel.html(N=5, M=3))
    for t in kernel.tiles:
        assert t.name in p.cells
    (tmp,) = kernel.tmp_sizes
    at = len(p.cells) - 1 - p.cells[::-1].index(tmp)  # its row in the tmp table (the last)
    row = p.cells[at : at + 5]
    assert row[1].startswith("\\(") and "\\min" in row[1]  # the formula, as LaTeX
    # 5 x 3 source tile: roundup(3, 8) * roundup(5, 16) * 4 bytes = 8 * 16 * 4 (by hand)
    assert row[2] == "512" == str(kernel.tmp_bytes(N=5, M=3)[tmp])
    assert int(row[3]) >= 512  # the declared tmp tile holds the largest tile's need
    text = "".join(p.text)
    assert "TTRANS(" in text and "TLOAD(" in text and "TSTORE(" in text
    assert repr(kernel).startswith("<PtoKernel @transpose_f32")
    assert "give sizes" in "".join(_parse(kernel._repr_html_()).text)

"""NumpyKernel's Jupyter display: valid HTML with the signature, the guarantee and the source."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import polykrnl as pk

CORPUS = Path(__file__).parent.parent / "corpus"


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.spans = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack.append(tag)
        self.spans += tag == "span"

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    p.close()
    assert not p.stack, p.stack  # every element closed, properly nested
    return p


def test_html_shows_arguments_guarantee_and_highlighted_source() -> None:
    kernel = pk.compile(pk.load(CORPUS / "gemm.mlir")["gemm"])
    p = _parse(kernel._repr_html_())
    text = "".join(p.text)
    assert "NumpyKernel @gemm" in text
    for arg in ("alpha", "beta", "A", "B", "C", "memref<20x30xf32>"):
        assert arg in text
    assert "reassociated" in text  # gemm's k sum is a contraction
    # The whole source is there, as text, and highlighted (one span per token kind).
    assert "".join(kernel.source.split()) in "".join(text.split())
    assert p.spans > 20


def test_exact_kernel_says_so() -> None:
    kernel = pk.compile(pk.load(CORPUS / "parallel_forms.mlir")["relu"])
    assert kernel.exact
    assert "exact: bit for bit" in "".join(_parse(kernel._repr_html_()).text)
    assert repr(kernel).startswith("<NumpyKernel @relu:")  # plain repr stays short

"""Valid MLIR that xDSL does not read, rewritten in place before xDSL parses it.

onnx-mlir writes text that is valid MLIR but that xDSL's parser refuses:

- shapes with spaces around their `x` (`memref<10 x f32>`);
- locations: `loc(...)` after an op, a block argument or a function, and the
  `#loc = loc(...)` aliases MLIR prints at the end of the file, after their uses.
  They are debug information; polykrnl locates each op where it stands in the
  text, which is the place an error has to show.

Every rewrite keeps the length of the text and the offset of every token it keeps
(spaces stand in for what it removes), so every line and column xDSL reports, and
every location polykrnl records, is the line and column of the original text.
"""

from __future__ import annotations

import re

# Comments, complete string literals, or a lone `"` (the parser reports a bad one).
_STRING_OR_COMMENT = re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"|"')


def code_mask(text: str) -> bytearray:
    """1 at each offset of `text` that is code, 0 inside strings and comments."""
    mask = bytearray(b"\x01" * len(text))
    for m in _STRING_OR_COMMENT.finditer(text):
        mask[m.start() : m.end()] = b"\x00" * (m.end() - m.start())
    return mask


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _closing_paren(text: str, mask: bytearray, opening: int) -> int | None:
    """Offset just after the `)` that closes the `(` at `opening` (strings skipped)."""
    depth = 0
    for i in range(opening, len(text)):
        if not mask[i]:
            continue
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


_LOC_ALIAS = re.compile(r"^[ \t]*#[\w$.-]+[ \t]*=[ \t]*loc[ \t]*\(", re.M)
_LOC = re.compile(r"(?<![\w$.#%@^!-])loc[ \t]*\(")


def _drop_locations(text: str, chars: list[str], mask: bytearray) -> None:
    for pattern in (_LOC_ALIAS, _LOC):
        for m in pattern.finditer(text):
            if not mask[m.start()] or chars[m.end() - 1] != "(":
                continue  # in a string or a comment, or in an alias already blanked
            end = _closing_paren(text, mask, m.end() - 1)
            if end is not None:
                _blank(chars, m.start(), end)


_SHAPED = re.compile(r"(?<![\w$.])(?:memref|vector|tensor)<")
_SPACED_X = re.compile(r"(?<=[\d?\]])(\s*)x(\s+)(?=[\w?\[!])")


def _closing_angle(text: str, mask: bytearray, opening: int) -> int:
    """Offset of the `>` that closes the `<` at `opening` (`->` in a layout map skipped)."""
    depth = 0
    for i in range(opening, len(text)):
        if not mask[i]:
            continue
        if text[i] == "<":
            depth += 1
        elif text[i] == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _tight_shapes(text: str, chars: list[str], mask: bytearray) -> None:
    """`memref<10 x f32>` as `memref<10  xf32>`: the spaces after `x` move before it."""
    done = 0
    for m in _SHAPED.finditer(text):
        if m.start() < done or not mask[m.start()]:
            continue  # nested in a type already rewritten, or not code
        done = _closing_angle(text, mask, m.end() - 1)
        for x in _SPACED_X.finditer(text, m.end(), done):
            before, after = x.group(1), x.group(2)
            at = x.start()
            for ch in before + after:
                chars[at] = ch
                at += 1
            chars[at] = "x"


def for_xdsl(text: str) -> str:
    """`text` as xDSL reads it: same length, each kept token at its offset."""
    mask = code_mask(text)
    chars = list(text)
    _drop_locations(text, chars, mask)
    _tight_shapes(text, chars, mask)
    out = "".join(chars)
    assert len(out) == len(text)
    return out

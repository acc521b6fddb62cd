"""Text from the input, written into generated Python and C++: the one place that makes it safe.

Krnl files come from elsewhere, and MLIR's quoted symbols (``func.func @"a\\0Ab"``) and
string attributes hold any character. A name copied raw into a comment could end the
comment with a line break and make the rest of it code that ``polykrnl run`` (or importing
the module ``polykrnl emit`` writes) executes. So every string of the input reaches
generated source through one of these helpers, and nowhere else:

- Python: :func:`comment_text` for ``#`` comments and docstring lines, :func:`identifier`
  for names (the code generator's allocators, ``Names.fresh``, make them unique);
- C++: :func:`cpp_comment_text` for ``//`` and ``/* */`` comments, :func:`cpp_identifier`
  for the kernel's name.

String values inside Python code are ``ast.Constant`` nodes, which ``ast.unparse`` writes as
escaped literals; nothing here is needed for them.
"""

from __future__ import annotations

import hashlib
import keyword
import re

__all__ = ["CPP_KEYWORDS", "comment_text", "cpp_comment_text", "cpp_identifier", "identifier"]

_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# PEP 263: `coding[:=]` in a comment on line 1 or 2 of a file picks its encoding (utf-7 then
# decodes `+AAo-` in a later comment as a newline). Its separator is written escaped.
_CODING = re.compile(r"(?i)(?<=coding)[:=]")


def _escaped(c: str) -> str:
    """`c` as a Python string literal writes it: \\n, \\x0b, \\u2028, \\U0001f600."""
    return repr(c)[1:-1] if c != "\\" else "\\\\"


def comment_text(text: str) -> str:
    """`text` for a Python comment or a line of a docstring: printable characters as they
    are; line breaks (\\n, \\r, \\x0b, \\x0c, \\x1c-\\x1e, \\x85, \\u2028, \\u2029), every other
    unprintable character and the backslash escaped as in a string literal; and no
    encoding declaration."""
    out = "".join(c if c.isprintable() and c != "\\" else _escaped(c) for c in text)
    return _CODING.sub(lambda m: _hex(m.group()), out)


def _hex(c: str) -> str:
    return f"\\x{ord(c):02x}"


def identifier(text: str) -> str:
    """A Python identifier for `text` (`%i_t`, `a.b`, any symbol): ASCII letters, digits and
    `_` (every other character becomes `_`), never starting with a digit, never a keyword.
    Not one-to-one: whoever hands out names keeps them apart (`Names.fresh`)."""
    out = "".join(c if c in _WORD else "_" for c in text)
    if not out or out[0].isdigit():
        out = "_" + out
    return out + "_" if keyword.iskeyword(out) else out


def cpp_comment_text(text: str) -> str:
    """`text` for a C++ comment, `//` or `/* */`: as :func:`comment_text`, with the backslash
    written `\\x5c` (a backslash before the line's end would continue a `//` comment on the
    next line), and `*/` and the trigraph `??/` broken (`*\\x2f`, `?\\x3f`)."""
    out: list[str] = []
    for c in text:
        if c == "\\" or (c, out[-1:]) in (("/", ["*"]), ("?", ["?"])):
            out.append(_hex(c))
        elif c.isprintable():
            out.append(c)
        else:
            out.append(_escaped(c))
    return "".join(out)


#: Words a C++ program may not name its own function with: the keywords (C++20), the
#: alternative operator spellings, and names the generated code or pto-isa already uses.
CPP_KEYWORDS = frozenset(
    (
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
        "main",
        "half",
        "pto",
        "std",
        "int64_t",
        "polykrnl_io",
        "argc",
        "argv",
        "AICORE",
        "EOF",
        "INFINITY",
        "NAN",
    )
)
_PLAIN_CPP = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*")


def cpp_identifier(text: str) -> str:
    """A C++ identifier for `text`: `text` itself when it is a plain one (letters, digits,
    single `_` between them, not a keyword; names with `__` or a leading `_` are the
    implementation's); else its letters and digits joined by `_`, then `_` and 8 hex digits
    of its SHA-256, so that two names that read alike stay two identifiers."""
    if _PLAIN_CPP.fullmatch(text) and text not in CPP_KEYWORDS:
        return text
    words = re.findall(r"[A-Za-z0-9]+", text)
    base = "_".join(words)
    if not base or base[0].isdigit():
        base = "k_" + base if base else "k"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{base}_{digest}"

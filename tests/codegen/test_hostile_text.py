"""Input text stays text: names and strings of a Krnl file never become generated code.

Each hostile text holds Python that creates a marker file, after something that ends a
line, a comment or a literal for Python's tokenizer or a C++ compiler: newlines, carriage
returns, the other characters `str.splitlines` breaks at, quotes and triple quotes,
backslashes, `*/`, the trigraph `??/`, an encoding declaration (PEP 263) with a UTF-7 line
break. The texts travel as function symbols (`@"..."`), callee names, krnl.global names,
string attributes and the file's name. The oracles are independent of polykrnl's helpers:

- Python: `ast.parse`; the module's top-level statements are of the kinds a benign
  program's module has; the whole module has the AST of the benign program's module once
  names and string constants are numbered (nothing more, nothing less); importing the
  module from its file (which honours an encoding declaration) and `polykrnl run` /
  `check` / `lower` / `trace` create no marker file.
- C++: with comments and literals removed after the translation phases that can join
  lines (trigraphs, backslash-newline), the kernel is the benign program's kernel.
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from polykrnl.cli import main
from polykrnl.codegen.safe_text import comment_text, cpp_comment_text, cpp_identifier, identifier

# Hostile texts around the payload, which `{CMD}` stands for.
HOSTILE = {
    "newline": "\n{CMD}\n#",
    "carriage_return": "\r{CMD}\r#",
    "docstring": '"""\n{CMD}\n"""',
    "single_quotes": "'''\n{CMD}\n'''#",
    "backslash": "\\\n{CMD}\n\\",
    "block_comment": "*/\n{CMD}\n/*",
    "trigraph": "??/\n{CMD}\n??/",
    "vt_ff": "\x0b{CMD}\x0c",
    "separators": "\x1c{CMD}\x1d\x1e",
    "next_line": "\x85{CMD}\x85",
    "line_separator": "\u2028{CMD}\u2029",
    "non_ascii": "é\u202e\x01{CMD}",
    "coding": " -*- coding: utf-7 -*- +AAo-{CMD}",
}
# The fast tier runs a few; each case costs a few seconds (emits, a fresh interpreter).
FAST = {"newline", "backslash", "line_separator", "coding"}
CASES = [pytest.param(c, marks=() if c in FAST else pytest.mark.slow) for c in HOSTILE]
# Python modules (two emits and a fresh interpreter per case, the most costly): a backslash
# splices lines in C++ (the PTO and file-name tests keep it fast) but not in a Python
# comment, where it is one more character (test_comment_text_escapes_like_a_string_literal).
PY_CASES = [
    pytest.param(c, marks=() if c in FAST - {"backslash"} else pytest.mark.slow) for c in HOSTILE
]
BENIGN = {"F": "f", "G": "g", "K": "constant_0", "C": "external_fn"}
# MLIR's line ends inside a string literal, as xDSL's lexer reads them
MLIR_LINE_ENDS = "\n\r\x0b\x0c"
# the characters Python's str.splitlines (and so a reader) breaks lines at
LINE_BREAKS = set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def mlir_string(text: str) -> str:
    """`text` as the inside of an MLIR string literal. xDSL reads escapes only in ASCII
    strings (with non-ASCII characters they make a bytes attribute), so a non-ASCII text is
    written raw and must not need them."""
    if text.isascii():
        return "".join(
            f"\\{ord(c):02X}" if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in text
        )
    assert not set(text) & set('"\\' + MLIR_LINE_ENDS), text
    return text


def hostile(case: str, marker: str) -> str:
    cmd = f"open({marker!r}, 'w').close()"
    text = HOSTILE[case].replace("{CMD}", cmd)
    if not text.isascii():
        text = text.replace("\n", " ")
    return text


def names(case: str, marker_dir: Path) -> dict[str, str]:
    """Hostile values of every slot, each with its own marker file."""
    return {slot: hostile(case, str(marker_dir / f"PWNED_{case}_{slot}")) for slot in BENIGN}


# Every string slot: F the function, G its callee, K a krnl.global, C a krnl.call's name and
# a string attribute. Value names are MLIR's ([A-Za-z0-9_$.-]): ones that are no Python
# identifier, a keyword, a builtin the kernel calls, the callee's entry name.
NUMBA_PROGRAM = """
func.func @"{G}"(%a: memref<4xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v = krnl.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    krnl.store %w, %a[%i] : memref<4xf32>
  }
  return
}
func.func @"{F}"(%x: memref<4xf32>, %int: memref<4xf32>, %kernel_g: memref<4xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v$1.a-b = krnl.load %x[%i] : memref<4xf32>
    %c = krnl.load %kernel_g[%i] : memref<4xf32>
    %if = arith.addf %v$1.a-b, %c : f32
    krnl.store %if, %int[%i] : memref<4xf32>
  }
  func.call @"{G}"(%int) : (memref<4xf32>) -> ()
  return
}
"""
NUMPY_PROGRAM = NUMBA_PROGRAM.replace(
    "  func.call",
    """  %g = "krnl.global"() {name = "{K}", shape = [4],
    value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> memref<4xf32>
  %gl = krnl.define_loops 1
  krnl.iterate(%gl) with (%gl -> %i = 0 to 4) {
    %u = krnl.load %g[%i] : memref<4xf32>
    krnl.store %u, %x[%i] : memref<4xf32>
  }
  "krnl.call"(%int) {funcName = "{C}", numOfOutput = 0 : si64, note = "{C}"} : (memref<4xf32>) -> ()
  func.call""",
)
# What the reference interpreter runs (run --reference, check, lower, trace): strings of
# krnl.print, krnl.entry_point, krnl.runtime_instrument and a memref.global's symbol.
REFERENCE_PROGRAM = """
"krnl.entry_point"() {func = @"{F}", numInputs = 1 : i32, numOutputs = 0 : i32,
  signature = "{C}"} : () -> ()
"memref.global"() <{sym_name = "{K}", sym_visibility = "private", type = memref<4xf32>,
  initial_value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>, constant}> : () -> ()
func.func @"{G}"(%a: memref<4xf32>) {
  "krnl.print"() {format = "{C}"} : () -> ()
  return
}
func.func @"{F}"(%x: memref<4xf32>) {
  "krnl.runtime_instrument"() {nodeName = "{C}", opName = "{C}", tag = 5 : i64} : () -> ()
  %g = memref.get_global @"{K}" : memref<4xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v$1.a-b = krnl.load %g[%i] : memref<4xf32>
    krnl.store %v$1.a-b, %x[%i] : memref<4xf32>
  }
  func.call @"{G}"(%x) : (memref<4xf32>) -> ()
  return
}
"""
# A program PTO accepts: a softmax over rows.
PTO_PROGRAM = """
func.func @"{F}"(%x: memref<16x32xf32>, %y: memref<16x32xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 16) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 32) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %x[%i, %j] : memref<16x32xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 32) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %x[%i, %j] : memref<16x32xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      krnl.store %e, %y[%i, %j] : memref<16x32xf32>
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 32) {
      %e = krnl.load %y[%i, %j] : memref<16x32xf32>
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %y[%i, %j] : memref<16x32xf32>
    }
  }
  return
}
"""


def program(template: str, values: dict[str, str]) -> str:
    out = template
    for slot, text in values.items():
        out = out.replace("{" + slot + "}", mlir_string(text))
    return out


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def emitted(path: Path, *argv: str) -> str:
    code, out, err = cli("emit", *argv, str(path))
    assert code == 0, err
    return out


# ------------------------------------------------------------------ the oracles


def top_level(tree: ast.Module) -> list[str]:
    """The kind of each top-level statement: generated entries as one kind."""
    kinds = []
    for i, st in enumerate(tree.body):
        if i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            kinds.append("docstring")
        elif isinstance(st, ast.Import | ast.ImportFrom):
            kinds.append(ast.unparse(st))
        elif isinstance(st, ast.FunctionDef):
            name = "kernel_*" if st.name.startswith("kernel_") else st.name
            decorators = [ast.unparse(d) for d in st.decorator_list]
            kinds.append(f"def {name} {decorators}")
        elif isinstance(st, ast.Assign):
            kinds.append("assign " + ", ".join(ast.unparse(t) for t in st.targets))
        else:
            kinds.append(ast.dump(st))
    return kinds


def numbered(tree: ast.Module) -> str:
    """The AST with names numbered in order of appearance and every string one string."""
    ids: dict[str, str] = {}

    class Numbered(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            node.id = ids.setdefault(node.id, f"n{len(ids)}")
            return node

        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
            node.name = ids.setdefault(node.name, f"n{len(ids)}")
            self.generic_visit(node)
            return node

        def visit_arg(self, node: ast.arg) -> ast.AST:
            node.arg = ids.setdefault(node.arg, f"n{len(ids)}")
            return node

        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            return ast.Constant("S") if isinstance(node.value, str) else node

    return ast.dump(Numbered().visit(tree))


def check_python(text: str, benign: str) -> None:
    assert not set(text) & LINE_BREAKS - {"\n"}
    tree, reference = ast.parse(text), ast.parse(benign)
    kinds = top_level(tree)
    assert set(kinds) <= set(top_level(reference)), kinds
    assert kinds.count("docstring") == 1 and kinds[0] == "docstring"
    assert numbered(tree) == numbered(reference)


def cpp_code(text: str) -> str:
    """C++ without its comments and literals, after trigraphs and line splicing."""
    text = text.replace("??/", "\\").replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\\\n", "")
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            assert end >= 0, "unterminated /* comment"
            out.append(" ")
            i = end + 2
        elif text[i] in "\"'":
            j = i + 1
            while text[j] != text[i]:
                assert text[j] != "\n", "unterminated literal"
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def check_cpp(text: str, benign: str, kernel: str) -> None:
    assert not set(text) & LINE_BREAKS - {"\n"}
    code = cpp_code(text).replace(kernel, "f")  # the kernel's name, sanitized, holds PWNED
    assert "PWNED" not in code
    assert code == cpp_code(benign)


# ------------------------------------------------------------------ generated sources


@pytest.fixture(scope="module")
def benign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("benign")
    out = {}
    for what, template, argv in [
        ("numpy", NUMPY_PROGRAM, ["numpy"]),
        ("numba", NUMBA_PROGRAM, ["numba"]),
        ("pto", PTO_PROGRAM, ["pto", "--arch", "a2a3"]),
        ("harness", PTO_PROGRAM, ["pto", "--arch", "a2a3", "--harness"]),
    ]:
        path = tmp / f"{what}.mlir"
        path.write_text(program(template, BENIGN))
        out[what] = emitted(path, *argv)
    return out


@pytest.mark.parametrize("case", PY_CASES)
def test_python_modules_hold_only_generated_code(
    case: str, benign: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("numba")
    values = names(case, tmp_path)
    for what, template in [("numpy", NUMPY_PROGRAM), ("numba", NUMBA_PROGRAM)]:
        path = tmp_path / f"{what}.mlir"
        path.write_text(program(template, values))
        text = emitted(path, what)
        check_python(text, benign[what])
        (tmp_path / f"kernels_{what}.py").write_text(text)
    _import_all(sorted(tmp_path.glob("kernels_*.py")), tmp_path)


@pytest.mark.parametrize("case", CASES)
def test_pto_payload_stays_in_comments(case: str, benign: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "softmax.mlir"
    path.write_text(program(PTO_PROGRAM, names(case, tmp_path)))
    kernel = cpp_identifier(names(case, tmp_path)["F"])
    for what, extra in [("pto", []), ("harness", ["--harness"])]:
        check_cpp(emitted(path, "pto", "--arch", "a2a3", *extra), benign[what], kernel)


@pytest.mark.parametrize("case", CASES)
def test_cli_verbs_run_none_of_the_text(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    values = names(case, tmp_path)
    kernels = tmp_path / "kernels.mlir"
    kernels.write_text(program(NUMBA_PROGRAM, values))
    reference = tmp_path / "reference.mlir"
    reference.write_text(program(REFERENCE_PROGRAM, values))
    f = values["F"]
    for argv in [
        ["run", "--func", f, str(kernels)],
        ["run", "--reference", "--func", f, str(reference)],
        ["check", str(reference)],
        ["lower", str(reference)],
        ["trace", "--func", f, str(reference)],
    ]:
        code, out, err = cli(*argv)
        assert code == 0, (argv, err)
    code, out, err = cli("lower", str(reference))
    assert not set(out) & LINE_BREAKS - {"\n"}
    assert _markers(tmp_path) == []


@pytest.mark.parametrize("case", ["newline", "coding"])
def test_numba_run_imports_its_cached_module_safely(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Numba target writes its module to the cache directory and imports it from there:
    # Python then honours an encoding declaration on its first two lines.
    pytest.importorskip("numba")
    monkeypatch.setenv("POLYKRNL_CACHE_DIR", str(tmp_path / "cache"))
    values = names(case, tmp_path)
    path = tmp_path / "kernels.mlir"
    path.write_text(program(NUMBA_PROGRAM, values))
    code, _, err = cli("run", "--target", "numba", "--func", values["F"], str(path))
    assert code == 0, err
    assert list((tmp_path / "cache").rglob("*.py")), "the module was not written to the cache"
    assert _markers(tmp_path) == []


@pytest.mark.parametrize("case", CASES)
def test_hostile_file_names(
    case: str, benign: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file name holds no `/` and no NUL: a payload that writes into the working directory.
    monkeypatch.chdir(tmp_path)
    name = hostile(case, f"PWNED_{case}_file").replace("/", "|") + ".mlir"
    path = tmp_path / name
    path.write_text(program(NUMPY_PROGRAM, BENIGN))
    text = emitted(path, "numpy")
    check_python(text, benign["numpy"])
    (tmp_path / "kernels.py").write_text(text)
    _import_all([tmp_path / "kernels.py"], tmp_path)
    code, _, err = cli("run", "--func", "f", str(path))
    assert code == 2 and "krnl.call" in err  # the external function is not registered
    assert _markers(tmp_path) == []


def _markers(where: Path) -> list[str]:
    return sorted(p.name for p in where.rglob("PWNED*"))


def _import_all(modules: list[Path], cwd: Path) -> None:
    """Import each module from its file in a fresh interpreter (which reads the file's
    encoding declaration, as `import` does); no marker file may appear."""
    script = textwrap.dedent(
        """
        import importlib.util, sys
        for i, path in enumerate(sys.argv[1:]):
            spec = importlib.util.spec_from_file_location(f"kernels{i}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, modules)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert _markers(cwd) == []


# ------------------------------------------------------------------ the helpers


# Every character of the first planes that matter: ASCII, Latin-1, the general
# punctuation block (line and paragraph separators, bidirectional controls), surrogates.
CHARS = [chr(c) for c in [*range(0x300), *range(0x2000, 0x2070), 0xD800, 0xFEFF, 0x1F600]]


@pytest.mark.parametrize("helper", [comment_text, cpp_comment_text])
def test_comment_text_is_one_line_for_every_character(helper: Callable[[str], str]) -> None:
    for c in CHARS:
        for text in (c, f"a{c}b", c * 3):
            out = helper(text)
            assert out.isprintable() and len(out.splitlines()) <= 1, repr(c)
            if helper is comment_text:
                tokens = list(_python_tokens("#" + out + "\nx = 1\n"))
                assert [t for t in tokens if t.strip()] == ["#" + out, "x", "=", "1"], repr(c)
            else:
                # a C++ compiler's oracle: the comment, line or block, hides nothing after it
                for source in (f"// {out}\nint x;\n", f"/* {out} */ int x;\n"):
                    assert cpp_code(source).split() == ["int", "x;"], repr(c)


def _python_tokens(source: str) -> list[str]:
    import tokenize

    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)]


def test_comment_text_escapes_like_a_string_literal() -> None:
    # an escaped text reads back as the text
    text = "a\nb\\c\u2028d\x00e\"'f"
    assert ast.literal_eval('"' + comment_text(text).replace('"', '\\"') + '"') == text
    assert comment_text("x coding: utf-7") == "x coding\\x3a utf-7"
    assert comment_text("x coding=utf-7") == "x coding\\x3dutf-7"


def test_identifiers() -> None:
    for text in ["a.b", "if", "1x", "", "é", "a\nb", "kernel_f", "%x", "__import__"]:
        out = identifier(text)
        assert out.isidentifier() and out.isascii() and not _is_keyword(out), text
    assert identifier("a_b") == "a_b" and identifier("if") == "if_"
    plain = ["softmax_rows", "matmul_f16", "A", "x1"]
    assert [cpp_identifier(t) for t in plain] == plain
    for text in ["main", "int", "a b", "a.b", "a__b", "_A", "__x", "1a", "", "x\n//", "é"]:
        out = cpp_identifier(text)
        assert out.isascii() and out.isidentifier() and "__" not in out and out[0].isalpha()
    assert cpp_identifier("a b") != cpp_identifier("a.b")  # both read a_b: the hash differs


def _is_keyword(word: str) -> bool:
    import keyword

    return keyword.iskeyword(word)


def test_functions_whose_names_read_alike_keep_apart(tmp_path: Path) -> None:
    # @"a.b" and @a_b both read kernel_a_b: the plain name keeps it, in every kernel of the
    # module, and the caller calls its callee, not itself.
    text = NUMBA_PROGRAM.replace("{G}", "a.b").replace("{F}", "a_b")
    path = tmp_path / "alike.mlir"
    path.write_text(text)
    module = emitted(path, "numpy")
    tree = ast.parse(module)
    defs = [st.name for st in tree.body if isinstance(st, ast.FunctionDef)]
    assert sorted(defs) == ["kernel_a_b", "kernel_a_b_1"]
    caller = next(
        st for st in tree.body if isinstance(st, ast.FunctionDef) and st.name == "kernel_a_b"
    )
    calls = [ast.unparse(c.func) for c in ast.walk(caller) if isinstance(c, ast.Call)]
    assert "kernel_a_b_1" in calls and "kernel_a_b" not in calls
    code, _, err = cli("run", "--verify", "--func", "a_b", str(path))
    assert code == 0, err

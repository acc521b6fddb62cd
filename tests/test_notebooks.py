"""Every notebook in notebooks/ runs top to bottom in a fresh kernel; none carries outputs.

The notebooks assert what their prose claims (same IR, same trace, bit for bit equal to
the reference, ...), so a wrong claim fails the run like an error does.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _client(nb: nbformat.NotebookNode, cwd: Path) -> NotebookClient:
    # kernel "python3" is the ipykernel of this interpreter: ipykernel's wheel installs its
    # kernelspec into sys.prefix, where jupyter_client looks first (no registration needed)
    return NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )


def _execute(nb: nbformat.NotebookNode, cwd: Path) -> None:
    _client(nb, cwd).execute()  # raises CellExecutionError on the first failing cell


def _code(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_there_are_the_six_notebooks() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_no_committed_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_uses_only_the_public_api(path: Path) -> None:
    code = _code(path)
    imports = re.findall(r"^\s*(?:import|from)\s+(polykrnl\S*)", code, flags=re.M)
    assert imports and set(imports) <= {"polykrnl", "polykrnl.viz"}, imports
    assert "import polykrnl as pk" in code
    private = re.findall(r"\b\w+\._[A-Za-z]\w*", code)  # obj._name (dunders are fine)
    assert not private, private


@pytest.fixture(scope="module")
def executed(request: pytest.FixtureRequest) -> dict[Path, nbformat.NotebookNode | BaseException]:
    """The selected notebooks, each run in a fresh kernel of its own, all at once (the
    kernels are processes: their runs overlap on the cores); the error of a failed run."""
    paths = [
        item.callspec.params["path"]
        for item in request.session.items
        if getattr(item, "function", None) is test_notebook_runs
    ]
    nbs = {p: nbformat.read(p, as_version=4) for p in paths}

    async def run(path: Path) -> nbformat.NotebookNode:
        # Kernels started at once can race for the same free TCP port (the one that loses
        # dies before it answers): such a start is tried again, on a fresh copy.
        for attempt in range(3):
            try:
                return await _client(nbs[path], path.parent).async_execute()
            except RuntimeError as e:
                if "Kernel died before replying" not in str(e) or attempt == 2:
                    raise
                nbs[path] = nbformat.read(path, as_version=4)
        raise AssertionError("unreachable")

    async def run_all() -> list[object]:
        return await asyncio.gather(*(run(p) for p in paths), return_exceptions=True)

    outcomes = asyncio.run(run_all())
    return {
        p: o if isinstance(o, BaseException) else nbs[p] for p, o in zip(nbs, outcomes, strict=True)
    }


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(
    path: Path, executed: dict[Path, nbformat.NotebookNode | BaseException]
) -> None:
    nb = executed[path]
    if isinstance(nb, BaseException):
        raise nb  # CellExecutionError: the first failing cell
    # the pictures came out as images, not as "<Figure size ...>" text
    kinds = {
        k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})
    }
    if "plot_" in _code(path):
        assert "image/png" in kinds
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors


@pytest.mark.slow
def test_a_failing_cell_fails_the_run(tmp_path: Path) -> None:
    # the harness above must be able to fail: a notebook whose claim is false
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import polykrnl as pk"),
            nbformat.v4.new_code_cell("assert pk.parse is None, 'claim does not hold'"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    with pytest.raises(CellExecutionError, match="claim does not hold"):
        _execute(nb, tmp_path)

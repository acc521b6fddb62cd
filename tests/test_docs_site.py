"""The documentation site (mkdocs.yml) builds in strict mode and documents every public name.

Strict mode turns every warning into a failure: a page missing from the nav, a broken
link or anchor, a README section that the index includes but no longer exists, a
docstring reference that does not resolve.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import polykrnl as pk

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "api"


def _documented() -> set[str]:
    text = "\n".join(p.read_text() for p in API.glob("*.md"))
    return set(re.findall(r"^::: polykrnl\.(\w+)$", text, flags=re.M))


def test_every_public_name_is_in_the_api_reference() -> None:
    public = {n for n in pk.__all__ if n != "__version__"}
    assert public - _documented() == set(), "add them to a page of docs/api/"
    assert _documented() - public == set(), "the API reference documents only public names"


@pytest.mark.slow  # about 6 s: mkdocstrings reads the package, the notebooks are converted
def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    # the snippets of docs/index.md are found relative to the working directory: the root
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    # the pages a user lands on exist and hold what they should
    index = (tmp_path / "index.html").read_text()
    assert "A first look" in index and "What is supported" in index  # README's sections
    schedules = (tmp_path / "api" / "schedules" / "index.html").read_text()
    assert 'id="polykrnl.Schedule.block"' in schedules
    assert "Strip-mine" in schedules
    notebook = (tmp_path / "notebooks" / "03_tiling_legality" / "index.html").read_text()
    assert "jacobi" in notebook.lower()


@pytest.mark.slow  # about 2 s
def test_a_broken_reference_fails_the_strict_build(tmp_path: Path) -> None:
    # the build above must be able to fail: the same config with a page that documents a
    # name polykrnl does not have
    docs = tmp_path / "docs"
    (docs / "api").mkdir(parents=True)
    (docs / "index.md").write_text("# x\n\n::: polykrnl.no_such_name\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: x\ndocs_dir: docs\nplugins:\n  - mkdocstrings:\n"
        f"      handlers:\n        python:\n          paths: [{str(ROOT)!r}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "", "HOME": str(tmp_path)},
    )
    assert done.returncode != 0
    assert "no_such_name" in done.stderr

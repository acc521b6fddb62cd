"""Helpers shared by the benchmark scripts (machine description for the reports)."""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import polykrnl as pk

REPO = Path(__file__).resolve().parent.parent


def machine() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            out = subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
            )
            return out.stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    import islpy
    import xdsl

    where = Path(pk.__file__).resolve().parent
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "islpy": str(getattr(islpy, "__version__", "?")),
        "xdsl": str(getattr(xdsl, "__version__", "?")),
        "commit": git("rev-parse", "--short", "HEAD"),
        "polykrnl": str(where),
        # Uncommitted changes under polykrnl/ (the worktree is shared); only
        # meaningful when polykrnl is imported from this checkout.
        "polykrnl_dirty": bool(git("status", "--porcelain", "--", "polykrnl"))
        if where == REPO / "polykrnl"
        else None,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def import_path(module_name: str, path: Path) -> ModuleType:
    """The Python file at `path`, imported as `module_name` (benchmark helpers are
    scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module

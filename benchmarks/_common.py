"""Helpers shared by the benchmark scripts (machine description for the reports)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
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

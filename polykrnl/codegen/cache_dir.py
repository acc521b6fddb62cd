"""Where compiled kernels live on disk, for the targets that compile (Numba's modules, the
MLIR target's shared libraries)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """The directory of `kind`'s compiled kernels, made if missing: under
    $POLYKRNL_CACHE_DIR, else $XDG_CACHE_HOME/polykrnl or ~/.cache/polykrnl; a temporary
    one if that cannot be written (a read-only home)."""
    env = os.environ.get("POLYKRNL_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "polykrnl"
    path = base / kind
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe.{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError:
        path = Path(tempfile.gettempdir()) / f"polykrnl-{kind}-{os.getuid()}"
        path.mkdir(parents=True, exist_ok=True)
    return path

"""`polykrnl tune`: the winner written as Krnl that check, run and emit take."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from polykrnl.cli import main
from tests.tune.programs import SWEEP

pytest.importorskip("numba")
pytest.importorskip("optuna")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.slow  # about 8 s: a few Numba compilations
def test_tune_writes_a_file_that_check_run_and_emit_take(tmp_path: Path) -> None:
    src = tmp_path / "sweep.mlir"
    src.write_text(SWEEP)
    out_file = tmp_path / "tuned.mlir"
    sizes = ["--param", "N=64", "--param", "A.0=64", "--param", "A.1=64"]
    status, out, err = _cli(
        "tune", str(src), *sizes, "--budget", "4", "--seed", "0", "--workers", "0",
        "-o", str(out_file),
    )  # fmt: skip
    assert status == 0, err
    assert "tune @sweep:" in err and "pruned" in err  # the progress line
    assert "# the winner in Python" in out and f"wrote {out_file}" in out
    assert _cli("check", str(out_file))[0] == 0
    status, out, err = _cli("run", str(out_file), *sizes, "--verify", "--target", "numba")
    assert status == 0 and "verify: ok" in out, out + err
    assert _cli("emit", "numba", str(out_file))[0] == 0


def test_tune_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    src = tmp_path / "sweep.mlir"
    src.write_text(SWEEP)
    status, _, err = _cli("tune", str(src), "--param", "M=3")
    assert status == 2 and "no argument 'M'" in err and "Traceback" not in err
    status, _, err = _cli("tune", str(src), "--budget", "0")
    assert status == 2 and "budget" in err
    status, _, err = _cli("tune", str(src), "--function", "nope")
    assert status == 2 and "no function named 'nope'" in err
    status, _, err = _cli("tune", str(src), "--param", "N")
    assert status == 2 and "--param takes" in err


def test_tune_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    text = capsys.readouterr().out
    for option in ("--param", "--budget", "--dask", "--seed", "--function", "-o"):
        assert option in text


def test_tune_refuses_a_sample_input_that_does_not_fit(tmp_path: Path) -> None:
    import numpy as np

    src = tmp_path / "sweep.mlir"
    src.write_text(SWEEP)
    np.save(tmp_path / "a.npy", np.zeros(12))
    status, _, err = _cli("tune", str(src), "--input", f"A={tmp_path / 'b.npy'}")
    assert status == 2 and "cannot read" in err and "Traceback" not in err
    status, _, err = _cli("tune", str(src), "--input", f"A={tmp_path / 'a.npy'}")
    assert status == 2 and "holds a 12 array, %A is memref<?x?xf64>" in err, err


@pytest.mark.slow  # a few seconds: Numba compilations
def test_tune_takes_the_sizes_of_a_sample_input(tmp_path: Path) -> None:
    import numpy as np

    src = tmp_path / "sweep.mlir"
    src.write_text(SWEEP)
    np.save(tmp_path / "a.npy", np.zeros((40, 36)))
    status, out, err = _cli(
        "tune", str(src), "--input", f"A={tmp_path / 'a.npy'}", "--param", "N=32",
        "--budget", "3", "--seed", "0", "--workers", "0",
    )  # fmt: skip
    assert status == 0, err
    assert "timed at A.0=40, A.1=36, N=32" in out

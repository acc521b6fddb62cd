"""`pk.tune`: the fastest legal schedule of a function, by measured time.

`space` (the candidates: bands, skews, block sizes, orders, unrolling, the parallel
loop), `measure` (legality, the check against the interpreter, timing in one process),
`evaluate` (this process, a local process pool or a Dask cluster), `search` (Optuna's
sampler), `result` (`TuneResult`) and `api` (`tune`). It sits on top of the pipeline:
importing it loads neither Optuna nor Dask, which `tune` imports when it runs.
"""

from polykrnl.tuning.api import DEFAULT_BUDGET, tune
from polykrnl.tuning.measure import Job, Outcome, synthetic_cost
from polykrnl.tuning.result import TuneResult
from polykrnl.tuning.space import Candidate, Move, Space, space_of

__all__ = [
    "DEFAULT_BUDGET",
    "Candidate",
    "Job",
    "Move",
    "Outcome",
    "Space",
    "TuneResult",
    "space_of",
    "synthetic_cost",
    "tune",
]

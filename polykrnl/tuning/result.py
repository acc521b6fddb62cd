"""What `pk.tune` answers: the winning schedule, how it compares, and how the search went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polykrnl.display import code, display_box, highlight, html_table, section
from polykrnl.tuning.search import Tried
from polykrnl.tuning.space import Candidate

if TYPE_CHECKING:
    from polykrnl.pipeline import Schedule
    from polykrnl.transforms.legality_report import LegalityReport


#: a runner-up within this share of the winner's time is a start too (`TuneResult.starts`)
CLOSE = 0.05


@dataclass(frozen=True)
class TuneResult:
    """The fastest legal schedule `pk.tune` measured, and the search that found it.

    `schedule` is the winner (a `pk.Schedule`, legal: `verdict`), `krnl` its Krnl text
    (`to_krnl()`), `script` the Python that rebuilds it; `seconds` its median time (or
    its cost when a cost function replaced timing: `measured` is False); `natural_seconds`
    and `recipe_seconds` those of the loops as written and of the function's own recipe
    (None: none, or not timed), `speedup_natural` / `speedup_recipe` the ratios; `top(n)`
    the n fastest candidates; `pruned` how many candidates legality refused (never
    compiled or timed); `plot()` the time of every candidate in the order tried; `sizes`
    the sizes it was timed at (given, or from a sample's shapes).

    Examples
    --------
    A stencil whose loops carry dependences both ways: some orders are illegal, and
    the search prunes them (a deterministic cost stands in for timing here).

    >>> import polykrnl as pk
    >>> from polykrnl.tuning import synthetic_cost
    >>> fn = pk.parse('''
    ... func.func @sweep(%A: memref<32x32xf64>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to 32, %jj -> %j = 0 to 31) {
    ...     %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    ...     %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    ...     %v = krnl.load %A[%im, %jp] : memref<32x32xf64>
    ...     krnl.store %v, %A[%i, %j] : memref<32x32xf64>
    ...   }
    ...   return
    ... }''')["sweep"]
    >>> result = pk.tune(fn, cost=synthetic_cost, workers=0, seed=0, max_trials=16)
    >>> result.verdict
    'legal'
    >>> result.pruned > 0
    True
    >>> result.natural_seconds is not None and result.seconds <= result.natural_seconds
    True
    """

    function: str
    schedule: Schedule = field(compare=False, repr=False)
    candidate: Candidate
    seconds: float
    natural_seconds: float | None
    recipe_seconds: float | None
    tried: tuple[Tried, ...] = field(repr=False)
    measured: bool = True
    where: str = ""  # the evaluator: "2 local processes", a Dask address
    space_size: int = 0
    sizes: tuple[tuple[str, float], ...] = ()  # the sizes given (`A.0`, `N`), others `size`
    # rounds in which the finalists (fastest few, natural order, recipe) were timed again
    # side by side at the end; 0: not timed again (a cost, or no room in the budget)
    final_rounds: int = 0
    # what every timed kernel was compared with at the check's sizes: "interpreter", or
    # "natural" (the loops as written, compiled) where the interpreter would take minutes
    checked_against: str = "interpreter"

    @property
    def report(self) -> LegalityReport:
        """The winner's legality report."""
        return self.schedule.check()

    @property
    def verdict(self) -> str:
        return self.report.verdict

    @property
    def krnl(self) -> str:
        """The winner as Krnl text (the whole module; `ScheduleError` if it is skewed)."""
        return self.schedule.to_krnl()

    @property
    def script(self) -> str:
        """Python that rebuilds the winner from the function `fn`."""
        return self.schedule.script()

    def count(self, status: str) -> int:
        """How many candidates ended with `status` (timed, illegal, refused, wrong, failed,
        stopped)."""
        return sum(t.outcome.status == status for t in self.tried)

    @property
    def pruned(self) -> int:
        """Candidates legality refused: never compiled, never timed."""
        return self.count("illegal")

    @property
    def speedup_natural(self) -> float | None:
        return None if self.natural_seconds is None else self.natural_seconds / self.seconds

    @property
    def speedup_recipe(self) -> float | None:
        return None if self.recipe_seconds is None else self.recipe_seconds / self.seconds

    def top(self, n: int = 5) -> list[tuple[Candidate, float]]:
        """The `n` fastest candidates measured, fastest first, with their times."""
        timed = [
            (t.outcome.candidate, t.outcome.seconds)
            for t in self.tried
            if t.outcome.status == "timed" and t.outcome.seconds is not None
        ]
        return sorted(timed, key=lambda ct: ct[1])[:n]

    def starts(self) -> list[Candidate]:
        """What a search started from this result (`pk.tune(start=[result])`) measures
        first: the winner, then the fastest other candidate when its time is within
        `CLOSE` of the winner's (timed, not a cost): two forms the timing could not tell
        apart may do unlike on threads (mvt's one-thread forms with and without blocks
        of its columns, 2.07 and 2.05 ms side by side: only the second's threaded
        variants are 1.08 ms, the first's 1.14)."""
        out = [self.candidate]
        if self.measured:
            limit = self.seconds * (1 + CLOSE)
            out += [c for c, s in self.top(2) if c != self.candidate and s <= limit][:1]
        return out

    def _unit(self, seconds: float | None) -> str:
        if seconds is None:
            return "-"
        if not self.measured:
            return f"cost {seconds:.4g}"
        return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.3f} s"

    def _sizes(self) -> str:
        given = ", ".join(f"{k}={v:g}" for k, v in self.sizes)
        return given + ", other sizes the default" if given else "the default sizes"

    def _ratio(self, r: float | None, what: str) -> str:
        return f"{r:.2f}x faster than {what}" if r is not None else f"no time for {what}"

    def _oracle(self) -> str:
        if self.checked_against == "interpreter":
            return "the reference interpreter"
        return (
            "the loops as written compiled by Numba (the interpreter would take minutes "
            "at the program's static sizes)"
        )

    def __str__(self) -> str:
        lines = [
            f"@{self.function}: best {self._unit(self.seconds)} ({self.verdict}), "
            f"{self._ratio(self.speedup_natural, 'the natural order')}, "
            f"{self._ratio(self.speedup_recipe, 'the recipe')}",
            f"  timed at {self._sizes()}; {len(self.tried)} candidates measured on "
            f"{self.where}: "
            f"{self.count('timed')} timed, {self.pruned} pruned by legality, "
            f"{self.count('refused')} refused, {self.count('wrong') + self.count('failed')} "
            "failed the check"
            + (
                f", {self.count('stopped')} stopped at the budget's end"
                if self.count("stopped")
                else ""
            )
            + (
                f"; the finalists timed again in {self.final_rounds} rounds side by side"
                if self.final_rounds
                else ""
            ),
            "  winner: " + str(self.candidate),
        ]
        if self.measured:
            lines.insert(2, "  every timed kernel was checked against " + self._oracle())
        lines += ["  top:"] + [f"    {self._unit(t):>12}  {c}" for c, t in self.top()]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Time (or cost) of each candidate in the order tried, and the best so far
        (matplotlib; pruned and failed candidates have no point)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        xs, ys, best, run = [], [], [], float("inf")
        for t in self.tried:
            if t.outcome.status == "timed" and t.outcome.seconds is not None:
                xs.append(t.number + 1)
                ys.append(t.outcome.seconds)
                run = min(run, t.outcome.seconds)
                best.append(run)
        ax.scatter(xs, ys, s=12, label="candidate")
        ax.step(xs, best, where="post", color="C3", label="best so far")
        if self.natural_seconds is not None:
            ax.axhline(self.natural_seconds, color="grey", ls="--", lw=1, label="natural order")
        ax.set_xlabel("candidates tried")
        ax.set_ylabel("seconds" if self.measured else "cost")
        ax.set_title(f"tuning @{self.function}")
        ax.legend(fontsize="small")
        return ax.figure

    def _repr_html_(self) -> str:
        rows = [[code(str(c)), self._unit(t)] for c, t in self.top()]
        body = (
            f"<div>{self._ratio(self.speedup_natural, 'the natural order')}, "
            f"{self._ratio(self.speedup_recipe, 'the recipe')}; {self.pruned} candidates "
            f"pruned by legality, {len(self.tried)} measured on {self.where}</div>"
            + section("top candidates", html_table(["candidate", "time"], rows))
            + section("winner (Python)", highlight(self.script, "python"))
        )
        title = f"tune @{self.function}: {self._unit(self.seconds)}"
        return display_box("tune", title, body)

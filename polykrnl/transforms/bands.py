"""Permutable bands (perfectly nested chains of loops) and the skews that make one tilable.

A band is permutable when no dependence inside it has a negative distance in
any of its loops. When one has, skews of inner loops by outer ones are
searched (isl's scheduler first, then a small exact search) and checked
against every distance vector of the band before they are suggested.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import islpy as isl

from polykrnl.transforms.core import Schedule, SLoop
from polykrnl.transforms.distances import Distances, parsed_set
from polykrnl.transforms.legality_report import BandVerdict


def band_verdicts(
    sched: Schedule,
    dist: Distances,
    paths: Mapping[str, tuple[str, ...]],
    suggest: bool = True,
) -> list[BandVerdict]:
    """Maximal perfectly nested chains, and whether each is permutable."""
    out: list[BandVerdict] = []
    seen: set[str] = set()
    for name, path in paths.items():
        if name in seen:
            continue
        chain = [name]
        node = sched.node(name)
        while len(node.body) == 1 and isinstance(node.body[0], SLoop):
            node = node.body[0]
            chain.append(node.name)
        seen.update(chain)
        deltas = _band_deltas(dist, path, chain)
        blocking = _negative(deltas, len(path) - 1, chain)
        suggestion: tuple[str, ...] = ()
        by = ""
        if blocking and suggest and len(chain) > 1:
            suggestion, by = _suggest_skews(deltas, len(path) - 1, chain)
        out.append(BandVerdict(tuple(chain), not blocking, tuple(blocking), suggestion, by))
    return out


def _band_deltas(dist: Distances, path: tuple[str, ...], chain: list[str]) -> isl.UnionSet | None:
    """Distance vectors (outer loops, then the chain) of the dependences inside the band."""
    full = (*path[:-1], *chain)
    n = len(full)
    u: isl.UnionSet | None = None
    for _, delta in dist.under(full):
        extra = delta.dim(isl.dim_type.set) - n
        x = isl.UnionSet.from_set(delta.project_out(isl.dim_type.set, n, extra) if extra else delta)
        u = x if u is None else u.union(x)
    return u


def _negative(
    deltas: isl.UnionSet | None,
    n_out: int,
    chain: Sequence[str],
    skews: Sequence[tuple[int, int, int]] = (),
) -> list[str]:
    """Chain loops with a negative distance (after skews (x, o, f): d_x += f * d_o)."""
    if deltas is None:
        return []
    n = n_out + len(chain)
    xs = [f"x{i}" for i in range(n)]
    comp = {k: f"x{n_out + k}" for k in range(len(chain))}
    for x, o, f in skews:
        # skew(x, o, f) adds f times the loop value of o, itself maybe skewed already
        comp[x] = f"({comp[x]} + {f} * {comp[o]})"
    outer = " and ".join(f"x{i} = 0" for i in range(n_out)) or "true"
    out: list[str] = []
    for k in range(len(chain)):
        bad = parsed_set(f"{{ [{', '.join(xs)}] : {outer} and {comp[k]} < 0 }}")
        if not deltas.intersect(isl.UnionSet.from_set(bad)).is_empty():
            out.append(chain[k])
    return out


#: skew combinations the search tries at most (each an isl emptiness test per loop)
MAX_SKEW_TRIALS = 24


def _suggest_skews(
    deltas: isl.UnionSet | None, n_out: int, chain: list[str]
) -> tuple[tuple[str, ...], str]:
    """Skews of inner loops by outer ones that make the band permutable, and who found them.

    isl's scheduler is asked first; when its band is not a chain of skews (or
    it finds none), a small exact search over factors 0..3 follows (at most
    MAX_SKEW_TRIALS combinations: 4^5 of them on a 6-loop band took seconds, and one
    emptiness test on a tiled band 16 ms). Either way the skews are checked against
    every distance vector of the band, so a suggestion is always right (but not
    always found).
    """
    skews = _isl_skews(deltas, n_out, len(chain))
    if skews is not None and not _negative(deltas, n_out, chain, skews):
        return _skew_calls(skews, chain), "isl"
    skews = []
    trials = 0
    for x in range(1, len(chain)):
        if chain[x] not in _negative(deltas, n_out, chain, skews):
            continue
        combos = sorted(itertools.product(range(4), repeat=x), key=lambda c: (sum(c), c))
        for combo in combos:
            trials += 1
            if trials > MAX_SKEW_TRIALS:
                return (), ""  # a long band (tiled, mostly): no suggestion rather than minutes
            trial = [*skews, *((x, o, f) for o, f in enumerate(combo) if f)]
            if any(combo) and chain[x] not in _negative(deltas, n_out, chain, trial):
                skews = trial
                break
        else:
            return (), ""
    if _negative(deltas, n_out, chain, skews):
        return (), ""
    return _skew_calls(skews, chain), "search"


def _skew_calls(skews: Sequence[tuple[int, int, int]], chain: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"skew('{chain[x]}', '{chain[o]}', {f})" for x, o, f in skews)


def _isl_skews(
    deltas: isl.UnionSet | None, n_out: int, n: int
) -> list[tuple[int, int, int]] | None:
    """The skews isl's scheduler proposes for the band, if its band is a chain of skews.

    The band's dependences inside one iteration of the outer loops become uniform
    dependences of one statement S (S[x] -> S[x + d] for each distance d); isl
    computes a schedule whose outer band keeps every one of them non-negative in
    every member. If that band has all n members, in the original order, each
    member x_k + (a combination of the outer members), it reads as skews.
    """
    if deltas is None:
        return None
    distances = _inner_distances(deltas, n_out)
    # Distances with integer divisions (tile loops in the band) make isl's scheduler
    # slow (half a second for a tiled 6-deep band), and a skew of point loops by
    # tile loops is not what a user wants: those bands go to the search.
    if distances is None or any(b.dim(isl.dim_type.div) for b in distances.get_basic_sets()):
        return None
    rel = _uniform_dependence(distances)
    dom = isl.UnionSet.from_set(isl.Set.universe(rel.get_space().domain()))
    deps = isl.UnionMap.from_map(rel)
    sc = isl.ScheduleConstraints.on_domain(dom).set_validity(deps).set_proximity(deps)
    try:
        node = sc.compute_schedule().get_root().child(0)
    except isl.Error:
        return None
    if node.get_type() != isl.schedule_node_type.band or node.band_n_member() != n:
        return None
    if not node.band_get_permutable():
        return None
    rows: list[list[int]] = []
    mupa = node.band_get_partial_schedule()
    for k in range(n):
        pas: list[isl.PwAff] = []
        mupa.get_at(k).foreach_pw_aff(pas.append)
        if len(pas) != 1:
            return None
        aff = _only_piece(pas[0])
        if aff is None:
            return None
        rows.append(
            [int(aff.get_coefficient_val(isl.dim_type.in_, i).to_python()) for i in range(n)]
        )
    # Unit lower triangular: member k = x_k + sum of multiples of the members before it.
    skews: list[tuple[int, int, int]] = []
    for k, row in enumerate(rows):
        if row[k] != 1 or any(row[k + 1 :]):
            return None
        rest = row[:k]
        for o in range(k - 1, -1, -1):
            f = rest[o]
            if f:
                skews.append((k, o, f))
                rest = [a - f * b for a, b in zip(rest, rows[o][:k], strict=True)]
        if any(rest):
            return None
    return sorted(skews)


def _only_piece(pa: isl.PwAff) -> isl.Aff | None:
    """The affine expression of a one-piece PwAff without integer divisions."""
    affs: list[isl.Aff] = []
    pa.foreach_piece(lambda _set, aff: affs.append(aff))
    if len(affs) != 1 or affs[0].dim(isl.dim_type.div):
        return None
    return affs[0]


def _inner_distances(deltas: isl.UnionSet, n_out: int) -> isl.Set | None:
    """The band's distance vectors with the outer loops' distances 0, outer dims dropped."""
    sets: list[isl.Set] = []
    deltas.foreach_set(sets.append)
    out: isl.Set | None = None
    for s in sets:
        for i in range(n_out):
            s = s.fix_val(isl.dim_type.set, i, isl.Val.zero(s.get_ctx()))
        s = s.project_out(isl.dim_type.set, 0, n_out)
        out = s if out is None else out.union(s)
    return out


def _uniform_dependence(distances: isl.Set) -> isl.Map:
    """{ S[x] -> S[x + d] : d in distances }."""
    n = distances.dim(isl.dim_type.set)
    space = isl.Space.create_from_names(
        distances.get_ctx(), set=[f"x{i}" for i in range(n)]
    ).set_tuple_name(isl.dim_type.set, "S")
    space = space.align_params(distances.get_space())
    universe = isl.Map.universe(space.map_from_set())
    d = distances.set_tuple_name("S")
    return universe.deltas_map().intersect_range(d).domain().unwrap()

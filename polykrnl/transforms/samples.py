"""One concrete point of an isl map: the witnesses of legality and of memory safety."""

from __future__ import annotations

import islpy as isl


def sample_pair(m: isl.Map) -> tuple[list[int], list[int], dict[str, int]]:
    """A point of the non-empty map `m`: its input and output coordinates, and the value
    of every parameter (by isl name)."""
    p = m.wrap().sample_point()
    n_in = m.dim(isl.dim_type.in_)
    n_out = m.dim(isl.dim_type.out)
    coords = [
        int(p.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n_in + n_out)
    ]
    params = {
        str(m.get_dim_name(isl.dim_type.param, i)): int(
            p.get_coordinate_val(isl.dim_type.param, i).to_python()
        )
        for i in range(m.dim(isl.dim_type.param))
    }
    return coords[:n_in], coords[n_in:], params

"""The Krnl primitives, one module each: functions from a schedule to a new one.

They follow Krnl exactly (see docs/krnl-semantics.md):

* ``block(loop, T)`` strip-mines: the tile loop keeps the bounds and steps by
  ``T`` (times the loop's step); its value for an instance whose loop value
  is ``v`` is ``lb + S*floor((v - lb)/S)`` (tiles start at the lower bound,
  not at multiples of ``T`` as isl's ``band_tile`` would have it); the point
  loop runs from the tile value to ``tile + T``, ``tile + count`` or
  ``min(tile + T, UB...)`` as the divisibility rules say.
* ``permute(loops, map)`` scatters (loop k goes to position map[k]) a
  perfectly nested chain; ``reorder(order)`` gathers.
* ``parallel(*loops)`` marks loops parallel (coincident bands);
  ``parallel_parts(loop)`` (not Krnl, in parallel.py) runs a loop before its split
  point, at it and after it, the outer parts in parallel;
  ``unroll(loop)`` needs a constant trip count.
* ``skew(loop, by, factor)`` (not Krnl) runs a loop shifted by an outer one;
  ``fuse(first, second, shift)`` (not Krnl) runs two adjacent sibling loops as one;
  ``distribute(loop)`` (not Krnl) makes one loop per statement or loop of its body;
  ``surround(loop, name, value)`` (not Krnl) puts a loop inside a loop of one
  iteration, so that fuse joins nests of different depths;
  ``trivialize(loop)`` makes a loop run once (a Krnl point loop never named).

Each checks its arguments against the schedule before it builds anything and
raises ScheduleError when they do not fit. None judges legality: whether the
new order keeps the dependences is for the caller (``polykrnl.Schedule``
refuses an illegal result unless ``force=True``).
"""

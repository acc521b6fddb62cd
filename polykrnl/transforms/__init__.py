"""Schedules: the Krnl recipe as isl schedule-tree transformations, dependences, legality.

Imports only the stages before it (ir, dialect, reader, nest, poly: data flows one way). Inside,
imports go one way too: ``bounds`` and ``core`` (the schedule value and its
queries) at the bottom, with ``dependences`` (the program's alone); ``primitives``,
``looptree``, ``trace`` and ``to_krnl`` on them; then the legality modules
(``legality_report``, ``distances``, ``bands``, ``witnesses``, ``legality``);
``recipe`` on top. The user-facing ``polykrnl.Schedule`` is in polykrnl.pipeline.
"""

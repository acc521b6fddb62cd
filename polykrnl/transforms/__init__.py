"""Schedules: the Krnl recipe as isl schedule-tree transformations, dependences, legality.

Imports from polykrnl.model only (data flows one way along the pipeline).
"""

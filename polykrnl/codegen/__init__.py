"""The lowering the targets share: isl ASTs of a schedule read as loops, the Python writer
of both Python targets, bounds guards, argument binding, the text of the input in code.

Imports the stages before it (up to polykrnl.transforms), never a target.
"""

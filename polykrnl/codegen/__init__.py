"""Code generation from a Schedule: isl AST, Python/NumPy kernels, loop-tree printing.

May import polykrnl.model and polykrnl.transforms, never the reverse.
"""

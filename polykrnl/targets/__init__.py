"""Code generators that are packages of their own: one per target (``mlir/``)."""

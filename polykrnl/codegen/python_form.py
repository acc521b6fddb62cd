"""The form of Python a target writes: what distinguishes the NumPy target's code from the
Numba target's, as properties the code generator reads (never a target's name).

NumPy code is array code over Python objects: loops the legality report proves parallel
become slices, values are NumPy scalars or arrays, dictionaries take any key. Numba code is
scalar loops compiled by Numba: every value keeps its MLIR type, parallel loops become
`prange`, typed dictionaries take integer keys, some ops have no compiled form.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from polykrnl.codegen.numba_values import NUMBA_REFUSED


@dataclass(frozen=True)
class PythonForm:
    #: the stage's name in error messages ("NumPy code generation")
    stage: str
    #: the target's label, for "has no X translation yet"
    label: str
    #: scalar loops with typed values, parallel loops as prange (Numba), instead of array
    #: code over NumPy objects
    compiled: bool
    #: ops the form has no translation for (refused at the op, with the other target named)
    refused: tuple[type[Operation], ...] = ()

    def refuses(self, op: Operation) -> bool:
        return isinstance(op, self.refused)


NUMPY_FORM = PythonForm("NumPy code generation", "NumPy", compiled=False)
NUMBA_FORM = PythonForm("Numba code generation", "Numba", compiled=True, refused=NUMBA_REFUSED)

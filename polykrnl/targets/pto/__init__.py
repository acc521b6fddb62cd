"""PTO tile code generation: tile types, instruction table, tmp-size rules, C++ emitter.

The PTO target: imports the stages before the targets and the shared lowering
(polykrnl.codegen), never another target.
"""

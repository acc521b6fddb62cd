"""PTO tile code generation: tile types, instruction table, tmp-size rules, C++ emitter.

May import polykrnl.model, polykrnl.transforms and polykrnl.codegen, never the reverse.
"""

// polykrnl: syntax-only
// Covers: the string ops, in the generic form: krnl.strlen (!krnl.string -> i64),
// krnl.strncmp (two strings and an i64 length -> i32), and krnl.find_index into
// a perfect hash table (G, V) with a string key and with an i64 key; strings
// read from a memref<?x!krnl.string> inside a loop.
func.func private @lookup(%key: !krnl.string, %G: memref<3xi32>, %V: memref<3xi32>) -> index {
  %c3 = arith.constant 3 : i32
  %idx = "krnl.find_index"(%key, %G, %V, %c3) : (!krnl.string, memref<3xi32>, memref<3xi32>, i32) -> index
  return %idx : index
}

func.func private @lookup_int(%key: i64, %G: memref<3xi32>, %V: memref<3xi32>) -> index {
  %c3 = arith.constant 3 : i32
  %idx = "krnl.find_index"(%key, %G, %V, %c3) : (i64, memref<3xi32>, memref<3xi32>, i32) -> index
  return %idx : index
}

func.func @compare_all(%words: memref<4x!krnl.string>, %probe: !krnl.string, %res: memref<4xi32>) {
  %len = "krnl.strlen"(%probe) : (!krnl.string) -> i64
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %w = krnl.load %words[%i] : memref<4x!krnl.string>
    %c = "krnl.strncmp"(%w, %probe, %len) : (!krnl.string, !krnl.string, i64) -> i32
    krnl.store %c, %res[%i] : memref<4xi32>
  }
  return
}

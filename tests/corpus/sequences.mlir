// polykrnl: syntax-only
// Covers: the ONNX sequence ops, generic form: krnl.seqalloc (a memref of memrefs of
// a given length), krnl.seqstore of a cast tensor, krnl.seqextract with and without
// the `copy` attribute (ui1), krnl.seqdealloc; memref.cast in the generic form.
func.func @sequence_roundtrip(%t0: memref<2x3xf32>, %t1: memref<4x3xf32>) -> memref<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %seq = "krnl.seqalloc"(%c2) : (index) -> memref<?xmemref<?x3xf32>>
  %a = "memref.cast"(%t0) : (memref<2x3xf32>) -> memref<?x3xf32>
  %b = "memref.cast"(%t1) : (memref<4x3xf32>) -> memref<?x3xf32>
  "krnl.seqstore"(%a, %seq, %c0) : (memref<?x3xf32>, memref<?xmemref<?x3xf32>>, index) -> ()
  "krnl.seqstore"(%b, %seq, %c1) : (memref<?x3xf32>, memref<?xmemref<?x3xf32>>, index) -> ()
  %first = "krnl.seqextract"(%seq, %c0) {copy = 1 : ui1} : (memref<?xmemref<?x3xf32>>, index) -> memref<?x3xf32>
  %second = "krnl.seqextract"(%seq, %c1) {copy = 0 : ui1} : (memref<?xmemref<?x3xf32>>, index) -> memref<?x3xf32>
  %third = "krnl.seqextract"(%seq, %c1) : (memref<?xmemref<?x3xf32>>, index) -> memref<?x3xf32>
  "krnl.seqdealloc"(%seq) : (memref<?xmemref<?x3xf32>>) -> ()
  return %first : memref<?x3xf32>
}

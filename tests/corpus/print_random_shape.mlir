// polykrnl: syntax-only
// Covers: the debugging and random-number ops, generic form: krnl.print with a
// format string and a value, and with the format only (no operand), krnl.print_tensor
// with its msg flags, krnl.random_normal (output, count, mean, scale, seed), and
// krnl.shape (the shape of a memref as a memref<Rxindex>).
func.func @debug_and_random(%t: memref<3x4xf32>, %x: f32) {
  %n = arith.constant 12 : index
  %mean = arith.constant 0.0 : f32
  %scale = arith.constant 1.0 : f32
  %seed = arith.constant 42.0 : f32
  "krnl.random_normal"(%t, %n, %mean, %scale, %seed) : (memref<3x4xf32>, index, f32, f32, f32) -> ()
  "krnl.print"() {format = "random tensor:\n"} : () -> ()
  "krnl.print_tensor"(%t) {msg = "%s%d"} : (memref<3x4xf32>) -> ()
  "krnl.print_tensor"(%t) {msg = "t has type %t"} : (memref<3x4xf32>) -> ()
  "krnl.print"(%x) {format = "x = %f\n"} : (f32) -> ()
  %shape = "krnl.shape"(%t) : (memref<3x4xf32>) -> memref<2xindex>
  "krnl.print_tensor"(%shape) {msg = "shape: %d"} : (memref<2xindex>) -> ()
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 3) {
    %c0 = arith.constant 0 : index
    %v = krnl.load %t[%i, %c0] : memref<3x4xf32>
    "krnl.print"(%v) {format = "row head %f\n"} : (f32) -> ()
  }
  return
}

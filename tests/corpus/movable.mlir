// polykrnl: semantic
// Covers: krnl.movable inside krnl.iterate bodies, the form the Krnl lowering uses
// to carry statements that wait for their destination loop: a movable before and
// after a nested `krnl.iterate(%kl) with ()` of a blocked loop, one movable holding
// several ops, and one with an explicit krnl.terminate (the custom syntax omits it).
// The last movable halves the row sum once per tile of k: s[i] ends as a weighted sum.
func.func @movable_row_sums(%a: memref<8x16xf32>, %s: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %kk = krnl.define_loops 2
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ii, %kb) with (%ii -> %i = 0 to 8, %kk -> %k = 0 to 16) {
    krnl.movable {
      %k0 = krnl.get_induction_var_value(%kb) : (!krnl.loop) -> index
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %k0, %c0 : index
      scf.if %first {
        krnl.store %zero, %s[%i] : memref<8xf32>
      }
    }
    krnl.iterate(%kl) with () {
      krnl.movable {
        %v = krnl.load %a[%i, %k] : memref<8x16xf32>
        %acc = krnl.load %s[%i] : memref<8xf32>
        %n = arith.addf %acc, %v : f32
        krnl.store %n, %s[%i] : memref<8xf32>
        "krnl.terminate"() : () -> ()
      }
    }
    krnl.movable {
      %r = krnl.load %s[%i] : memref<8xf32>
      %half = arith.constant 0.5 : f32
      %m = arith.mulf %r, %half : f32
      krnl.store %m, %s[%i] : memref<8xf32>
    }
  }
  return
}

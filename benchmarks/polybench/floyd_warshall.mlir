// floyd-warshall: all-pairs shortest paths on a graph of N nodes, in place:
// path[i][j] := min(path[i][j], path[i][k] + path[k][j]) for each intermediate
// node k. Element type i32, as in PolyBench (DATA_TYPE_IS_INT for this kernel);
// missing edges carry a large weight (999 in PolyBench's initialisation).
//
// Follows PolyBench 4.2 medley/floyd-warshall/floyd-warshall.c
// (kernel_floyd_warshall): for k, for i, for j: path[i][j] = path[i][j] <
// path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j]; written as a
// signed compare and a select of the same two values.
//
// @floyd_warshall is that program as written.
// @floyd_warshall_tiled tiles the i, j nest 32x32 inside the k loop (ib, jb, il,
// jl). Legal: inside one k, the dependences have distances (+, 0) (through column
// k, written at j = k and read by every j) and (0, +) (through row k), all
// non-negative, so the band is permutable; the k loop is not tiled (it carries
// dependences of distance (1, -1, 0) and (1, 0, -1)). Every instance reads what it
// read before: the results equal those of @floyd_warshall exactly.
func.func @floyd_warshall(%N: index, %path: memref<?x?xi32>) {
  %kk, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%kk, %ii, %jj) with (%kk -> %k = 0 to %N, %ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %pij = krnl.load %path[%i, %j] : memref<?x?xi32>
    %pik = krnl.load %path[%i, %k] : memref<?x?xi32>
    %pkj = krnl.load %path[%k, %j] : memref<?x?xi32>
    %s = arith.addi %pik, %pkj : i32
    %lt = arith.cmpi slt, %pij, %s : i32
    %m = arith.select %lt, %pij, %s : i32
    krnl.store %m, %path[%i, %j] : memref<?x?xi32>
  }
  return
}

func.func @floyd_warshall_tiled(%N: index, %path: memref<?x?xi32>) {
  %kk, %ii, %jj = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%kk, %ib, %jb, %il, %jl) with (%kk -> %k = 0 to %N, %ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %pij = krnl.load %path[%i, %j] : memref<?x?xi32>
    %pik = krnl.load %path[%i, %k] : memref<?x?xi32>
    %pkj = krnl.load %path[%k, %j] : memref<?x?xi32>
    %s = arith.addi %pik, %pkj : i32
    %lt = arith.cmpi slt, %pij, %s : i32
    %m = arith.select %lt, %pij, %s : i32
    krnl.store %m, %path[%i, %j] : memref<?x?xi32>
  }
  return
}

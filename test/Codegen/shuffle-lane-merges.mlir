// RUN: dyncc-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(dyncc-shuffle-lane-merges))' | FileCheck %s

// A row's sum split over a warp's 32 lanes: each lane's partial, reduced by
// a butterfly of shuffles, is kept until the merge's place (after the
// accumulator's initialization) and folded into the accumulator there. The
// buffer of partials and the merge are gone.
// CHECK-LABEL: func.func @warp_sum
// CHECK-NOT:     memref<32x1xf32>
// CHECK:         %[[KEPT:.+]] = memref.alloca() : memref<f32>
// CHECK:         scf.forall
// CHECK:           scf.for
// CHECK:           }
// CHECK-NEXT:      %[[V:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<1xf32>
// CHECK:           %[[S1:.+]], %{{.+}} = gpu.shuffle  xor %[[V]], %c1_i32, %c32_i32{{.*}} : f32
// CHECK-NEXT:      %[[A1:.+]] = arith.addf %[[V]], %[[S1]] : f32
// CHECK:           gpu.shuffle  xor %[[A1]], %c2_i32, %c32_i32{{.*}} : f32
// CHECK:           gpu.shuffle  xor %{{.+}}, %c4_i32, %c32_i32{{.*}} : f32
// CHECK:           gpu.shuffle  xor %{{.+}}, %c8_i32, %c32_i32{{.*}} : f32
// CHECK:           gpu.shuffle  xor %{{.+}}, %c16_i32, %c32_i32{{.*}} : f32
// CHECK-NEXT:      %[[W:.+]] = arith.addf
// CHECK:           memref.store %[[W]], %[[KEPT]][] : memref<f32>
// CHECK-NOT:       linalg.copy
// CHECK:         } {mapping = [#gpu.thread<x>]}
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[ACC:.+]] : memref<1xf32>)
// CHECK-NEXT:    %[[OLD:.+]] = memref.load %[[ACC]][%{{.+}}] : memref<1xf32>
// CHECK-NEXT:    %[[ROW:.+]] = memref.load %[[KEPT]][] : memref<f32>
// CHECK-NEXT:    %[[NEW:.+]] = arith.addf %[[OLD]], %[[ROW]] : f32
// CHECK-NEXT:    memref.store %[[NEW]], %[[ACC]][%{{.+}}] : memref<1xf32>
// CHECK-NOT:     dyncc.lane_merge
func.func @warp_sum(%x: memref<?xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %parts = memref.alloca() : memref<32x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  %mine = memref.alloca() : memref<1xf32>
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.forall (%lane) in (32) {
    linalg.fill ins(%zero : f32) outs(%mine : memref<1xf32>)
    scf.for %i = %lane to %n step %c32 {
      %v = memref.load %x[%i] : memref<?xf32>
      %a = memref.load %mine[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %mine[%c0] : memref<1xf32>
    }
    %slot = memref.subview %parts[%lane, 0] [1, 1] [1, 1] : memref<32x1xf32> to memref<1xf32, strided<[1], offset: ?>>
    linalg.copy ins(%mine : memref<1xf32>) outs(%slot : memref<1xf32, strided<[1], offset: ?>>)
  } {mapping = [#gpu.thread<x>]}
  linalg.fill ins(%zero : f32) outs(%acc : memref<1xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<32x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%acc : memref<1xf32>) outs(%out : memref<1xf32>)
  return
}

// -----

// A block of 64 lanes (two warps), 64-bit values: lane 0 of each warp
// stores the warp's value in a shared slot; a second forall over the lanes
// folds the slots into each thread's accumulator. Shuffles move 32 bits:
// an f64 goes as two halves.
// CHECK-LABEL: func.func @block_max
// CHECK:         %[[SLOTS:.+]] = memref.alloc() {alignment = 16 : i64} : memref<2xf64, #gpu.address_space<workgroup>>
// CHECK:         scf.forall (%[[LANE:.+]]) in (64)
// CHECK:           arith.bitcast %{{.+}} : f64 to i64
// CHECK:           gpu.shuffle  xor %{{.+}}, %c1_i32, %c32_i32{{.*}} : i32
// CHECK:           gpu.shuffle  xor %{{.+}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK:           arith.maximumf {{.*}} : f64
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq
// CHECK:           scf.if %[[FIRST]] {
// CHECK-NEXT:        %[[WARP:.+]] = arith.divui %[[LANE]], %c32
// CHECK-NEXT:        memref.store %{{.+}}, %[[SLOTS]][%[[WARP]]]
// CHECK:         } {mapping = [#gpu.thread<x>]}
// CHECK:         scf.forall (%{{.+}}) in (64)
// CHECK:           scf.for %[[W:.+]] = %{{.+}} to %c2 step
// CHECK-NEXT:        memref.load %[[SLOTS]][%[[W]]]
// CHECK-NEXT:        arith.maximumf
// CHECK:         } {mapping = [#gpu.thread<x>]}
func.func @block_max(%x: memref<?xf64>, %out: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %low = arith.constant 0xFFF0000000000000 : f64
  %parts = memref.alloca() : memref<64x1xf64>
  %acc = memref.alloca() : memref<1xf64>
  %mine = memref.alloca() : memref<1xf64>
  %n = memref.dim %x, %c0 : memref<?xf64>
  linalg.fill ins(%low : f64) outs(%acc : memref<1xf64>)
  scf.forall (%lane) in (64) {
    linalg.fill ins(%low : f64) outs(%mine : memref<1xf64>)
    scf.for %i = %lane to %n step %c64 {
      %v = memref.load %x[%i] : memref<?xf64>
      %a = memref.load %mine[%c0] : memref<1xf64>
      %s = arith.maximumf %a, %v : f64
      memref.store %s, %mine[%c0] : memref<1xf64>
    }
    %slot = memref.subview %parts[%lane, 0] [1, 1] [1, 1] : memref<64x1xf64> to memref<1xf64, strided<[1], offset: ?>>
    linalg.copy ins(%mine : memref<1xf64>) outs(%slot : memref<1xf64, strided<[1], offset: ?>>)
  } {mapping = [#gpu.thread<x>]}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<64x1xf64>) outs(%acc : memref<1xf64>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f64, %o: f64):
    %r = arith.maximumf %o, %in : f64
    linalg.yield %r : f64
  }
  linalg.copy ins(%acc : memref<1xf64>) outs(%out : memref<1xf64>)
  return
}

// -----

// A column's mean split over groups of 8 lanes (`reduce column`: the
// block's 8 x threads, 16 outputs over y, so a warp holds 4 groups): the
// butterfly takes 3 steps within the group, each an nvvm.shfl.sync whose
// member mask is the group's 8 lanes from this lane's group start, so
// that groups whose output is past the edge may skip it.
// CHECK-LABEL: func.func @column_groups
// CHECK:         %[[KEPT:.+]] = memref.alloca() : memref<f32>
// CHECK:         scf.forall
// CHECK:           scf.for
// CHECK:           }
// CHECK-NEXT:      %[[V:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<1xf32>
// CHECK:           %[[LANE:.+]] = nvvm.read.ptx.sreg.laneid : i32
// CHECK:           %[[START:.+]] = arith.andi %[[LANE]], %c-8_i32 : i32
// CHECK:           %[[MEMBERS:.+]] = arith.shli %c255_i32, %[[START]] : i32
// CHECK:           %[[S1:.+]] = nvvm.shfl.sync  bfly %[[MEMBERS]], %[[V]], %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT:      %[[A1:.+]] = arith.addf %[[V]], %[[S1]] : f32
// CHECK:           %[[S2:.+]] = nvvm.shfl.sync  bfly %[[MEMBERS]], %[[A1]], %c2_i32, %c31_i32{{.*}} : f32 -> f32
// CHECK-NEXT:      %[[A2:.+]] = arith.addf %[[A1]], %[[S2]] : f32
// CHECK:           %[[S4:.+]] = nvvm.shfl.sync  bfly %[[MEMBERS]], %[[A2]], %c4_i32, %c31_i32{{.*}} : f32 -> f32
// CHECK-NEXT:      %[[A4:.+]] = arith.addf %[[A2]], %[[S4]] : f32
// CHECK-NEXT:      memref.store %[[A4]], %[[KEPT]][] : memref<f32>
// CHECK-NOT:       gpu.shuffle
// CHECK:         } {mapping = [#gpu.thread<x>]}
// CHECK-NOT:     dyncc.lane_merge
func.func @column_groups(%x: memref<?x768xf32>, %col: index, %out: memref<1xf32>) attributes {dyncc.tile_config = {block = array<i64: 16, 8>, k_step = 64 : i64, reduce = "column", thread = array<i64: 1, 1>}} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %parts = memref.alloca() : memref<8x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  %mine = memref.alloca() : memref<1xf32>
  %n = memref.dim %x, %c0 : memref<?x768xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1xf32>)
  scf.forall (%lane) in (8) {
    linalg.fill ins(%zero : f32) outs(%mine : memref<1xf32>)
    scf.for %i = %lane to %n step %c8 {
      %v = memref.load %x[%i, %col] : memref<?x768xf32>
      %a = memref.load %mine[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %mine[%c0] : memref<1xf32>
    }
    %slot = memref.subview %parts[%lane, 0] [1, 1] [1, 1] : memref<8x1xf32> to memref<1xf32, strided<[1], offset: ?>>
    linalg.copy ins(%mine : memref<1xf32>) outs(%slot : memref<1xf32, strided<[1], offset: ?>>)
  } {mapping = [#gpu.thread<x>]}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<8x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%acc : memref<1xf32>) outs(%out : memref<1xf32>)
  return
}

// -----

// A group of lanes is an aligned run of a warp's lanes only where the
// lanes are the block's x threads.
func.func @group_not_x(%out: memref<1xf32>) attributes {dyncc.tile_config = {block = array<i64: 4, 32>, k_step = 64 : i64, reduce = "warp", thread = array<i64: 1, 1>}} {
  %parts = memref.alloca() : memref<8x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{merges 8 lanes, fewer than a warp, in a kernel whose blocks do not have as many x threads}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<8x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @odd_group(%out: memref<1xf32>) {
  %parts = memref.alloca() : memref<6x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{merges 6 lanes, neither a power of two up to the warp's 32 nor a multiple of it}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<6x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Each thread needs the row's value: an accumulator in global memory (a
// kernel argument) would be written by every lane.
func.func @global_accumulator(%out: memref<1xf32>) {
  %parts = memref.alloca() : memref<32x1xf32>
  // expected-error @below {{merges into an accumulator that is not private to the thread}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<32x1xf32>) outs(%out : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @no_lanes() {
  %parts = memref.alloca() : memref<32x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{has no lanes' forall before it}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<32x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @partial_warp() {
  %parts = memref.alloca() : memref<48x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{merges 48 lanes, neither a power of two up to the warp's 32 nor a multiple of it}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<48x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @wide(%x: memref<1xi128>) {
  %parts = memref.alloca() : memref<32x1xi128>
  %acc = memref.alloca() : memref<1xi128>
  // expected-error @below {{merges 'i128', wider than a warp shuffle's 64 bits}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<32x1xi128>) outs(%acc : memref<1xi128>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: i128, %o: i128):
    %r = arith.addi %o, %in : i128
    linalg.yield %r : i128
  }
  return
}

// -----

func.func @two_inputs() {
  %parts = memref.alloca() : memref<32x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{is not a bufferized lane merge}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts, %parts : memref<32x1xf32>, memref<32x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @dynamic_partials(%n: index) {
  %parts = memref.alloca(%n) : memref<?x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{merges partials that are not a private buffer of static shape}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<?x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %o, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func @no_combiner() {
  %parts = memref.alloca() : memref<32x1xf32>
  %acc = memref.alloca() : memref<1xf32>
  // expected-error @below {{has no combiner of two values}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%parts : memref<32x1xf32>) outs(%acc : memref<1xf32>) attrs = {dyncc.lane_merge} {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

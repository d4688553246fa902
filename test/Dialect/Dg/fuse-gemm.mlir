// RUN: dyncc-opt %s --split-input-file --dyncc-fuse-gemm | FileCheck %s

// Bias add and ReLU join the matmul's group.
// CHECK-LABEL: func.func @epilogue(
//       CHECK:   %[[W:.+]] = dg.constant
//       CHECK:   %[[B:.+]] = dg.constant
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul %{{.+}}, %[[W]] {dg.backbone}
//  CHECK-NEXT:     %[[A:.+]] = dg.add %[[M]], %[[B]]
//  CHECK-NEXT:     %[[R:.+]] = dg.relu %[[A]]
//  CHECK-NEXT:     dg.yield %[[R]]
//       CHECK:   return %[[G]]
sym.symbol @B range [1, 8192]
func.func @epilogue(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x32xf32, #sym.shape<[B, 32]>> {
  %w = dg.constant dense<1.0> : tensor<64x32xf32>
  %b = dg.constant dense<0.5> : tensor<32xf32>
  %0 = dg.matmul %x, %w : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %1 = dg.add %0, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %2 = dg.relu %1 : tensor<?x32xf32, #sym.shape<[B, 32]>> -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  return %2 : tensor<?x32xf32, #sym.shape<[B, 32]>>
}

// -----

// Must not fuse: the consumer's index space [B, L2] is not provably the
// backbone's [B, L] (no equality known), even though both are dynamic.
// CHECK-LABEL: func.func @different_index_space(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.add %[[G]]
//   CHECK-NOT:   dg.fusion
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 64]
sym.symbol @L2 range [1, 64]
func.func @different_index_space(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %w: tensor<8x?xf32, #sym.shape<[8, L]>>,
                                 %y: tensor<?x?xf32, #sym.shape<[B, L2]>>) -> tensor<?x?xf32, #sym.shape<[B, L2]>> {
  %0 = dg.matmul %x, %w : (tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<8x?xf32, #sym.shape<[8, L]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
  %1 = dg.add %0, %y : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L2]>>) -> tensor<?x?xf32, #sym.shape<[B, L2]>>
  return %1 : tensor<?x?xf32, #sym.shape<[B, L2]>>
}

// -----

// Epilogues are DAGs: a value with several users in the group (GELU's x,
// here relu and add of the same product) stays in the group, and every
// value used outside it becomes a group result.
// CHECK-LABEL: func.func @two_users(
//       CHECK:   %[[G:.+]]:2 = dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul
//  CHECK-NEXT:     %[[R:.+]] = dg.relu %[[M]]
//  CHECK-NEXT:     %[[A:.+]] = dg.add %[[M]], %[[M]]
//  CHECK-NEXT:     dg.yield %[[R]], %[[A]]
//       CHECK:   return %[[G]]#0, %[[G]]#1
func.func @two_users(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %0 : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.add %0, %0 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A side operand defined after the backbone but independent of it is fine,
// and its producer (a relu only the add reads) joins as well: it is applied
// as the side operand is loaded.
// CHECK-LABEL: func.func @late_operand(
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul
//  CHECK-NEXT:     %[[R:.+]] = dg.relu
//  CHECK-NEXT:     dg.add %[[M]], %[[R]]
func.func @late_operand(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %y : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.add %0, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Must not fuse: the add's other operand depends on the first group through
// a second backbone, so the first group would depend on itself. The add
// joins the second matmul's group instead.
// CHECK-LABEL: func.func @cycle(
//       CHECK:   %[[G1:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     %[[M1:.+]] = dg.matmul
//  CHECK-NEXT:     dg.yield %[[M1]]
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     %[[M2:.+]] = dg.matmul %[[G1]]
//  CHECK-NEXT:     dg.add %[[G1]], %[[M2]]
func.func @cycle(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %0 = dg.matmul %x, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = dg.matmul %0, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %2 = dg.add %0, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Must not fuse: a reduction needs whole rows, which a GEMM tile does not
// produce; it stays out of the group.
// CHECK-LABEL: func.func @row_consumer(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.reduce_sum %[[G]]
func.func @row_consumer(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x1xf32> {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.reduce_sum %0 {axes = array<i64: 1>} : tensor<4x16xf32> -> tensor<4x1xf32>
  return %1 : tensor<4x1xf32>
}

// -----

// Must not fuse: an epilogue op that broadcasts a group value ([B, 1] read
// along [B, N]) would need the value at other indices than the tile's.
// CHECK-LABEL: func.func @broadcast_group_value(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.mul %[[G]]
func.func @broadcast_group_value(%x: tensor<4x8xf32>, %w: tensor<8x1xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
  %1 = dg.mul %0, %y : (tensor<4x1xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Prologue and epilogue layouts, the attention way: the scaled, transposed
// query and the transposed key feed QK^T; the mask (a broadcast side
// operand) is applied in the epilogue. The transposes used only by the
// matmul join as operand layouts.
// CHECK-LABEL: func.func @attention_scores(
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     dg.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
//  CHECK-NEXT:     dg.div
//  CHECK-NEXT:     dg.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>}
//  CHECK-NEXT:     dg.matmul {{.*}} {dg.backbone}
//  CHECK-NEXT:     dg.add
//  CHECK-NEXT:     dg.yield
//   CHECK-NOT:   dg.transpose
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @attention_scores(%q: tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>,
                            %k: tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>,
                            %mask: tensor<?x1x1x?xf32, #sym.shape<[B, 1, 1, L]>>)
    -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>> {
  %c8 = dg.constant dense<8.0> : tensor<f32>
  %qt = dg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>> -> tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>
  %qs = dg.div %qt, %c8 : (tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>, tensor<f32>) -> tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>
  %kt = dg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>> -> tensor<?x12x64x?xf32, #sym.shape<[B, 12, 64, L]>>
  %s = dg.matmul %qs, %kt : (tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>, tensor<?x12x64x?xf32, #sym.shape<[B, 12, 64, L]>>) -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>
  %m = dg.add %s, %mask : (tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>, tensor<?x1x1x?xf32, #sym.shape<[B, 1, 1, L]>>) -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>
  return %m : tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>
}

// -----

// GELU's tanh form (GPT-2's gelu_new) is a DAG over x = matmul + bias:
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))). All of it joins
// the GEMM's epilogue; only the final value leaves the group.
// CHECK-LABEL: func.func @gelu_tanh(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul {{.*}}dg.backbone
// CHECK-COUNT-9:   dg.{{add|mul|pow|tanh}}
//  CHECK-NEXT:     dg.yield
//  CHECK-NEXT:   } : tensor<?x64xf32, #sym.shape<[B, 64]>>
//  CHECK-NEXT:   return %[[G]]
sym.symbol @B range [1, 64]
func.func @gelu_tanh(%h: tensor<?x16xf32, #sym.shape<[B, 16]>>, %w: tensor<16x64xf32>, %b: tensor<64xf32>)
    -> tensor<?x64xf32, #sym.shape<[B, 64]>> {
  %half = dg.constant dense<0.5> : tensor<f32>
  %one = dg.constant dense<1.0> : tensor<f32>
  %three = dg.constant dense<3.0> : tensor<f32>
  %k = dg.constant dense<0.044715> : tensor<f32>
  %c = dg.constant dense<0.797884583> : tensor<f32>
  %m = dg.matmul %h, %w : (tensor<?x16xf32, #sym.shape<[B, 16]>>, tensor<16x64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %x = dg.add %m, %b : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %0 = dg.mul %x, %half : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<f32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %1 = dg.pow %x, %three : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<f32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %2 = dg.mul %1, %k : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<f32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %3 = dg.add %x, %2 : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %4 = dg.mul %3, %c : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<f32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %5 = dg.tanh %4 : tensor<?x64xf32, #sym.shape<[B, 64]>> -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %6 = dg.add %5, %one : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<f32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  %7 = dg.mul %0, %6 : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
  return %7 : tensor<?x64xf32, #sym.shape<[B, 64]>>
}

// -----

// A reshape whose runs of dimensions cannot be matched symbolically ([N, 8,
// H, W] to [-1, 32] over dynamic H and W: no run of the input has the
// product of the result's first dimension) collapses the whole tensor, which
// no tile of the conv's can read through: it stays out of the epilogue. The
// flatten that keeps runs ([N, 8*H*W]) joins it.
// CHECK-LABEL: func.func @unmatched_reshape_epilogue(
//       CHECK:   %[[G:.+]]:2 = dg.fusion conv {
//  CHECK-NEXT:     %[[C:.+]] = dg.conv
//  CHECK-NEXT:     %[[R:.+]] = dg.relu %[[C]]
//  CHECK-NEXT:     %[[F:.+]] = dg.flatten %[[R]]
//  CHECK-NEXT:     dg.yield %[[R]], %[[F]]
//       CHECK:   dg.reshape %[[G]]#0
sym.symbol @N range [1, 8]
sym.symbol @H range [1, 64]
sym.symbol @W range [1, 64]
func.func @unmatched_reshape_epilogue(%x: tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>>)
    -> (tensor<?x32xf32, #sym.shape<[floordiv(H*N*W, 4), 32]>>, tensor<?x?xf32, #sym.shape<[N, 8*H*W]>>) {
  %w = dg.constant dense<1.0> : tensor<8x4x1x1xf32>
  %b = dg.constant dense<0.5> : tensor<8xf32>
  %s = dg.constant dense<[-1, 32]> : tensor<2xi64>
  %c = dg.conv %x, %w, %b : tensor<8xf32> {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>>, tensor<8x4x1x1xf32> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>
  %r = dg.relu %c : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>
  %0 = dg.reshape %r, %s : (tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<2xi64>) -> tensor<?x32xf32, #sym.shape<[floordiv(H*N*W, 4), 32]>>
  %1 = dg.flatten %r {axis = 1 : i64} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>> -> tensor<?x?xf32, #sym.shape<[N, 8*H*W]>>
  return %0, %1 : tensor<?x32xf32, #sym.shape<[floordiv(H*N*W, 4), 32]>>, tensor<?x?xf32, #sym.shape<[N, 8*H*W]>>
}

// -----

// In a prologue, such a reshape joins only as the first op, collapsing the
// kernel's argument as a view: the relu under it stays out. A transpose
// under a reshape (a channel shuffle's) stays out of a prologue too: the
// kernel would compute it whole, outside the tiles.
// CHECK-LABEL: func.func @reshape_prologues(
//       CHECK:   %[[T:.+]] = dg.transpose
//       CHECK:   %[[S:.+]] = dg.fusion conv {
//  CHECK-NEXT:     %[[F:.+]] = dg.reshape %[[T]]
//  CHECK-NEXT:     dg.conv %[[F]]
//       CHECK:   %[[R:.+]] = dg.relu
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     %[[U:.+]] = dg.reshape %[[R]]
//  CHECK-NEXT:     dg.matmul %[[U]]
sym.symbol @N range [1, 8]
sym.symbol @H range [1, 64]
sym.symbol @W range [1, 64]
func.func @reshape_prologues(%x: tensor<?x2x4x?x?xf32, #sym.shape<[N, 2, 4, H, W]>>, %y: tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>>)
    -> (tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<?x16xf32, #sym.shape<[floordiv(H*N*W, 8), 16]>>) {
  %w = dg.constant dense<1.0> : tensor<8x8x1x1xf32>
  %b = dg.constant dense<0.5> : tensor<8xf32>
  %s = dg.constant dense<[0, 8, 0, 0]> : tensor<4xi64>
  %t = dg.transpose %x {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<?x2x4x?x?xf32, #sym.shape<[N, 2, 4, H, W]>> -> tensor<?x4x2x?x?xf32, #sym.shape<[N, 4, 2, H, W]>>
  %f = dg.reshape %t, %s : (tensor<?x4x2x?x?xf32, #sym.shape<[N, 4, 2, H, W]>>, tensor<4xi64>) -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>
  %c = dg.conv %f, %w, %b : tensor<8xf32> {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<8x8x1x1xf32> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>
  %v = dg.constant dense<1.0> : tensor<32x16xf32>
  %s2 = dg.constant dense<[-1, 32]> : tensor<2xi64>
  %r = dg.relu %y : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>> -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>>
  %u = dg.reshape %r, %s2 : (tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, W]>>, tensor<2xi64>) -> tensor<?x32xf32, #sym.shape<[floordiv(H*N*W, 8), 32]>>
  %m = dg.matmul %u, %v : (tensor<?x32xf32, #sym.shape<[floordiv(H*N*W, 8), 32]>>, tensor<32x16xf32>) -> tensor<?x16xf32, #sym.shape<[floordiv(H*N*W, 8), 16]>>
  return %c, %m : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<?x16xf32, #sym.shape<[floordiv(H*N*W, 8), 16]>>
}

// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes | FileCheck %s

// Symbolic shape propagation through the compute and normalization ops:
// matmul, gemm, conv, the pools, the reductions, softmax, layer_norm and
// batch_norm.

// Numpy matmul: batch dimensions broadcast, a vector operand's dimension is
// dropped, two vectors give a scalar.
// CHECK-LABEL: func.func @matmul(
//       CHECK:   %[[MM:.+]] = dg.matmul {{.*}} : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64x32xf32>) -> tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>
//       CHECK:   dg.matmul {{.*}} : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64xf32>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   dg.matmul {{.*}} : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<32xf32>
//       CHECK:   dg.matmul {{.*}} : (tensor<64xf32>, tensor<64xf32>) -> tensor<f32>
//       CHECK:   dg.matmul %[[MM]], {{.*}} : (tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>, tensor<?x32x16xf32, #sym.shape<[B, 32, 16]>>) -> tensor<?x?x16xf32, #sym.shape<[B, L, 16]>>
//       CHECK:   dg.matmul %[[MM]], {{.*}} : (tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>, tensor<7x1x32x8xf32>) -> tensor<7x?x?x8xf32, #sym.shape<[7, B, L, 8]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @matmul(%x: tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, %w: tensor<64x32xf32>, %v: tensor<64xf32>,
                  %bw: tensor<?x32x16xf32, #sym.shape<[B, 32, 16]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.matmul %x, %w : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64x32xf32>) -> tensor<*xf32>
  %1 = dg.matmul %x, %v : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64xf32>) -> tensor<*xf32>
  %2 = dg.matmul %v, %w : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<*xf32>
  %3 = dg.matmul %v, %v : (tensor<64xf32>, tensor<64xf32>) -> tensor<*xf32>
  %4 = dg.matmul %0, %bw : (tensor<*xf32>, tensor<?x32x16xf32, #sym.shape<[B, 32, 16]>>) -> tensor<*xf32>
  %r = dg.constant dense<1.0> : tensor<7x1x32x8xf32>
  %5 = dg.matmul %0, %r : (tensor<*xf32>, tensor<7x1x32x8xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Symbolic batch dimensions of a batched matmul are broadcast partners:
// N becomes B.
// CHECK-LABEL: sym.symbol @B range [1, 64]
//  CHECK-NEXT: sym.symbol @M range [1, 512]
//  CHECK-NEXT: sym.symbol @K range [1, 512]
//  CHECK-NEXT: func.func @matmul_batch_unify(
//  CHECK-SAME:     %{{.*}}: tensor<?x?x?xf32, #sym.shape<[B, M, K]>>, %{{.*}}: tensor<?x?x8xf32, #sym.shape<[B, K, 8]>>)
//  CHECK-SAME:     -> tensor<?x?x8xf32, #sym.shape<[B, M, 8]>>
sym.symbol @B range [1, 64]
sym.symbol @N range [1, 8192]
sym.symbol @M range [1, 512]
sym.symbol @K range [1, 512]
func.func @matmul_batch_unify(%a: tensor<?x?x?xf32, #sym.shape<[B, M, K]>>, %b: tensor<?x?x8xf32, #sym.shape<[N, K, 8]>>) -> tensor<*xf32> {
  %0 = dg.matmul %a, %b : (tensor<?x?x?xf32, #sym.shape<[B, M, K]>>, tensor<?x?x8xf32, #sym.shape<[N, K, 8]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Gemm with transB and a bias C that broadcasts; transA; a symbolic K bound
// to the other operand's constant.
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//  CHECK-NEXT: func.func @gemm(
//  CHECK-SAME:     %{{.*}}: tensor<?x64xf32, #sym.shape<[B, 64]>>, %{{.*}}: tensor<32x64xf32>, %{{.*}}: tensor<32xf32>,
//  CHECK-SAME:     %{{.*}}: tensor<64x?xf32, #sym.shape<[64, B]>>, %{{.*}}: tensor<?x64xf32, #sym.shape<[B, 64]>>)
//       CHECK:   dg.gemm {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
//       CHECK:   dg.gemm {{.*}} {transA = true} : {{.*}} -> tensor<?x16xf32, #sym.shape<[B, 16]>>
//       CHECK:   dg.gemm {{.*}} -> tensor<?x16xf32, #sym.shape<[B, 16]>>
sym.symbol @B range [1, 8192]
sym.symbol @K range [1, 8192]
func.func @gemm(%a: tensor<?x64xf32, #sym.shape<[B, 64]>>, %b: tensor<32x64xf32>, %c: tensor<32xf32>,
                %at: tensor<64x?xf32, #sym.shape<[64, B]>>, %ak: tensor<?x?xf32, #sym.shape<[B, K]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.gemm %a, %b, %c : tensor<32xf32> {transB = true, alpha = 0.5 : f32} : tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<32x64xf32> -> tensor<*xf32>
  %w = dg.constant dense<1.0> : tensor<64x16xf32>
  %1 = dg.gemm %at, %w {transA = true} : tensor<64x?xf32, #sym.shape<[64, B]>>, tensor<64x16xf32> -> tensor<*xf32>
  %2 = dg.gemm %ak, %w : tensor<?x?xf32, #sym.shape<[B, K]>>, tensor<64x16xf32> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// floordiv(in + pads - dilation*(kernel-1) - 1, stride) + 1 per spatial
// dimension; SAME_* is ceildiv(in, stride); VALID ignores the pads; a
// depthwise conv (group 16).
// CHECK-LABEL: func.func @conv2d(
//       CHECK:   %[[SAME:.+]] = dg.conv {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>
//       CHECK:   dg.conv {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, floordiv(H - 5, 2) + 1, floordiv(W - 3, 2) + 1]>>
//       CHECK:   dg.conv {{.*}} {auto_pad = "SAME_UPPER", {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, ceildiv(H, 2), ceildiv(W, 3)]>>
//       CHECK:   dg.conv {{.*}} {auto_pad = "VALID", {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, H - 2, W - 2]>>
//       CHECK:   dg.conv %[[SAME]], {{.*}} group = 16 : i64{{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>
sym.symbol @B range [1, 8192]
sym.symbol @H range [1, 1024]
sym.symbol @W range [1, 1024]
func.func @conv2d(%x: tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>,
                  %dw: tensor<16x1x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.conv %x, %w, %b : tensor<16xf32> {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  %1 = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 1>} : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  %2 = dg.conv %x, %w {strides = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, auto_pad = "SAME_UPPER"} : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  %3 = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 5, 5, 5, 5>, dilations = array<i64: 1, 1>, auto_pad = "VALID"} : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  %4 = dg.conv %0, %dw {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 16 : i64} : tensor<*xf32>, tensor<16x1x3x3xf32> -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// A 1-d conv with asymmetric pads: floordiv(L + 3 - 5, 2) + 1 is
// floordiv(L, 2).
// CHECK-LABEL: func.func @conv1d(
//  CHECK-SAME:     -> tensor<?x4x?xf32, #sym.shape<[B, 4, floordiv(L, 2)]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @conv1d(%x: tensor<?x8x?xf32, #sym.shape<[B, 8, L]>>, %w: tensor<4x8x5xf32>) -> tensor<*xf32> {
  %0 = dg.conv %x, %w {strides = array<i64: 2>, pads = array<i64: 2, 1>, dilations = array<i64: 1>} : tensor<?x8x?xf32, #sym.shape<[B, 8, L]>>, tensor<4x8x5xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// The input channels are the weight's channels times the group: a symbolic
// channel count is bound to 4 * 2.
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//  CHECK-NEXT: sym.symbol @H range [1, 1024]
//  CHECK-NEXT: func.func @conv_bind_channels(
//  CHECK-SAME:     %{{.*}}: tensor<?x8x?x?xf32, #sym.shape<[B, 8, H, H]>>
//       CHECK:   dg.conv {{.*}} -> tensor<?x8x?x?xf32, #sym.shape<[B, 8, H, H]>>
sym.symbol @B range [1, 8192]
sym.symbol @C range [1, 1024]
sym.symbol @H range [1, 1024]
func.func @conv_bind_channels(%x: tensor<?x?x?x?xf32, #sym.shape<[B, C, H, H]>>, %w: tensor<8x4x1x1xf32>) -> tensor<*xf32> {
  %0 = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<?x?x?x?xf32, #sym.shape<[B, C, H, H]>>, tensor<8x4x1x1xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Pools: the indices of max_pool have the output's shape; ceil_mode rounds
// up; SAME_LOWER is ceildiv(in, stride); global pools keep size-1 spatial
// dimensions.
// CHECK-LABEL: func.func @pools(
//       CHECK:   dg.max_pool {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>, tensor<?x16x?x?xi64, #sym.shape<[B, 16, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
//       CHECK:   dg.avg_pool {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, ceildiv(H, 2), ceildiv(W, 2)]>>
//       CHECK:   dg.avg_pool {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, floordiv(H, 2), floordiv(W, 2)]>>
//       CHECK:   dg.global_avg_pool {{.*}} -> tensor<?x16x1x1xf32, #sym.shape<[B, 16, 1, 1]>>
//       CHECK:   dg.global_max_pool {{.*}} -> tensor<?x16x1x1xf32, #sym.shape<[B, 16, 1, 1]>>
//       CHECK:   dg.max_pool {{.*}} {auto_pad = "SAME_LOWER", {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, ceildiv(H, 2), ceildiv(W, 2)]>>
sym.symbol @B range [1, 8192]
sym.symbol @H range [1, 1024]
sym.symbol @W range [1, 1024]
func.func @pools(%x: tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>)
    -> (tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0, %1 = dg.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>, tensor<*xi64>
  %2 = dg.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>
  %3 = dg.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>
  %4 = dg.global_avg_pool %x : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>
  %5 = dg.global_max_pool %x : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>
  %6 = dg.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, auto_pad = "SAME_LOWER"} : tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>> -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Reductions over given axes (negative, repeated), over all axes when none
// are given, with and without keepdims.
// CHECK-LABEL: func.func @reductions(
//       CHECK:   dg.reduce_sum {{.*}} -> tensor<?x?x1xf32, #sym.shape<[B, L, 1]>>
//       CHECK:   dg.reduce_mean {{.*}} -> tensor<?x64xf32, #sym.shape<[B, 64]>>
//       CHECK:   dg.reduce_max {{.*}} -> tensor<1x1x1xf32>
//       CHECK:   dg.reduce_min {{.*}} -> tensor<f32>
//       CHECK:   dg.reduce_prod {{.*}} -> tensor<?xf32, #sym.shape<[L]>>
//       CHECK:   dg.reduce_sum {{.*}} -> tensor<1x?x64xf32, #sym.shape<[1, L, 64]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @reductions(%x: tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.reduce_sum %x {axes = array<i64: -1>} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %1 = dg.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %2 = dg.reduce_max %x : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %3 = dg.reduce_min %x {keepdims = false} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %4 = dg.reduce_prod %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %5 = dg.reduce_sum %x {axes = array<i64: 0, -3>} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Softmax and log-softmax keep the shape (also coerce_2d); layer_norm's
// statistics keep the normalized dimensions as 1; batch_norm keeps the
// shape.
// CHECK-LABEL: func.func @normalization(
//       CHECK:   dg.softmax {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   dg.log_softmax {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   dg.layer_norm {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//   CHECK-NOT:   tensor<?x?x1xf32
//       CHECK:   dg.layer_norm {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<?x?x1xf32, #sym.shape<[B, L, 1]>>, tensor<?x?x1xf32, #sym.shape<[B, L, 1]>>
//       CHECK:   dg.layer_norm {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>
//       CHECK:   dg.batch_norm {{.*}} -> tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
sym.symbol @H range [1, 1024]
sym.symbol @W range [1, 1024]
func.func @normalization(%x: tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, %g: tensor<64xf32>,
                         %img: tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>, %c: tensor<16xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.softmax %x {axis = -1 : i64} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %1 = dg.log_softmax %x {axis = 1 : i64, coerce_2d = true} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>> -> tensor<*xf32>
  %2 = dg.layer_norm %x, %g {axis = -1 : i64} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64xf32> -> tensor<*xf32>
  %3:3 = dg.layer_norm %x, %g, %g : tensor<64xf32> {axis = 2 : i64, epsilon = 1.0e-6 : f32} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64xf32> -> tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  %s = dg.constant dense<1.0> : tensor<1x64xf32>
  %4:2 = dg.layer_norm %x, %s {axis = 1 : i64} : tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<1x64xf32> -> tensor<*xf32>, tensor<*xf32>
  %5 = dg.batch_norm %img, %c, %c, %c, %c : (tensor<?x16x?x?xf32, #sym.shape<[B, 16, H, W]>>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3#1, %3#2, %4#0, %4#1, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// The scale broadcasts against the normalized dimensions: D becomes 64.
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//  CHECK-NEXT: func.func @layer_norm_bind(
//  CHECK-SAME:     %{{.*}}: tensor<?x64xf32, #sym.shape<[B, 64]>>
//       CHECK:   dg.layer_norm {{.*}} -> tensor<?x64xf32, #sym.shape<[B, 64]>>
sym.symbol @B range [1, 8192]
sym.symbol @D range [1, 4096]
func.func @layer_norm_bind(%x: tensor<?x?xf32, #sym.shape<[B, D]>>, %g: tensor<64xf32>) -> tensor<*xf32> {
  %0 = dg.layer_norm %x, %g {axis = 1 : i64} : tensor<?x?xf32, #sym.shape<[B, D]>>, tensor<64xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

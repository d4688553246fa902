// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-decompose | FileCheck %s

// Compound ops become row reductions (keeping their dims) and elementwise
// ops, with symbolic result types built from the operands' shapes.

// Softmax over the last axis: max, shift, exp, sum, divide.
// CHECK-LABEL: func.func @softmax(
//  CHECK-SAME:     %[[X:.+]]: tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>)
//  CHECK-NEXT:   %[[M:.+]] = dg.reduce_max %[[X]] {axes = array<i64: 3>} : {{.*}} -> tensor<?x12x?x1xf32, #sym.shape<[B, 12, L, 1]>>
//  CHECK-NEXT:   %[[D:.+]] = dg.sub %[[X]], %[[M]] : {{.*}} -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>
//  CHECK-NEXT:   %[[E:.+]] = dg.exp %[[D]]
//  CHECK-NEXT:   %[[S:.+]] = dg.reduce_sum %[[E]] {axes = array<i64: 3>} : {{.*}} -> tensor<?x12x?x1xf32, #sym.shape<[B, 12, L, 1]>>
//  CHECK-NEXT:   %[[Y:.+]] = dg.div %[[E]], %[[S]] : {{.*}} -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>
//  CHECK-NEXT:   return %[[Y]]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @softmax(%x: tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>>) -> tensor<*xf32> {
  %0 = dg.softmax %x {axis = 3 : i64} : tensor<?x12x?x?xf32, #sym.shape<[B, 12, L, L]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// LogSoftmax in the opset < 13 form (coerced to 2-D at axis 1): the
// reductions cover axes 1 and 2; the result is shifted - log(sum).
// CHECK-LABEL: func.func @log_softmax_2d(
//       CHECK:   %[[M:.+]] = dg.reduce_max %{{.*}} {axes = array<i64: 1, 2>} : {{.*}} -> tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>
//       CHECK:   %[[D:.+]] = dg.sub %{{.*}}, %[[M]]
//       CHECK:   %[[E:.+]] = dg.exp %[[D]]
//       CHECK:   %[[S:.+]] = dg.reduce_sum %[[E]] {axes = array<i64: 1, 2>}
//       CHECK:   %[[LOG:.+]] = dg.log %[[S]]
//       CHECK:   dg.sub %[[D]], %[[LOG]] : {{.*}} -> tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>
sym.symbol @B range [1, 64]
func.func @log_softmax_2d(%x: tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>) -> tensor<*xf32> {
  %0 = dg.log_softmax %x {axis = 1 : i64, coerce_2d = true} : tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// LayerNormalization over the last axis (axis = -1): mean, centre, mean of
// squares, + epsilon, sqrt, divide, scale, bias.
// CHECK-LABEL: func.func @layer_norm(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, %[[G:[a-z0-9]+]]: tensor<768xf32>, %[[BIAS:[a-z0-9]+]]: tensor<768xf32>)
//  CHECK-NEXT:   %[[MEAN:.+]] = dg.reduce_mean %[[X]] {axes = array<i64: 2>} : {{.*}} -> tensor<?x?x1xf32, #sym.shape<[B, L, 1]>>
//  CHECK-NEXT:   %[[C:.+]] = dg.sub %[[X]], %[[MEAN]]
//  CHECK-NEXT:   %[[SQ:.+]] = dg.mul %[[C]], %[[C]]
//  CHECK-NEXT:   %[[VAR:.+]] = dg.reduce_mean %[[SQ]] {axes = array<i64: 2>}
//  CHECK-NEXT:   %[[EPS:.+]] = dg.constant dense<9.99999996E-13> : tensor<f32>
//  CHECK-NEXT:   %[[VE:.+]] = dg.add %[[VAR]], %[[EPS]]
//  CHECK-NEXT:   %[[STD:.+]] = dg.sqrt %[[VE]]
//  CHECK-NEXT:   %[[N:.+]] = dg.div %[[C]], %[[STD]]
//  CHECK-NEXT:   %[[S:.+]] = dg.mul %[[N]], %[[G]]
//  CHECK-NEXT:   %[[Y:.+]] = dg.add %[[S]], %[[BIAS]] : {{.*}} -> tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>
//  CHECK-NEXT:   return %[[Y]]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @layer_norm(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<*xf32> {
  %0 = dg.layer_norm %x, %g, %b : tensor<768xf32> {axis = -1 : i64, epsilon = 1.0e-12 : f32} : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<768xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// LayerNormalization's optional mean output is the mean the normalization
// uses; the inverse standard deviation, when asked for, its reciprocal.
// CHECK-LABEL: func.func @layer_norm_stats(
//       CHECK:   %[[MEAN:.+]] = dg.reduce_mean %{{.+}} {axes = array<i64: 1>}
//       CHECK:   %[[VAR:.+]] = dg.reduce_mean
//       CHECK:   %[[SD:.+]] = dg.sqrt
//       CHECK:   %[[Y:.+]] = dg.mul
//       CHECK:   return %[[Y]], %[[MEAN]]
//   CHECK-NOT:   dg.layer_norm
// CHECK-LABEL: func.func @layer_norm_inv_std(
//       CHECK:   %[[SD:.+]] = dg.sqrt
//       CHECK:   %[[INV:.+]] = dg.reciprocal %[[SD]]
//       CHECK:   return %{{.+}}, %{{.+}}, %[[INV]]
sym.symbol @B range [1, 64]
func.func @layer_norm_stats(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %g: tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0, %1 = dg.layer_norm %x, %g {axis = 1 : i64} : tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<8xf32> -> tensor<*xf32>, tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
func.func @layer_norm_inv_std(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %g: tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0, %1, %2 = dg.layer_norm %x, %g {axis = 1 : i64} : tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<8xf32> -> tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Over several axes whose size is not static, the normalization runs on
// rows: the input flattened at the axis, the scale and bias (broadcast to
// the normalized shape first) flattened to one row, and the results
// reshaped back, so the statistics reduce one axis.
// CHECK-LABEL: func.func @layer_norm_rows(
//       CHECK:   %[[X:.+]] = dg.flatten %arg0 {axis = 1 : i64} : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, 4*H]>>
//       CHECK:   %[[G:.+]] = dg.flatten %arg1 {axis = 0 : i64} : {{.*}} -> tensor<1x?xf32, #sym.shape<[1, 4*H]>>
//       CHECK:   %[[DIMS:.+]] = dg.dim_values <[H, 4]> : tensor<2xi64>
//       CHECK:   %[[BB:.+]] = dg.expand %arg2, %[[DIMS]] : {{.*}} -> tensor<?x4xf32, #sym.shape<[H, 4]>>
//       CHECK:   %[[BIAS:.+]] = dg.flatten %[[BB]] {axis = 0 : i64}
//       CHECK:   %[[MEAN:.+]] = dg.reduce_mean %[[X]] {axes = array<i64: 1>} : {{.*}} -> tensor<?x1xf32, #sym.shape<[B, 1]>>
//       CHECK:   dg.mul %{{.+}}, %[[G]]
//       CHECK:   %[[Y:.+]] = dg.add %{{.+}}, %[[BIAS]]
//       CHECK:   %[[SHAPE:.+]] = dg.dim_values <[B, H, 4]> : tensor<3xi64>
//       CHECK:   %[[OUT:.+]] = dg.reshape %[[Y]], %[[SHAPE]] : {{.*}} -> tensor<?x?x4xf32, #sym.shape<[B, H, 4]>>
//       CHECK:   %[[KEEP:.+]] = dg.dim_values <[B, 1, 1]> : tensor<3xi64>
//       CHECK:   %[[M:.+]] = dg.reshape %[[MEAN]], %[[KEEP]] : {{.*}} -> tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>
//       CHECK:   return %[[OUT]], %[[M]]
// Static sizes keep the reduction over several axes (no copies).
// CHECK-LABEL: func.func @layer_norm_static_axes(
//   CHECK-NOT:   dg.flatten
//       CHECK:   dg.reduce_mean %arg0 {axes = array<i64: 1, 2>}
sym.symbol @B range [1, 64]
sym.symbol @H range [1, 32]
sym.symbol @S range [1, 32]
func.func @layer_norm_rows(%x: tensor<?x?x4xf32, #sym.shape<[B, H, 4]>>, %g: tensor<?x4xf32, #sym.shape<[S, 4]>>, %b: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0, %1 = dg.layer_norm %x, %g, %b : tensor<4xf32> {axis = 1 : i64} : tensor<?x?x4xf32, #sym.shape<[B, H, 4]>>, tensor<?x4xf32, #sym.shape<[S, 4]>> -> tensor<*xf32>, tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
func.func @layer_norm_static_axes(%x: tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>, %g: tensor<3x4xf32>) -> tensor<*xf32> {
  %0 = dg.layer_norm %x, %g {axis = 1 : i64} : tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>, tensor<3x4xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Gemm with both transposes, alpha and beta: transposes, a matmul, and the
// scalings and bias as elementwise ops the epilogue fusion absorbs.
// CHECK-LABEL: func.func @gemm(
//  CHECK-SAME:     %[[A:[a-z0-9]+]]: tensor<64x?xf32, #sym.shape<[64, B]>>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[C:[a-z0-9]+]]: tensor<32xf32>)
//  CHECK-NEXT:   %[[AT:.+]] = dg.transpose %[[A]] {perm = array<i64: 1, 0>} : {{.*}} -> tensor<?x64xf32, #sym.shape<[B, 64]>>
//  CHECK-NEXT:   %[[WT:.+]] = dg.transpose %[[W]] {perm = array<i64: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
//  CHECK-NEXT:   %[[MM:.+]] = dg.matmul %[[AT]], %[[WT]] : {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
//  CHECK-NEXT:   %[[ALPHA:.+]] = dg.constant dense<5.000000e-01> : tensor<f32>
//  CHECK-NEXT:   %[[Y:.+]] = dg.mul %[[MM]], %[[ALPHA]]
//  CHECK-NEXT:   %[[BETA:.+]] = dg.constant dense<2.000000e+00> : tensor<f32>
//  CHECK-NEXT:   %[[CB:.+]] = dg.mul %[[C]], %[[BETA]]
//  CHECK-NEXT:   dg.add %[[Y]], %[[CB]] : {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
sym.symbol @B range [1, 64]
func.func @gemm(%a: tensor<64x?xf32, #sym.shape<[64, B]>>, %w: tensor<32x64xf32>, %c: tensor<32xf32>) -> tensor<*xf32> {
  %0 = dg.gemm %a, %w, %c : tensor<32xf32> {alpha = 0.5 : f32, beta = 2.0 : f32, transA = true, transB = true} : tensor<64x?xf32, #sym.shape<[64, B]>>, tensor<32x64xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// BatchNormalization after a conv with constant weights folds into them:
// s = scale / sqrt(var + eps) = [2, 2], t = bias - mean * s = [0, -1],
// W' = W * s = [2, 4], b' = b * s + t = [1, -3].
// CHECK-LABEL: func.func @conv_batch_norm(
//   CHECK-DAG:   %[[W:.+]] = dg.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
//   CHECK-DAG:   %[[B:.+]] = dg.constant dense<[1.000000e+00, -3.000000e+00]> : tensor<2xf32>
//       CHECK:   %[[Y:.+]] = dg.conv %{{.*}}, %[[W]], %[[B]] : tensor<2xf32>
//   CHECK-NOT:   dg.batch_norm
//       CHECK:   return %[[Y]]
sym.symbol @N range [1, 8]
func.func @conv_batch_norm(%x: tensor<?x1x4x4xf32, #sym.shape<[N, 1, 4, 4]>>) -> tensor<*xf32> {
  %w = dg.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = dg.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %scale = dg.constant dense<[4.0, 6.0]> : tensor<2xf32>
  %bias = dg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %mean = dg.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = dg.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %c = dg.conv %x, %w, %b : tensor<2xf32> {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x1x4x4xf32, #sym.shape<[N, 1, 4, 4]>>, tensor<2x1x1x1xf32> -> tensor<*xf32>
  %y = dg.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<*xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// In f16 too (a half-precision model's batch norm, which otherwise stays an
// op of the conv's epilogue): the folded weights are computed in double and
// rounded once to f16. s = [2, 2/3], t = [0, 1 - 4/3];
// W' = [2, 4/3] rounds to [2, 1.333], b' = b * s + t = [1, -1].
// CHECK-LABEL: func.func @conv_batch_norm_f16(
//   CHECK-DAG:   %[[W:.+]] = dg.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}1.333010e+00]]]]> : tensor<2x1x1x1xf16>
//   CHECK-DAG:   %[[B:.+]] = dg.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf16>
//       CHECK:   %[[Y:.+]] = dg.conv %{{.*}}, %[[W]], %[[B]] : tensor<2xf16>
//   CHECK-NOT:   dg.batch_norm
//       CHECK:   return %[[Y]]
sym.symbol @N range [1, 8]
func.func @conv_batch_norm_f16(%x: tensor<?x1x4x4xf16, #sym.shape<[N, 1, 4, 4]>>) -> tensor<*xf16> {
  %w = dg.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf16>
  %b = dg.constant dense<[0.5, -1.0]> : tensor<2xf16>
  %scale = dg.constant dense<[4.0, 2.0]> : tensor<2xf16>
  %bias = dg.constant dense<[1.0, 1.0]> : tensor<2xf16>
  %mean = dg.constant dense<[0.5, 2.0]> : tensor<2xf16>
  %var = dg.constant dense<[3.0, 8.0]> : tensor<2xf16>
  %c = dg.conv %x, %w, %b : tensor<2xf16> {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x1x4x4xf16, #sym.shape<[N, 1, 4, 4]>>, tensor<2x1x1x1xf16> -> tensor<*xf16>
  %y = dg.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<*xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<*xf16>
  return %y : tensor<*xf16>
}

// -----

// Not folded: the conv result has another user, so both stay.
// CHECK-LABEL: func.func @conv_two_users(
//       CHECK:   dg.conv
//       CHECK:   dg.batch_norm
sym.symbol @N range [1, 8]
func.func @conv_two_users(%x: tensor<?x1x4x4xf32, #sym.shape<[N, 1, 4, 4]>>) -> (tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %p = dg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x1x4x4xf32, #sym.shape<[N, 1, 4, 4]>>, tensor<2x1x1x1xf32> -> tensor<*xf32>
  %y = dg.batch_norm %c, %p, %p, %p, %p : (tensor<*xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %c, %y : tensor<*xf32>, tensor<*xf32>
}

// -----

// NonZero of a 1-D fill of a non-zero value (arange as older exporters
// write it) is a Range [0, L) as one row; other NonZeros stay.
// CHECK-LABEL: func.func @arange_as_nonzero(
//   CHECK-DAG:   %[[ZERO:.+]] = dg.constant dense<0> : tensor<i64>
//   CHECK-DAG:   %[[ONE:.+]] = dg.constant dense<1> : tensor<i64>
//   CHECK-DAG:   %[[LIMIT:.+]] = dg.dim_values <[L]> : tensor<i64>
//       CHECK:   %[[ROW:.+]] = dg.range %[[ZERO]], %[[LIMIT]], %[[ONE]] : {{.*}} -> tensor<?xi64, #sym.shape<[L]>>
//       CHECK:   %[[R:.+]] = dg.unsqueeze %[[ROW]] {axes = array<i64: 0>} : {{.*}} -> tensor<1x?xi64, #sym.shape<[1, L]>>
//       CHECK:   %[[D:.+]] = dg.nonzero %{{.+}} : tensor<?xf32, #sym.shape<[L]>>
//       CHECK:   return %[[R]], %[[D]]
sym.symbol @L range [1, 512]
func.func @arange_as_nonzero(%x: tensor<?xf32, #sym.shape<[L]>>) -> (tensor<*xi64>, tensor<*xi64>) {
  %0 = dg.shape_of %x : tensor<?xf32, #sym.shape<[L]>> -> tensor<*xi64>
  %1 = dg.constant_of_shape %0, dense<1> : tensor<i64> : tensor<*xi64> -> tensor<*xi64>
  %2 = dg.nonzero %1 : tensor<*xi64> -> tensor<*xi64>
  %3 = dg.nonzero %x : tensor<?xf32, #sym.shape<[L]>> -> tensor<*xi64>
  return %2, %3 : tensor<*xi64>, tensor<*xi64>
}

// -----

// A one-pixel conv with strides (ResNet's downsampling shortcut) is a
// strided slice of the image, then the conv at stride 1 (a GEMM over the
// pixels, later): the slice takes the conv's output sizes.
// CHECK-LABEL: func.func @strided_pointwise_conv(
//   CHECK-DAG:   %[[STEPS:.+]] = dg.constant dense<2> : tensor<2xi64>
//   CHECK-DAG:   %[[AXES:.+]] = dg.constant dense<[2, 3]> : tensor<2xi64>
//       CHECK:   %[[S:.+]] = dg.slice %{{.*}}, %{{.*}}, %{{.*}} axes %[[AXES]] : tensor<2xi64> steps %[[STEPS]] : tensor<2xi64> : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<2xi64>, tensor<2xi64> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
//       CHECK:   %[[Y:.+]] = dg.conv %[[S]], {{.*}}strides = array<i64: 1, 1>{{.*}} -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
//       CHECK:   return %[[Y]]
// A padded one, a 3x3 window and two groups stay strided convs.
// CHECK-LABEL: func.func @strided_convs_that_stay(
//   CHECK-NOT:   dg.slice
//       CHECK:   dg.conv {{.*}}strides = array<i64: 2, 2>
//       CHECK:   dg.conv {{.*}}strides = array<i64: 2, 2>
//       CHECK:   dg.conv {{.*}}strides = array<i64: 2, 2>
//   CHECK-NOT:   dg.slice
sym.symbol @N range [1, 8]
sym.symbol @H range [1, 64]
sym.symbol @W range [1, 64]
func.func @strided_pointwise_conv(%x: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>) -> tensor<*xf32> {
  %w = dg.constant dense<0.5> : tensor<4x8x1x1xf32>
  %c = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x8x1x1xf32> -> tensor<*xf32>
  return %c : tensor<*xf32>
}
func.func @strided_convs_that_stay(%x: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<0.5> : tensor<4x8x1x1xf32>
  %w3 = dg.constant dense<0.5> : tensor<4x8x3x3xf32>
  %wg = dg.constant dense<0.5> : tensor<4x4x1x1xf32>
  %padded = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x8x1x1xf32> -> tensor<*xf32>
  %window = dg.conv %x, %w3 {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  %grouped = dg.conv %x, %wg {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x4x1x1xf32> -> tensor<*xf32>
  return %padded, %window, %grouped : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-conv-im2col="device=h200 mode=always" | FileCheck %s --check-prefix=ALWAYS
// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-conv-im2col="device=h200 mode=never" | FileCheck %s --check-prefix=NEVER
// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-conv-im2col="device=h200 mode=folded" | FileCheck %s --check-prefix=FOLDED
// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-conv-im2col="device=h200 mode=folded" --dyncc-fuse-gemm --dyncc-fuse-elementwise | FileCheck %s --check-prefix=FOLDEDFUSED
// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-conv-im2col="device=h200" | FileCheck %s --check-prefix=AUTO
// RUN: not dyncc-opt %s --split-input-file --dyncc-conv-im2col="mode=sometimes" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not dyncc-opt %s --split-input-file --dyncc-conv-im2col="device=sm_12" 2>&1 | FileCheck %s --check-prefix=DEVICE

// MODE: error: dyncc-conv-im2col: unknown mode 'sometimes' (expected auto, always, never, per-image or folded)
// DEVICE: error: dyncc-conv-im2col: unknown device 'sm_12'

// A windowed conv becomes the copy of its windows into channels and a 1x1
// conv of that copy with the weights viewed as [F, C*KH*KW, 1, 1]. Strides,
// pads and dilations move to the copy; the conv keeps its bias.

// ALWAYS-LABEL: func.func @strided_dilated(
//   ALWAYS-DAG:   %[[W:.+]] = dg.constant dense<5.000000e-01> : tensor<4x72x1x1xf32>
//       ALWAYS:   %[[C:.+]] = dg.im2col %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 3>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>> -> tensor<?x72x?x?xf32, #sym.shape<[N, 72, floordiv(H, 2), floordiv(W - 4, 3) + 1]>>
//       ALWAYS:   %[[Y:.+]] = dg.conv %[[C]], %[[W]], %arg1 : tensor<4xf32> {dilations = array<i64: 1, 1>, dyncc.conv_forms = {{{.*}}fold = false{{.*}}}, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : {{.*}} -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, floordiv(H, 2), floordiv(W - 4, 3) + 1]>>
//       ALWAYS:   return %[[Y]]
//   ALWAYS-NOT:   tensor<4x8x3x3xf32>

// Folded (the batch is not the constant 1): the copy with its window
// channels outermost, one GEMM over every image's pixels with the bias
// along its rows, and its [F, N, OH, OW] transposed back to NCHW; the
// reshape into images stays out of the GEMM's group (dg.not_epilogue).
// FOLDED-LABEL: func.func @strided_dilated(
//   FOLDED-DAG:   %[[W:.+]] = dg.constant dense<5.000000e-01> : tensor<4x72xf32>
//       FOLDED:   %[[C:.+]] = dg.im2col %arg0 {batch_inner = true, {{.*}}} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>> -> tensor<72x?x?x?xf32, #sym.shape<[72, N, floordiv(H, 2), floordiv(W - 4, 3) + 1]>>
//       FOLDED:   %[[F:.+]] = dg.flatten %[[C]] {axis = 1 : i64} {{.*}} -> tensor<72x?xf32
//       FOLDED:   %[[P:.+]] = dg.matmul %[[W]], %[[F]] {{.*}} -> tensor<4x?xf32
//       FOLDED:   %[[B:.+]] = dg.reshape %arg1, {{.*}} -> tensor<4x1xf32>
//       FOLDED:   %[[S:.+]] = dg.add %[[P]], %[[B]]
//       FOLDED:   %[[I:.+]] = dg.reshape %[[S]], {{.*}} {dg.not_epilogue} {{.*}} -> tensor<4x?x?x?xf32, #sym.shape<[4, N, floordiv(H, 2), floordiv(W - 4, 3) + 1]>>
//       FOLDED:   %[[Y:.+]] = dg.transpose %[[I]] {perm = array<i64: 1, 0, 2, 3>} {{.*}} -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, floordiv(H, 2), floordiv(W - 4, 3) + 1]>>
//       FOLDED:   return %[[Y]]
// Fused: the bias is the GEMM's epilogue; the reshape (not_epilogue) and
// the transpose back to NCHW, with no elementwise op after them, are one
// data-movement group (dyncc-fuse-elementwise), not a copy each.
// FOLDEDFUSED-LABEL: func.func @strided_dilated(
//       FOLDEDFUSED:   dg.fusion gemm {
//       FOLDEDFUSED:     dg.matmul
//       FOLDEDFUSED:     dg.add
//   FOLDEDFUSED-NOT:     dg.transpose
//       FOLDEDFUSED:   dg.fusion data_movement {
//  FOLDEDFUSED-NEXT:     dg.reshape {{.*}} {dg.not_epilogue}
//  FOLDEDFUSED-NEXT:     dg.transpose
//  FOLDEDFUSED-NEXT:     dg.yield
// A batch of 1 has nothing to fold: per image.
// FOLDED-LABEL: func.func @weight_order(
//   FOLDED-NOT:   batch_inner
//       FOLDED:   dg.conv
//       FOLDED:   return
// NEVER-LABEL: func.func @strided_dilated(
//   NEVER-NOT:   dg.im2col
//       NEVER:   dg.conv {{.*}}tensor<4x8x3x3xf32>
sym.symbol @N range [1, 8]
sym.symbol @H range [5, 64]
sym.symbol @W range [5, 64]
func.func @strided_dilated(%x: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, %b: tensor<4xf32>) -> tensor<*xf32> {
  %w = dg.constant dense<0.5> : tensor<4x8x3x3xf32>
  %c = dg.conv %x, %w, %b : tensor<4xf32> {strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 2, 1>, dilations = array<i64: 2, 2>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// The weights keep their order: [F, C, KH, KW] row-major is [F, C*KH*KW]
// with the channel outermost, as dg.im2col lays out the copy. Resource
// weights (the ONNX importer's) keep their blob. Two convs sharing weights
// share one view, and the original goes.

// ALWAYS-LABEL: func.func @weight_order(
//   ALWAYS-DAG:   dg.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}5.000000e+00]], {{\[\[}}6.000000e+00]], {{\[\[}}7.000000e+00]], {{\[\[}}8.000000e+00]]]]> : tensor<2x4x1x1xf32>
//   ALWAYS-DAG:   dg.constant dense_resource<blob> : tensor<2x4x1x1xf32>
//   ALWAYS-NOT:   tensor<2x1x2x2xf32>
//        ALWAYS:  return
// ALWAYS-LABEL: func.func @shared(
//       ALWAYS:   %[[W:.+]] = dg.constant {{.*}} : tensor<2x4x1x1xf32>
//   ALWAYS-NOT:   dg.constant
//       ALWAYS:   dg.conv %{{.*}}, %[[W]]
//       ALWAYS:   dg.conv %{{.*}}, %[[W]]
//   ALWAYS-NOT:   tensor<2x1x2x2xf32>
//       ALWAYS:   return
func.func @weight_order(%x: tensor<1x1x5x7xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<2x1x2x2xf32>
  %r = dg.constant dense_resource<blob> : tensor<2x1x2x2xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x5x7xf32>, tensor<2x1x2x2xf32> -> tensor<*xf32>
  %d = dg.conv %x, %r {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x5x7xf32>, tensor<2x1x2x2xf32> -> tensor<*xf32>
  return %c, %d : tensor<*xf32>, tensor<*xf32>
}
func.func @shared(%x: tensor<1x1x5x7xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<2x1x2x2xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x5x7xf32>, tensor<2x1x2x2xf32> -> tensor<*xf32>
  %d = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x5x7xf32>, tensor<2x1x2x2xf32> -> tensor<*xf32>
  return %c, %d : tensor<*xf32>, tensor<*xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
    }
  }
#-}

// -----

// Convs im2col does not take: a one-pixel window (dyncc-pointwise-conv-as-gemm
// takes those), weights computed at run time, SAME padding over a dynamic
// image (its pads depend on the size) and mixed element types.

// ALWAYS-LABEL: func.func @convs_that_stay(
//   ALWAYS-NOT:   dg.im2col
//       ALWAYS:   return
sym.symbol @N range [1, 8]
sym.symbol @H range [1, 64]
func.func @convs_that_stay(%x: tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>>, %xd: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, H]>>, %wx: tensor<4x8x3x3xf32>, %xh: tensor<1x8x9x9xf16>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %w1 = dg.constant dense<0.5> : tensor<4x8x1x1xf32>
  %w = dg.constant dense<0.5> : tensor<4x8x3x3xf32>
  %pointwise = dg.conv %x, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>>, tensor<4x8x1x1xf32> -> tensor<*xf32>
  %computed = dg.conv %x, %wx {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  %same = dg.conv %xd, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, auto_pad = "SAME_UPPER"} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, H]>>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  %mixed = dg.conv %xh, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x8x9x9xf16>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  return %pointwise, %computed, %same, %mixed : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// A grouped conv (2 groups of 4 -> 2 channels): the copy holds every
// group's windows, each group's together ([N, 8*9, H, W]), and the 1x1 conv
// of it keeps the groups, its weights viewed as [F, 4*9, 1, 1]. It has no
// folded form: its GEMM is batched over the groups.
// ALWAYS-LABEL: func.func @grouped(
//   ALWAYS-DAG:   %[[W:.+]] = dg.constant dense<5.000000e-01> : tensor<4x36x1x1xf32>
//       ALWAYS:   %[[C:.+]] = dg.im2col %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>> -> tensor<?x72x9x9xf32, #sym.shape<[N, 72, 9, 9]>>
//       ALWAYS:   dg.conv %[[C]], %[[W]] {dilations = array<i64: 1, 1>, dyncc.conv_forms = {{{.*}}fold = false{{.*}}}, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// FOLDED-LABEL: func.func @grouped(
//   FOLDED-NOT:   batch_inner
//       FOLDED:   dg.conv {{.*}}group = 2
sym.symbol @N range [1, 8]
func.func @grouped(%x: tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>>) -> tensor<*xf32> {
  %w = dg.constant dense<0.5> : tensor<4x4x3x3xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<?x8x9x9xf32, #sym.shape<[N, 8, 9, 9]>>, tensor<4x4x3x3xf32> -> tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// A 1-D conv (NCW) alike: the copy is [N, C*KW, OW] and the weights
// [F, C*KW, 1]; folded, the copy is [C*KW, N, OW] and the GEMM's
// [F, N, OW] is transposed back to NCW. SAME padding over a static row is
// explicit (9 columns at stride 2 reach 11: one column at each end).

// ALWAYS-LABEL: func.func @line(
//   ALWAYS-DAG:   %[[W:.+]] = dg.constant dense<5.000000e-01> : tensor<4x40x1xf32>
//       ALWAYS:   %[[C:.+]] = dg.im2col %arg0 {dilations = array<i64: 2>, kernel_shape = array<i64: 5>, pads = array<i64: 3, 1>, strides = array<i64: 2>} : tensor<?x8x?xf32, #sym.shape<[N, 8, L]>> -> tensor<?x40x?xf32, #sym.shape<[N, 40, floordiv(L - 5, 2) + 1]>>
//       ALWAYS:   %[[Y:.+]] = dg.conv %[[C]], %[[W]], %arg1 : tensor<4xf32> {dilations = array<i64: 1>, dyncc.conv_forms = {{{.*}}}, pads = array<i64: 0, 0>, strides = array<i64: 1>} : {{.*}} -> tensor<?x4x?xf32, #sym.shape<[N, 4, floordiv(L - 5, 2) + 1]>>
//       ALWAYS:   dg.im2col %arg2 {dilations = array<i64: 1>, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 2>} : tensor<1x8x9xf32> -> tensor<1x24x5xf32>
// FOLDED-LABEL: func.func @line(
//   FOLDED-DAG:   %[[W:.+]] = dg.constant dense<5.000000e-01> : tensor<4x40xf32>
//       FOLDED:   %[[C:.+]] = dg.im2col %arg0 {batch_inner = true, {{.*}}} : tensor<?x8x?xf32, #sym.shape<[N, 8, L]>> -> tensor<40x?x?xf32, #sym.shape<[40, N, floordiv(L - 5, 2) + 1]>>
//       FOLDED:   %[[F:.+]] = dg.flatten %[[C]] {axis = 1 : i64} {{.*}} -> tensor<40x?xf32
//       FOLDED:   %[[P:.+]] = dg.matmul %[[W]], %[[F]] {{.*}} -> tensor<4x?xf32
//       FOLDED:   %[[I:.+]] = dg.reshape {{.*}} {dg.not_epilogue} {{.*}} -> tensor<4x?x?xf32, #sym.shape<[4, N, floordiv(L - 5, 2) + 1]>>
//       FOLDED:   %[[Y:.+]] = dg.transpose %[[I]] {perm = array<i64: 1, 0, 2>} {{.*}} -> tensor<?x4x?xf32, #sym.shape<[N, 4, floordiv(L - 5, 2) + 1]>>
// NEVER-LABEL: func.func @line(
//   NEVER-NOT:   dg.im2col
//       NEVER:   return
sym.symbol @N range [1, 8]
sym.symbol @L range [16, 4096]
func.func @line(%x: tensor<?x8x?xf32, #sym.shape<[N, 8, L]>>, %b: tensor<4xf32>, %x9: tensor<1x8x9xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<0.5> : tensor<4x8x5xf32>
  %w3 = dg.constant dense<0.5> : tensor<4x8x3xf32>
  %c = dg.conv %x, %w, %b : tensor<4xf32> {strides = array<i64: 2>, pads = array<i64: 3, 1>, dilations = array<i64: 2>} : tensor<?x8x?xf32, #sym.shape<[N, 8, L]>>, tensor<4x8x5xf32> -> tensor<*xf32>
  %s = dg.conv %x9, %w3 {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, auto_pad = "SAME_UPPER"} : tensor<1x8x9xf32>, tensor<4x8x3xf32> -> tensor<*xf32>
  return %c, %s : tensor<*xf32>, tensor<*xf32>
}

// -----

// SAME padding over a static image is explicit on the copy: 9 rows at
// stride 2 take 5 windows of 3, reaching 11, so 2 rows of padding, split
// 1 and 1; 10 columns reach 11, 1 column, at the end for SAME_UPPER and at
// the start for SAME_LOWER.

// ALWAYS-LABEL: func.func @same(
//       ALWAYS:   dg.im2col %arg0 {{{.*}}pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x9x10xf32> -> tensor<1x72x5x5xf32>
//       ALWAYS:   dg.im2col %arg0 {{{.*}}pads = array<i64: 1, 1, 1, 0>, strides = array<i64: 2, 2>} : tensor<1x8x9x10xf32> -> tensor<1x72x5x5xf32>
func.func @same(%x: tensor<1x8x9x10xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %w = dg.constant dense<0.5> : tensor<4x8x3x3xf32>
  %upper = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, auto_pad = "SAME_UPPER"} : tensor<1x8x9x10xf32>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  %lower = dg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, auto_pad = "SAME_LOWER"} : tensor<1x8x9x10xf32>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  return %upper, %lower : tensor<*xf32>, tensor<*xf32>
}

// -----

// In auto mode the cost model decides, conv by conv, and the prediction
// stays on the conv: a 256->256 3x3 conv in f16 over 14x14 images is a GEMM
// on tensor cores after the copy; a 8->4 one in f32 stays direct, the copy
// costing more than the conv.

// AUTO-LABEL: func.func @big(
//       AUTO:   dg.im2col {{.*}} -> tensor<?x2304x14x14xf16
//       AUTO:   dg.conv {{.*}}dyncc.conv_forms = {copy = {{.*}}, direct = {{.*}}, gemm = {{.*}}, ratio = 0.{{[0-9]+}} : f64}{{.*}}tensor<256x2304x1x1xf16>
// AUTO-LABEL: func.func @tiny(
//   AUTO-NOT:   dg.im2col
//       AUTO:   dg.conv {{.*}}dyncc.conv_forms = {copy = {{.*}}, direct = {{.*}}, gemm = {{.*}}, ratio = {{[1-9]}}.{{[0-9]+}} : f64}{{.*}}tensor<4x8x3x3xf32>
sym.symbol @N range [1, 32]
sym.symbol @H range [1, 64]
sym.symbol @W range [1, 64]
func.func @big(%x: tensor<?x256x14x14xf16, #sym.shape<[N, 256, 14, 14]>>) -> tensor<*xf16> {
  %w = dg.constant dense<0.5> : tensor<256x256x3x3xf16>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x256x14x14xf16, #sym.shape<[N, 256, 14, 14]>>, tensor<256x256x3x3xf16> -> tensor<*xf16>
  return %c : tensor<*xf16>
}
func.func @tiny(%x: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>) -> tensor<*xf32> {
  %w = dg.constant dense<0.5> : tensor<4x8x3x3xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, W]>>, tensor<4x8x3x3xf32> -> tensor<*xf32>
  return %c : tensor<*xf32>
}

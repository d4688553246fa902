// RUN: dyncc-opt %s --split-input-file --dyncc-outline-groups | FileCheck %s

// Every dg op a group can hold lowers to upstream dialects on plain tensors;
// one case per lowering family.

// Batched matmul with a broadcast batch: a generic contraction whose reduction
// is the last loop; the rank-2 rhs has no batch dimension.
// CHECK-DAG: #[[BM_L:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BM_R:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[BM_O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @g0_gemm(
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic {indexing_maps = [#[[BM_L]], #[[BM_R]], #[[BM_O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @batched(%x: tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, %w: tensor<64x32xf32>) -> tensor<?x?x32xf32, #sym.shape<[B, L, 32]>> {
  %g = dg.fusion gemm {
    %0 = dg.matmul %x, %w {dg.backbone} : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64x32xf32>) -> tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>
    dg.yield %0 : tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>
  } : tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>
  return %g : tensor<?x?x32xf32, #sym.shape<[B, L, 32]>>
}

// -----

// Conv with bias, stride 2, padding 1 and symbolic image size: the bias
// initializes the accumulator, the input is padded by tensor.pad (above by
// what the last window reads), and the window is an affine input map.
// CHECK-DAG: #[[CV_I:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[CV_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @g0_conv(
//  CHECK-SAME:     %[[H:[a-zA-Z0-9]+]]: index, %[[N:[a-zA-Z0-9]+]]: index, %[[W:[a-zA-Z0-9]+]]: index
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, %{{.+}}, %{{.+}}]
//       CHECK:   %[[BIAS:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<8xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#[[CV_I]], #[[CV_W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %{{.+}} : tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) outs(%[[BIAS]]
sym.symbol @N range [1, 64]
sym.symbol @H range [1, 512]
sym.symbol @W range [1, 512]
func.func @conv(%x: tensor<?x3x?x?xf32, #sym.shape<[N, 3, H, W]>>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>> {
  %g = dg.fusion conv {
    %0 = dg.conv %x, %w, %b : tensor<8xf32> {dg.backbone, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x3x?x?xf32, #sym.shape<[N, 3, H, W]>>, tensor<8x3x3x3xf32> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
    dg.yield %0 : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
  } : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
  return %g : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]>>
}

// -----

// Grouped (depthwise) conv: the channel dimension is split into groups on
// input, weight and output, and the result collapsed back.
// CHECK-LABEL: func.func @g0_conv(
//       CHECK:   tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] {{.*}} : tensor<?x4x?x?xf32> into tensor<?x4x1x?x?xf32>
//       CHECK:   tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3], [4]] {{.*}} : tensor<4x1x3x3xf32> into tensor<4x1x1x3x3xf32>
//       CHECK:   linalg.generic
//       CHECK:   tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] : tensor<?x4x1x?x?xf32> into tensor<?x4x?x?xf32>
sym.symbol @N range [1, 64]
sym.symbol @H range [3, 512]
func.func @depthwise(%x: tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, H]>>, %w: tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, H - 2, H - 2]>> {
  %g = dg.fusion conv {
    %0 = dg.conv %x, %w {dg.backbone, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H, H]>>, tensor<4x1x3x3xf32> -> tensor<?x4x?x?xf32, #sym.shape<[N, 4, H - 2, H - 2]>>
    dg.yield %0 : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H - 2, H - 2]>>
  } : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H - 2, H - 2]>>
  return %g : tensor<?x4x?x?xf32, #sym.shape<[N, 4, H - 2, H - 2]>>
}

// -----

// Row reduction with keepdims: the destination is collapsed onto the kept
// dimensions, filled with the identity (-inf for max), reduced, and expanded
// back; mean divides by the reduced extent. The innermost reduced
// dimensions are one row of their product (a global pool's rows and
// columns), so the reduction is along rows.
// CHECK-LABEL: func.func @g0_reduce(
//       CHECK:   %[[NEG:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[C:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2]] : tensor<?x1x1xf32> into tensor<?xf32>
//       CHECK:   %[[R:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<?x?x8xf32> into tensor<?x?xf32>
//       CHECK:   %[[F:.+]] = linalg.fill ins(%[[NEG]] : f32) outs(%[[C]]
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[R]] : tensor<?x?xf32>) outs(%[[F]]
//       CHECK:     arith.maximumf
//       CHECK:   tensor.expand_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
//       CHECK:     arith.addf
//       CHECK:   arith.divf
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @reduce(%x: tensor<?x?x8xf32, #sym.shape<[B, L, 8]>>, %y: tensor<?x?xf32, #sym.shape<[B, L]>>) -> (tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>, tensor<?xf32, #sym.shape<[B]>>) {
  %g:2 = dg.fusion reduce {
    %0 = dg.reduce_max %x {dg.backbone, axes = array<i64: 1, 2>} : tensor<?x?x8xf32, #sym.shape<[B, L, 8]>> -> tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>
    %1 = dg.reduce_mean %y {axes = array<i64: -1>, keepdims = false} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?xf32, #sym.shape<[B]>>
    dg.yield %0, %1 : tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>, tensor<?xf32, #sym.shape<[B]>>
  } : tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>, tensor<?xf32, #sym.shape<[B]>>
  return %g#0, %g#1 : tensor<?x1x1xf32, #sym.shape<[B, 1, 1]>>, tensor<?xf32, #sym.shape<[B]>>
}

// -----

// Data movement: a reshape whose runs match symbolically is a collapse and an
// expand (a view); a view that is a kernel result is copied into the
// destination. Slice bounds and the reshape's shape are rebuilt in the kernel
// (not inputs); the slice is an extract_slice at the clamped start.
// CHECK-LABEL: func.func @g0_data_movement(
//  CHECK-SAME:     %[[SB:[a-zA-Z0-9]+]]: index, %[[SL:[a-zA-Z0-9]+]]: index, %[[X:[a-zA-Z0-9]+]]: tensor<?x?x768xf32>, %[[D0:[a-zA-Z0-9]+]]: tensor<?x?x12x64xf32>, %[[D1:[a-zA-Z0-9]+]]: tensor<?x1x768xf32>)
//       CHECK:   %[[E:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[SB]], %[[SL]], 12, 64]
//       CHECK:   linalg.copy ins(%[[E]] : tensor<?x?x12x64xf32>) outs(%[[D0]] : tensor<?x?x12x64xf32>)
//       CHECK:   tensor.extract %{{.+}}[%{{.+}}] : tensor<3xi64>
//       CHECK:   arith.maxsi
//       CHECK:   arith.minsi
//       CHECK:   %[[S:.+]] = tensor.extract_slice %[[X]][%{{.+}}, %{{.+}}, %{{.+}}] [%[[SB]], 1, 768] [1, 1, 1]
//       CHECK:   linalg.copy ins(%[[S]] : tensor<?x1x768xf32>) outs(%[[D1]]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @views(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>) -> (tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>, tensor<?x1x768xf32, #sym.shape<[B, 1, 768]>>) {
  %shape = dg.dim_values <[B, L, 12, 64]> : tensor<4xi64>
  %starts = dg.constant dense<[0, -1, 0]> : tensor<3xi64>
  %ends = dg.constant dense<[9223372036854775807, 9223372036854775807, 768]> : tensor<3xi64>
  %g:2 = dg.fusion data_movement {
    %0 = dg.reshape %x, %shape : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<4xi64>) -> tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>
    %1 = dg.slice %x, %starts, %ends : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<3xi64>, tensor<3xi64> -> tensor<?x1x768xf32, #sym.shape<[B, 1, 768]>>
    dg.yield %0, %1 : tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>, tensor<?x1x768xf32, #sym.shape<[B, 1, 768]>>
  } : tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>, tensor<?x1x768xf32, #sym.shape<[B, 1, 768]>>
  return %g#0, %g#1 : tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>, tensor<?x1x768xf32, #sym.shape<[B, 1, 768]>>
}

// -----

// Gather: the indices are an input of the generic, the data is read with
// tensor.extract at the index made non-negative and clamped in range. Concat
// inserts each input at its running offset. Splat scalars are immediates.
// CHECK-LABEL: func.func @g0_data_movement(
//       CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<?x?xi64>)
//       CHECK:     arith.index_cast
//       CHECK:     arith.select
//       CHECK:     arith.maxsi
//       CHECK:     arith.minsi
//       CHECK:     tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<1000x16xf32>
//       CHECK:   %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf %{{.+}}, %[[HALF]]
//       CHECK:   %[[I0:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0]
//       CHECK:   tensor.insert_slice %{{.+}} into %[[I0]][0, %{{.+}}, 0]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @gather(%table: tensor<1000x16xf32>, %ids: tensor<?x?xi64, #sym.shape<[B, L]>>, %y: tensor<?x1x16xf32, #sym.shape<[B, 1, 16]>>) -> tensor<?x?x16xf32, #sym.shape<[B, L + 1, 16]>> {
  %half = dg.constant dense<0.5> : tensor<f32>
  %g = dg.fusion data_movement {
    %0 = dg.gather %table, %ids : (tensor<1000x16xf32>, tensor<?x?xi64, #sym.shape<[B, L]>>) -> tensor<?x?x16xf32, #sym.shape<[B, L, 16]>>
    %1 = dg.mul %0, %half : (tensor<?x?x16xf32, #sym.shape<[B, L, 16]>>, tensor<f32>) -> tensor<?x?x16xf32, #sym.shape<[B, L, 16]>>
    %2 = dg.concat %y, %1 {axis = 1 : i64} : (tensor<?x1x16xf32, #sym.shape<[B, 1, 16]>>, tensor<?x?x16xf32, #sym.shape<[B, L, 16]>>) -> tensor<?x?x16xf32, #sym.shape<[B, L + 1, 16]>>
    dg.yield %2 : tensor<?x?x16xf32, #sym.shape<[B, L + 1, 16]>>
  } : tensor<?x?x16xf32, #sym.shape<[B, L + 1, 16]>>
  return %g : tensor<?x?x16xf32, #sym.shape<[B, L + 1, 16]>>
}

// -----

// Max pooling pads with -inf; average pooling without counting the padding
// divides each window by its count of in-bounds positions.
// CHECK-LABEL: func.func @g0_data_movement(
//       CHECK:   %[[NEG:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, %{{.+}}, %{{.+}}]
//       CHECK:     tensor.yield %[[NEG]]
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//       CHECK:     arith.cmpf ogt
//       CHECK:   tensor.pad
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//       CHECK:     arith.addf
//       CHECK:   linalg.generic
//       CHECK:     arith.ceildivsi
//       CHECK:     arith.floordivsi
//       CHECK:     arith.divf
sym.symbol @N range [1, 64]
sym.symbol @H range [1, 512]
func.func @pools(%x: tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, H]>>) -> (tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>, tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>) {
  %g:2 = dg.fusion data_movement {
    %0 = dg.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, H]>> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
    %1 = dg.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x8x?x?xf32, #sym.shape<[N, 8, H, H]>> -> tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
    dg.yield %0, %1 : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>, tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
  } : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>, tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
  return %g#0, %g#1 : tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>, tensor<?x8x?x?xf32, #sym.shape<[N, 8, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
}

// -----

// Unsigned integers are signless in kernels; the dg type keeps the sign, so
// a cast from ui8 widens with zero extension and compares are unsigned.
// NonZero is a sequential scan that inserts coordinates at a running count.
// CHECK-LABEL: func.func @g0_elementwise(
//  CHECK-SAME:     tensor<?xi8>
//       CHECK:     arith.extui %{{.+}} : i8 to i32
//       CHECK:     arith.cmpi ult
// CHECK-LABEL: func.func @g1_data_movement(
//       CHECK:   scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x?xi64>, index)
//       CHECK:     scf.if
//       CHECK:       tensor.insert
sym.symbol @N range [1, 64]
sym.symbol @nz range [0, 64] data_dependent
func.func @unsigned(%x: tensor<?xui8, #sym.shape<[N]>>, %y: tensor<?xui8, #sym.shape<[N]>>) -> (tensor<?xi32, #sym.shape<[N]>>, tensor<?xi1, #sym.shape<[N]>>, tensor<1x?xi64, #sym.shape<[1, nz]>>) {
  %g:2 = dg.fusion elementwise {
    %0 = dg.cast %x : tensor<?xui8, #sym.shape<[N]>> -> tensor<?xi32, #sym.shape<[N]>>
    %1 = dg.less %x, %y : (tensor<?xui8, #sym.shape<[N]>>, tensor<?xui8, #sym.shape<[N]>>) -> tensor<?xi1, #sym.shape<[N]>>
    dg.yield %0, %1 : tensor<?xi32, #sym.shape<[N]>>, tensor<?xi1, #sym.shape<[N]>>
  } : tensor<?xi32, #sym.shape<[N]>>, tensor<?xi1, #sym.shape<[N]>>
  %n = dg.fusion data_movement {
    %0 = dg.nonzero %x : tensor<?xui8, #sym.shape<[N]>> -> tensor<1x?xi64, #sym.shape<[1, nz]>>
    dg.yield %0 : tensor<1x?xi64, #sym.shape<[1, nz]>>
  } : tensor<1x?xi64, #sym.shape<[1, nz]>>
  return %g#0, %g#1, %n : tensor<?xi32, #sym.shape<[N]>>, tensor<?xi1, #sym.shape<[N]>>, tensor<1x?xi64, #sym.shape<[1, nz]>>
}

// -----

// im2col writes each output element once: the channel splits into the
// input channel and the window tap (divided by the taps, then by the
// window's width), the input position is clamped into the image and the
// padding reads as zero.
// CHECK-LABEL: func.func @g0_data_movement(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//       CHECK:     %[[C:.+]] = arith.divui %{{.+}}, %c9
//       CHECK:     %[[TAP:.+]] = arith.remui %{{.+}}, %c9
//       CHECK:     arith.divui %[[TAP]], %c3
//       CHECK:     arith.remui %[[TAP]], %c3
//       CHECK:     arith.cmpi sge
//       CHECK:     arith.cmpi slt
//       CHECK:     %[[INH:.+]] = arith.andi
//       CHECK:     arith.maxsi
//       CHECK:     arith.minsi
//       CHECK:     arith.cmpi sge
//       CHECK:     arith.cmpi slt
//       CHECK:     %[[INW:.+]] = arith.andi
//       CHECK:     %[[IN:.+]] = arith.andi %[[INH]], %[[INW]]
//       CHECK:     arith.maxsi
//       CHECK:     %[[W:.+]] = arith.minsi
//       CHECK:     %[[X:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[C]], %{{.+}}, %[[W]]]
//       CHECK:     %[[Y:.+]] = arith.select %[[IN]], %[[X]], %cst
//       CHECK:     linalg.yield %[[Y]]
sym.symbol @N range [1, 64]
sym.symbol @H range [2, 512]
func.func @im2col(%x: tensor<?x3x?x?xf32, #sym.shape<[N, 3, H, H]>>) -> tensor<?x27x?x?xf32, #sym.shape<[N, 27, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>> {
  %g = dg.fusion data_movement {
    %0 = dg.im2col %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x3x?x?xf32, #sym.shape<[N, 3, H, H]>> -> tensor<?x27x?x?xf32, #sym.shape<[N, 27, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
    dg.yield %0 : tensor<?x27x?x?xf32, #sym.shape<[N, 27, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
  } : tensor<?x27x?x?xf32, #sym.shape<[N, 27, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
  return %g : tensor<?x27x?x?xf32, #sym.shape<[N, 27, floordiv(H - 1, 2) + 1, floordiv(H - 1, 2) + 1]>>
}

// -----

// A 1-D window: the channel splits into the input channel and the tap, and
// the one position is clamped into the row.
// CHECK-LABEL: func.func @g0_data_movement(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
//       CHECK:     %[[C:.+]] = arith.divui %{{.+}}, %c5
//       CHECK:     %[[TAP:.+]] = arith.remui %{{.+}}, %c5
//       CHECK:     %[[AT:.+]] = arith.muli %[[TAP]], %c2
//       CHECK:     arith.cmpi sge
//       CHECK:     arith.cmpi slt
//       CHECK:     %[[IN:.+]] = arith.andi
//       CHECK:     arith.maxsi
//       CHECK:     %[[W:.+]] = arith.minsi
//       CHECK:     %[[X:.+]] = tensor.extract %{{.+}}[%{{.+}}, %[[C]], %[[W]]]
//       CHECK:     %[[Y:.+]] = arith.select %[[IN]], %[[X]], %cst
//       CHECK:     linalg.yield %[[Y]]
sym.symbol @N range [1, 64]
sym.symbol @L range [8, 512]
func.func @im2col_1d(%x: tensor<?x3x?xf32, #sym.shape<[N, 3, L]>>) -> tensor<?x15x?xf32, #sym.shape<[N, 15, floordiv(L - 8, 3) + 1]>> {
  %g = dg.fusion data_movement {
    %0 = dg.im2col %x {kernel_shape = array<i64: 5>, strides = array<i64: 3>, pads = array<i64: 1, 0>, dilations = array<i64: 2>} : tensor<?x3x?xf32, #sym.shape<[N, 3, L]>> -> tensor<?x15x?xf32, #sym.shape<[N, 15, floordiv(L - 8, 3) + 1]>>
    dg.yield %0 : tensor<?x15x?xf32, #sym.shape<[N, 15, floordiv(L - 8, 3) + 1]>>
  } : tensor<?x15x?xf32, #sym.shape<[N, 15, floordiv(L - 8, 3) + 1]>>
  return %g : tensor<?x15x?xf32, #sym.shape<[N, 15, floordiv(L - 8, 3) + 1]>>
}

// RUN: dyncc-opt %s --split-input-file --dyncc-pointwise-conv-as-gemm | FileCheck %s

// A one-pixel conv (ResNet's bottleneck 1x1) with its bias as the initial
// value and a ReLU: the [48, 64] filter (A) times each image's [64, H*W]
// pixels (B), from zero, the bias added after; every op on the pixels
// collapsed, the result expanded back at the kernel's end only.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @pointwise(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<?x64x?x?xf32>, %[[W:[a-z0-9]+]]: tensor<48x64x1x1xf32>, %[[BIAS:[a-z0-9]+]]: tensor<48xf32>, %[[OUT:[a-z0-9]+]]: tensor<?x48x?x?xf32>)
//  CHECK-SAME:   dyncc.folded_image
//  CHECK-SAME:   dyncc.kind = "gemm"
//   CHECK-DAG:   %[[F:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<48x64x1x1xf32> into tensor<48x64xf32>
//   CHECK-DAG:   %[[DEST:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1], [2, 3]] : tensor<?x48x?x?xf32> into tensor<?x48x?xf32>
//       CHECK:   %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[DEST]] : tensor<?x48x?xf32>)
//       CHECK:   %[[I:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<?x64x?x?xf32> into tensor<?x64x?xf32>
//       CHECK:   %[[MM:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[F]], %[[I]] : tensor<48x64xf32>, tensor<?x64x?xf32>) outs(%[[ZERO]] : tensor<?x48x?xf32>)
//  CHECK-NEXT:   ^bb0(%[[FV:.*]]: f32, %[[IV:.*]]: f32, %[[ACC:.*]]: f32):
//  CHECK-NEXT:     %[[P:.*]] = arith.mulf %[[IV]], %[[FV]] : f32
//  CHECK-NEXT:     arith.addf %[[ACC]], %[[P]] : f32
//       CHECK:   %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<48xf32>) outs(%[[MM]] : tensor<?x48x?xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[ADD]] : tensor<?x48x?xf32>)
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[RELU]] {{\[}}[0], [1], [2, 3]]
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   return %[[E]] : tensor<?x48x?x?xf32>
func.func @pointwise(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %b: tensor<48xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<48xf32>) outs(%out : tensor<?x48x?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%init : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  %relu = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%conv : tensor<?x48x?x?xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x48x?x?xf32>
  return %relu : tensor<?x48x?x?xf32>
}

// -----

// In f16: the bias is extended to the f32 accumulator, which the added
// bias does too; the result is rounded once, after.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @half(
//  CHECK-SAME:   dyncc.kind = "gemm"
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x48x?xf32>)
//       CHECK:   %[[MM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<48x64xf16>, tensor<?x64x?xf16>) outs(%{{.*}} : tensor<?x48x?xf32>)
//       CHECK:     arith.extf
//       CHECK:     arith.extf
//       CHECK:   %[[ADD:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<48xf16>) outs(%[[MM]] : tensor<?x48x?xf32>)
//  CHECK-NEXT:   ^bb0(%[[IN:.*]]: f16, %[[ACC:.*]]: f32):
//  CHECK-NEXT:     %[[EXT:.*]] = arith.extf %[[IN]] : f16 to f32
//  CHECK-NEXT:     %[[SUM:.*]] = arith.addf %[[ACC]], %[[EXT]] : f32
//  CHECK-NEXT:     linalg.yield %[[SUM]] : f32
//       CHECK:   linalg.generic {{.*}} ins(%[[ADD]] : tensor<?x48x?xf32>) outs(%{{.*}} : tensor<?x48x?xf16>)
//       CHECK:     arith.truncf
func.func @half(%x: tensor<?x64x?x?xf16>, %w: tensor<48x64x1x1xf16>, %b: tensor<48xf16>, %out: tensor<?x48x?x?xf16>) -> tensor<?x48x?x?xf16> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %out, %c0 : tensor<?x48x?x?xf16>
  %h = tensor.dim %out, %c2 : tensor<?x48x?x?xf16>
  %wd = tensor.dim %out, %c3 : tensor<?x48x?x?xf16>
  %empty = tensor.empty(%n, %h, %wd) : tensor<?x48x?x?xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<48xf16>) outs(%empty : tensor<?x48x?x?xf32>) {
  ^bb0(%in: f16, %o: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf16>, tensor<48x64x1x1xf16>) outs(%init : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  %round = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<?x48x?x?xf32>) outs(%out : tensor<?x48x?x?xf16>) {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x48x?x?xf16>
  return %round : tensor<?x48x?x?xf16>
}

// -----

// Without a bias the conv accumulates from a fill, which stays.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @no_bias(
//  CHECK-SAME:   dyncc.kind = "gemm"
//       CHECK:   %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x48x?xf32>)
//       CHECK:   %[[MM:.*]] = linalg.generic {{.*}} outs(%[[Z]] : tensor<?x48x?xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   tensor.expand_shape %[[MM]]
func.func @no_bias(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  return %conv : tensor<?x48x?x?xf32>
}

// -----

// Not one pixel read at the output's pixel: a stride of 2 (ResNet's
// downsampling 1x1), a 3x3 window, a padded image. They stay convs.
#s2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @strided(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @strided(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#s2, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  return %conv : tensor<?x48x?x?xf32>
}
// CHECK-LABEL: func.func @window(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @window(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x3x3xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x3x3xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  return %conv : tensor<?x48x?x?xf32>
}
// CHECK-LABEL: func.func @padded(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @padded(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x64x?x?xf32> to tensor<?x64x?x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x?x?xf32>
  return %conv : tensor<?x48x?x?xf32>
}

// -----

// An epilogue that does not run along the output (a sum over the image's
// rows): the image cannot be one loop for it, so the kernel stays a conv.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#t = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-LABEL: func.func @transposed_epilogue(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @transposed_epilogue(%x: tensor<?x64x8x8xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x8x8xf32>, %res: tensor<?x48x8x8xf32>) -> tensor<?x48x8x8xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x8x8xf32>) -> tensor<?x48x8x8xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x8x8xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48x8x8xf32>
  %sum = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%res : tensor<?x48x8x8xf32>) outs(%conv : tensor<?x48x8x8xf32>) {
  ^bb0(%r: f32, %o: f32):
    %s = arith.addf %o, %r : f32
    linalg.yield %s : f32
  } -> tensor<?x48x8x8xf32>
  return %sum : tensor<?x48x8x8xf32>
}

// -----

// A 1-D one-pixel conv: its image is one loop already, so only the filter
// is collapsed and nothing is expanded.
#img = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>
#flt = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @one_dimensional(
//  CHECK-SAME:   dyncc.kind = "gemm"
//   CHECK-NOT:   dyncc.folded_image
//       CHECK:   tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<24x16x1xf32> into tensor<24x16xf32>
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<24x16xf32>, tensor<?x16x?xf32>)
//   CHECK-NOT:   tensor.expand_shape
func.func @one_dimensional(%x: tensor<?x16x?xf32>, %w: tensor<24x16x1xf32>, %out: tensor<?x24x?xf32>) -> tensor<?x24x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x24x?xf32>) -> tensor<?x24x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x16x?xf32>, tensor<24x16x1xf32>) outs(%fill : tensor<?x24x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x24x?xf32>
  return %conv : tensor<?x24x?xf32>
}

// -----

// An epilogue operand broadcast through a constant index (a [48, 1, 1]
// scale read at (f, 0, 0)): the image's loops cannot be collapsed for it
// (upstream's collapse takes every map result for a loop), so the kernel
// stays a conv.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#scale = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @constant_index_epilogue(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @constant_index_epilogue(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %s: tensor<48x1x1xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x48x?x?xf32>
  %scaled = linalg.generic {indexing_maps = [#scale, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<48x1x1xf32>) outs(%conv : tensor<?x48x?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x48x?x?xf32>
  return %scaled : tensor<?x48x?x?xf32>
}

// -----

// An image larger than the output (which the conv's map allows; ONNX's
// convs without padding or stride never make one): its pixels are not the
// output's row by row, so the kernel stays a conv.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @larger_image(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @larger_image(%x: tensor<?x64x10x10xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x8x8xf32>) -> tensor<?x48x8x8xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x8x8xf32>) -> tensor<?x48x8x8xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x10x10xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x48x8x8xf32>
  return %conv : tensor<?x48x8x8xf32>
}

// -----

// A body that is not a sum of products (a running maximum): starting from
// zero and adding the initial value after would change it, so the kernel
// stays a conv.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @not_a_sum(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @not_a_sum(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.maximumf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x48x?x?xf32>
  return %conv : tensor<?x48x?x?xf32>
}

// -----

// An epilogue op that reads a computed value through two operands (an
// unfolded f16 batch norm: `ins(%x, ...) outs(%x)`): tiling would fuse the
// product into it twice, so it would not be a static product; the kernel
// stays a conv.
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @twice_read(
//  CHECK-SAME:   dyncc.kind = "conv"
//   CHECK-NOT:   tensor.collapse_shape
func.func @twice_read(%x: tensor<?x64x?x?xf32>, %w: tensor<48x64x1x1xf32>, %s: tensor<48xf32>, %out: tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x48x?x?xf32>) -> tensor<?x48x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<48x64x1x1xf32>) outs(%fill : tensor<?x48x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x48x?x?xf32>
  %norm = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %s : tensor<?x48x?x?xf32>, tensor<48xf32>) outs(%conv : tensor<?x48x?x?xf32>) {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %r = arith.mulf %v, %k : f32
    linalg.yield %r : f32
  } -> tensor<?x48x?x?xf32>
  return %norm : tensor<?x48x?x?xf32>
}

// -----

// Grouped (ShuffleNet's 1x1s, 3 groups of 4 -> 8 channels): the lowering
// leaves the conv on [N, G, F, H, W] between reshapes from and to the
// bias's and the ReLU's [N, G*F, H, W]. Those ops are rebuilt on the groups
// and the conv becomes a batched product of each group's [F, C] filter
// (A, [G, F, C]) and each image's group of pixels (B, [N, G, C, H*W]); the
// result is collapsed back to [N, G*F, H, W] at the end only.
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[GA:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[GB:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[GC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @grouped(
//  CHECK-SAME:   dyncc.folded_image
//  CHECK-SAME:   dyncc.kind = "gemm"
//       CHECK:   %[[MM:.*]] = linalg.generic {indexing_maps = [#[[GA]], #[[GB]], #[[GC]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<3x8x4xf32>, tensor<?x3x4x?xf32>) outs(%{{.*}} : tensor<?x3x8x?xf32>)
//       CHECK:   %[[ADD:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3x8xf32>) outs(%[[MM]] : tensor<?x3x8x?xf32>)
//       CHECK:   %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[ADD]] : tensor<?x3x8x?xf32>)
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[RELU]] {{\[}}[0], [1], [2], [3, 4]]
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x3x8x?x?xf32> into tensor<?x24x?x?xf32>
//       CHECK:   return %[[C]]
func.func @grouped(%x: tensor<?x12x?x?xf32>, %w: tensor<24x4x1x1xf32>, %b: tensor<24xf32>, %out: tensor<?x24x?x?xf32>) -> tensor<?x24x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<24xf32>) outs(%out : tensor<?x24x?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<?x24x?x?xf32>
  %n = tensor.dim %x, %c0 : tensor<?x12x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x12x?x?xf32>
  %wd = tensor.dim %x, %c3 : tensor<?x12x?x?xf32>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [%n, 3, 4, %h, %wd] : tensor<?x12x?x?xf32> into tensor<?x3x4x?x?xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [3, 8, 4, 1, 1] : tensor<24x4x1x1xf32> into tensor<3x8x4x1x1xf32>
  %ig = tensor.expand_shape %init [[0], [1, 2], [3], [4]] output_shape [%n, 3, 8, %h, %wd] : tensor<?x24x?x?xf32> into tensor<?x3x8x?x?xf32>
  %conv = linalg.generic {indexing_maps = [#img, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xg, %wg : tensor<?x3x4x?x?xf32>, tensor<3x8x4x1x1xf32>) outs(%ig : tensor<?x3x8x?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3x8x?x?xf32>
  %flat = tensor.collapse_shape %conv [[0], [1, 2], [3], [4]] : tensor<?x3x8x?x?xf32> into tensor<?x24x?x?xf32>
  %relu = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%flat : tensor<?x24x?x?xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x24x?x?xf32>
  return %relu : tensor<?x24x?x?xf32>
}

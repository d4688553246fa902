// RUN: dyncc-opt %s --split-input-file --dyncc-fold-gemm-batch | FileCheck %s

// A dense layer on [B, S, 64] with a bias and a residual: one [B*S, 64] x
// [64, 48] product. The inputs are collapsed and the result expanded at the
// kernel's boundary only; the epilogue runs on the collapsed rows too.
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @dense(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<?x?x64xf32>, %{{.*}}: tensor<64x48xf32>, %{{.*}}: tensor<48xf32>, %[[R:[a-z0-9]+]]: tensor<?x?x48xf32>, %[[OUT:[a-z0-9]+]]: tensor<?x?x48xf32>)
//  CHECK-SAME:   dyncc.folded_batch
//       CHECK:   %[[DEST:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : tensor<?x?x48xf32> into tensor<?x48xf32>
//       CHECK:   %[[FILL:.*]] = linalg.fill ins(%{{.*}}) outs(%[[DEST]] : tensor<?x48xf32>)
//       CHECK:   %[[A:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
//       CHECK:   %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[A]], %{{.*}} : tensor<?x64xf32>, tensor<64x48xf32>) outs(%[[FILL]] : tensor<?x48xf32>)
//       CHECK:   %[[RES:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]]
//       CHECK:   %[[EPI:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[RES]] : tensor<48xf32>, tensor<?x48xf32>) outs(%[[MM]] : tensor<?x48xf32>)
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[EPI]] {{\[}}[0, 1], [2]]
//       CHECK:   return %[[E]] : tensor<?x?x48xf32>
func.func @dense(%x: tensor<?x?x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>, %r: tensor<?x?x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?x48xf32>) -> tensor<?x?x48xf32>
  %mm = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%fill : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  %epi = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %r : tensor<48xf32>, tensor<?x?x48xf32>) outs(%mm : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    %t = arith.addf %s, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x?x48xf32>
  return %epi : tensor<?x?x48xf32>
}

// -----

// Attention's Q K^T: B reads the batch too, so the batch stays a batch.
#q = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#k = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#s = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched(
//   CHECK-NOT:   dyncc.folded_batch
//   CHECK-NOT:   tensor.collapse_shape
func.func @batched(%q: tensor<?x?x64xf32>, %k: tensor<?x64x?xf32>, %out: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %mm = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<?x?x64xf32>, tensor<?x64x?xf32>) outs(%out : tensor<?x?x?xf32>) {
  ^bb0(%p: f32, %r: f32, %acc: f32):
    %m = arith.mulf %p, %r : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<?x?x?xf32>
  return %mm : tensor<?x?x?xf32>
}

// -----

// An epilogue operand broadcast along S ([B, 48] per batch row): its rows
// are not contiguous along B*S, so nothing folds.
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#perbatch = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_epilogue(
//   CHECK-NOT:   dyncc.folded_batch
//   CHECK-NOT:   tensor.collapse_shape
func.func @broadcast_epilogue(%x: tensor<?x?x64xf32>, %w: tensor<64x48xf32>, %b: tensor<?x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %mm = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%out : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  %epi = linalg.generic {indexing_maps = [#perbatch, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<?x48xf32>) outs(%mm : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %epi : tensor<?x?x48xf32>
}

// -----

// A product written transposed ([S, B, N]): M's loops are not the output's
// leading dimensions in order, so nothing folds.
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#t = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @transposed(
//   CHECK-NOT:   dyncc.folded_batch
//   CHECK-NOT:   tensor.collapse_shape
func.func @transposed(%x: tensor<?x?x64xf32>, %w: tensor<64x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %mm = linalg.generic {indexing_maps = [#a, #w, #t], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%out : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %mm : tensor<?x?x48xf32>
}

// -----

// Not a GEMM kernel: left alone.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @elementwise(
//   CHECK-NOT:   tensor.collapse_shape
func.func @elementwise(%x: tensor<?x?x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "elementwise"} {
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x48xf32>) outs(%out : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %e : tensor<?x?x48xf32>
}

// -----

// An epilogue operand read through a constant index ([1, 1, 48] at
// (0, 0, n)): upstream's collapse takes every map result for a loop, so the
// batch is not folded.
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#c = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @constant_index_epilogue(
//   CHECK-NOT:   dyncc.folded_batch
//   CHECK-NOT:   tensor.collapse_shape
func.func @constant_index_epilogue(%x: tensor<?x?x64xf32>, %w: tensor<64x48xf32>, %b: tensor<1x1x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?x48xf32>) -> tensor<?x?x48xf32>
  %mm = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%fill : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  %epi = linalg.generic {indexing_maps = [#c, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x1x48xf32>) outs(%mm : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %epi : tensor<?x?x48xf32>
}

// -----

// An f16 dense layer: its f32 accumulator is sized from the f16 output
// (`tensor.dim`s of an argument), then truncated. The sizes stay as they
// are and the batch folds all the same.
#a16 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w16 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o16 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id16 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @dense_f16(
//  CHECK-SAME:   dyncc.folded_batch
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x64xf16>, tensor<64x48xf16>) outs(%{{.*}} : tensor<?x48xf32>)
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}} : tensor<?x48xf32>) outs(%{{.*}} : tensor<?x48xf16>)
//       CHECK:   tensor.expand_shape {{.*}} : tensor<?x48xf16> into tensor<?x?x48xf16>
func.func @dense_f16(%x: tensor<?x?x64xf16>, %w: tensor<64x48xf16>, %out: tensor<?x?x48xf16>) -> tensor<?x?x48xf16> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %out, %c0 : tensor<?x?x48xf16>
  %d1 = tensor.dim %out, %c1 : tensor<?x?x48xf16>
  %empty = tensor.empty(%d0, %d1) : tensor<?x?x48xf32>
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?x48xf32>) -> tensor<?x?x48xf32>
  %mm = linalg.generic {indexing_maps = [#a16, #w16, #o16], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xf16>, tensor<64x48xf16>) outs(%fill : tensor<?x?x48xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  %t = linalg.generic {indexing_maps = [#id16, #id16], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm : tensor<?x?x48xf32>) outs(%out : tensor<?x?x48xf16>) {
  ^bb0(%p: f32, %o: f16):
    %h = arith.truncf %p : f32 to f16
    linalg.yield %h : f16
  } -> tensor<?x?x48xf16>
  return %t : tensor<?x?x48xf16>
}

// -----

// ViT's MLP up-projection: a LayerNorm's scale fused as a prologue over
// rows whose count the kernel computes from index arguments (tokens =
// h / 16 * w / 16 + 1). The index arithmetic stays; the prologue, the
// product and its epilogue all run over the folded rows.
#pa = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pg = affine_map<(d0, d1, d2) -> (d2)>
#va = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#vw = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#vo = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @computed_rows(
//  CHECK-SAME:   dyncc.folded_batch
//       CHECK:   arith.floordivsi
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64xf32>)
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x48xf32>) outs(%{{.*}} : tensor<?x48xf32>)
//       CHECK:   tensor.expand_shape {{.*}} : tensor<?x48xf32> into tensor<?x?x48xf32>
func.func @computed_rows(%b: index, %h: index, %x: tensor<?x?x64xf32>, %g: tensor<64xf32>, %w: tensor<64x48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %q = arith.floordivsi %h, %c16 : index
  %t = arith.addi %q, %c1 : index
  %e = tensor.empty(%b, %t) : tensor<?x?x64xf32>
  %scaled = linalg.generic {indexing_maps = [#pa, #pg, #pa], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<?x?x64xf32>, tensor<64xf32>) outs(%e : tensor<?x?x64xf32>) {
  ^bb0(%p: f32, %s: f32, %o: f32):
    %m = arith.mulf %p, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x?x64xf32>
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?x48xf32>) -> tensor<?x?x48xf32>
  %mm = linalg.generic {indexing_maps = [#va, #vw, #vo], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%scaled, %w : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%fill : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q2: f32, %acc: f32):
    %m = arith.mulf %p, %q2 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %mm : tensor<?x?x48xf32>
}

// -----

// GPT-2's tied LM head: B is the embedding table transposed inside the
// kernel, which stays as it is (it has no batch); a shape tensor left over
// from the export (index casts into an unused from_elements) is ignored.
#ta = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#tw = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#to = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @tied_table(
//  CHECK-SAME:   %{{.*}}: tensor<40x48xf32>
//  CHECK-SAME:   dyncc.folded_batch
//       CHECK:   %[[T:.+]] = linalg.transpose ins(%{{.*}} : tensor<40x48xf32>) outs(%{{.*}} : tensor<48x40xf32>)
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[T]] : tensor<?x48xf32>, tensor<48x40xf32>) outs(%{{.*}} : tensor<?x40xf32>)
func.func @tied_table(%b: index, %s: index, %e: tensor<40x48xf32>, %x: tensor<?x?x48xf32>, %out: tensor<?x?x40xf32>) -> tensor<?x?x40xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %b64 = arith.index_cast %b : index to i64
  %s64 = arith.index_cast %s : index to i64
  %shape = tensor.from_elements %b64, %s64 : tensor<2xi64>
  %empty = tensor.empty() : tensor<48x40xf32>
  %t = linalg.transpose ins(%e : tensor<40x48xf32>) outs(%empty : tensor<48x40xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?x40xf32>) -> tensor<?x?x40xf32>
  %mm = linalg.generic {indexing_maps = [#ta, #tw, #to], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %t : tensor<?x?x48xf32>, tensor<48x40xf32>) outs(%fill : tensor<?x?x40xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x?x40xf32>
  return %mm : tensor<?x?x40xf32>
}

// -----

// B made by an op that writes into an argument rather than a fresh tensor:
// not taken for the weight's own (only ops into empty tensors, from the
// arguments, are); it stays with the ops to collapse, which it does not,
// so nothing folds.
#ua = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#uw = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#uo = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#ub = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @computed_weight(
//   CHECK-NOT:   dyncc.folded_batch
//   CHECK-NOT:   tensor.collapse_shape
func.func @computed_weight(%x: tensor<?x?x48xf32>, %v: tensor<48x40xf32>, %out: tensor<?x?x40xf32>) -> tensor<?x?x40xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %empty = tensor.empty() : tensor<48x40xf32>
  %w = linalg.generic {indexing_maps = [#ub, #ub], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<48x40xf32>) outs(%v : tensor<48x40xf32>) {
  ^bb0(%p: f32, %o: f32):
    %e = math.exp %p : f32
    linalg.yield %e : f32
  } -> tensor<48x40xf32>
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?x40xf32>) -> tensor<?x?x40xf32>
  %mm = linalg.generic {indexing_maps = [#ua, #uw, #uo], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x48xf32>, tensor<48x40xf32>) outs(%fill : tensor<?x?x40xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x?x40xf32>
  return %mm : tensor<?x?x40xf32>
}

// RUN: dyncc-opt %s --split-input-file --dyncc-unfold-gemm-rows | FileCheck %s --implicit-check-not=dyncc.unfold_step

// TensorFlow's Q and K projections (Tensordot): X flattened to [B*S, 64],
// each product (f16, accumulated in f32 and cast) reshaped back to
// [B, S, 64] before its bias, then split into heads and transposed. With
// two products whose M runs across B while their roots have B as a batch,
// the kernel has no GEMM problem; each product is computed on [B, S, 64]
// rows instead, the cast with it, and no expand of a product's result is
// left.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
//      CHECK: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
//      CHECK: #[[W:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
//      CHECK: #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @tensordot(
// CHECK-SAME:    %[[B:[a-z0-9]+]]: index, %[[S:[a-z0-9]+]]: index, %[[X:[a-z0-9]+]]: tensor<?x64xf16>
//  CHECK-NOT:    linalg.matmul
//      CHECK:    %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [%[[B]], %[[S]], 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
//      CHECK:    %[[ACC:.*]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x64xf32>
//      CHECK:    %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : tensor<?x?x64xf32>)
//      CHECK:    %[[MM:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XS]], %{{.*}} : tensor<?x?x64xf16>, tensor<64x64xf16>) outs(%[[FILL]] : tensor<?x?x64xf32>)
//      CHECK:    linalg.generic {{.*}} ins(%[[MM]] : tensor<?x?x64xf32>) outs(%{{.*}} : tensor<?x?x64xf16>)
//      CHECK:      arith.truncf
//  CHECK-NOT:    tensor.expand_shape {{.*}} {{\[}}[0, 1], [2]] output_shape {{.*}} : tensor<?x64xf{{16|32}}> into
//      CHECK:    linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
//      CHECK:    linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[O]]]
//      CHECK:    linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
func.func @tensordot(%b: index, %s: index, %x: tensor<?x64xf16>, %wk: tensor<64x64xf16>, %bk: tensor<64xf16>, %wq: tensor<64x64xf16>, %bq: tensor<64xf16>, %kout: tensor<?x2x32x?xf16>, %qout: tensor<?x2x?x32xf16>) -> (tensor<?x2x32x?xf16>, tensor<?x2x?x32xf16>) attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %wk : tensor<?x64xf16>, tensor<64x64xf16>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h0 = tensor.empty(%rows) : tensor<?x64xf16>
  %h = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<?x64xf32>) outs(%h0 : tensor<?x64xf16>) {
  ^bb0(%p: f32, %o: f16):
    %t = arith.truncf %p : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x64xf16>
  %e = tensor.expand_shape %h [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  %y0 = tensor.empty(%b, %s) : tensor<?x?x64xf16>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %bk : tensor<?x?x64xf16>, tensor<64xf16>) outs(%y0 : tensor<?x?x64xf16>) {
  ^bb0(%p: f16, %q: f16, %o: f16):
    %t = arith.addf %p, %q : f16
    linalg.yield %t : f16
  } -> tensor<?x?x64xf16>
  %heads = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf16> into tensor<?x?x2x32xf16>
  %kt = linalg.transpose ins(%heads : tensor<?x?x2x32xf16>) outs(%kout : tensor<?x2x32x?xf16>) permutation = [0, 2, 3, 1]
  %acc1 = tensor.empty(%rows) : tensor<?x64xf32>
  %accq = linalg.fill ins(%zero : f32) outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mq = linalg.matmul ins(%x, %wq : tensor<?x64xf16>, tensor<64x64xf16>) outs(%accq : tensor<?x64xf32>) -> tensor<?x64xf32>
  %hq0 = tensor.empty(%rows) : tensor<?x64xf16>
  %hq = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%mq : tensor<?x64xf32>) outs(%hq0 : tensor<?x64xf16>) {
  ^bb0(%p: f32, %o: f16):
    %t = arith.truncf %p : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x64xf16>
  %eq = tensor.expand_shape %hq [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  %yq0 = tensor.empty(%b, %s) : tensor<?x?x64xf16>
  %yq = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%eq, %bq : tensor<?x?x64xf16>, tensor<64xf16>) outs(%yq0 : tensor<?x?x64xf16>) {
  ^bb0(%p: f16, %q: f16, %o: f16):
    %t = arith.addf %p, %q : f16
    linalg.yield %t : f16
  } -> tensor<?x?x64xf16>
  %headsq = tensor.expand_shape %yq [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf16> into tensor<?x?x2x32xf16>
  %q = linalg.transpose ins(%headsq : tensor<?x?x2x32xf16>) outs(%qout : tensor<?x2x?x32xf16>) permutation = [0, 2, 1, 3]
  return %kt, %q : tensor<?x2x32x?xf16>, tensor<?x2x?x32xf16>
}

// -----

// One such product alone has a problem (M = B*S, its split and transpose
// written by code generation's store): nothing changes.
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @one_product(
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x64xf32>)
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]]
func.func @one_product(%b: index, %s: index, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %bias: tensor<64xf32>, %out: tensor<?x2x32x?xf32>) -> tensor<?x2x32x?xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e = tensor.expand_shape %mm [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %y0 = tensor.empty(%b, %s) : tensor<?x?x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %bias : tensor<?x?x64xf32>, tensor<64xf32>) outs(%y0 : tensor<?x?x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x?x64xf32>
  %heads = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %kt = linalg.transpose ins(%heads : tensor<?x?x2x32xf32>) outs(%out : tensor<?x2x32x?xf32>) permutation = [0, 2, 3, 1]
  return %kt : tensor<?x2x32x?xf32>
}

// -----

// Two products of different K (no problem): the first's reshape splits
// its N too, so it is not unfolded; the second's splits M alone, but
// unfolding it alone would leave the kernel with no problem, so it stays
// as it was.
// CHECK-LABEL: func.func @split_both(
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x64xf32>)
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]]
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<32x64xf32>)
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]]
func.func @split_both(%b: index, %s: index, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %x2: tensor<?x32xf32>, %w2: tensor<32x64xf32>, %out: tensor<?x2x32x?xf32>) -> (tensor<?x2x32x?xf32>, tensor<?x?x64xf32>) attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %heads = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x64xf32> into tensor<?x?x2x32xf32>
  %kt = linalg.transpose ins(%heads : tensor<?x?x2x32xf32>) outs(%out : tensor<?x2x32x?xf32>) permutation = [0, 2, 3, 1]
  %acc1 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %m2 = linalg.matmul ins(%x2, %w2 : tensor<?x32xf32>, tensor<32x64xf32>) outs(%acc2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e2 = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  return %kt, %e2 : tensor<?x2x32x?xf32>, tensor<?x?x64xf32>
}

// -----

// K's rows before the split also take a [B*S, 64] residual: the folding
// would expand it with them, but the result's layout cannot be traced
// through an op reading two computed tensors (getProductLayout), so the
// kernel would still have no problem and is left as it was.
#rows = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @residual(
//   CHECK-COUNT-2:   linalg.matmul
func.func @residual(%b: index, %s: index, %x: tensor<?x64xf32>, %wk: tensor<64x64xf32>, %wq: tensor<64x64xf32>, %r: tensor<?x64xf32>, %kout: tensor<?x2x32x?xf32>, %qout: tensor<?x2x?x32xf32>) -> (tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>) attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %wk : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h0 = tensor.empty(%rows) : tensor<?x64xf32>
  %h = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%mm, %r : tensor<?x64xf32>, tensor<?x64xf32>) outs(%h0 : tensor<?x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x64xf32>
  %heads = tensor.expand_shape %h [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %split = tensor.expand_shape %heads [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %kt = linalg.transpose ins(%split : tensor<?x?x2x32xf32>) outs(%kout : tensor<?x2x32x?xf32>) permutation = [0, 2, 3, 1]
  %acc1 = tensor.empty(%rows) : tensor<?x64xf32>
  %accq = linalg.fill ins(%zero : f32) outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mq = linalg.matmul ins(%x, %wq : tensor<?x64xf32>, tensor<64x64xf32>) outs(%accq : tensor<?x64xf32>) -> tensor<?x64xf32>
  %eq = tensor.expand_shape %mq [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %splitq = tensor.expand_shape %eq [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %q = linalg.transpose ins(%splitq : tensor<?x?x2x32xf32>) outs(%qout : tensor<?x2x?x32xf32>) permutation = [0, 2, 1, 3]
  return %kt, %q : tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>
}

// -----

// As @residual, but K's rows are returned too (a second user): K is not
// unfolded, so the kernel would still have no problem, and it is left as
// it was, Q's product too.
#rows = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @second_user(
//   CHECK-COUNT-2:   linalg.matmul
func.func @second_user(%b: index, %s: index, %x: tensor<?x64xf32>, %wk: tensor<64x64xf32>, %wq: tensor<64x64xf32>, %kout: tensor<?x2x32x?xf32>, %qout: tensor<?x2x?x32xf32>) -> (tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>, tensor<?x64xf32>) attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %wk : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %heads = tensor.expand_shape %mm [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %split = tensor.expand_shape %heads [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %kt = linalg.transpose ins(%split : tensor<?x?x2x32xf32>) outs(%kout : tensor<?x2x32x?xf32>) permutation = [0, 2, 3, 1]
  %acc1 = tensor.empty(%rows) : tensor<?x64xf32>
  %accq = linalg.fill ins(%zero : f32) outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mq = linalg.matmul ins(%x, %wq : tensor<?x64xf32>, tensor<64x64xf32>) outs(%accq : tensor<?x64xf32>) -> tensor<?x64xf32>
  %eq = tensor.expand_shape %mq [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %splitq = tensor.expand_shape %eq [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %q = linalg.transpose ins(%splitq : tensor<?x?x2x32xf32>) outs(%qout : tensor<?x2x?x32xf32>) permutation = [0, 2, 1, 3]
  return %kt, %q, %mm : tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>, tensor<?x64xf32>
}

// -----

// A bias added before the split (read along N only): it is expanded with
// the rows, and the kernel has the two-product problem.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bias_before_split(
// CHECK-SAME:    %{{.*}}: tensor<?x64xf32>, %{{.*}}: tensor<64x64xf32>, %{{.*}}: tensor<64x64xf32>, %[[BK:[a-z0-9]+]]: tensor<64xf32>
//  CHECK-NOT:    linalg.matmul
//      CHECK:    %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
//      CHECK:    linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[MM]], %[[BK]] : tensor<?x?x64xf32>, tensor<64xf32>)
//      CHECK:    linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
func.func @bias_before_split(%b: index, %s: index, %x: tensor<?x64xf32>, %wk: tensor<64x64xf32>, %wq: tensor<64x64xf32>, %bk: tensor<64xf32>, %kout: tensor<?x2x32x?xf32>, %qout: tensor<?x2x?x32xf32>) -> (tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>) attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  %zero = arith.constant 0.0 : f32
  %rows = arith.muli %b, %s : index
  %acc0 = tensor.empty(%rows) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%x, %wk : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h0 = tensor.empty(%rows) : tensor<?x64xf32>
  %h = linalg.generic {indexing_maps = [#rows, #col, #rows], iterator_types = ["parallel", "parallel"]} ins(%mm, %bk : tensor<?x64xf32>, tensor<64xf32>) outs(%h0 : tensor<?x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x64xf32>
  %heads = tensor.expand_shape %h [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %split = tensor.expand_shape %heads [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %kt = linalg.transpose ins(%split : tensor<?x?x2x32xf32>) outs(%kout : tensor<?x2x32x?xf32>) permutation = [0, 2, 3, 1]
  %acc1 = tensor.empty(%rows) : tensor<?x64xf32>
  %accq = linalg.fill ins(%zero : f32) outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mq = linalg.matmul ins(%x, %wq : tensor<?x64xf32>, tensor<64x64xf32>) outs(%accq : tensor<?x64xf32>) -> tensor<?x64xf32>
  %eq = tensor.expand_shape %mq [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %splitq = tensor.expand_shape %eq [[0], [1], [2, 3]] output_shape [%b, %s, 2, 32] : tensor<?x?x64xf32> into tensor<?x?x2x32xf32>
  %q = linalg.transpose ins(%splitq : tensor<?x?x2x32xf32>) outs(%qout : tensor<?x2x?x32xf32>) permutation = [0, 2, 1, 3]
  return %kt, %q : tensor<?x2x32x?xf32>, tensor<?x2x?x32xf32>
}

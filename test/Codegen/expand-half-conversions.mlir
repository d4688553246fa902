// RUN: dyncc-opt %s --dyncc-expand-half-conversions | FileCheck %s

// f16 <-> f32 become bit arithmetic (no libgcc call on the host); other
// conversions are left to LLVM. The numbers are checked exhaustively by
// python/tests/test_codegen_kinds.py::test_half_conversions_are_exact.
// CHECK-LABEL: func.func @convert(
//   CHECK-NOT:   arith.extf %{{.*}} : f16 to f32
//   CHECK-NOT:   arith.truncf %{{.*}} : f32 to f16
//       CHECK:   arith.bitcast %{{.*}} : f16 to i16
//       CHECK:   arith.uitofp
//       CHECK:   arith.bitcast %{{.*}} : i32 to f32
//       CHECK:   arith.addf
//       CHECK:   arith.trunci %{{.*}} : i32 to i16
//       CHECK:   arith.bitcast %{{.*}} : i16 to f16
//       CHECK:   arith.extf %{{.*}} : f32 to f64
func.func @convert(%h: f16, %f: f32) -> (f32, f16, f64) {
  %0 = arith.extf %h : f16 to f32
  %1 = arith.truncf %f : f32 to f16
  %2 = arith.extf %f : f32 to f64
  return %0, %1, %2 : f32, f16, f64
}

// Vectors (a vectorized elementwise tile) convert elementwise, with splat
// constants.
// CHECK-LABEL: func.func @convert_vectors(
//   CHECK-NOT:   arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
//   CHECK-NOT:   arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
//       CHECK:   arith.bitcast %{{.*}} : vector<4xf16> to vector<4xi16>
//       CHECK:   arith.andi %{{.*}} : vector<4xi32>
//       CHECK:   arith.uitofp %{{.*}} : vector<4xi32> to vector<4xf32>
//       CHECK:   arith.trunci %{{.*}} : vector<4xi32> to vector<4xi16>
//       CHECK:   arith.bitcast %{{.*}} : vector<4xi16> to vector<4xf16>
func.func @convert_vectors(%h: vector<4xf16>, %f: vector<4xf32>) -> (vector<4xf32>, vector<4xf16>) {
  %0 = arith.extf %h : vector<4xf16> to vector<4xf32>
  %1 = arith.truncf %f : vector<4xf32> to vector<4xf16>
  return %0, %1 : vector<4xf32>, vector<4xf16>
}

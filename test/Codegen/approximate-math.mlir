// RUN: dyncc-opt %s --dyncc-approximate-math | FileCheck %s
// RUN: dyncc-opt %s --dyncc-approximate-math=host=true \
// RUN:   | FileCheck %s --check-prefix=HOST

// erf becomes upstream's polynomial approximation, with no call left.
// CHECK-LABEL: func.func @erf_f32(
//   CHECK-NOT:   math.erf
//       CHECK:   math.fma {{.*}} : f32
//   CHECK-NOT:   math.erf
// On the host, its fused multiply-adds contract (see @exp_tanh).
// HOST-LABEL: func.func @erf_f32(
//   HOST-NOT:   math.fma
//       HOST:   arith.mulf %{{.*}} fastmath<contract> : f32
//   HOST-NOT:   math.fma
//       HOST:   return
func.func @erf_f32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// A half-precision erf is approximated in f32, between an extension and a
// truncation: no f16 fma (a libm and libgcc call on the host).
// CHECK-LABEL: func.func @erf_f16(
//       CHECK:   arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
//   CHECK-NOT:   : vector<4xf16>
//       CHECK:   math.fma {{.*}} : vector<4xf32>
//       CHECK:   arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
//   CHECK-NOT:   math.erf
func.func @erf_f16(%x: vector<4xf16>) -> vector<4xf16> {
  %0 = math.erf %x : vector<4xf16>
  return %0 : vector<4xf16>
}

// CHECK-LABEL: func.func @erfc_bf16(
//       CHECK:   arith.extf %{{.*}} : bf16 to f32
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
//   CHECK-NOT:   math.erfc
func.func @erfc_bf16(%x: bf16) -> bf16 {
  %0 = math.erfc %x : bf16
  return %0 : bf16
}

// An integer power becomes exponentiation by squaring in place (no call,
// which a GPU kernel could not make to a function of the top-level
// module): while the exponent is not 0, its low bit multiplies the result
// by the base, which is squared. A negative exponent selects 1, +-1 or 0.
// CHECK-LABEL: func.func @ipowi_i32(
//  CHECK-SAME:     %[[B:[a-z0-9]+]]: i32, %[[E:[a-z0-9]+]]: i32
//   CHECK-NOT:   math.ipowi
//       CHECK:   %[[NEG:.+]] = arith.cmpi slt, %[[E]]
//       CHECK:   %[[START:.+]] = arith.select %[[NEG]], %{{.+}}, %[[E]]
//       CHECK:   %[[LOOP:.+]]:3 = scf.while {{.*}} = %[[B]], {{.*}} = %[[START]])
//       CHECK:     arith.cmpi ne
//       CHECK:     scf.condition
//       CHECK:   } do {
//       CHECK:     arith.muli
//       CHECK:     arith.muli
//       CHECK:     arith.shrui
//       CHECK:     scf.yield
//       CHECK:   %[[R:.+]] = arith.select %[[NEG]], %{{.+}}, %[[LOOP]]#0
//       CHECK:   return %[[R]]
func.func @ipowi_i32(%b: i32, %e: i32) -> i32 {
  %0 = math.ipowi %b, %e : i32
  return %0 : i32
}

// exp and tanh stay for libdevice on the GPU (the default); host kernels
// get upstream's approximations, whose fused multiply-adds become a
// multiply and an add LLVM may contract (the portable x86-64 build has no
// FMA instruction: llvm.fma would be a call to libm's fmaf).
// CHECK-LABEL: func.func @exp_tanh(
//       CHECK:   math.exp %{{.*}} : vector<8xf32>
//       CHECK:   math.tanh %{{.*}} : f32
// HOST-LABEL: func.func @exp_tanh(
//   HOST-NOT:   math.exp
//   HOST-NOT:   math.fma
//       HOST:   math.floor %{{.*}} : vector<8xf32>
//       HOST:   arith.mulf %{{.*}} fastmath<contract> : vector<8xf32>
//       HOST:   arith.addf %{{.*}} fastmath<contract> : vector<8xf32>
//       HOST:   arith.shli %{{.*}} : vector<8xi32>
//   HOST-NOT:   math.tanh
//   HOST-NOT:   math.fma
//       HOST:   arith.divf %{{.*}} : f32
//   HOST-NOT:   math.tanh
//   HOST-NOT:   math.fma
//       HOST:   return
func.func @exp_tanh(%x: vector<8xf32>, %y: f32) -> (vector<8xf32>, f32) {
  %0 = math.exp %x : vector<8xf32>
  %1 = math.tanh %y : f32
  return %0, %1 : vector<8xf32>, f32
}

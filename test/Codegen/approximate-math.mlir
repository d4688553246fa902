// RUN: dyncc-opt %s --dyncc-approximate-math | FileCheck %s
// RUN: dyncc-opt %s --dyncc-approximate-math=host=true \
// RUN:   | FileCheck %s --check-prefix=HOST

// erf becomes upstream's polynomial approximation, with no call left; its
// result takes the input's sign (upstream's gives +0 for -0).
// CHECK-LABEL: func.func @erf_f32(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: f32
//   CHECK-NOT:   math.erf
//       CHECK:   math.fma {{.*}} : f32
//   CHECK-NOT:   math.erf
//       CHECK:   %[[R:.+]] = math.copysign %{{.+}}, %[[X]] : f32
//       CHECK:   return %[[R]]
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

// A power whose exponent is a constant integer from -4 to 4 is
// multiplications on both targets (no powf call, no __nv_powf): x^3 is
// x * x * x, x^4 the square squared, x^1 is x, x^0 is 1, and a negative
// exponent the power's reciprocal. A vector's splat exponent too. A
// fractional, larger, or dynamic exponent, and a half-precision power (on
// the GPU; the host widens it to f32 first), stay pow.
// CHECK-LABEL: func.func @constant_powers(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: f32, %[[V:[a-z0-9]+]]: vector<4xf32>, %[[E:[a-z0-9]+]]: f32, %[[H:[a-z0-9]+]]: f16)
//   CHECK-DAG:   %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
//   CHECK-DAG:   %[[ONES:.+]] = arith.constant dense<1.000000e+00> : vector<4xf32>
//       CHECK:   %[[SQ:.+]] = arith.mulf %[[X]], %[[X]] : f32
//       CHECK:   %[[CUBE:.+]] = arith.mulf %[[SQ]], %[[X]] : f32
//       CHECK:   %[[SQ2:.+]] = arith.mulf %[[X]], %[[X]] : f32
//       CHECK:   %[[FOURTH:.+]] = arith.mulf %[[SQ2]], %[[SQ2]] : f32
//       CHECK:   %[[VSQ:.+]] = arith.mulf %[[V]], %[[V]] : vector<4xf32>
//       CHECK:   %[[VINV:.+]] = arith.divf %[[ONES]], %[[VSQ]] : vector<4xf32>
//       CHECK:   %[[INV:.+]] = arith.divf %[[ONE]], %[[X]] : f32
//       CHECK:   %[[SQ3:.+]] = arith.mulf %[[X]], %[[X]] : f32
//       CHECK:   %[[CUBE3:.+]] = arith.mulf %[[SQ3]], %[[X]] : f32
//       CHECK:   %[[CUBEINV:.+]] = arith.divf %[[ONE]], %[[CUBE3]] : f32
//       CHECK:   math.powf %[[X]], %{{.+}} : f32
//       CHECK:   math.powf %[[X]], %{{.+}} : f32
//       CHECK:   math.powf %[[X]], %[[E]] : f32
//       CHECK:   math.powf %[[H]], %{{.+}} : f16
//       CHECK:   return %[[CUBE]], %[[FOURTH]], %[[VINV]], %[[ONE]], %[[X]], %[[INV]], %[[CUBEINV]],
func.func @constant_powers(%x: f32, %v: vector<4xf32>, %e: f32, %h: f16)
    -> (f32, f32, vector<4xf32>, f32, f32, f32, f32, f32, f32, f32, f16) {
  %c3 = arith.constant 3.0 : f32
  %c4 = arith.constant 4.0 : f32
  %cm2 = arith.constant dense<-2.0> : vector<4xf32>
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %cm1 = arith.constant -1.0 : f32
  %cm3 = arith.constant -3.0 : f32
  %chalf = arith.constant 0.5 : f32
  %c5 = arith.constant 5.0 : f32
  %h3 = arith.constant 3.0 : f16
  %0 = math.powf %x, %c3 : f32
  %1 = math.powf %x, %c4 : f32
  %2 = math.powf %v, %cm2 : vector<4xf32>
  %3 = math.powf %x, %c0 : f32
  %4 = math.powf %x, %c1 : f32
  %5 = math.powf %x, %cm1 : f32
  %6 = math.powf %x, %cm3 : f32
  %7 = math.powf %x, %chalf : f32
  %8 = math.powf %x, %c5 : f32
  %9 = math.powf %x, %e : f32
  %10 = math.powf %h, %h3 : f16
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10
      : f32, f32, vector<4xf32>, f32, f32, f32, f32, f32, f32, f32, f16
}

// log stays for libdevice on the GPU; on the host, upstream's
// approximation, which clamps its input to the smallest normal f32, gets a
// subnormal input scaled by 2^24 (exact) and 24 ln 2 taken off its result.
// CHECK-LABEL: func.func @log_f32(
//       CHECK:   math.log %{{.*}} : vector<8xf32>
// HOST-LABEL: func.func @log_f32(
//  HOST-SAME:   %[[X:[a-z0-9]+]]: vector<8xf32>
//   HOST-DAG:   %[[MIN:.+]] = arith.constant dense<1.17549435E-38> : vector<8xf32>
//   HOST-DAG:   %[[SCALE:.+]] = arith.constant dense<0x4B800000> : vector<8xf32>
//   HOST-DAG:   %[[SHIFT:.+]] = arith.constant dense<16.6355324> : vector<8xf32>
//       HOST:   %[[SUB:.+]] = arith.cmpf olt, %[[X]], %[[MIN]] : vector<8xf32>
//       HOST:   %[[SCALED:.+]] = arith.mulf %[[X]], %[[SCALE]] : vector<8xf32>
//       HOST:   %[[IN:.+]] = arith.select %[[SUB]], %[[SCALED]], %[[X]]
//   HOST-NOT:   math.log
//       HOST:   %[[SHIFTED:.+]] = arith.subf %[[LOG:[0-9]+]], %[[SHIFT]] : vector<8xf32>
//       HOST:   %[[R:.+]] = arith.select %[[SUB]], %[[SHIFTED]], %[[LOG]]
//       HOST:   return %[[R]]
func.func @log_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.log %x : vector<8xf32>
  return %0 : vector<8xf32>
}

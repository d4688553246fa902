// RUN: dyncc-opt %s --split-input-file --dyncc-assign-tile-config --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @gemm(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 32, 64>, k_step = 16 : i64, thread = array<i64: 4, 4>}
func.func @gemm(%b: index, %out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  return %out : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @elementwise3d(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 1, 4, 128>, k_step = 64 : i64, thread = array<i64: 1, 1, 4>}
func.func @elementwise3d(%out: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> attributes {dyncc.kernel, dyncc.kind = "elementwise"} {
  return %out : tensor<2x?x64xf32>
}

// An existing configuration is kept.
// CHECK-LABEL: func.func @given(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 2, 2>}
func.func @given(%out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 2, 2>}} {
  return %out : tensor<?x64xf32>
}

// Not a kernel: untouched.
// CHECK-LABEL: func.func @host(
//   CHECK-NOT:   dyncc.tile_config
func.func @host(%out: tensor<?x64xf32>) -> tensor<?x64xf32> {
  return %out : tensor<?x64xf32>
}

// -----

// expected-error @+1 {{'func.func' op has an invalid dyncc.tile_config for an output of rank 2}}
func.func @bad(%out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 3, 2>}} {
  return %out : tensor<?x64xf32>
}

// RUN: dyncc-opt %s --split-input-file --verify-diagnostics

func.func @matmul_rank(%x: tensor<4xf32>, %w: tensor<4x8xf32>) {
  // A vector operand's dimension is dropped from the result (numpy rules).
  // expected-error @+1 {{'dg.matmul' op expects a result of rank 1, got 2}}
  %0 = dg.matmul %x, %w : (tensor<4xf32>, tensor<4x8xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @matmul_scalar(%x: tensor<f32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{'dg.matmul' op expects operands of rank at least 1, got ranks 0 and 2}}
  %0 = dg.matmul %x, %w : (tensor<f32>, tensor<4x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @matmul_k(%x: tensor<4x16xf32>, %w: tensor<15x8xf32>) {
  // expected-error @+1 {{'dg.matmul' op contraction dimensions differ: lhs has 16 columns, rhs has 15 rows}}
  %0 = dg.matmul %x, %w : (tensor<4x16xf32>, tensor<15x8xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @matmul_types(%x: tensor<4x16xf32>, %w: tensor<16x8xf16>) {
  // expected-error @+1 {{'dg.matmul' op expects one element type, got 'f32', 'f16' -> 'f32'}}
  %0 = dg.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf16>) -> tensor<?x?xf32>
  return
}

// -----

func.func @add_broadcast(%x: tensor<4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'dg.add' op operands do not broadcast: dimension 1 is 16 and 8}}
  %0 = dg.add %x, %b : (tensor<4x16xf32>, tensor<8xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @add_types(%x: tensor<*xf32>, %b: tensor<16xf16>) {
  // expected-error @+1 {{'dg.add' op expects one element type, got 'f32' and 'f16'}}
  %0 = dg.add %x, %b : (tensor<*xf32>, tensor<16xf16>) -> tensor<*xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'dg.transpose' op perm is not a permutation of [0, 2)}}
  %0 = dg.transpose %x {perm = array<i64: 1, 1>} : tensor<4x16xf32> -> tensor<*xf32>
  return
}

// -----

func.func @add_rank(%x: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'dg.add' op expects a result of rank 2, got 1}}
  %0 = dg.add %x, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'dg.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "dg.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<5xf32>
  return
}

// -----

func.func @fusion_yield(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'dg.fusion' op yields 1 values whose types do not match the group's results}}
  %0 = dg.fusion elementwise {
    dg.yield %x : tensor<4x16xf32>
  } : tensor<4x8xf32>
  return
}

// -----

func.func @fusion_backbones(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dg.fusion' op has backbone 'dg.matmul' reading another backbone's result}}
  %0 = dg.fusion gemm {
    %1 = dg.matmul %x, %x {dg.backbone} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = dg.matmul %1, %x {dg.backbone} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    dg.yield %2 : tensor<4x4xf32>
  } : tensor<4x4xf32>
  return
}

// -----

func.func @fusion_no_backbone(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dg.fusion' op of kind gemm has no backbone op}}
  %0 = dg.fusion gemm {
    %1 = dg.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    dg.yield %1 : tensor<4x4xf32>
  } : tensor<4x4xf32>
  return
}

// -----

func.func @fusion_elementwise_backbone(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dg.fusion' op of kind elementwise has a backbone op}}
  %0 = dg.fusion elementwise {
    %1 = dg.relu %x {dg.backbone} : tensor<4x4xf32> -> tensor<4x4xf32>
    dg.yield %1 : tensor<4x4xf32>
  } : tensor<4x4xf32>
  return
}

// -----

func.func private @kernel(index, tensor<4xf32>) -> tensor<4xf32>
func.func @dispatch_arity(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dg.dispatch' op callee @kernel takes 2 arguments, expected 3 (symbols, inputs, destinations)}}
  %0 = dg.dispatch @kernel ["B"](%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @transpose_perm_size(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'dg.transpose' op perm has 3 entries for rank 2}}
  %0 = dg.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<4x16xf32> -> tensor<*xf32>
  return
}

// -----

sym.symbol @B range [1, 64]
func.func @dispatch_not_func(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dg.dispatch' op callee @B is not a func.func}}
  %0 = dg.dispatch @B [](%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func private @kernel2(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
func.func @dispatch_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dg.dispatch' op callee @kernel2 returns 2 values, expected 1}}
  %0 = dg.dispatch @kernel2 [](%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dim_values_count() {
  // expected-error @+1 {{'dg.dim_values' op has 2 values for 3 elements}}
  %0 = dg.dim_values <[B, 4]> : tensor<3xi64>
  return
}

// -----

func.func @dim_values_type() {
  // expected-error @+1 {{'dg.dim_values' op needs an integer element type of 8 bits or more, got 'f32'}}
  %0 = dg.dim_values <[B]> : tensor<1xf32>
  return
}

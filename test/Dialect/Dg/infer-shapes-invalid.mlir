// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --verify-diagnostics

// One case per diagnostic of the shape functions (ShapeFunctions.cpp), the
// constraint store (ShapeConstraints.cpp) and the dyncc-infer-shapes pass.
// Operands are made unranked (through a relu) where the op's verifier would
// otherwise reject the IR before shape propagation runs.

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

func.func @cumsum_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.cumsum' op axis 2 is out of range for rank 2}}
  %0 = dg.cumsum %x {axis = 2 : i64} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.gather' op axis -3 is out of range for rank 2}}
  %0 = dg.gather %x, %i {axis = -3 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_axis(%x: tensor<4x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.squeeze' op axis 2 is out of range for rank 2}}
  %0 = dg.squeeze %x {axes = array<i64: 2>} : tensor<4x1xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // The axes index the result, of rank 3 here.
  // expected-error @+1 {{'dg.unsqueeze' op axis 3 is out of range for rank 3}}
  %0 = dg.unsqueeze %x {axes = array<i64: 3>} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_repeated(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // -4 and 0 are the same axis of the rank-4 result.
  // expected-error @+1 {{'dg.unsqueeze' op axis 0 is repeated}}
  %0 = dg.unsqueeze %x {axes = array<i64: -4, 0>} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.reduce_mean' op axis -3 is out of range for rank 2}}
  %0 = dg.reduce_mean %x {axes = array<i64: -3>} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.layer_norm' op axis 2 is out of range for rank 2}}
  %0 = dg.layer_norm %x, %g {axis = 2 : i64} : tensor<4x8xf32>, tensor<8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @flatten_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // The axis of flatten may be the rank itself, not more.
  // expected-error @+1 {{'dg.flatten' op axis 3 is out of range for rank 2}}
  %0 = dg.flatten %x {axis = 3 : i64} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @split_axis(%x: tensor<4x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  // expected-error @+1 {{'dg.split' op axis 2 is out of range for rank 2}}
  %0:2 = dg.split %x {axis = 2 : i64} : tensor<4x8xf32> -> tensor<*xf32>, tensor<*xf32>
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @slice_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<0> : tensor<1xi64>
  %e = dg.constant dense<2> : tensor<1xi64>
  %a = dg.constant dense<-3> : tensor<1xi64>
  // expected-error @+1 {{'dg.slice' op axis -3 is out of range for rank 2}}
  %0 = dg.slice %x, %s, %e axes %a : tensor<1xi64> : tensor<4x8xf32>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.concat' op axis 2 is out of range for rank 2}}
  %0 = dg.concat %x, %x {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

func.func @concat_empty() -> tensor<*xf32> {
  // expected-error @+1 {{'dg.concat' op needs at least one input}}
  %0 = dg.concat {axis = 0 : i64} : () -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_rank(%x: tensor<4x8xf32>, %y: tensor<4x8x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.concat' op input #1 has rank 3, expected 2}}
  %0 = dg.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_dims(%x: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.concat' op requires dimension 1 of the inputs to be equal, but they are 8 and 9}}
  %0 = dg.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x9xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @split_count(%x: tensor<4x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // expected-error @+1 {{'dg.split' op has 2 sizes for 3 results}}
  %0:3 = dg.split %x {axis = 1 : i64, sizes = array<i64: 4, 4>} : tensor<4x8xf32> -> tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  return %0#0, %0#1, %0#2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @split_sum(%x: tensor<4x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  // expected-error @+1 {{'dg.split' op requires the split sizes' sum and the dimension to be equal, but they are 9 and 8}}
  %0:2 = dg.split %x {axis = 1 : i64, sizes = array<i64: 4, 5>} : tensor<4x8xf32> -> tensor<*xf32>, tensor<*xf32>
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @squeeze_not_one(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.squeeze' op requires squeezed dimension 1 and 1 to be equal, but they are 8 and 1}}
  %0 = dg.squeeze %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_two_infer(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[-1, 2, -1]> : tensor<3xi64>
  // expected-error @+1 {{'dg.reshape' op shape has more than one -1 entry}}
  %0 = dg.reshape %x, %s : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_copy(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[1, 2, 0, 16]> : tensor<4xi64>
  // expected-error @+1 {{'dg.reshape' op shape entry 2 is 0 (copy) but the input has rank 2}}
  %0 = dg.reshape %x, %s : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_negative(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[-2, 16]> : tensor<2xi64>
  // expected-error @+1 {{'dg.reshape' op shape entry 0 is -2}}
  %0 = dg.reshape %x, %s : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[3, 8]> : tensor<2xi64>
  // expected-error @+1 {{'dg.reshape' op requires the element counts to be equal, but they are 24 and 32}}
  %0 = dg.reshape %x, %s : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_rank2_shape(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[[4, 8]]> : tensor<1x2xi64>
  // expected-error @+1 {{'dg.reshape' op shape operand must be 1-D, got rank 2}}
  %0 = dg.reshape %x, %s : (tensor<4x8xf32>, tensor<1x2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

sym.symbol @N range [1, 8]
func.func @expand_unknown_rank(%x: tensor<4x8xf32>, %s: tensor<?xi64, #sym.shape<[N]>>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.expand' op the rank of the result is not known: the shape operand has a symbolic length N}}
  %0 = dg.expand %x, %s : (tensor<4x8xf32>, tensor<?xi64, #sym.shape<[N]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_axes_data(%x: tensor<4x8xf32>, %a: tensor<1xi64>) -> tensor<*xf32> {
  %s = dg.constant dense<0> : tensor<1xi64>
  %e = dg.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{'dg.slice' op axes and steps must be constants}}
  %0 = dg.slice %x, %s, %e axes %a : tensor<1xi64> : tensor<4x8xf32>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

sym.symbol @N range [1, 2]
func.func @slice_count(%x: tensor<4x8xf32>, %s: tensor<?xi64, #sym.shape<[N]>>, %e: tensor<?xi64, #sym.shape<[N]>>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.slice' op the number of sliced axes is not known}}
  %0 = dg.slice %x, %s, %e : tensor<4x8xf32>, tensor<?xi64, #sym.shape<[N]>>, tensor<?xi64, #sym.shape<[N]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[0, 0]> : tensor<2xi64>
  %e = dg.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{'dg.slice' op operand #2 has 1 entries but starts has 2}}
  %0 = dg.slice %x, %s, %e : tensor<4x8xf32>, tensor<2xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_step(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[0, 0]> : tensor<2xi64>
  %e = dg.constant dense<[2, 2]> : tensor<2xi64>
  %a = dg.constant dense<[0, 1]> : tensor<2xi64>
  %st = dg.constant dense<[1, 0]> : tensor<2xi64>
  // expected-error @+1 {{'dg.slice' op step 1 is 0}}
  %0 = dg.slice %x, %s, %e axes %a : tensor<2xi64> steps %st : tensor<2xi64> : tensor<4x8xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_index(%x: tensor<4x8xf32>) -> tensor<*xi64> {
  %s = dg.shape_of %x : tensor<4x8xf32> -> tensor<*xi64>
  %i = dg.constant dense<[0, -3]> : tensor<2xi64>
  // expected-error @+1 {{'dg.gather' op index -3 is out of range for 2 elements}}
  %0 = dg.gather %s, %i : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

func.func @tile_repeats(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %r = dg.constant dense<[2, 2, 2]> : tensor<3xi64>
  // expected-error @+1 {{'dg.tile' op has 3 repeats for rank 2}}
  %0 = dg.tile %x, %r : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @range_scalar(%l: tensor<i64>) -> tensor<*xi64> {
  %s = dg.constant dense<0> : tensor<1xi64>
  %d = dg.constant dense<1> : tensor<i64>
  // expected-error @+1 {{'dg.range' op operand #0 must be a scalar}}
  %0 = dg.range %s, %l, %d : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

func.func @pad_data(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.pad' op pads must be known at compile time}}
  %0 = dg.pad %x, %p : tensor<4x8xf32>, tensor<4xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_length(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %p = dg.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'dg.pad' op has 2 pads for rank 2, expected 4}}
  %0 = dg.pad %x, %p : tensor<4x8xf32>, tensor<2xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_rank(%x: tensor<4x8x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.depth_to_space' op expects a rank-4 input, got rank 3}}
  %0 = dg.depth_to_space %x {blocksize = 2 : i64} : tensor<4x8x2xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_blocksize(%x: tensor<1x8x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.depth_to_space' op blocksize 0 must be positive}}
  %0 = dg.depth_to_space %x {blocksize = 0 : i64} : tensor<1x8x2x2xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_channels(%x: tensor<1x10x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.depth_to_space' op requires the channels and a multiple of blocksize^2 to be equal, but they are 8 and 10}}
  %0 = dg.depth_to_space %x {blocksize = 2 : i64} : tensor<1x10x2x2xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_none(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.resize' op needs scales or sizes}}
  %0 = dg.resize %x : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_sizes(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  %z = dg.constant dense<[16, 16]> : tensor<2xi64>
  // expected-error @+1 {{'dg.resize' op has 2 sizes for rank 4}}
  %0 = dg.resize %x sizes %z : tensor<2xi64> : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_scales_data(%x: tensor<1x3x8x8xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.resize' op scales must be a float constant}}
  %0 = dg.resize %x scales %s : tensor<4xf32> : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_scales_count(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[2.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{'dg.resize' op has 2 scales for rank 4}}
  %0 = dg.resize %x scales %s : tensor<2xf32> : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_scale_value(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[1.0, 1.0, -2.0, 2.0]> : tensor<4xf32>
  // expected-error @+1 {{'dg.resize' op scale -2.000000e+00 is not a positive finite float}}
  %0 = dg.resize %x scales %s : tensor<4xf32> : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_scale_huge(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  %s = dg.constant dense<[1.0, 1.0, 1.0e30, 2.0]> : tensor<4xf32>
  // expected-error @+1 {{'dg.resize' op scale 1.000000e+30 is not p / 2^k with p < 2^62 and k <= 40}}
  %0 = dg.resize %x scales %s : tensor<4xf32> : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

func.func @matmul_scalar(%s: tensor<f32>, %w: tensor<4x8xf32>) -> tensor<*xf32> {
  %0 = dg.relu %s : tensor<f32> -> tensor<*xf32>
  // expected-error @+1 {{'dg.matmul' op operands must have rank at least 1}}
  %1 = dg.matmul %0, %w : (tensor<*xf32>, tensor<4x8xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

func.func @matmul_contraction(%x: tensor<4x16xf32>, %w: tensor<15x8xf32>) -> tensor<*xf32> {
  %0 = dg.relu %x : tensor<4x16xf32> -> tensor<*xf32>
  // expected-error @+1 {{'dg.matmul' op requires the contraction dimensions to be equal, but they are 16 and 15}}
  %1 = dg.matmul %0, %w : (tensor<*xf32>, tensor<15x8xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

func.func @matmul_batch(%x: tensor<3x4x16xf32>, %w: tensor<5x16x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.matmul' op requires the broadcast dimensions 0 to be equal, but they are 3 and 5}}
  %0 = dg.matmul %x, %w : (tensor<3x4x16xf32>, tensor<5x16x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.gemm' op expects rank-2 A and B, got ranks 3 and 2}}
  %0 = dg.gemm %a, %b : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<*xf32> {
  // Without transB, B is [K, N] = [4, 8]: K is 8 against 4.
  // expected-error @+1 {{'dg.gemm' op requires the contraction dimensions to be equal, but they are 8 and 4}}
  %0 = dg.gemm %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_bias_rank(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<1x4x6xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.gemm' op C does not broadcast to [M, N]}}
  %0 = dg.gemm %a, %b, %c : tensor<1x4x6xf32> : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_bias(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<5xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.gemm' op requires the broadcast dimensions 1 to be equal, but they are 6 and 5}}
  %0 = dg.gemm %a, %b, %c : tensor<5xf32> : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.conv' op expects input and weight of one rank >= 3, got 4 and 3}}
  %0 = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<16x3x3xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_arity(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.conv' op strides, dilations and pads must have 2, 2 and 4 entries}}
  %0 = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<16x2x3x3xf32>) -> tensor<*xf32> {
  // 2 weight channels in 2 groups take 4 input channels, not 6.
  // expected-error @+1 {{'dg.conv' op requires the input channels and weight channels x group to be equal, but they are 6 and 4}}
  %0 = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<1x6x8x8xf32>, tensor<16x2x3x3xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.conv' op requires the bias length and output channels to be equal, but they are 8 and 16}}
  %0 = dg.conv %x, %w, %b : tensor<8xf32> {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.max_pool' op kernel has 2 dimensions for an input of rank 3}}
  %0 = dg.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_arity(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.avg_pool' op strides, dilations and pads must have 2, 2 and 4 entries}}
  %0 = dg.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @global_pool_rank(%x: tensor<8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.global_avg_pool' op expects rank >= 2, got 1}}
  %0 = dg.global_avg_pool %x : tensor<8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @im2col_window(%x: tensor<1x3x8x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.im2col' op takes a 1-D or 2-D window, got 3 dimensions}}
  %0 = dg.im2col %x {kernel_shape = array<i64: 3, 3, 3>, strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : tensor<1x3x8x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @im2col_stride(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.im2col' op window sizes, strides and dilations must be positive, got 0}}
  %0 = dg.im2col %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 0>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @im2col_pads(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.im2col' op pads must not be negative, got -1}}
  %0 = dg.im2col %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, -1, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @im2col_rank(%x: tensor<3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.im2col' op kernel has 2 dimensions for an input of rank 3}}
  %0 = dg.im2col %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<3x8x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Equalities and the symbol facts (ShapeConstraints.cpp)
//===----------------------------------------------------------------------===//

func.func @broadcast_constants(%x: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> tensor<*xf32> {
  %0 = dg.relu %x : tensor<4x8xf32> -> tensor<*xf32>
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 1 to be equal, but they are 8 and 9}}
  %1 = dg.add %0, %y : (tensor<*xf32>, tensor<4x9xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// A symbol's range excludes an equality.
sym.symbol @A range [1, 64]
func.func @range_excludes(%x: tensor<?xf32, #sym.shape<[A + 1]>>, %y: tensor<?xf32, #sym.shape<[A]>>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 0 to be equal, but they are A + 1 and A, which cannot be equal: 'A' is in [1, 64] (from sym.symbol @A)}}
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[A + 1]>>, tensor<?xf32, #sym.shape<[A]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Two symbols whose ranges do not meet.
sym.symbol @A range [1, 4]
sym.symbol @B range [8, 16]
func.func @ranges_disjoint(%x: tensor<?xf32, #sym.shape<[A]>>, %y: tensor<?xf32, #sym.shape<[B]>>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 0 to be equal, but they are A and B, which cannot be equal: 'A' is in [1, 4] (from sym.symbol @A); 'B' is in [8, 16] (from sym.symbol @B)}}
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[A]>>, tensor<?xf32, #sym.shape<[B]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// 12 is in the range but not a multiple of the divisor.
sym.symbol @L range [8, 512] divisor 8
func.func @divisor_excludes(%x: tensor<?xf32, #sym.shape<[L]>>, %y: tensor<12xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 0 to be equal, but they are L and 12, which cannot be equal: 'L' is in [8, 512] divisor 8 (from sym.symbol @L)}}
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[L]>>, tensor<12xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A deferred equality that a later binding makes false names the op that
// required it: A = 3, B = C = 4 make 2*A == B*C into 6 == 16.
sym.symbol @A range [1, 64]
sym.symbol @B range [1, 64]
sym.symbol @C range [1, 64]
func.func @contradicts_deferred(%x: tensor<?xf32, #sym.shape<[2*A]>>, %y: tensor<?xf32, #sym.shape<[B*C]>>,
                                %b: tensor<?xf32, #sym.shape<[B]>>, %c: tensor<?xf32, #sym.shape<[C]>>,
                                %a: tensor<?xf32, #sym.shape<[A]>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[2*A]>>, tensor<?xf32, #sym.shape<[B*C]>>) -> tensor<*xf32> loc("first")
  %four = dg.constant dense<1.0> : tensor<4xf32>
  %1 = dg.add %b, %four : (tensor<?xf32, #sym.shape<[B]>>, tensor<4xf32>) -> tensor<*xf32>
  %2 = dg.add %c, %four : (tensor<?xf32, #sym.shape<[C]>>, tensor<4xf32>) -> tensor<*xf32>
  %three = dg.constant dense<1.0> : tensor<3xf32>
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 0 to be equal, but they are A and 3, which contradicts the broadcast dimensions 0 2*A == B*C required by 'dg.add' "first" (they become 6 and 16)}}
  %3 = dg.add %a, %three : (tensor<?xf32, #sym.shape<[A]>>, tensor<3xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Two deferred equalities whose classes a binding merges: A*B == 6 and
// C*D == 8 with A = C and B = D.
sym.symbol @A range [1, 64]
sym.symbol @B range [1, 64]
sym.symbol @C range [1, 64]
sym.symbol @D range [1, 64]
func.func @contradicts_class(%ab: tensor<?xf32, #sym.shape<[A*B]>>, %six: tensor<6xf32>,
                             %cd: tensor<?xf32, #sym.shape<[C*D]>>, %eight: tensor<8xf32>,
                             %a: tensor<?xf32, #sym.shape<[A]>>, %c: tensor<?xf32, #sym.shape<[C]>>,
                             %b: tensor<?xf32, #sym.shape<[B]>>, %d: tensor<?xf32, #sym.shape<[D]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.add %ab, %six : (tensor<?xf32, #sym.shape<[A*B]>>, tensor<6xf32>) -> tensor<*xf32> loc("six")
  %1 = dg.add %cd, %eight : (tensor<?xf32, #sym.shape<[C*D]>>, tensor<8xf32>) -> tensor<*xf32> loc("eight")
  %2 = dg.add %a, %c : (tensor<?xf32, #sym.shape<[A]>>, tensor<?xf32, #sym.shape<[C]>>) -> tensor<*xf32>
  // expected-error @+1 {{'dg.add' op requires the broadcast dimensions 0 to be equal, but they are B and D, which contradicts the broadcast dimensions 0 C*D == 8 required by 'dg.add' "eight" (it makes 6 equal to 8)}}
  %3 = dg.add %b, %d : (tensor<?xf32, #sym.shape<[B]>>, tensor<?xf32, #sym.shape<[D]>>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// The pass (InferShapes.cpp)
//===----------------------------------------------------------------------===//

// An unranked argument has no symbolic shape either.
// expected-error @+1 {{'func.func' op argument 0 is unranked: 'tensor<*xf32>' (graph inputs need a rank)}}
func.func @unranked_argument(%x: tensor<*xf32>) -> tensor<*xf32> {
  %0 = dg.relu %x : tensor<*xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @no_shape_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op has no symbolic shape function}}
  %0 = func.call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @declared_rank(%x: tensor<4x8xf32>) -> tensor<?x?x?xf32> {
  // expected-error @+1 {{'dg.relu' op result #0 is declared with rank 3 but its shape function gives rank 2}}
  %0 = dg.relu %x : tensor<4x8xf32> -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

func.func @split_no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dg.split' op shape function returned 1 shapes for 0 results}}
  "dg.split"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

// The shape function checks perm when the input was unranked at parse time.
func.func @transpose_unranked_perm(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  %0 = dg.relu %x : tensor<4x8xf32> -> tensor<*xf32>
  // expected-error @+1 {{'dg.transpose' op perm has 3 entries for rank 2}}
  %1 = dg.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<*xf32> -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

func.func @slice_scalar_bounds(%x: tensor<4x8xf32>, %s: tensor<i64>, %e: tensor<i64>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.slice' op starts, ends, axes and steps must be 1-D, operand #1 has rank 0}}
  %0 = dg.slice %x, %s, %e : tensor<4x8xf32>, tensor<i64>, tensor<i64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @softmax_axis(%x: tensor<4x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.softmax' op axis 5 is out of range for rank 2}}
  %0 = dg.softmax %x {axis = 5 : i64} : tensor<4x8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.trilu' op expects rank >= 2, got 1}}
  %0 = dg.trilu %x : tensor<8xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// BatchNorm: one statistic per channel
//===----------------------------------------------------------------------===//

func.func @batch_norm_rank(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.batch_norm' op expects an input of rank at least 2 (N x C x ...), got rank 1}}
  %0 = dg.batch_norm %x, %s, %s, %s, %s : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @batch_norm_stat_rank(%x: tensor<2x3x5xf32>, %s: tensor<3xf32>, %v: tensor<1x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.batch_norm' op variance must have rank 1 (one value per channel), got rank 2}}
  %0 = dg.batch_norm %x, %s, %s, %s, %v : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @batch_norm_stat_length(%x: tensor<2x3x5xf32>, %s: tensor<3xf32>, %m: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'dg.batch_norm' op requires mean's length and the channels to be equal, but they are 4 and 3}}
  %0 = dg.batch_norm %x, %s, %s, %m, %s : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

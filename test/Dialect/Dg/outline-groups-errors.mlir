// RUN: dyncc-opt %s --split-input-file --dyncc-outline-groups --verify-diagnostics

// A group result with an anonymous dimension cannot be sized from the
// kernel's symbol arguments.
sym.symbol @B range [1, 64]
func.func @anonymous(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>) -> tensor<?x8xf32> {
  %g = dg.fusion elementwise {
    // expected-error @+1 {{'dg.relu' op result #0 has no symbolic shape to size it}}
    %0 = dg.relu %x : tensor<?x8xf32, #sym.shape<[B, 8]>> -> tensor<?x8xf32>
    dg.yield %0 : tensor<?x8xf32>
  } : tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

// A form dyncc-decompose would have split has no direct lowering.
sym.symbol @B range [1, 64]
func.func @whole_softmax(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>) -> tensor<?x8xf32, #sym.shape<[B, 8]>> {
  %g = dg.fusion reduce {
    // expected-error @+1 {{'dg.softmax' op is split into primitives by dyncc-decompose before outlining; this form was not}}
    %0 = dg.softmax %x {axis = 1 : i64, dg.backbone} : tensor<?x8xf32, #sym.shape<[B, 8]>> -> tensor<?x8xf32, #sym.shape<[B, 8]>>
    dg.yield %0 : tensor<?x8xf32, #sym.shape<[B, 8]>>
  } : tensor<?x8xf32, #sym.shape<[B, 8]>>
  return %g : tensor<?x8xf32, #sym.shape<[B, 8]>>
}

// -----

// Resize modes without a lowering are named.
sym.symbol @H range [1, 64]
func.func @cubic(%x: tensor<1x1x?x?xf32, #sym.shape<[1, 1, H, H]>>, %s: tensor<4xf32>) -> tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>> {
  %g = dg.fusion data_movement {
    // expected-error @+1 {{'dg.resize' op mode 'cubic' has no lowering yet}}
    %0 = dg.resize %x scales %s : tensor<4xf32> {mode = "cubic"} : tensor<1x1x?x?xf32, #sym.shape<[1, 1, H, H]>> -> tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
    dg.yield %0 : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
  } : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
  return %g : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
}

// -----

sym.symbol @H range [1, 64]
func.func @crop(%x: tensor<1x1x?x?xf32, #sym.shape<[1, 1, H, H]>>, %s: tensor<4xf32>) -> tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>> {
  %g = dg.fusion data_movement {
    // expected-error @+1 {{'dg.resize' op coordinate transformation 'tf_crop_and_resize' has no lowering yet}}
    %0 = dg.resize %x scales %s : tensor<4xf32> {coordinate_transformation_mode = "tf_crop_and_resize"} : tensor<1x1x?x?xf32, #sym.shape<[1, 1, H, H]>> -> tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
    dg.yield %0 : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
  } : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
  return %g : tensor<1x1x?x?xf32, #sym.shape<[1, 1, 2 * H, 2 * H]>>
}

// -----

// Transcendental ops need a float element type.
sym.symbol @B range [1, 64]
func.func @int_exp(%x: tensor<?xi32, #sym.shape<[B]>>) -> tensor<?xi32, #sym.shape<[B]>> {
  %g = dg.fusion elementwise {
    // expected-error @+1 {{'dg.exp' op has no lowering for element type 'i32'}}
    %0 = dg.exp %x : tensor<?xi32, #sym.shape<[B]>> -> tensor<?xi32, #sym.shape<[B]>>
    dg.yield %0 : tensor<?xi32, #sym.shape<[B]>>
  } : tensor<?xi32, #sym.shape<[B]>>
  return %g : tensor<?xi32, #sym.shape<[B]>>
}

// -----

// Slice axes decide the loop structure: they must be constants.
sym.symbol @B range [1, 64]
func.func @slice_axes(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %axes: tensor<1xi64>) -> tensor<?x4xf32, #sym.shape<[B, 4]>> {
  %starts = dg.constant dense<0> : tensor<1xi64>
  %ends = dg.constant dense<4> : tensor<1xi64>
  %g = dg.fusion data_movement {
    // expected-error @+1 {{'dg.slice' op needs constant axes to be lowered}}
    %0 = dg.slice %x, %starts, %ends axes %axes : tensor<1xi64> : tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<1xi64>, tensor<1xi64> -> tensor<?x4xf32, #sym.shape<[B, 4]>>
    dg.yield %0 : tensor<?x4xf32, #sym.shape<[B, 4]>>
  } : tensor<?x4xf32, #sym.shape<[B, 4]>>
  return %g : tensor<?x4xf32, #sym.shape<[B, 4]>>
}

// -----

sym.symbol @B range [1, 64]
func.func @pad_mode(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>) -> tensor<?x10xf32, #sym.shape<[B, 10]>> {
  %pads = dg.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
  %g = dg.fusion data_movement {
    // expected-error @+1 {{'dg.pad' op has an unknown mode 'mirror'}}
    %0 = dg.pad %x, %pads {mode = "mirror"} : tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<4xi64> -> tensor<?x10xf32, #sym.shape<[B, 10]>>
    dg.yield %0 : tensor<?x10xf32, #sym.shape<[B, 10]>>
  } : tensor<?x10xf32, #sym.shape<[B, 10]>>
  return %g : tensor<?x10xf32, #sym.shape<[B, 10]>>
}

// -----

sym.symbol @N range [1, 64]
func.func @int_avg_pool(%x: tensor<?x1x4x4xi32, #sym.shape<[N, 1, 4, 4]>>) -> tensor<?x1x2x2xi32, #sym.shape<[N, 1, 2, 2]>> {
  %g = dg.fusion data_movement {
    // expected-error @+1 {{'dg.avg_pool' op average pooling needs a float element type}}
    %0 = dg.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x1x4x4xi32, #sym.shape<[N, 1, 4, 4]>> -> tensor<?x1x2x2xi32, #sym.shape<[N, 1, 2, 2]>>
    dg.yield %0 : tensor<?x1x2x2xi32, #sym.shape<[N, 1, 2, 2]>>
  } : tensor<?x1x2x2xi32, #sym.shape<[N, 1, 2, 2]>>
  return %g : tensor<?x1x2x2xi32, #sym.shape<[N, 1, 2, 2]>>
}

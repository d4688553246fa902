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

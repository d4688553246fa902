// RUN: dyncc-opt %s --split-input-file | dyncc-opt | FileCheck %s

// Expressions are printed in canonical form: equal expressions are equal
// attributes.
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//       CHECK: sym.symbol @L range [8, 512] divisor 8 likely 128
//       CHECK: func.func @canonical(%{{.*}}: tensor<?x64xf32, #sym.shape<[12*B*L, 64]>>,
//  CHECK-SAME:     %{{.*}}: tensor<?x?xf32, #sym.shape<[L + 1, ceildiv(B, 32)]>>)
//  CHECK-SAME:   -> tensor<?x64xf32, #sym.shape<[12*B*L, 64]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [8, 512] divisor 8 likely 128
func.func @canonical(%x: tensor<?x64xf32, #sym.shape<[L*B*12, 64]>>,
                     %y: tensor<?x?xf32, #sym.shape<[1 + L, ceildiv(B, 32)]>>)
    -> tensor<?x64xf32, #sym.shape<[B*12*L, 64]>> {
  // Different spellings of one expression are one type.
  return %x : tensor<?x64xf32, #sym.shape<[12*L*B, 64]>>
}

// -----

// Exact divisions simplify; cancelling terms vanish.
// CHECK-LABEL: func.func @simplify
//       CHECK:   tensor<?x?xf32, #sym.shape<[B + 2, L]>>
func.func @simplify(%x: tensor<?x?xf32, #sym.shape<[floordiv(4*B + 8, 4), L + B - B]>>) {
  return
}

// -----

// CHECK-LABEL: sym.constraint <B*L> equals <N> "reshape"
sym.constraint #sym.expr<L*B> equals #sym.expr<N> "reshape"

// -----

// Binds print their flags; the dims are canonical.
// CHECK-LABEL: func.func @bind
//       CHECK:   sym.bind %arg0 as <[a*b, 4]> "dg.reshape 'r'" reshape_of <[N]> allowzero : tensor<2xi64>
//       CHECK:   sym.bind %arg0 as <[a, b]> "dg.expand" broadcast : tensor<2xi64>
func.func @bind(%shape: tensor<2xi64>) {
  sym.bind %shape as #sym.shape<[b*a, 4]> "dg.reshape 'r'" reshape_of #sym.shape<[N]> allowzero : tensor<2xi64>
  sym.bind %shape as #sym.shape<[a, b]> "dg.expand" broadcast : tensor<2xi64>
  return
}

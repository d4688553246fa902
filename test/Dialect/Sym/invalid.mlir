// RUN: dyncc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'sym.symbol' op range [9, 3] is empty}}
sym.symbol @B range [9, 3]

// -----

// expected-error @+1 {{'sym.symbol' op likely value 900 is outside the range [1, 512]}}
sym.symbol @L range [1, 512] likely 900

// -----

// expected-error @+1 {{'sym.symbol' op divisor 0 must be at least 1}}
sym.symbol @L range [1, 512] divisor 0

// -----

// expected-error @+1 {{dimension 1 is static 64 but its symbolic size is B}}
func.func @static_mismatch(%x: tensor<?x64xf32, #sym.shape<[B, B]>>) {
  return
}

// -----

// expected-error @+1 {{dimension 0 is dynamic but its symbolic size is the constant 4}}
func.func @dynamic_constant(%x: tensor<?xf32, #sym.shape<[4]>>) {
  return
}

// -----

// expected-error @+1 {{symbolic shape has 1 dimensions but the tensor has rank 2}}
func.func @rank_mismatch(%x: tensor<?x?xf32, #sym.shape<[B]>>) {
  return
}

// -----

// expected-error @+1 {{unknown dimension function 'sqrt'}}
func.func @bad_function(%x: tensor<?xf32, #sym.shape<[sqrt(B, 2)]>>) {
  return
}

// -----

func.func @bind_count(%shape: tensor<3xi64>) {
  // expected-error @+1 {{'sym.bind' op binds 2 dimensions from 'tensor<3xi64>': the values need exactly one element per dimension}}
  sym.bind %shape as <[a, b]> "dg.reshape" : tensor<3xi64>
  return
}

// -----

func.func @bind_float(%shape: tensor<2xf32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of signless integer values}}
  sym.bind %shape as <[a, b]> "dg.reshape" : tensor<2xf32>
  return
}

adir.param @"w : tensor<2x99999999999xf32> = dense<1.0> : tensor<2x99999999999xf32> and a long tail of words that backtracking loved

// Input of huge_dense_literal.mlir (not a test: lit.cfg excludes Inputs).
func.func @f() -> tensor<99999999999xi32> {
  %c = "adir.constant"() <{value = dense<7> : tensor<99999999999xi32>}> : () -> tensor<99999999999xi32>
  func.return %c : tensor<99999999999xi32>
}

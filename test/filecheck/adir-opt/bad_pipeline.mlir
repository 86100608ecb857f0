// Unknown passes, unknown options and malformed pipelines are located in the -p text.
// RUN: not adir-opt %s -p 'infer-shapes{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not adir-opt %s -p 'cse,frobnicate' 2>&1 | filecheck %s --check-prefix=PASS
// A near miss, among adir's passes and xDSL's, is named.
// RUN: not adir-opt %s -p 'autodif,canonicalise' 2>&1 | filecheck %s --check-prefix=TYPO
// RUN: not adir-opt %s -p 'infer-shapes{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// A value of the wrong type is located at its pass (it was at column 1 of the pipeline).
// RUN: not adir-opt %s -p 'cse,insert-optimizer{kind=sgd lr=nan}' 2>&1 | filecheck %s --check-prefix=VALUE

func.func @f() {
  func.return
}
// OPTION: <pass-pipeline>:1:1: error: pass 'infer-shapes' has no option 'bogus' (its options: none)
// PASS: <pass-pipeline>:1:5: error: unknown pass 'frobnicate' (adir's: {{.*}}infer-shapes{{.*}}; and {{[0-9]+}} more, xDSL's, which --help lists)
// PASS-NEXT: cse,frobnicate
// PASS-NEXT: {{^    \^}}
// TYPO: <pass-pipeline>:1:1: error: unknown pass 'autodif' (did you mean 'autodiff'? adir's:
// SYNTAX: <pass-pipeline>:1:14: error: malformed pass pipeline: Expected argument name here
// VALUE: <pass-pipeline>:1:5: error: pass 'insert-optimizer': Incompatible types: given ('nan',), expected <class 'float'>

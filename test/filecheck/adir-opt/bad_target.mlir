// A malformed or contradictory -t spec is a diagnostic before anything runs, exit code 1: xDSL
// parsed it after argparse and its parse error escaped as a Python traceback, and a repeated
// option silently kept its last value.
// RUN: not adir-opt %s -t 'c{' 2>&1 | filecheck %s --check-prefix=OPEN
// RUN: not adir-opt %s -t 'c{=}' 2>&1 | filecheck %s --check-prefix=EQUALS
// RUN: not adir-opt %s -t 'c{file=}' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not adir-opt %s -t 'c{prefix=../x}' 2>&1 | filecheck %s --check-prefix=UNQUOTED
// RUN: not adir-opt %s -t 'c{prefix="../x"}' 2>&1 | filecheck %s --check-prefix=PATH
// RUN: not adir-opt %s -t 'c{prefix="a" prefix="b"}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not adir-opt %s -t 'c{kernels="zz"}' 2>&1 | filecheck %s --check-prefix=KERNELS
// RUN: not adir-opt %s -p 'insert-optimizer{lr=0.1 kind=sgd lr=0.2}' 2>&1 | filecheck %s --check-prefix=PASS-TWICE

func.func @f() {
  func.return
}
// OPEN: adir-opt: error: -t c{: malformed target: Expected argument name here
// OPEN-NEXT: {{^}}c{{[{]$}}
// OPEN-NEXT: {{^  \^$}}
// OPEN-NOT: Traceback
// EQUALS: adir-opt: error: -t c{=}: malformed target: Expected argument name here
// EQUALS-NOT: Traceback
// EMPTY: adir-opt: error: -t c{file=}: malformed target: Unknown argument value
// EMPTY-NOT: Traceback
// UNQUOTED: adir-opt: error: -t c{prefix=../x}: malformed target: Unknown token
// UNQUOTED-NEXT: {{^}}c{prefix=../x}
// UNQUOTED-NEXT: {{^         \^$}}
// UNQUOTED-NOT: Traceback
// PATH: adir-opt: error: -t c{prefix="../x"}: C target: prefix='../x' is not the start of a C identifier
// TWICE: adir-opt: error: -t c{prefix="a" prefix="b"}: option 'prefix' is given twice
// TWICE-NEXT: {{^}}c{prefix="a" prefix="b"}
// TWICE-NEXT: {{^             \^$}}
// KERNELS: adir-opt: error: -t c{kernels="zz"}: Provided arguments ["kernels"] not found in expected arguments ["prefix", "file"]
// PASS-TWICE: <pass-pipeline>:1:34: error: option 'lr' is given twice

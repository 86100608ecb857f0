"""Front-ends: ways to get a model into adir's tensor dialect without writing IR by hand.

- `builder`: a small Python API (`ModelBuilder`) with a method for every op of the dialect.
- `torch_import`: `import_module(model, example_inputs, loss=...)` reads a `torch.nn.Module`
  through `torch.export` (the only part of adir that needs PyTorch, imported only there).

`adir-import` (`adir/tools/adir_import.py`) is the importer's command line.
"""

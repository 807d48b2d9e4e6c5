"""Value types at the bottom of the package: plans, records, offsets, results, state, timings, naming, options.

They import nothing of the package but ``exceptions``, so every layer above can share them."""

"""A pull request judged against its base in the same run: `--kernelwatch-compare-ref REF`.

Owns the protocol a project's kernel library implements and how it is found
(library.py: the one place kernelwatch learns of a project's kernels), the ref's
tree checked out beside the user's (ref_tree.py), the identity of a kernel's
machine code and launch (identity.py) and the comparison that times base and
head interleaved (against_ref.py). May import kernelwatch.units,
kernelwatch.timing, kernelwatch.verdict and kernelwatch.storage.
"""

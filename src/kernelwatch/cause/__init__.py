"""Why a case got slower: the cause card of a slower case, from its two builds and, on a GPU, two profiles.

Owns the static half (static.py: what the compiler says of a kernel's build and its SASS, by
instruction class, with the occupancy its launch allows, occupancy.py; sass.py finds and runs
nvdisasm), the dynamic half (dynamic.py: Nsight Compute's metrics of both sides, `ncu --csv`) and
the card that ranks the differences in plain words (card.py); a host routine's card ranks its phases
by the time each gained (phases.py). A session's code under test, its kernel library and the
worktrees its cards are built from are held in code_under_test.py. Works from builds and their source text, which the
project's kernel library gives (src/kernelwatch/ab/library.py: `source_of`, `build_for`). May import kernelwatch.units, kernelwatch.timing, kernelwatch.verdict, kernelwatch.storage and kernelwatch.ab.
"""

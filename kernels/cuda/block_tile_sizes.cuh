// The tile sizes of the block-tiled kernels (matmul_05, 06, 07): stated once,
// in kernels/registry.py, and given to the compiler as -D options.
#pragma once

#ifndef BM
#error "BM must be given by kernels/registry.py"
#endif
#ifndef BN
#error "BN must be given by kernels/registry.py"
#endif
#ifndef BK
#error "BK must be given by kernels/registry.py"
#endif
#ifndef TM
#error "TM must be given by kernels/registry.py"
#endif

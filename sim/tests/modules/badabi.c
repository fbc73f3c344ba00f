/* badabi.c — a shared object claiming a future ABI version: the driver
 * must refuse it with CUDA_ERROR_INVALID_IMAGE. */
#include "simcuda_abi.h"

__attribute__((visibility("default")))
const struct simcuda_module simcuda_module = {SIMCUDA_ABI_VERSION + 1, 0, 0};

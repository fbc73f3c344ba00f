#!/usr/bin/env python3
"""module_names.py MODULE.so... -- prints the name of every kernel a simcc
module registers (struct simcuda_module in sim/include/simcuda_abi.h),
one per line, as the simulated driver sees them."""
import ctypes
import sys


class Kernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("thread_fn", ctypes.c_void_p),
                ("nparams", ctypes.c_uint), ("param_offset", ctypes.c_void_p),
                ("param_size", ctypes.c_void_p), ("param_bytes", ctypes.c_uint),
                ("synchronizes", ctypes.c_uint), ("cost_ns", ctypes.c_void_p),
                ("work", ctypes.c_void_p)]


class Module(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint), ("nkernels", ctypes.c_uint),
                ("kernels", ctypes.POINTER(Kernel))]


for path in sys.argv[1:]:
    module = Module.in_dll(ctypes.CDLL(path), "simcuda_module")
    for i in range(module.nkernels):
        print(module.kernels[i].name.decode())

"""The one place that decides how kernels are compiled.

numba compiles each kernel on its first call and caches the machine code next to the module
(``cache=True``), so only the very first run on a machine pays for compilation.
"""
import numba


def njit(func):
    return numba.njit(cache=True, fastmath=False, nogil=True)(func)

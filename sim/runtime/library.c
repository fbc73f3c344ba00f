/*
 * library.c — context-independent libraries: cudaLibraryLoadFromFile,
 * cudaLibraryLoadData, cudaLibraryUnload, cudaLibraryGetKernel.  The
 * runtime's option enums share the driver's values.
 */
#include <assert.h>
#include "rt.h"

static_assert(sizeof(enum cudaJitOption) == sizeof(CUjit_option), "");
static_assert(sizeof(enum cudaLibraryOption) == sizeof(CUlibraryOption), "");

RT_EXPORT cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName,
                                              enum cudaJitOption *jitOptions,
                                              void **jitOptionsValues, unsigned int numJitOptions,
                                              enum cudaLibraryOption *libraryOptions,
                                              void **libraryOptionValues,
                                              unsigned int numLibraryOptions)
{
	cudaLibraryLoadFromFile_v12060_params p = {
	    library,       fileName,       jitOptions,          jitOptionsValues,
	    numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions};
	struct rt_call c;
	cudaError_t e =
	    rt_enter(&c, RT_FN(cudaLibraryLoadFromFile_v12060), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && (!library || !fileName))
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuLibraryLoadFromFile, (CUlibrary *)library, fileName,
		                 (CUjit_option *)jitOptions, jitOptionsValues, numJitOptions,
		                 (CUlibraryOption *)libraryOptions, libraryOptionValues,
		                 numLibraryOptions));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                          enum cudaJitOption *jitOptions, void **jitOptionsValues,
                                          unsigned int numJitOptions,
                                          enum cudaLibraryOption *libraryOptions,
                                          void **libraryOptionValues,
                                          unsigned int numLibraryOptions)
{
	cudaLibraryLoadData_v12060_params p = {
	    library,       code,           jitOptions,          jitOptionsValues,
	    numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaLibraryLoadData_v12060), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && (!library || !code))
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuLibraryLoadData, (CUlibrary *)library, code,
		                 (CUjit_option *)jitOptions, jitOptionsValues, numJitOptions,
		                 (CUlibraryOption *)libraryOptions, libraryOptionValues,
		                 numLibraryOptions));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
	cudaLibraryUnload_v12060_params p = {library};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaLibraryUnload_v12060), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuLibraryUnload, (CUlibrary)library));
	if (e == cudaSuccess)
		rt_forget_library_kernels();
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
                                           const char *name)
{
	cudaLibraryGetKernel_v12060_params p = {pKernel, library, name};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaLibraryGetKernel_v12060), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && (!pKernel || !name))
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(
		    DRV(cuLibraryGetKernel, (CUkernel *)pKernel, (CUlibrary)library, name));
	if (e == cudaSuccess)
		rt_remember_kernel(*pKernel, name);
	return rt_exit(&c, e);
}

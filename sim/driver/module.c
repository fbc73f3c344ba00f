/*
 * module.c — modules and libraries.  A loadable image for the simulated
 * device is a host shared object exporting `simcuda_module`
 * (simcuda_abi.h), given by path or as bytes in memory (then written to a
 * memfd and dlopen()ed through /proc/self/fd).  Anything else is refused
 * the way a real driver refuses an image for another architecture:
 * CUDA_ERROR_INVALID_PTX for PTX text, CUDA_ERROR_INVALID_IMAGE otherwise.
 */
#include "driver.h"
#include "module.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#endif

/* PTX is text that starts, after blanks, with a comment or a directive. */
static bool looks_like_ptx(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (n - i >= 2 && p[i] == '/' && p[i + 1] == '/')
		return true;
	return (n - i >= 8 && memcmp(p + i, ".version", 8) == 0) ||
	       (n - i >= 7 && memcmp(p + i, ".target", 7) == 0);
}

/* What the image is; size of the ELF file when it is one of ours. */
static CUresult classify(const unsigned char *p, size_t n, size_t *elf_size)
{
	if (n < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0)
		return looks_like_ptx(p, n) ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof(eh));
	/* A cubin is ELF too, but an executable for the GPU (EM_CUDA). */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
	    eh.e_machine != HOST_MACHINE)
		return CUDA_ERROR_INVALID_IMAGE;
	size_t end = (size_t)eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	size_t ph = (size_t)eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize;
	*elf_size = end > ph ? end : ph;
	return CUDA_SUCCESS;
}

/* The bytes an in-memory image spans: the section header table usually
 * ends it, but a stripped file may end with a segment instead. */
static size_t image_size(const unsigned char *p, size_t header_bound)
{
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof(eh));
	size_t size = header_bound;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof(ph));
		if (ph.p_offset + ph.p_filesz > size)
			size = ph.p_offset + ph.p_filesz;
	}
	return size;
}

static CUresult open_so(const char *path, const char *shown, struct sim_module **out, bool library)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fprintf(stderr, "simcuda: cannot load module %s: %s\n", shown, dlerror());
		return CUDA_ERROR_INVALID_IMAGE;
	}
	const struct simcuda_module *m = dlsym(dl, SIMCUDA_MODULE_SYMBOL);
	if (m == NULL || m->abi_version != SIMCUDA_ABI_VERSION || (m->nkernels && !m->kernels)) {
		fprintf(stderr, "simcuda: %s is not a simcuda module (%s)\n", shown,
		        m ? "wrong abi_version" : "no " SIMCUDA_MODULE_SYMBOL);
		dlclose(dl);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	struct sim_module *mod = calloc(1, sizeof(*mod));
	struct sim_func *funcs = calloc(m->nkernels ? m->nkernels : 1, sizeof(*funcs));
	struct sim_func *kernels = calloc(m->nkernels ? m->nkernels : 1, sizeof(*kernels));
	if (mod == NULL || funcs == NULL || kernels == NULL) {
		free(mod);
		free(funcs);
		free(kernels);
		dlclose(dl);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	mod->dl = dl;
	mod->image_fd = -1;
	mod->m = m;
	mod->funcs = funcs;
	mod->kernels = kernels;
	mod->library = library;
	for (unsigned i = 0; i < m->nkernels; i++) {
		funcs[i] = (struct sim_func){
		    .k = &m->kernels[i], .mod = mod, .max_dynamic_smem = DEFAULT_MAX_DYNAMIC_SMEM};
		handle_add(&funcs[i], H_FUNC);
		if (library) {
			kernels[i] = (struct sim_func){.is_kernel = 1,
			                               .k = &m->kernels[i],
			                               .mod = mod,
			                               .as_function = &funcs[i]};
			handle_add(&kernels[i], H_KERNEL);
		}
	}
	handle_add(mod, library ? H_LIBRARY : H_MODULE);
	*out = mod;
	return CUDA_SUCCESS;
}

CUresult module_load_file(const char *path, struct sim_module **out, bool library)
{
	if (path == NULL || out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
	unsigned char head[256];
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	size_t size;
	CUresult r = classify(head, n > 0 ? (size_t)n : 0, &size);
	if (r != CUDA_SUCCESS)
		return r;
	/* dlopen needs a path with a slash to not search the library path. */
	char buf[4096];
	if (strchr(path, '/') == NULL) {
		snprintf(buf, sizeof(buf), "./%s", path);
		path = buf;
	}
	return open_so(path, path, out, library);
}

CUresult module_load_image(const void *image, struct sim_module **out, bool library)
{
	if (image == NULL || out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	size_t size = 0;
	/* Read the header first: an image shorter than an ELF header is text,
	 * and strnlen keeps a short PTX string from being over-read. */
	size_t avail = strnlen(image, sizeof(Elf64_Ehdr));
	const unsigned char *p = image;
	if (avail < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0)
		return looks_like_ptx(p, avail) ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
	CUresult r = classify(p, sizeof(Elf64_Ehdr), &size);
	if (r != CUDA_SUCCESS)
		return r;
	size = image_size(p, size);
	int fd = memfd_create("simcuda-module", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t off = 0; off < size;) {
		ssize_t w = write(fd, p + off, size - off);
		if (w <= 0) {
			close(fd);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		off += (size_t)w;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open_so(path, "(in-memory image)", out, library);
	if (r == CUDA_SUCCESS)
		(*out)->image_fd = fd;
	else
		close(fd);
	return r;
}

void module_unload(struct sim_module *mod)
{
	/* Kernels still queued run code from the module: let them finish. */
	if (sim_primary.active)
		ctx_synchronize(&sim_primary);
	handle_del(mod);
	for (unsigned i = 0; i < mod->m->nkernels; i++) {
		handle_del(&mod->funcs[i]);
		if (mod->library)
			handle_del(&mod->kernels[i]);
	}
	dlclose(mod->dl);
	if (mod->image_fd >= 0)
		close(mod->image_fd);
	free(mod->funcs);
	free(mod->kernels);
	free(mod);
}

/* ---- entry points ------------------------------------------------------ */

static CUresult load(CUmodule *out, const char *path, const void *image)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_module *mod;
	r = path ? module_load_file(path, &mod, false) : module_load_image(image, &mod, false);
	if (r == CUDA_SUCCESS)
		*out = (CUmodule)mod;
	return r;
}

EXPORT CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	cuModuleLoad_params p = {module, fname};
	API_CALL(cuModuleLoad, &p, fname ? load(module, fname, NULL) : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	cuModuleLoadData_params p = {module, image};
	API_CALL(cuModuleLoadData, &p,
	         image ? load(module, NULL, image) : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                           unsigned int numOptions, CUjit_option *options,
                                           void **optionValues)
{
	cuModuleLoadDataEx_params p = {module, image, numOptions, options, optionValues};
	/* JIT options concern PTX compilation, which never happens here. */
	API_CALL(cuModuleLoadDataEx, &p,
	         image && (numOptions == 0 || (options && optionValues))
	             ? load(module, NULL, image)
	             : CUDA_ERROR_INVALID_VALUE);
}

/* Modules and libraries are one object behind two handle kinds: a module
 * needs a current context, a library (context-independent) only an
 * initialized driver. */
static CUresult loaded_of(const void *h, enum handle_kind kind, struct sim_module **out)
{
	if (kind == H_MODULE) {
		struct sim_ctx *ctx;
		CUresult r = ctx_current(&ctx);
		if (r != CUDA_SUCCESS)
			return r;
	} else if (!sim_initialized()) {
		return CUDA_ERROR_NOT_INITIALIZED;
	}
	if (!handle_is(h, kind))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_module *)h;
	return CUDA_SUCCESS;
}

static CUresult unload(const void *h, enum handle_kind kind)
{
	struct sim_module *mod;
	CUresult r = loaded_of(h, kind, &mod);
	if (r == CUDA_SUCCESS)
		module_unload(mod);
	return r;
}

static int find_kernel(const struct sim_module *mod, const char *name)
{
	for (unsigned i = 0; i < mod->m->nkernels; i++)
		if (strcmp(mod->m->kernels[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The index of kernel `name` for cuModuleGetFunction / cuLibraryGetKernel;
 * `out` is only checked, the caller stores its own handle kind. */
static CUresult lookup(const void *h, enum handle_kind kind, const void *out, const char *name,
                       struct sim_module **mod, int *i)
{
	CUresult r = loaded_of(h, kind, mod);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*i = find_kernel(*mod, name);
	return *i < 0 ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

static CUresult count_kernels(unsigned *count, const void *h, enum handle_kind kind)
{
	struct sim_module *mod;
	CUresult r = loaded_of(h, kind, &mod);
	if (r != CUDA_SUCCESS)
		return r;
	if (count == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*count = mod->m->nkernels;
	return CUDA_SUCCESS;
}

/* Checks an enumeration of n handles into out; the caller fills it. */
static CUresult enumerable(const void *h, enum handle_kind kind, const void *out, unsigned n,
                           struct sim_module **mod)
{
	CUresult r = loaded_of(h, kind, mod);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || n > (*mod)->m->nkernels)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	cuModuleUnload_params p = {hmod};
	API_CALL(cuModuleUnload, &p, unload(hmod, H_MODULE));
}

static CUresult get_function(CUfunction *out, CUmodule h, const char *name)
{
	struct sim_module *mod;
	int i;
	CUresult r = lookup(h, H_MODULE, out, name, &mod, &i);
	if (r == CUDA_SUCCESS)
		*out = (CUfunction)&mod->funcs[i];
	return r;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	cuModuleGetFunction_params p = {hfunc, hmod, name};
	API_CALL(cuModuleGetFunction, &p, get_function(hfunc, hmod, name));
}

EXPORT CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	cuModuleGetFunctionCount_params p = {count, mod};
	API_CALL(cuModuleGetFunctionCount, &p, count_kernels(count, mod, H_MODULE));
}

static CUresult enumerate_functions(CUfunction *fns, unsigned n, CUmodule h)
{
	struct sim_module *mod;
	CUresult r = enumerable(h, H_MODULE, fns, n, &mod);
	for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++)
		fns[i] = (CUfunction)&mod->funcs[i];
	return r;
}

EXPORT CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions,
                                                   CUmodule mod)
{
	cuModuleEnumerateFunctions_params p = {functions, numFunctions, mod};
	API_CALL(cuModuleEnumerateFunctions, &p, enumerate_functions(functions, numFunctions, mod));
}

/* ---- libraries (context-independent) ----------------------------------- */

static CUresult library_load(CUlibrary *out, const char *path, const void *image, unsigned njit,
                             CUjit_option *jit, void **jitv, unsigned nlib, CUlibraryOption *lib,
                             void **libv)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (out == NULL || (path == NULL && image == NULL) || (njit && (!jit || !jitv)) ||
	    (nlib && (!lib || !libv)))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_module *mod;
	CUresult r =
	    path ? module_load_file(path, &mod, true) : module_load_image(image, &mod, true);
	if (r == CUDA_SUCCESS)
		*out = (CUlibrary)mod;
	return r;
}

EXPORT CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                              CUjit_option *jitOptions, void **jitOptionsValues,
                                              unsigned int numJitOptions,
                                              CUlibraryOption *libraryOptions,
                                              void **libraryOptionValues,
                                              unsigned int numLibraryOptions)
{
	cuLibraryLoadFromFile_params p = {
	    library,       fileName,       jitOptions,          jitOptionsValues,
	    numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions};
	API_CALL(cuLibraryLoadFromFile, &p,
	         fileName ? library_load(library, fileName, NULL, numJitOptions, jitOptions,
	                                 jitOptionsValues, numLibraryOptions, libraryOptions,
	                                 libraryOptionValues)
	                  : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
                                          CUjit_option *jitOptions, void **jitOptionsValues,
                                          unsigned int numJitOptions,
                                          CUlibraryOption *libraryOptions,
                                          void **libraryOptionValues,
                                          unsigned int numLibraryOptions)
{
	cuLibraryLoadData_params p = {
	    library,       code,           jitOptions,          jitOptionsValues,
	    numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions};
	API_CALL(cuLibraryLoadData, &p,
	         code ? library_load(library, NULL, code, numJitOptions, jitOptions,
	                             jitOptionsValues, numLibraryOptions, libraryOptions,
	                             libraryOptionValues)
	              : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	cuLibraryUnload_params p = {library};
	API_CALL(cuLibraryUnload, &p, unload(library, H_LIBRARY));
}

static CUresult library_kernel(CUkernel *out, CUlibrary h, const char *name)
{
	struct sim_module *mod;
	int i;
	CUresult r = lookup(h, H_LIBRARY, out, name, &mod, &i);
	if (r == CUDA_SUCCESS)
		*out = (CUkernel)&mod->kernels[i];
	return r;
}

EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	cuLibraryGetKernel_params p = {pKernel, library, name};
	API_CALL(cuLibraryGetKernel, &p, library_kernel(pKernel, library, name));
}

EXPORT CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	cuLibraryGetKernelCount_params p = {count, lib};
	API_CALL(cuLibraryGetKernelCount, &p, count_kernels(count, lib, H_LIBRARY));
}

static CUresult enumerate_kernels(CUkernel *ks, unsigned n, CUlibrary h)
{
	struct sim_module *mod;
	CUresult r = enumerable(h, H_LIBRARY, ks, n, &mod);
	for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++)
		ks[i] = (CUkernel)&mod->kernels[i];
	return r;
}

EXPORT CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
                                                  CUlibrary lib)
{
	cuLibraryEnumerateKernels_params p = {kernels, numKernels, lib};
	API_CALL(cuLibraryEnumerateKernels, &p, enumerate_kernels(kernels, numKernels, lib));
}

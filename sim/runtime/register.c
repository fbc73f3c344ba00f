/*
 * register.c — the entry points nvcc's host code calls at start-up
 * (__cudaRegisterFatBinary, __cudaRegisterFunction, ...) and the kernels
 * they stand for.
 *
 * A fat binary carries GPU code the simulated device cannot run.  An
 * object built by sim/bin/simnvcc also carries, beside it, the simcc module
 * of each of its .cu files, as ELF notes (owner "simcuda", type
 * SIMCUDA_NOTE_MODULE, the module's bytes as description) in a PT_NOTE
 * segment.  Registration records which object a fat binary belongs to and
 * each host stub with the device name nvcc gave its kernel; the first
 * launch (or __cudaGetKernel) loads the object's modules through the
 * driver (cuLibraryLoadData, as the real runtime loads its fat binaries
 * lazily) and looks the name up.  A stub whose object has no module with
 * that kernel answers cudaErrorNoKernelImageForDevice, as a GPU whose
 * architecture the fat binary lacks would.
 */
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt.h"

#define SIMCUDA_NOTE_OWNER  "simcuda"
#define SIMCUDA_NOTE_MODULE 1

struct image {
	const void *bytes;
	CUlibrary lib;
	CUresult loaded; /* CUDA_ERROR_NOT_READY until the first attempt */
};

/* A loaded ELF object (the program or a shared library) that registered
 * fat binaries; its modules are shared by all of them. */
struct object {
	uintptr_t base; /* dlpi_addr */
	struct image *images;
	unsigned nimages;
	struct object *next;
};

struct fatbin {
	struct object *obj;
};

struct stub {
	const void *host_fun;
	struct fatbin *fb;
	char *device_name;
	cudaKernel_t kernel;
	cudaError_t status; /* cudaErrorNotReady until looked up */
	struct stub *next;
};

#define STUB_BUCKETS 512
static struct stub *stubs[STUB_BUCKETS];
static struct object *objects;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int any_stubs; /* launches skip the lookup in programs without */

static unsigned bucket(const void *p)
{
	uintptr_t v = (uintptr_t)p;
	return (unsigned)((v >> 4) ^ (v >> 13)) % STUB_BUCKETS;
}

/* ---- finding the simcc modules of the object holding an address -------- */

struct search {
	uintptr_t addr;
	struct object *found;
};

static void add_image(struct object *o, const void *bytes)
{
	struct image *im = realloc(o->images, (o->nimages + 1) * sizeof(*im));
	if (!im)
		return;
	o->images = im;
	im[o->nimages++] = (struct image){.bytes = bytes, .loaded = CUDA_ERROR_NOT_READY};
}

static void read_notes(struct object *o, const unsigned char *p, size_t len)
{
	while (len >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) h;
		memcpy(&h, p, sizeof h);
		size_t name_at = sizeof h, desc_at = name_at + ((h.n_namesz + 3u) & ~3u);
		size_t next = desc_at + ((h.n_descsz + 3u) & ~3u);
		if (next > len)
			return;
		if (h.n_type == SIMCUDA_NOTE_MODULE && h.n_namesz == sizeof SIMCUDA_NOTE_OWNER &&
		    memcmp(p + name_at, SIMCUDA_NOTE_OWNER, sizeof SIMCUDA_NOTE_OWNER) == 0)
			add_image(o, p + desc_at);
		p += next;
		len -= next;
	}
}

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct search *s = data;
	int inside = 0;
	for (unsigned i = 0; i < info->dlpi_phnum && !inside; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		inside = ph->p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph->p_memsz;
	}
	if (!inside)
		return 0;
	for (struct object *o = objects; o; o = o->next)
		if (o->base == info->dlpi_addr) {
			s->found = o;
			return 1;
		}
	struct object *o = calloc(1, sizeof(*o));
	if (!o)
		return 1;
	o->base = info->dlpi_addr;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE)
			read_notes(o, (const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
			           ph->p_filesz);
	}
	o->next = objects;
	objects = o;
	s->found = o;
	return 1;
}

/* ---- registration (static initializers of nvcc-built code) ------------- */

/* No driver call happens here: this runs before main. */
RT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	struct fatbin *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	struct search s = {.addr = (uintptr_t)fatCubin};
	pthread_mutex_lock(&lock);
	dl_iterate_phdr(find_object, &s);
	pthread_mutex_unlock(&lock);
	fb->obj = s.found;
	return (void **)fb;
}

RT_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

RT_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim;
	(void)wSize;
	struct stub *s = calloc(1, sizeof(*s));
	char *name = strdup(deviceFun ? deviceFun : "");
	if (!s || !name) {
		free(s);
		free(name);
		return;
	}
	s->host_fun = hostFun;
	s->fb = (struct fatbin *)fatCubinHandle;
	s->device_name = name;
	s->status = cudaErrorNotReady;
	pthread_mutex_lock(&lock);
	s->next = stubs[bucket(hostFun)];
	stubs[bucket(hostFun)] = s;
	atomic_store(&any_stubs, 1);
	pthread_mutex_unlock(&lock);
}

/* Forgets the fat binary's stubs (their code may be unmapped next).  The
 * modules stay loaded: this runs at exit, when the driver may be gone. */
RT_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	struct fatbin *fb = (struct fatbin *)fatCubinHandle;
	if (!fb)
		return;
	pthread_mutex_lock(&lock);
	for (unsigned b = 0; b < STUB_BUCKETS; b++)
		for (struct stub **ps = &stubs[b]; *ps;) {
			struct stub *s = *ps;
			if (s->fb != fb) {
				ps = &s->next;
				continue;
			}
			*ps = s->next;
			free(s->device_name);
			free(s);
		}
	pthread_mutex_unlock(&lock);
	free(fb);
}

/* ---- looking kernels up -------------------------------------------------- */

/* nvcc names an unnamed namespace after the file ("36_GLOBAL__N__31f2b892_
 * 4_a_cu__Z2ckPfi" in a mangled name), g++ "12_GLOBAL__N_1": the name the
 * simcc module has for the same kernel. */
static char *gxx_anonymous_name(const char *name)
{
	const char *at = strstr(name, "_GLOBAL__N__");
	if (!at)
		return NULL;
	const char *digits = at;
	while (digits > name && digits[-1] >= '0' && digits[-1] <= '9')
		digits--;
	if (digits == at)
		return NULL;
	size_t len = strtoul(digits, NULL, 10);
	if (strlen(at) < len)
		return NULL;
	const char *rest = at + len;
	size_t head = (size_t)(digits - name);
	char *out = malloc(head + strlen("12_GLOBAL__N_1") + strlen(rest) + 1);
	if (out)
		sprintf(out, "%.*s12_GLOBAL__N_1%s", (int)head, name, rest);
	return out;
}

static cudaError_t find_in_object(struct object *o, const char *name, cudaKernel_t *kernel)
{
	for (unsigned i = 0; i < o->nimages; i++) {
		struct image *im = &o->images[i];
		if (im->loaded == CUDA_ERROR_NOT_READY)
			im->loaded = DRV(cuLibraryLoadData, &im->lib, im->bytes, NULL, NULL, 0,
			                 NULL, NULL, 0);
		if (im->loaded != CUDA_SUCCESS)
			continue;
		CUkernel k;
		if (DRV(cuLibraryGetKernel, &k, im->lib, name) == CUDA_SUCCESS) {
			*kernel = (cudaKernel_t)k;
			return cudaSuccess;
		}
	}
	return cudaErrorNoKernelImageForDevice;
}

static cudaError_t resolve(struct stub *s)
{
	if (s->status != cudaErrorNotReady)
		return s->status;
	rt_init_once();
	if (rt.init_error != cudaSuccess)
		return rt.init_error; /* not remembered: the next call says it again */
	cudaError_t e = cudaErrorNoKernelImageForDevice;
	struct object *o = s->fb ? s->fb->obj : NULL;
	if (o) {
		e = find_in_object(o, s->device_name, &s->kernel);
		char *alt = e != cudaSuccess ? gxx_anonymous_name(s->device_name) : NULL;
		if (alt)
			e = find_in_object(o, alt, &s->kernel);
		free(alt);
	}
	s->status = e;
	return e;
}

static struct stub *find_stub(const void *f)
{
	for (struct stub *s = stubs[bucket(f)]; s; s = s->next)
		if (s->host_fun == f)
			return s;
	return NULL;
}

int rt_stub_kernel(const void *func, cudaKernel_t *kernel, const char **name, cudaError_t *err)
{
	if (!atomic_load_explicit(&any_stubs, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&lock);
	struct stub *s = find_stub(func);
	if (s) {
		*err = resolve(s);
		*kernel = s->kernel;
		if (name)
			*name = s->device_name;
	}
	pthread_mutex_unlock(&lock);
	return s != NULL;
}

/* The generated stub asks once for its kernel handle (and ignores the
 * answer) before its first launch.  A stub without a kernel gets itself
 * back, so that the launch can say why it cannot run. */
RT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	if (!kernel)
		return cudaErrorInvalidValue;
	cudaKernel_t k = NULL;
	cudaError_t e = cudaErrorInvalidDeviceFunction;
	if (!rt_stub_kernel(func, &k, NULL, &e)) {
		*kernel = NULL;
		return e;
	}
	*kernel = e == cudaSuccess ? k : (cudaKernel_t)func;
	return e;
}

/*
 * vmm.c — the driver's virtual memory management as the program calls it
 * (PyTorch's expandable segments reach these through cuGetProcAddress):
 * cuMemAddressReserve, cuMemAddressFree, cuMemCreate, cuMemRelease,
 * cuMemMap, cuMemUnmap, cuMemSetAccess, cuMemRetainAllocationHandle and
 * cuMemGetAllocationPropertiesFromHandle.  The session decides
 * (session/vmm.c, alloc/program.c: handles libremat backs, ranges carved
 * from its own); what it does not take goes to the real function as it
 * came.  Without REMAT_* (and with none of our handles or ranges alive) a
 * call costs two loads on top of the real one.
 */
#include "hooks.h"

typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*addrfree_fn)(CUdeviceptr, size_t);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*retain_fn)(CUmemGenericAllocationHandle *, void *);
typedef CUresult (*props_fn)(CUmemAllocationProp *, CUmemGenericAllocationHandle);

/* Whether the session may want the call: libremat is active, or a handle
 * or range of ours is alive (they mean nothing to the driver). */
REMAT_INLINE int watching(void)
{
	return remat_session_active || session_vmm_live();
}

/* The session's answer, or the real call when it does not take it. */
#define VMM_CALL(fn_type, ARGS, session_call)                                                      \
	do {                                                                                       \
		void *real = remat_door_real(hook, door);                                          \
		if (unlikely(!real))                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		if (likely(!watching()))                                                           \
			return ((fn_type)real)ARGS;                                                \
		CUresult r_ = session_call;                                                        \
		return r_ == CUDA_ERROR_NOT_SUPPORTED ? ((fn_type)real)ARGS : r_;                  \
	} while (0)

REMAT_INLINE CUresult reserve(struct remat_hook *hook, int door, CUdeviceptr *p, size_t size,
                              size_t align, CUdeviceptr addr, unsigned long long flags)
{
	VMM_CALL(reserve_fn, (p, size, align, addr, flags),
	         session_vmm_reserve(p, size, align, addr, flags));
}

REMAT_INLINE CUresult address_free(struct remat_hook *hook, int door, CUdeviceptr p, size_t size)
{
	VMM_CALL(addrfree_fn, (p, size), session_vmm_address_free(p, size));
}

REMAT_INLINE CUresult create(struct remat_hook *hook, int door, CUmemGenericAllocationHandle *h,
                             size_t size, const CUmemAllocationProp *prop, unsigned long long flags)
{
	VMM_CALL(create_fn, (h, size, prop, flags), session_vmm_create(h, size, prop, flags));
}

REMAT_INLINE CUresult release(struct remat_hook *hook, int door, CUmemGenericAllocationHandle h)
{
	VMM_CALL(release_fn, (h), session_vmm_release(h));
}

REMAT_INLINE CUresult map(struct remat_hook *hook, int door, CUdeviceptr va, size_t size,
                          size_t off, CUmemGenericAllocationHandle h, unsigned long long flags)
{
	VMM_CALL(map_fn, (va, size, off, h, flags), session_vmm_map(va, size, off, h, flags));
}

REMAT_INLINE CUresult unmap(struct remat_hook *hook, int door, CUdeviceptr va, size_t size)
{
	VMM_CALL(unmap_fn, (va, size), session_vmm_unmap(va, size));
}

REMAT_INLINE CUresult set_access(struct remat_hook *hook, int door, CUdeviceptr va, size_t size,
                                 const CUmemAccessDesc *desc, size_t count)
{
	VMM_CALL(access_fn, (va, size, desc, count), session_vmm_set_access(va, size, desc, count));
}

REMAT_INLINE CUresult retain(struct remat_hook *hook, int door, CUmemGenericAllocationHandle *h,
                             void *addr)
{
	VMM_CALL(retain_fn, (h, addr), session_vmm_retain(h, addr));
}

REMAT_INLINE CUresult props(struct remat_hook *hook, int door, CUmemAllocationProp *prop,
                            CUmemGenericAllocationHandle h)
{
	VMM_CALL(props_fn, (prop, h), session_vmm_props(prop, h));
}

REMAT_DOORS(cuMemAddressReserve, "cuMemAddressReserve", 0, 10020,
            (CUdeviceptr * p, size_t size, size_t align, CUdeviceptr addr,
             unsigned long long flags),
            reserve, p, size, align, addr, flags);
REMAT_DOORS(cuMemAddressFree, "cuMemAddressFree", 0, 10020, (CUdeviceptr p, size_t size),
            address_free, p, size);
REMAT_DOORS(cuMemCreate, "cuMemCreate", 0, 10020,
            (CUmemGenericAllocationHandle * h, size_t size, const CUmemAllocationProp *prop,
             unsigned long long flags),
            create, h, size, prop, flags);
REMAT_DOORS(cuMemRelease, "cuMemRelease", 0, 10020, (CUmemGenericAllocationHandle h), release, h);
REMAT_DOORS(cuMemMap, "cuMemMap", 0, 10020,
            (CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle h,
             unsigned long long flags),
            map, va, size, off, h, flags);
REMAT_DOORS(cuMemUnmap, "cuMemUnmap", 0, 10020, (CUdeviceptr va, size_t size), unmap, va, size);
REMAT_DOORS(cuMemSetAccess, "cuMemSetAccess", 0, 10020,
            (CUdeviceptr va, size_t size, const CUmemAccessDesc *desc, size_t count), set_access,
            va, size, desc, count);
REMAT_DOORS(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle", 0, 11000,
            (CUmemGenericAllocationHandle * h, void *addr), retain, h, addr);
REMAT_DOORS(cuMemGetAllocationPropertiesFromHandle, "cuMemGetAllocationPropertiesFromHandle", 0,
            10020, (CUmemAllocationProp * prop, CUmemGenericAllocationHandle h), props, prop, h);

/*
 * dlsym.c — the dlsym hook.  Libraries with a static cudart (cuBLAS, cuDNN,
 * NCCL, Triton) open libcuda.so.1 and ask dlsym for cuGetProcAddress_v2;
 * they must get ours, or no launch of theirs is ever seen.
 *
 * Everything else goes to glibc's dlsym through a TAIL JUMP written in
 * assembly: glibc resolves RTLD_NEXT relative to its return address, so the
 * caller's return address must still be on the stack when it runs.  A C
 * wrapper only gets a tail call when the optimizer feels like it; the jump
 * below is guaranteed.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "hooks.h"

/* Called by the trampoline: our replacement for name, or NULL to forward
 * to glibc's dlsym (remat_dlsym_next, core/driver.c). */
__attribute__((visibility("hidden"))) REMAT_UNINSTRUMENTED void *
remat_dlsym_override(void *handle, const char *name)
{
	(void)handle;
	remat_dlsym_next_resolve();
	if (!remat_session_active || !name || name[0] != 'c' || name[1] != 'u')
		return NULL;
	return remat_hooks_exported(name);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym,@function\n"
        ".p2align 4\n"
        "dlsym:\n"
        "	.cfi_startproc\n"
        "	endbr64\n"
        "	push %rdi\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	push %rsi\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	sub $8, %rsp\n" /* 16-byte alignment for the call */
        "	.cfi_adjust_cfa_offset 8\n"
        "	call remat_dlsym_override\n"
        "	add $8, %rsp\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	pop %rsi\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	pop %rdi\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	test %rax, %rax\n"
        "	jz 1f\n"
        "	ret\n"
        "1:	jmp *remat_dlsym_next(%rip)\n"
        "	.cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym,%function\n"
        ".p2align 4\n"
        "dlsym:\n"
        "	.cfi_startproc\n"
        "	stp x29, x30, [sp, #-32]!\n"
        "	.cfi_def_cfa_offset 32\n"
        "	.cfi_offset 29, -32\n"
        "	.cfi_offset 30, -24\n"
        "	mov x29, sp\n"
        "	stp x0, x1, [sp, #16]\n"
        "	bl remat_dlsym_override\n"
        "	mov x16, x0\n"
        "	ldp x0, x1, [sp, #16]\n"
        "	ldp x29, x30, [sp], #32\n"
        "	.cfi_def_cfa_offset 0\n"
        "	cbz x16, 1f\n"
        "	mov x0, x16\n"
        "	ret\n"
        "1:	adrp x16, remat_dlsym_next\n"
        "	ldr x16, [x16, :lo12:remat_dlsym_next]\n"
        "	br x16\n"
        "	.cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#else
#error "dlsym trampoline: add this architecture"
#endif

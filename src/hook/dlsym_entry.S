/*
 * The exported dlsym and dlvsym. A lookup with RTLD_NEXT is resolved relative
 * to its caller, so it is forwarded with a jump that leaves the caller's
 * return address in place; every other lookup goes to the C side (dlsym.c),
 * which substitutes wrappers for driver functions found in libcuda.
 */
	.text

	.globl	dlsym
	.type	dlsym, @function
dlsym:
	cmpq	$-1, %rdi
	jne	ag_hook_dlsym
	movq	ag_hook_real_dlsym(%rip), %rax
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	pushq	%rdi
	pushq	%rsi
	subq	$8, %rsp
	call	ag_hook_libc_dl_init
	addq	$8, %rsp
	popq	%rsi
	popq	%rdi
	movq	ag_hook_real_dlsym(%rip), %rax
	jmp	*%rax
	.size	dlsym, .-dlsym

	.globl	dlvsym
	.type	dlvsym, @function
dlvsym:
	cmpq	$-1, %rdi
	jne	ag_hook_dlvsym
	movq	ag_hook_real_dlvsym(%rip), %rax
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	call	ag_hook_libc_dl_init
	popq	%rdx
	popq	%rsi
	popq	%rdi
	movq	ag_hook_real_dlvsym(%rip), %rax
	jmp	*%rax
	.size	dlvsym, .-dlvsym

	.section .note.GNU-stack,"",@progbits

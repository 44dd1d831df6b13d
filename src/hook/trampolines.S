/*
 * Barrier trampolines for driver functions this build has no wrapper for
 * (a newer driver's additions). Each slot loads its index and jumps to one
 * common body that saves every argument register, lets the engine submit held
 * work (ag_hook_unknown_enter returns the real target), restores the
 * registers and jumps on: the callee sees the caller's arguments and stack.
 */
	.text

	.macro	slot n
ag_hook_unknown_slot_\n:
	movl	$\n, %r11d
	jmp	unknown_common
	.endm

	.irp	n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63
	slot	\n
	.endr

unknown_common:
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	pushq	%rax
	subq	$128, %rsp
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	movl	%r11d, %edi
	call	ag_hook_unknown_enter
	movq	%rax, %r11
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	addq	$128, %rsp
	popq	%rax
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	jmp	*%r11

	.section .data.rel.ro,"aw"
	.globl	ag_hook_unknown_slots
	.hidden	ag_hook_unknown_slots
ag_hook_unknown_slots:
	.irp	n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63
	.quad	ag_hook_unknown_slot_\n
	.endr

	.section .note.GNU-stack,"",@progbits

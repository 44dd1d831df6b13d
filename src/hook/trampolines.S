/*
 * Barrier trampolines for driver functions this build has no wrapper for
 * (a newer driver's additions). Each slot loads its index and jumps to one
 * common body that saves every argument register, lets the engine submit held
 * work (ag_hook_unknown_enter returns the real target), restores the
 * registers and jumps on: the callee sees the caller's arguments and stack.
 */
#include "hook/unknown_slots.h"

	.text
	.altmacro

	.macro	slot n
ag_hook_unknown_slot_\n:
	movl	$\n, %r11d
	jmp	unknown_common
	.endm

	.macro	entry n
	.quad	ag_hook_unknown_slot_\n
	.endm

	.set	i, 0
	.rept	AG_UNKNOWN_SLOTS
	slot	%i
	.set	i, i + 1
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
	.set	i, 0
	.rept	AG_UNKNOWN_SLOTS
	entry	%i
	.set	i, i + 1
	.endr

	.section .note.GNU-stack,"",@progbits

/* coro_switch.S: the context switch under lib/coro.c.
 *
 * void coro__switch(void **save_sp, void *load_sp)
 *
 * Pushes the callee-saved registers the ABI obliges a function to preserve
 * onto the current stack, stores the stack pointer in *save_sp, loads
 * load_sp and pops the same registers from there. Everything else is
 * caller-saved, so the C compiler has already spilled what it needs: this
 * is all a switch has to keep, and why it is so much cheaper than
 * swapcontext (which also saves the signal mask with a system call).
 *
 * A new coroutine's stack is laid out by coro.c to look as if it had
 * switched away at the start of coro__trampoline, with the coroutine in a
 * callee-saved register and the C entry point in another.
 *
 * Not built when CORO_UCONTEXT is defined: coro.c then uses ucontext. */

#if !defined(CORO_UCONTEXT) && defined(__x86_64__)

/* Frame, from the saved stack pointer up (the layout coro.c builds):
 *   0  MXCSR (4 bytes), x87 control word (2 bytes), padding
 *   8  r15, r14, r13, r12, rbx, rbp, return address */
	.text
	.globl	coro__switch
	.hidden	coro__switch
	.type	coro__switch, @function
	.p2align 4
coro__switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	/* The floating-point control words are callee-saved too (rounding
	 * mode, exception masks): a coroutine that changes them must not
	 * change them for its resumer. */
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	coro__switch, .-coro__switch

/* First code a coroutine runs: r12 holds the coroutine, r13 the C entry
 * point, which never returns. */
	.globl	coro__trampoline
	.hidden	coro__trampoline
	.type	coro__trampoline, @function
	.p2align 4
coro__trampoline:
	.cfi_startproc
	/* Marks the outermost frame, so debuggers and unwinders stop here
	 * instead of walking into the zeroes above. */
	.cfi_undefined rip
	movq	%r12, %rdi
	call	*%r13
	ud2
	.cfi_endproc
	.size	coro__trampoline, .-coro__trampoline

#elif !defined(CORO_UCONTEXT) && defined(__aarch64__)

/* Frame, from the saved stack pointer up (the layout coro.c builds):
 *   0  x19 x20 x21 x22 x23 x24 x25 x26 x27 x28
 *  80  x29 (frame pointer), x30 (link register: where the switch returns)
 *  96  d8 d9 d10 d11 d12 d13 d14 d15 */
	.text
	.globl	coro__switch
	.hidden	coro__switch
	.type	coro__switch, %function
	.p2align 4
coro__switch:
	.cfi_startproc
	sub	sp, sp, #160
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mov	x9, sp
	str	x9, [x0]
	mov	sp, x1
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #160
	ret
	.cfi_endproc
	.size	coro__switch, .-coro__switch

/* First code a coroutine runs: x19 holds the coroutine, x20 the C entry
 * point, which never returns. */
	.globl	coro__trampoline
	.hidden	coro__trampoline
	.type	coro__trampoline, %function
	.p2align 4
coro__trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x19
	blr	x20
	brk	#0
	.cfi_endproc
	.size	coro__trampoline, .-coro__trampoline

#endif

/* Says this object needs no executable stack; without it the linker would
 * make the whole program's stack executable. Emitted even when the file is
 * otherwise empty (ucontext builds). */
#if defined(__ELF__) && defined(__aarch64__)
	.section .note.GNU-stack,"",%progbits
#elif defined(__ELF__)
	.section .note.GNU-stack,"",@progbits
#endif

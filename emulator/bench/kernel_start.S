/* Tensix kernel entry for the benchmark: stack in local RAM, run, exit code in a0. */
    .section .ttprof.boot, "ax"
    j _start
    .section .ttprof.start, "ax"
    .globl _start
_start:
    la sp, __stack_top
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  call work
    ecall
3:  j 3b

/* Linux entry for the benchmark under qemu-riscv32: run, then exit(a0 & 0xff) via ecall.
 * Linked with --no-relax: nothing may use gp, which no one sets here. */
    .text
    .globl _start
_start:
    call work
    li a7, 93
    ecall

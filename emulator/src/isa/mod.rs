//! The RV32IM cores: assembler and decoder, the interpreter's execution, CSRs, a core's state and
//! the Baby RISC-V pipeline's timing rules.

pub mod asm;
pub(crate) mod csr;
pub mod decode;
pub mod disasm;
pub(crate) mod exec;
pub(crate) mod hart;
pub mod pipeline;
#[cfg(test)]
mod tests;

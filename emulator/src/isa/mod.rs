//! The RV32IM cores: assembler and decoder, the interpreter's execution, CSRs, a core's state,
//! the Baby RISC-V pipeline's timing rules and line-level cycle accounting ([`lines`]). The
//! interpreter sees its tile only through [`crate::bus::TileBus`].

pub mod asm;
pub(crate) mod csr;
pub mod decode;
pub mod disasm;
pub(crate) mod exec;
pub(crate) mod hart;
pub mod lines;
pub mod pipeline;
#[cfg(test)]
mod tests;

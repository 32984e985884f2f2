//! tt-metal's own firmware on the emulator: its pre-compiled build ([`Firmware`]) and a
//! slow-dispatch host ([`dispatch`]) that hands it kernels through its mailboxes, as
//! tt-metal's host does without dispatch cores. Needs a device in tt-metal's layout
//! ([`crate::Layout::TtMetal`]). How it works: docs/design/tt-metal-firmware.md.

pub mod dispatch;
mod firmware;
mod kernel_buffer;
pub mod program;

pub use firmware::{firmware_build, tt_metal_root, Firmware, FIRMWARE_BUILD_VAR, TTNN_VERSION};

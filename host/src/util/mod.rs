//! The utility layer, below input, model and sink: what every layer uses and which uses
//! none of them.
//!
//! [`error`] (the one error type), [`issue`] (problems in device data that do not stop a
//! readout), [`printable`] (text made safe for a terminal), [`files`] (opening user-named
//! inputs), [`inputs`] (the input guard: no output over a file the command read),
//! [`atomic`] (writing outputs atomically), `undo` (removing what a failed command created),
//! one FNV-1a hash (`fnv`), one mixing function for sampling (`mix`), a map sized to a few entries (`small_map`), and a first push
//! sized to one (`vec`).

pub mod atomic;
pub mod error;
pub mod files;
pub(crate) mod fnv;
pub mod inputs;
pub mod issue;
pub(crate) mod mix;
pub mod printable;
pub(crate) mod small_map;
pub(crate) mod undo;
pub(crate) mod vec;

//! Clocks: each chip's counter against virtual host time, frequency steps (DVFS), the host's
//! synchronisation samples and the clock-sync mailbox.

pub(crate) mod clock;
pub mod dvfs;
pub(crate) mod mailbox;
pub(crate) mod stretch;
pub(crate) mod sync;

//! Who may use a device image at once: one device (the emulator that owns its memory), one
//! consumer (the host reader that drains and frees its rings) and one sampler (the host
//! driving the tiles' debug daisychains).
//!
//! Each role is an open-file-description lock on one byte of the image file (byte 0 the
//! device, byte 1 the consumer, byte 2 the sampler; `fcntl(F_OFD_SETLK)`): held while the file stays open, by
//! whichever process or thread opened it, released by the kernel when that process dies, so
//! a killed emulator or capture never leaves a stale lock. Two opens of the file in one
//! process are two descriptions and exclude each other too. Advisory: it keeps ttprof's own
//! tools apart (a second emulator would truncate the first's memory under it; two consumers
//! would split or double-read the records; two samplers would arm and read the same daisychain
//! registers under each other), not arbitrary programs.

use std::fs::File;

/// A role on a device image, and the byte its lock covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The emulator that created the image and runs its cores.
    Device = 0,
    /// The reader that drains the rings and writes `TAIL` (in-process or `ttprof capture`).
    Consumer = 1,
    /// The host that samples the tiles' debug daisychains (`ttprof run --sample`, `ttprof
    /// capture --sample`).
    Sampler = 2,
}

impl Role {
    /// The role as error messages name its holder ("an emulator", "a consumer ...").
    pub const fn name(self) -> &'static str {
        match self {
            Role::Device => "an emulator",
            Role::Consumer => "a consumer (ttprof capture, ttprof run, a Session)",
            Role::Sampler => "a sampler (ttprof capture --sample, ttprof run --sample)",
        }
    }
}

/// Takes `role`'s lock on `file` (opened for writing) without waiting: `Ok(false)` when
/// another open of the file holds it.
#[cfg(target_os = "linux")]
pub fn try_lock(file: &File, role: Role) -> std::io::Result<bool> {
    use nix::fcntl::{fcntl, FcntlArg};
    // SAFETY: `flock` is plain data; zero is a valid value for every field.
    let mut l: nix::libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = nix::libc::F_WRLCK as _;
    l.l_whence = nix::libc::SEEK_SET as _;
    l.l_start = role as i64 as _;
    l.l_len = 1;
    match fcntl(file, FcntlArg::F_OFD_SETLK(&l)) {
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EACCES) => Ok(false),
        Err(e) => Err(std::io::Error::from(e)),
    }
}

/// Elsewhere there is no open-file-description lock: every role is granted.
#[cfg(not(target_os = "linux"))]
pub fn try_lock(_file: &File, _role: Role) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn each_role_has_one_holder_and_is_released_with_its_file() {
        let path =
            std::env::temp_dir().join(std::format!("riscv-linker-lock-{}", std::process::id()));
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .unwrap()
        };
        std::fs::write(&path, [0u8; 8]).unwrap();
        let (a, b) = (open(), open());
        assert!(try_lock(&a, Role::Device).unwrap());
        assert!(
            !try_lock(&b, Role::Device).unwrap(),
            "a second device on the same image"
        );
        assert!(
            try_lock(&b, Role::Consumer).unwrap(),
            "the roles are independent"
        );
        assert!(try_lock(&a, Role::Sampler).unwrap());
        assert!(
            !try_lock(&b, Role::Sampler).unwrap(),
            "a second sampler on the same image"
        );
        assert!(
            try_lock(&a, Role::Device).unwrap(),
            "the holder may take it again"
        );
        drop(a);
        assert!(
            try_lock(&open(), Role::Device).unwrap(),
            "released when its file is closed"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

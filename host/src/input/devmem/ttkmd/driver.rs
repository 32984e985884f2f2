//! The system calls the backend needs, behind one narrow trait ([`Driver`]), and their real
//! implementation over `/dev/tenstorrent/N` ([`KmdDriver`]): ioctls through `nix`, window
//! mappings through `memmap2`, volatile 32-bit accesses guarded against SIGBUS.
//!
//! Windows are named by the id the driver gave them; a window must be allocated, then
//! mapped, then configured before it is read. Errors are `std::io::Error`s carrying the
//! driver's errno (ENOMEM: no window free; EBUSY: freed while mapped; EINVAL: bad size or
//! misaligned address; EPERM: not this file's window), so the fake driver and the real one
//! fail the same way.

use super::ioctl::{self, NocTlbConfig};
use super::sigbus::Guard;
use nix::libc;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What `GET_DRIVER_INFO` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverInfo {
    /// The ioctl API version (>= `ioctl::MIN_API_VERSION` needed).
    pub api_version: u32,
    /// The release, when the driver reports it (2.x drivers do).
    pub release: Option<(u8, u8, u8)>,
}

impl std::fmt::Display for DriverInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.release {
            Some((a, b, c)) => write!(f, "tt-kmd {a}.{b}.{c} (API {})", self.api_version),
            None => write!(f, "tt-kmd API {}", self.api_version),
        }
    }
}

/// What `GET_DEVICE_INFO` says: the PCI identity of the card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciInfo {
    /// PCI vendor id.
    pub(crate) vendor_id: u16,
    /// PCI device id (the arch).
    pub device_id: u16,
    /// PCI subsystem vendor id.
    pub(crate) subsystem_vendor_id: u16,
    /// PCI subsystem id (the board).
    pub(crate) subsystem_id: u16,
    /// PCI domain.
    pub(crate) domain: u16,
    /// bits 0..3 function, 3..8 device, 8..16 bus.
    pub(crate) bus_dev_fn: u16,
}

impl PciInfo {
    /// `dddd:bb:dd.f`, as `lspci -D` prints it.
    pub fn address(&self) -> String {
        let b = self.bus_dev_fn;
        format!(
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain,
            b >> 8,
            (b >> 3) & 0x1F,
            b & 7
        )
    }
}

/// A window `ALLOCATE_TLB` handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlbAlloc {
    /// The window's id.
    pub id: u32,
    /// Its size in bytes.
    pub size: u64,
    /// `mmap` offset of its uncached mapping.
    pub(crate) mmap_offset_uc: u64,
}

/// A bus fault while reading or writing a mapped window (see `sigbus.rs`), or an access
/// outside what was mapped (a bug of the caller, reported rather than performed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// SIGBUS: the card was reset or went away while the window was mapped.
    Bus,
    /// The window is not mapped, or the offset is outside it.
    Outside,
}

/// The system calls of one open card.
pub trait Driver: Send + Sync {
    /// The device node, for messages.
    fn path(&self) -> &Path;
    /// `GET_DRIVER_INFO`.
    fn driver_info(&self) -> io::Result<DriverInfo>;
    /// `GET_DEVICE_INFO`.
    fn device_info(&self) -> io::Result<PciInfo>;
    /// `ALLOCATE_TLB` of a window of `size` bytes.
    fn allocate_tlb(&self, size: u64) -> io::Result<TlbAlloc>;
    /// `FREE_TLB` (EBUSY while mapped).
    fn free_tlb(&self, id: u32) -> io::Result<()>;
    /// `CONFIGURE_TLB`: point window `id` at `config`.
    fn configure_tlb(&self, id: u32, config: &NocTlbConfig) -> io::Result<()>;
    /// Maps the window uncached.
    fn map_window(&self, tlb: &TlbAlloc) -> io::Result<()>;
    /// Unmaps window `id`.
    fn unmap_window(&self, id: u32) -> io::Result<()>;
    /// One volatile 32-bit load at `offset` in the mapped window.
    fn read_u32(&self, id: u32, offset: u64) -> Result<u32, Fault>;
    /// One volatile 32-bit store.
    fn write_u32(&self, id: u32, offset: u64, v: u32) -> Result<(), Fault>;
    /// Takes the card's lock of `role` (consumer or sampler) without waiting (`Ok(false)`:
    /// another holds it).
    fn try_lock(&self, role: riscv_linker::lock::Role) -> io::Result<bool>;
}

/// A shared driver (tests keep a handle on a fake while the backend owns it).
impl<D: Driver> Driver for std::sync::Arc<D> {
    fn path(&self) -> &Path {
        (**self).path()
    }
    fn driver_info(&self) -> io::Result<DriverInfo> {
        (**self).driver_info()
    }
    fn device_info(&self) -> io::Result<PciInfo> {
        (**self).device_info()
    }
    fn allocate_tlb(&self, size: u64) -> io::Result<TlbAlloc> {
        (**self).allocate_tlb(size)
    }
    fn free_tlb(&self, id: u32) -> io::Result<()> {
        (**self).free_tlb(id)
    }
    fn configure_tlb(&self, id: u32, config: &NocTlbConfig) -> io::Result<()> {
        (**self).configure_tlb(id, config)
    }
    fn map_window(&self, tlb: &TlbAlloc) -> io::Result<()> {
        (**self).map_window(tlb)
    }
    fn unmap_window(&self, id: u32) -> io::Result<()> {
        (**self).unmap_window(id)
    }
    fn read_u32(&self, id: u32, offset: u64) -> Result<u32, Fault> {
        (**self).read_u32(id, offset)
    }
    fn write_u32(&self, id: u32, offset: u64, v: u32) -> Result<(), Fault> {
        (**self).write_u32(id, offset, v)
    }
    fn try_lock(&self, role: riscv_linker::lock::Role) -> io::Result<bool> {
        (**self).try_lock(role)
    }
}

/// `open(2)` flags: read-write, power-aware (`O_APPEND`, since 2.6.0 an open does not
/// force the card to high power), never blocking, never `O_EXCL` (which since 2.10.0 asks
/// for exclusive use and would lock tt-metal out). `std` adds `O_CLOEXEC`.
pub const OPEN_FLAGS: libc::c_int = libc::O_RDWR | libc::O_APPEND | libc::O_NONBLOCK;

struct Window {
    map: memmap2::MmapRaw,
    guard: Option<Guard>,
}

/// A card through tt-kmd.
pub struct KmdDriver {
    path: PathBuf,
    file: File,
    windows: Mutex<HashMap<u32, Window>>,
}

impl KmdDriver {
    /// Opens the device node (see [`OPEN_FLAGS`]).
    pub fn open(path: &Path) -> io::Result<KmdDriver> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        Ok(KmdDriver {
            path: path.into(),
            file,
            windows: Mutex::new(HashMap::new()),
        })
    }

    fn fd(&self) -> libc::c_int {
        self.file.as_raw_fd()
    }

    fn with_window<T>(
        &self,
        id: u32,
        offset: u64,
        f: impl FnOnce(*mut u32, &Option<Guard>) -> T,
    ) -> Result<T, Fault> {
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let w = windows.get(&id).ok_or(Fault::Outside)?;
        if !offset.is_multiple_of(4) || offset + 4 > w.map.len() as u64 {
            return Err(Fault::Outside);
        }
        // In bounds and aligned (the mapping is page aligned): checked above.
        let p = unsafe { w.map.as_mut_ptr().add(offset as usize) } as *mut u32;
        Ok(f(p, &w.guard))
    }
}

fn errno(e: nix::errno::Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

impl Driver for KmdDriver {
    fn path(&self) -> &Path {
        &self.path
    }

    fn driver_info(&self) -> io::Result<DriverInfo> {
        let mut a = ioctl::GetDriverInfo {
            in_output_size_bytes: std::mem::size_of::<ioctl::DriverInfoOut>() as u32,
            ..Default::default()
        };
        // SAFETY: `a` is the struct this request reads and writes.
        unsafe { ioctl::get_driver_info(self.fd(), &mut a) }.map_err(errno)?;
        let o = a.out;
        // A driver too old to know the release fields writes fewer bytes (output_size_bytes).
        let has_release = o.output_size_bytes as usize
            >= std::mem::size_of::<ioctl::DriverInfoOut>()
            && (
                o.driver_version_major,
                o.driver_version_minor,
                o.driver_version_patch,
            ) != (0, 0, 0);
        Ok(DriverInfo {
            api_version: o.driver_version,
            release: has_release.then_some((
                o.driver_version_major,
                o.driver_version_minor,
                o.driver_version_patch,
            )),
        })
    }

    fn device_info(&self) -> io::Result<PciInfo> {
        let mut a = ioctl::GetDeviceInfo {
            in_output_size_bytes: std::mem::size_of::<ioctl::DeviceInfoOut>() as u32,
            ..Default::default()
        };
        // SAFETY: as above.
        unsafe { ioctl::get_device_info(self.fd(), &mut a) }.map_err(errno)?;
        let o = a.out;
        Ok(PciInfo {
            vendor_id: o.vendor_id,
            device_id: o.device_id,
            subsystem_vendor_id: o.subsystem_vendor_id,
            subsystem_id: o.subsystem_id,
            domain: o.pci_domain,
            bus_dev_fn: o.bus_dev_fn,
        })
    }

    fn allocate_tlb(&self, size: u64) -> io::Result<TlbAlloc> {
        let mut a = ioctl::AllocateTlb {
            size,
            ..Default::default()
        };
        // SAFETY: as above.
        unsafe { ioctl::allocate_tlb(self.fd(), &mut a) }.map_err(errno)?;
        Ok(TlbAlloc {
            id: a.out.id,
            size,
            mmap_offset_uc: a.out.mmap_offset_uc,
        })
    }

    fn free_tlb(&self, id: u32) -> io::Result<()> {
        let mut a = ioctl::FreeTlb { id };
        // SAFETY: as above.
        unsafe { ioctl::free_tlb(self.fd(), &mut a) }.map_err(errno)?;
        Ok(())
    }

    fn configure_tlb(&self, id: u32, config: &NocTlbConfig) -> io::Result<()> {
        let mut a = ioctl::ConfigureTlb {
            id,
            config: *config,
            ..Default::default()
        };
        // SAFETY: as above.
        unsafe { ioctl::configure_tlb(self.fd(), &mut a) }.map_err(errno)?;
        Ok(())
    }

    fn map_window(&self, tlb: &TlbAlloc) -> io::Result<()> {
        let len =
            usize::try_from(tlb.size).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let map = memmap2::MmapOptions::new()
            .offset(tlb.mmap_offset_uc)
            .len(len)
            .map_raw(&self.file)?;
        let guard = Guard::register(map.as_ptr(), map.len());
        self.windows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tlb.id, Window { map, guard });
        Ok(())
    }

    fn unmap_window(&self, id: u32) -> io::Result<()> {
        let w = self
            .windows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        match w {
            // The guard goes before the mapping (field order would too; explicit here).
            Some(Window { map, guard }) => {
                drop(guard);
                drop(map);
                Ok(())
            }
            None => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }

    fn read_u32(&self, id: u32, offset: u64) -> Result<u32, Fault> {
        self.with_window(id, offset, |p, guard| {
            // SAFETY: `with_window` checked the word lies inside the live mapping.
            let v = u32::from_le(unsafe { std::ptr::read_volatile(p) });
            if guard.as_ref().is_some_and(|g| g.faulted()) {
                Err(Fault::Bus)
            } else {
                Ok(v)
            }
        })?
    }

    fn write_u32(&self, id: u32, offset: u64, v: u32) -> Result<(), Fault> {
        self.with_window(id, offset, |p, guard| {
            // SAFETY: as in `read_u32`.
            unsafe { std::ptr::write_volatile(p, v.to_le()) };
            if guard.as_ref().is_some_and(|g| g.faulted()) {
                Err(Fault::Bus)
            } else {
                Ok(())
            }
        })?
    }

    fn try_lock(&self, role: riscv_linker::lock::Role) -> io::Result<bool> {
        // The same open-file-description byte locks as a device image's roles, on the
        // device node: other ttprof consumers and samplers of this card see them; tt-metal
        // does not take them.
        riscv_linker::lock::try_lock(&self.file, role)
    }
}

impl Drop for KmdDriver {
    fn drop(&mut self) {
        // Windows the backend did not unmap (it does) go before the file closes.
        self.windows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmd_open_is_power_aware_and_never_exclusive() {
        assert_ne!(OPEN_FLAGS & libc::O_APPEND, 0, "power-aware");
        assert_ne!(OPEN_FLAGS & libc::O_NONBLOCK, 0);
        assert_eq!(
            OPEN_FLAGS & libc::O_EXCL,
            0,
            "O_EXCL would lock tt-metal out"
        );
        assert_eq!(OPEN_FLAGS & libc::O_ACCMODE, libc::O_RDWR);
    }

    #[test]
    fn kmd_real_ioctls_on_a_node_that_is_not_tt_kmd_fail_with_the_errno() {
        // /dev/null opens like a card but answers no tt-kmd ioctl: the real ioctl path runs
        // and fails cleanly (ENOTTY), as on a node of another driver.
        let d = KmdDriver::open(Path::new("/dev/null")).unwrap();
        let e = d.driver_info().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTTY), "{e}");
        assert_eq!(
            d.device_info().unwrap_err().raw_os_error(),
            Some(libc::ENOTTY)
        );
        assert_eq!(d.read_u32(0, 0), Err(Fault::Outside), "nothing mapped");
    }

    #[test]
    fn kmd_pci_addresses_print_like_lspci() {
        let p = PciInfo {
            vendor_id: 0x1E52,
            device_id: 0x401E,
            subsystem_vendor_id: 0,
            subsystem_id: 0,
            domain: 0,
            bus_dev_fn: 0x41 << 8 | 3 << 3 | 1,
        };
        assert_eq!(p.address(), "0000:41:03.1");
    }
}

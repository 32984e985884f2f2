//! tt-kmd's ioctl interface: request numbers and the `#[repr(C)]` argument structs, laid
//! out as tt-kmd's `ioctl.h` gives them (API version 2,
//! <https://github.com/tenstorrent/tt-kmd>; docs/design/real-cards.md). Each
//! struct's size and field offsets are pinned by the tests below; `tests/kmd.rs` compares
//! them with the installed C header when there is one.
//!
//! Every ioctl is `_IO(0xFA, n)` (no size or direction in the number) and takes a pointer
//! to an `in` part the caller fills, followed by an `out` part the driver writes.

/// `TENSTORRENT_IOCTL_MAGIC`.
pub const MAGIC: u8 = 0xFA;

/// `_IO(0xFA, n)`: no direction, no size.
pub const fn io(n: u8) -> u32 {
    (MAGIC as u32) << 8 | n as u32
}

/// `TENSTORRENT_IOCTL_GET_DEVICE_INFO`: PCI identity of the card.
pub(crate) const GET_DEVICE_INFO: u32 = io(0);
/// `TENSTORRENT_IOCTL_QUERY_MAPPINGS`: the BAR mappings a process may `mmap`.
pub const QUERY_MAPPINGS: u32 = io(2);
/// `TENSTORRENT_IOCTL_GET_DRIVER_INFO`: the driver's API version and release.
pub(crate) const GET_DRIVER_INFO: u32 = io(5);
/// `TENSTORRENT_IOCTL_ALLOCATE_TLB`: reserve a TLB window of a given size.
pub const ALLOCATE_TLB: u32 = io(11);
/// `TENSTORRENT_IOCTL_FREE_TLB`: give a TLB window back (EBUSY while mapped).
pub(crate) const FREE_TLB: u32 = io(12);
/// `TENSTORRENT_IOCTL_CONFIGURE_TLB`: point a TLB window at a NoC address.
pub(crate) const CONFIGURE_TLB: u32 = io(13);

/// The lowest driver API version (`GET_DRIVER_INFO.driver_version`) with working TLB
/// allocation: ttkmd-2.0.0 (1.33 had an allocation bug; luwen and tt-umd refuse older).
pub(crate) const MIN_API_VERSION: u32 = 2;

/// `noc_tlb_config.ordering`: strict AXI ordering, the only one that keeps reads in order
/// with other reads.
pub const ORDERING_STRICT: u8 = 1;

/// PCI device ids (vendor 0x1e52).
pub(crate) const VENDOR_TENSTORRENT: u16 = 0x1E52;
/// PCI device id of a Wormhole card.
pub(crate) const DEVICE_WORMHOLE: u16 = 0x401E;
/// PCI device id of a Blackhole card.
pub(crate) const DEVICE_BLACKHOLE: u16 = 0xB140;

/// `GET_DEVICE_INFO` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GetDeviceInfo {
    /// in: bytes of `out` the caller has room for.
    pub(crate) in_output_size_bytes: u32,
    /// out: what the driver writes.
    pub out: DeviceInfoOut,
}

/// What `GET_DEVICE_INFO` returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeviceInfoOut {
    /// out: bytes of the out part the driver filled.
    pub(crate) output_size_bytes: u32,
    /// PCI vendor id (0x1e52 for Tenstorrent).
    pub(crate) vendor_id: u16,
    /// PCI device id: the arch ([`DEVICE_WORMHOLE`], [`DEVICE_BLACKHOLE`]).
    pub device_id: u16,
    /// PCI subsystem vendor id.
    pub(crate) subsystem_vendor_id: u16,
    /// PCI subsystem id (the board).
    pub(crate) subsystem_id: u16,
    /// bits 0..3 function, 3..8 device, 8..16 bus.
    pub(crate) bus_dev_fn: u16,
    /// Largest DMA buffer the driver allocates, log2 bytes.
    pub(crate) max_dma_buf_size_log2: u16,
    /// Since 1.23.
    pub(crate) pci_domain: u16,
    /// Reserved, zero.
    pub reserved: u16,
}

/// `QUERY_MAPPINGS` header (8 bytes), followed by `output_mapping_count` [`Mapping`]s.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueryMappingsIn {
    /// in: room for this many [`Mapping`]s after the header.
    pub(crate) output_mapping_count: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

/// One BAR mapping (24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mapping {
    /// Which mapping (a BAR, uncached or write-combined).
    pub(crate) mapping_id: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// `mmap` offset of the mapping.
    pub(crate) mapping_base: u64,
    /// Bytes of the mapping.
    pub(crate) mapping_size: u64,
}

/// `GET_DRIVER_INFO` (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GetDriverInfo {
    /// in: bytes of `out` the caller has room for.
    pub(crate) in_output_size_bytes: u32,
    /// out: what the driver writes.
    pub out: DriverInfoOut,
}

/// What `GET_DRIVER_INFO` returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DriverInfoOut {
    /// out: bytes of the out part the driver filled.
    pub(crate) output_size_bytes: u32,
    /// The ioctl API version (2 since ttkmd-2.0.0).
    pub(crate) driver_version: u32,
    /// The release, e.g. 2.10.0 (0.0.0 from drivers before they reported it).
    pub(crate) driver_version_major: u8,
    /// Release minor.
    pub(crate) driver_version_minor: u8,
    /// Release patch.
    pub(crate) driver_version_patch: u8,
    /// Reserved, zero.
    pub(crate) reserved0: u8,
}

/// `ALLOCATE_TLB` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocateTlb {
    /// in: the window size, one of the arch's window sizes exactly.
    pub size: u64,
    /// Reserved, zero.
    pub(crate) in_reserved: u64,
    /// out: what the driver writes.
    pub out: AllocateTlbOut,
}

/// What `ALLOCATE_TLB` returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocateTlbOut {
    /// The TLB window's id (from `ALLOCATE_TLB`).
    pub id: u32,
    /// Reserved, zero.
    pub(crate) reserved0: u32,
    /// `mmap` offset of the uncached mapping of the window.
    pub(crate) mmap_offset_uc: u64,
    /// `mmap` offset of the write-combined mapping.
    pub(crate) mmap_offset_wc: u64,
    /// Reserved, zero.
    pub(crate) reserved1: u64,
}

/// `FREE_TLB` (4 bytes): EBUSY while the window is still mapped.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FreeTlb {
    /// The TLB window's id (from `ALLOCATE_TLB`).
    pub id: u32,
}

/// Where a TLB window points (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NocTlbConfig {
    /// Local address of the window's first byte, aligned to the window size.
    pub addr: u64,
    /// NoC x of the target tile (the rectangle's end for multicast).
    pub x_end: u16,
    /// NoC y of the target tile (the rectangle's end for multicast).
    pub y_end: u16,
    /// Multicast rectangle start (unused for unicast).
    pub x_start: u16,
    /// Multicast rectangle start y (unused for unicast).
    pub y_start: u16,
    /// Which NoC the window's requests travel on (0 or 1).
    pub noc: u8,
    /// 1: multicast to the rectangle; 0: unicast to (`x_end`, `y_end`).
    pub mcast: u8,
    /// AXI ordering mode ([`ORDERING_STRICT`] keeps reads in order).
    pub ordering: u8,
    /// Linked (chained) transactions; 0 here.
    pub linked: u8,
    /// Static virtual channel; 0 here.
    pub static_vc: u8,
    /// Reserved, zero.
    pub reserved0: [u8; 3],
    /// Reserved, zero.
    pub reserved1: [u32; 2],
}

/// `CONFIGURE_TLB` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ConfigureTlb {
    /// The TLB window's id (from `ALLOCATE_TLB`).
    pub id: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// Where the window points.
    pub config: NocTlbConfig,
    /// Reserved, zero.
    pub(crate) out_reserved: u64,
}

nix::ioctl_readwrite_bad!(
    /// Issues `GET_DEVICE_INFO` on an open tt-kmd device node (`ioctl(2)`; the caller owns the fd and the argument).
    get_device_info,
    GET_DEVICE_INFO, GetDeviceInfo);
nix::ioctl_readwrite_bad!(
    /// Issues `GET_DRIVER_INFO` on an open tt-kmd device node (`ioctl(2)`; the caller owns the fd and the argument).
    get_driver_info,
    GET_DRIVER_INFO, GetDriverInfo);
nix::ioctl_readwrite_bad!(
    /// Issues `ALLOCATE_TLB` on an open tt-kmd device node (`ioctl(2)`; the caller owns the fd and the argument).
    allocate_tlb,
    ALLOCATE_TLB, AllocateTlb);
nix::ioctl_readwrite_bad!(
    /// Issues `FREE_TLB` on an open tt-kmd device node (`ioctl(2)`; the caller owns the fd and the argument).
    free_tlb,
    FREE_TLB, FreeTlb);
nix::ioctl_readwrite_bad!(
    /// Issues `CONFIGURE_TLB` on an open tt-kmd device node (`ioctl(2)`; the caller owns the fd and the argument).
    configure_tlb,
    CONFIGURE_TLB, ConfigureTlb);

/// One struct's layout: `(name, size, [(field, offset)])`.
pub(crate) type StructLayout = (&'static str, usize, Vec<(&'static str, usize)>);

/// Sizes and field offsets, as the reference gives them.
/// The C probe test prints the same table from the installed header.
pub fn layout() -> Vec<StructLayout> {
    use std::mem::{offset_of, size_of};
    vec![
        (
            "tenstorrent_get_device_info",
            size_of::<GetDeviceInfo>(),
            vec![
                (
                    "in.output_size_bytes",
                    offset_of!(GetDeviceInfo, in_output_size_bytes),
                ),
                (
                    "out.output_size_bytes",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, output_size_bytes),
                ),
                (
                    "out.vendor_id",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, vendor_id),
                ),
                (
                    "out.device_id",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, device_id),
                ),
                (
                    "out.subsystem_vendor_id",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, subsystem_vendor_id),
                ),
                (
                    "out.subsystem_id",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, subsystem_id),
                ),
                (
                    "out.bus_dev_fn",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, bus_dev_fn),
                ),
                (
                    "out.max_dma_buf_size_log2",
                    offset_of!(GetDeviceInfo, out)
                        + offset_of!(DeviceInfoOut, max_dma_buf_size_log2),
                ),
                (
                    "out.pci_domain",
                    offset_of!(GetDeviceInfo, out) + offset_of!(DeviceInfoOut, pci_domain),
                ),
            ],
        ),
        (
            "tenstorrent_query_mappings_in",
            size_of::<QueryMappingsIn>(),
            vec![(
                "output_mapping_count",
                offset_of!(QueryMappingsIn, output_mapping_count),
            )],
        ),
        (
            "tenstorrent_mapping",
            size_of::<Mapping>(),
            vec![
                ("mapping_id", offset_of!(Mapping, mapping_id)),
                ("mapping_base", offset_of!(Mapping, mapping_base)),
                ("mapping_size", offset_of!(Mapping, mapping_size)),
            ],
        ),
        (
            "tenstorrent_get_driver_info",
            size_of::<GetDriverInfo>(),
            vec![
                (
                    "in.output_size_bytes",
                    offset_of!(GetDriverInfo, in_output_size_bytes),
                ),
                (
                    "out.output_size_bytes",
                    offset_of!(GetDriverInfo, out) + offset_of!(DriverInfoOut, output_size_bytes),
                ),
                (
                    "out.driver_version",
                    offset_of!(GetDriverInfo, out) + offset_of!(DriverInfoOut, driver_version),
                ),
                (
                    "out.driver_version_major",
                    offset_of!(GetDriverInfo, out)
                        + offset_of!(DriverInfoOut, driver_version_major),
                ),
                (
                    "out.driver_version_minor",
                    offset_of!(GetDriverInfo, out)
                        + offset_of!(DriverInfoOut, driver_version_minor),
                ),
                (
                    "out.driver_version_patch",
                    offset_of!(GetDriverInfo, out)
                        + offset_of!(DriverInfoOut, driver_version_patch),
                ),
            ],
        ),
        (
            "tenstorrent_allocate_tlb",
            size_of::<AllocateTlb>(),
            vec![
                ("in.size", offset_of!(AllocateTlb, size)),
                (
                    "out.id",
                    offset_of!(AllocateTlb, out) + offset_of!(AllocateTlbOut, id),
                ),
                (
                    "out.mmap_offset_uc",
                    offset_of!(AllocateTlb, out) + offset_of!(AllocateTlbOut, mmap_offset_uc),
                ),
                (
                    "out.mmap_offset_wc",
                    offset_of!(AllocateTlb, out) + offset_of!(AllocateTlbOut, mmap_offset_wc),
                ),
            ],
        ),
        (
            "tenstorrent_free_tlb",
            size_of::<FreeTlb>(),
            vec![("in.id", offset_of!(FreeTlb, id))],
        ),
        (
            "tenstorrent_noc_tlb_config",
            size_of::<NocTlbConfig>(),
            vec![
                ("addr", offset_of!(NocTlbConfig, addr)),
                ("x_end", offset_of!(NocTlbConfig, x_end)),
                ("y_end", offset_of!(NocTlbConfig, y_end)),
                ("x_start", offset_of!(NocTlbConfig, x_start)),
                ("y_start", offset_of!(NocTlbConfig, y_start)),
                ("noc", offset_of!(NocTlbConfig, noc)),
                ("mcast", offset_of!(NocTlbConfig, mcast)),
                ("ordering", offset_of!(NocTlbConfig, ordering)),
                ("linked", offset_of!(NocTlbConfig, linked)),
                ("static_vc", offset_of!(NocTlbConfig, static_vc)),
            ],
        ),
        (
            "tenstorrent_configure_tlb",
            size_of::<ConfigureTlb>(),
            vec![
                ("in.id", offset_of!(ConfigureTlb, id)),
                ("in.config", offset_of!(ConfigureTlb, config)),
                ("out", offset_of!(ConfigureTlb, out_reserved)),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmd_ioctl_numbers_are_io_0xfa() {
        assert_eq!(
            [
                GET_DEVICE_INFO,
                QUERY_MAPPINGS,
                GET_DRIVER_INFO,
                ALLOCATE_TLB,
                FREE_TLB,
                CONFIGURE_TLB
            ],
            [0xFA00, 0xFA02, 0xFA05, 0xFA0B, 0xFA0C, 0xFA0D]
        );
        // nix's `_IO` encoding agrees with ours.
        assert_eq!(nix::request_code_none!(MAGIC, 13) as u32, CONFIGURE_TLB);
    }

    /// The sizes and offsets of tt-kmd's `ioctl.h` (API version 2), each written out.
    #[test]
    fn kmd_struct_sizes_and_offsets_match_the_reference() {
        type Expected<'a> = (&'a str, usize, &'a [(&'a str, usize)]);
        let expected: &[Expected] = &[
            (
                "tenstorrent_get_device_info",
                24,
                &[
                    ("in.output_size_bytes", 0),
                    ("out.output_size_bytes", 4),
                    ("out.vendor_id", 8),
                    ("out.device_id", 10),
                    ("out.subsystem_vendor_id", 12),
                    ("out.subsystem_id", 14),
                    ("out.bus_dev_fn", 16),
                    ("out.max_dma_buf_size_log2", 18),
                    ("out.pci_domain", 20),
                ],
            ),
            (
                "tenstorrent_query_mappings_in",
                8,
                &[("output_mapping_count", 0)],
            ),
            (
                "tenstorrent_mapping",
                24,
                &[("mapping_id", 0), ("mapping_base", 8), ("mapping_size", 16)],
            ),
            (
                "tenstorrent_get_driver_info",
                16,
                &[
                    ("in.output_size_bytes", 0),
                    ("out.output_size_bytes", 4),
                    ("out.driver_version", 8),
                    ("out.driver_version_major", 12),
                    ("out.driver_version_minor", 13),
                    ("out.driver_version_patch", 14),
                ],
            ),
            (
                "tenstorrent_allocate_tlb",
                48,
                &[
                    ("in.size", 0),
                    ("out.id", 16),
                    ("out.mmap_offset_uc", 24),
                    ("out.mmap_offset_wc", 32),
                ],
            ),
            ("tenstorrent_free_tlb", 4, &[("in.id", 0)]),
            (
                "tenstorrent_noc_tlb_config",
                32,
                &[
                    ("addr", 0),
                    ("x_end", 8),
                    ("y_end", 10),
                    ("x_start", 12),
                    ("y_start", 14),
                    ("noc", 16),
                    ("mcast", 17),
                    ("ordering", 18),
                    ("linked", 19),
                    ("static_vc", 20),
                ],
            ),
            (
                "tenstorrent_configure_tlb",
                48,
                &[("in.id", 0), ("in.config", 8), ("out", 40)],
            ),
        ];
        let ours = layout();
        assert_eq!(ours.len(), expected.len());
        for ((name, size, fields), (ename, esize, efields)) in ours.iter().zip(expected) {
            assert_eq!((name, size), (ename, esize), "size of {name}");
            assert_eq!(fields.as_slice(), *efields, "fields of {name}");
        }
    }
}

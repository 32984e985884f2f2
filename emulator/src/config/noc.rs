//! The NoC and DRAM timing model's parameters ([`NocConfig`]), the calibrated constants
//! ([`NocCalibration`]) and how routers share a link ([`Arbitration`]); the model itself is
//! [`crate::noc`].

use riscv_linker::Arch;

/// How routers share an output among the flows that compete for it (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arbitration {
    /// Round-robin between a router's input ports, per output, up every flow's path: flows
    /// that join a shared route nearer the shared resource get more of it.
    #[default]
    RoundRobin,
    /// Every flow at a resource gets the same share (max-min fair).
    MaxMinFair,
}

/// The constants of [`NocConfig`] fitted to tt-metal's published measurements, in one
/// place: they absorb what the rest of the model does not explain, including how long
/// noc-bench's kernels take to issue a request and to poll for its end on the emulated
/// core, so a change of the core's timing model ([`crate::Timing`]) calls for a re-fit.
/// `cargo run --release -p ttprof-emu --bin noc-bench -- --calibrate` prints the values for
/// the current core model; paste them into [`NocCalibration::for_arch`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NocCalibration {
    /// [`NocConfig::l1_read_cycles`]: fitted so that noc-bench's `l1_read_latency` (one
    /// flit read from a neighbour's L1, timed by the kernel from its first register write
    /// to the end of its barrier) measures tt-metal's 290 (WH) / 368 (BH) cycles.
    pub l1_read_cycles: u32,
    /// [`NocConfig::dram_read_cycles`]: the same for `dram_read_latency` (one flit from
    /// DRAM bank 0): 384 (WH) / 479 (BH) cycles.
    pub dram_read_cycles: u32,
    /// [`NocConfig::multicast_efficiency`]: fitted so that noc-bench's `multicast` (64
    /// largest packets to a 4x4 rectangle) measures tt-metal's 15 (WH) / 24 (BH) B/cycle.
    /// Bandwidth-bound, so it hardly depends on the core model.
    pub multicast_efficiency: f64,
}

impl NocCalibration {
    /// The current fit. How: a single-transfer latency on noc-bench is the kernel's own
    /// time to issue and to notice the end (core model), `issue_cycles`, the header's way
    /// there and back, the target's access cycles and the flit's transfer; only the access
    /// cycles are free, so each is set to its previous value plus (published - measured),
    /// repeated until the difference is within one turn of the kernel's polling loop
    /// (`noc-bench --calibrate` does exactly this). Fitted with the cores on the documented
    /// pipeline model (`Timing::for_arch`: a NoC register load 7 cycles, a store 1).
    pub const fn for_arch(arch: Arch) -> NocCalibration {
        match arch {
            Arch::WormholeB0 => NocCalibration {
                l1_read_cycles: 66,
                dram_read_cycles: 51,
                multicast_efficiency: 0.508,
            },
            Arch::Blackhole => NocCalibration {
                l1_read_cycles: 51,
                dram_read_cycles: 54,
                multicast_efficiency: 0.4,
            },
        }
    }
}

/// The NoC and DRAM timing model (cycles of the chip's AICLK, bytes per cycle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NocConfig {
    /// Model the NoC at all. Off: the NIU register windows are plain storage and nothing
    /// moves (the emulator's behaviour before the NoC existed).
    pub enabled: bool,
    /// Cycles the tiles run between two NoC exchanges while the NoC is in use (see the
    /// module docs: effects due sooner than this after their issue are late by up to it).
    pub epoch: u32,
    /// Bytes one flit carries (32 Wormhole, 64 Blackhole).
    pub flit_bytes: u32,
    /// Largest packet payload; longer requests are split into packets of this size.
    pub max_packet_bytes: u32,
    /// Bandwidth of one link direction.
    pub link_bytes_per_cycle: f64,
    /// Bandwidth of a worker NIU's injection port and of its ejection port.
    pub niu_bytes_per_cycle: f64,
    /// Rate at which one DRAM endpoint's NIU sends read data into its NoC (tt-npe's
    /// injection rate of a DRAM core). Per NIU: each of a channel's endpoints, on each NoC,
    /// has its own.
    pub dram_source_bytes_per_cycle: f64,
    /// Rate at which one DRAM endpoint's NIU accepts write data (tt-npe's absorption rate
    /// of a DRAM core), per NIU like the source rate.
    pub dram_sink_bytes_per_cycle: f64,
    /// A cap on each whole DRAM channel, all its endpoints on both NoCs, reads and writes
    /// together; `None` (the default): only the per-endpoint rates apply, as in tt-npe
    /// unless its optional DRAM-controller model is on.
    pub dram_channel_bytes_per_cycle: Option<f64>,
    /// How routers share an output among competing flows.
    pub arbitration: Arbitration,
    /// Share of the unicast rate a multicast achieves (every destination must accept each
    /// flit before the next moves on). Calibrated ([`NocCalibration`]).
    pub multicast_efficiency: f64,
    /// NIU to its router.
    pub niu_to_router: u32,
    /// Router to the next router.
    pub router_hop: u32,
    /// Router to its NIU.
    pub router_to_niu: u32,
    /// Cycles `CMD_CTRL` reads busy after an issue.
    pub issue_cycles: u32,
    /// A read request's arrival at a worker's NIU to its first response flit. Calibrated
    /// ([`NocCalibration`]).
    pub l1_read_cycles: u32,
    /// Data landed in a worker's L1 to the acknowledgement leaving.
    pub write_ack_cycles: u32,
    /// An atomic's arrival to its response leaving.
    pub atomic_cycles: u32,
    /// A read request's arrival at a DRAM endpoint to its first response flit. Calibrated
    /// ([`NocCalibration`]).
    pub dram_read_cycles: u32,
    /// Data landed in DRAM to the acknowledgement leaving.
    pub dram_write_cycles: u32,
}

impl NocConfig {
    /// The defaults for `arch` (docs/design/noc-model.md says where each comes from).
    pub fn for_arch(arch: Arch) -> NocConfig {
        let cfg = match arch {
            Arch::WormholeB0 => NocConfig {
                enabled: true,
                epoch: 32,
                flit_bytes: 32,
                max_packet_bytes: 8192,
                link_bytes_per_cycle: 30.0,
                niu_bytes_per_cycle: 30.0,
                // tt-npe's wormhole_b0 device model: DRAM injection 23.2, absorption 24.0.
                dram_source_bytes_per_cycle: 23.2,
                dram_sink_bytes_per_cycle: 24.0,
                dram_channel_bytes_per_cycle: None,
                arbitration: Arbitration::RoundRobin,
                multicast_efficiency: 0.0, // fitted: NocCalibration
                niu_to_router: 5,
                router_hop: 9,
                router_to_niu: 5,
                issue_cycles: 20,
                l1_read_cycles: 0, // fitted: NocCalibration
                write_ack_cycles: 40,
                atomic_cycles: 40,
                dram_read_cycles: 0, // fitted: NocCalibration
                dram_write_cycles: 120,
            },
            Arch::Blackhole => NocConfig {
                enabled: true,
                epoch: 32,
                flit_bytes: 64,
                max_packet_bytes: 16384,
                link_bytes_per_cycle: 60.9,
                niu_bytes_per_cycle: 60.9,
                // tt-npe's blackhole model says 40 (54 GB/s at 1.35 GHz) both ways, but
                // tt-metal measures 33 (read) / 34 (write) B/cycle for one core on one
                // bank, where the endpoint is the bottleneck: 36 keeps both within 10 %.
                dram_source_bytes_per_cycle: 36.0,
                dram_sink_bytes_per_cycle: 36.0,
                dram_channel_bytes_per_cycle: None,
                arbitration: Arbitration::RoundRobin,
                multicast_efficiency: 0.0, // fitted: NocCalibration
                niu_to_router: 5,
                router_hop: 9,
                router_to_niu: 5,
                issue_cycles: 36,
                l1_read_cycles: 0, // fitted: NocCalibration
                write_ack_cycles: 40,
                atomic_cycles: 40,
                dram_read_cycles: 0, // fitted: NocCalibration
                dram_write_cycles: 120,
            },
        };
        cfg.calibrated(NocCalibration::for_arch(arch))
    }

    /// This configuration with the fitted constants of `c`.
    pub fn calibrated(self, c: NocCalibration) -> NocConfig {
        NocConfig {
            l1_read_cycles: c.l1_read_cycles,
            dram_read_cycles: c.dram_read_cycles,
            multicast_efficiency: c.multicast_efficiency,
            ..self
        }
    }

    /// The fitted constants of this configuration.
    pub fn calibration(&self) -> NocCalibration {
        NocCalibration {
            l1_read_cycles: self.l1_read_cycles,
            dram_read_cycles: self.dram_read_cycles,
            multicast_efficiency: self.multicast_efficiency,
        }
    }

    /// Header latency from `from` to `to` (`hops` router-to-router links).
    pub(crate) fn path(&self, hops: u32) -> u64 {
        (self.niu_to_router + hops * self.router_hop + self.router_to_niu) as u64
    }

    /// Bytes on the wire for a payload of `len` bytes: the payload plus a header flit for
    /// each packet the NIU splits it into.
    pub(crate) fn wire_bytes(&self, len: u32) -> f64 {
        let packets = len.div_ceil(self.max_packet_bytes.max(1)).max(1);
        len as f64 + (packets * self.flit_bytes) as f64
    }
}

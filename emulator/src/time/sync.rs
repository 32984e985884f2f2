//! Virtual host time and clock-sync samples: what a host reading a tile's wall clock over
//! PCIe would observe (see [`crate::time::clock`] for the model).

use crate::time::clock::{ClockTruth, ReadLatency, SplitMix};

/// One host read of a tile's wall clock: the host's clock just before it issued the read,
/// the counter value the device returned, and the host's clock when the value arrived.
/// Host times are virtual nanoseconds, rounded to the nearest nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSample {
    /// Host clock when the read was sent, ns.
    pub host_before_ns: u64,
    /// The counter value the device returned, cycles.
    pub device_cycles: u64,
    /// Host clock when the value arrived, ns.
    pub host_after_ns: u64,
}

/// The device's virtual host clock and the generator of read latencies.
#[derive(Clone, Debug)]
pub(crate) struct HostClock {
    pub now_ns: f64,
    pub rng: SplitMix,
}

impl HostClock {
    pub fn new(seed: u64, start_ns: f64) -> HostClock {
        HostClock {
            now_ns: start_ns,
            rng: SplitMix(seed),
        }
    }
}

/// One drawn read of a wall clock.
pub(crate) struct Read {
    /// Host time the response arrives.
    pub after: f64,
    /// The chip counter (without the tile offset) when the request arrived.
    pub chip_cycles: u64,
}

/// A read issued at host time `before`: the request leg, the counter sampled on arrival,
/// the response leg. Shared by in-process samples and the mailbox responder.
pub(crate) fn read_clock(
    truth: &ClockTruth,
    lat: &ReadLatency,
    rng: &mut SplitMix,
    before: f64,
) -> Read {
    let (request, response) = lat.draw(rng);
    let at = before + request;
    Read {
        after: at + response,
        chip_cycles: truth.chip_cycles_at(at).floor() as u64,
    }
}

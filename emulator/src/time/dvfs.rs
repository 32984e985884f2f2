//! Frequency changes under power management (DVFS) and the chip's fixed reference clock.
//!
//! Power management retargets a chip's AI-clock PLL at run time: the wall clock keeps
//! counting, continuously, at another rate from that moment on. A [`FreqStep`] says "from
//! host time `at_host_ns` on, the PLL targets `mhz`"; a chip's schedule is its steps in
//! host-time order ([`ClockModel::dvfs`](crate::ClockModel)). The true frequency is the
//! target scaled by the oscillator's error and drift (the `clock` module's); without steps
//! this is exactly the single-frequency model.
//!
//! The *reference counter* counts the fixed 50 MHz reference oscillator: it shares the
//! chip's oscillator error and drift but never changes under DVFS, and the host can read
//! it like the wall clock ([`crate::Device::ref_sample`]).
//!
//! See docs/design/clock-alignment.md, "The emulator's clocks", for the formulas.

use std::fmt;

/// Nominal frequency of the reference counter, MHz.
pub const REF_MHZ: f64 = 50.0;

/// One AI-clock frequency change of a chip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FreqStep {
    /// Virtual host time (ns) from which the PLL targets `mhz`.
    pub at_host_ns: f64,
    /// The new target frequency, MHz (the oscillator's error still applies).
    pub mhz: f64,
}

impl fmt::Display for FreqStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.mhz, format_ns(self.at_host_ns))
    }
}

fn format_ns(ns: f64) -> String {
    if ns == 0.0 {
        "0".into()
    } else if ns % 1e9 == 0.0 {
        format!("{}s", ns / 1e9)
    } else if ns % 1e6 == 0.0 {
        format!("{}ms", ns / 1e6)
    } else if ns % 1e3 == 0.0 {
        format!("{}us", ns / 1e3)
    } else {
        format!("{ns}ns")
    }
}

/// Parses a schedule `MHZ@TIME,MHZ@TIME,...` (e.g. `1350@0,800@2ms,1100@5ms`): `TIME` is a
/// number with a unit `ns`, `us`, `ms` or `s` (or a bare `0`), counted from `origin_ns`.
/// Steps must be in increasing time order; frequencies must lie in 1..=10000 MHz.
pub fn parse_schedule(text: &str, origin_ns: f64) -> Result<Vec<FreqStep>, String> {
    let mut out: Vec<FreqStep> = Vec::new();
    for (i, item) in text.split(',').map(str::trim).enumerate() {
        let what = |why: &str| {
            format!(
                "DVFS step {} {item:?}: {why} (expected MHZ@TIME, e.g. 800@2ms)",
                i + 1
            )
        };
        let (mhz, at) = item.split_once('@').ok_or_else(|| what("no '@'"))?;
        let mhz: f64 = mhz
            .trim()
            .parse()
            .map_err(|_| what("the frequency is not a number"))?;
        if !(1.0..=10_000.0).contains(&mhz) {
            return Err(what("the frequency must lie in 1..=10000 MHz"));
        }
        let at = parse_time_ns(at.trim())
            .ok_or_else(|| what("the time is not a number with a unit ns, us, ms or s"))?;
        let step = FreqStep {
            at_host_ns: origin_ns + at,
            mhz,
        };
        if out.last().is_some_and(|p| p.at_host_ns >= step.at_host_ns) {
            return Err(what("steps must be in increasing time order"));
        }
        out.push(step);
    }
    Ok(out)
}

fn parse_time_ns(s: &str) -> Option<f64> {
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(unit, scale)| s.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or((s, if s == "0" { 1.0 } else { f64::NAN }));
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && scale.is_finite()).then_some(v * scale)
}

/// The piece of a schedule in force over a host-time interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Piece {
    /// Start, as `Δ` (host ns since the chip's reset).
    pub start: f64,
    /// Target MHz over the piece.
    pub mhz: f64,
}

/// The schedule as pieces from the reset on: the first at `Δ = 0` with the nominal
/// frequency (or the target of a step at or before the reset), then one per later step.
pub(crate) fn pieces(steps: &[FreqStep], nominal_mhz: f64, reset_host_ns: f64) -> Vec<Piece> {
    let mut out = vec![Piece {
        start: 0.0,
        mhz: nominal_mhz,
    }];
    for s in steps {
        let start = (s.at_host_ns - reset_host_ns).max(0.0);
        match out.last_mut() {
            Some(last) if start <= last.start => last.mhz = s.mhz,
            _ => out.push(Piece { start, mhz: s.mhz }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_with_units_and_bad_ones_are_named() {
        let s = parse_schedule("1350@0, 800@2ms,1100@1.5s,1350@250us", 10.0);
        assert!(s.unwrap_err().contains("step 4"), "250 us is before 1.5 s");
        let s = parse_schedule("1350@0,800@2ms,1100@1.5s", 10.0).unwrap();
        assert_eq!(
            s.iter().map(|s| (s.at_host_ns, s.mhz)).collect::<Vec<_>>(),
            [(10.0, 1350.0), (2e6 + 10.0, 800.0), (1.5e9 + 10.0, 1100.0)]
        );
        assert_eq!(s[1].to_string(), "800@2000010ns");
        assert_eq!(
            FreqStep {
                at_host_ns: 2e6,
                mhz: 800.0
            }
            .to_string(),
            "800@2ms"
        );
        for bad in [
            "",
            "800",
            "x@1ms",
            "800@",
            "800@5",
            "800@-1ms",
            "0@1ms",
            "800@1ms,900@1ms",
        ] {
            let e = parse_schedule(bad, 0.0).unwrap_err();
            assert!(e.contains("expected MHZ@TIME"), "{bad}: {e}");
        }
    }

    #[test]
    fn pieces_start_at_the_reset_and_merge_early_steps() {
        let steps = [
            FreqStep {
                at_host_ns: 50.0,
                mhz: 900.0,
            },
            FreqStep {
                at_host_ns: 300.0,
                mhz: 800.0,
            },
        ];
        let p = pieces(&steps, 1000.0, 100.0);
        assert_eq!(
            p,
            vec![
                Piece {
                    start: 0.0,
                    mhz: 900.0
                },
                Piece {
                    start: 200.0,
                    mhz: 800.0
                }
            ]
        );
        assert_eq!(
            pieces(&[], 1000.0, 0.0),
            vec![Piece {
                start: 0.0,
                mhz: 1000.0
            }]
        );
    }
}

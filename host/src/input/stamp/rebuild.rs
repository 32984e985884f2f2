//! Timestamper events to ring records: the stream of 96-bit events (format:
//! `ttprof_rt::stamp`) parsed into events, then per RISC the zones rebuilt with a stack of
//! opens (zones nest), value zones and data records with their payloads.
//!
//! [`Parser`] takes 16-byte units in stream order. A token is never 0, so a zero word where
//! a token is due is a flush's padding up to the unit's end. After lost units (an overflow)
//! the next units may start inside an event: the parser then *resynchronises*, taking a word
//! as a token only if it parses as one and its event's time is at or after the last time
//! seen and less than 2^40 cycles later.

use riscv_linker::Risc;
use ttprof_rt::stamp::{Kind, Token, DATA_PAYLOADS, EVENT_WORDS, VALUE_PAYLOADS};
use ttprof_rt::wire::{Record, SiteId};

/// One event of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What the core stored.
    pub token: Token,
    /// The tile's cycle counter when the core stored the token.
    pub time: u64,
}

/// Parses units into events; keeps a straddling event's words between units and drains.
#[derive(Clone, Debug, Default)]
pub struct Parser {
    carry: Vec<u32>,
    /// Set after lost units: the next word may be inside an event.
    resync: bool,
    last_time: u64,
    /// Words skipped while resynchronising or because they were not a token.
    pub(crate) skipped_words: u64,
}

impl Parser {
    /// Units were lost before the next one fed.
    pub(crate) fn lost_units(&mut self) {
        self.skipped_words += self.carry.len() as u64;
        self.carry.clear();
        self.resync = true;
    }

    /// One 16-byte unit; its events go to `out`.
    pub fn unit(&mut self, unit: [u32; 4], out: &mut Vec<Event>) {
        for w in unit {
            if self.carry.is_empty() && w == 0 {
                return; // padding up to the unit's end
            }
            self.carry.push(w);
            while self.carry.len() == EVENT_WORDS {
                let time = self.carry[1] as u64 | (self.carry[2] as u64) << 32;
                let token = Token::parse(self.carry[0]);
                let plausible =
                    !self.resync || (time >= self.last_time && time - self.last_time < 1 << 40);
                match token {
                    Some(token) if plausible => {
                        self.resync = false;
                        self.last_time = time;
                        out.push(Event { token, time });
                        self.carry.clear();
                    }
                    _ => {
                        // Not an event start: slide by one word and look again.
                        self.resync = true;
                        self.skipped_words += 1;
                        self.carry.remove(0);
                    }
                }
            }
        }
    }
}

/// A record waiting for its payloads.
#[derive(Clone, Copy, Debug)]
struct Pending {
    record: Record,
    need: u8,
    got: u8,
    value: u64,
}

/// One RISC's zones being rebuilt.
#[derive(Clone, Debug, Default)]
pub(crate) struct RiscZones {
    /// Open zones: site and start.
    stack: Vec<(SiteId, u64)>,
    pending: Option<Pending>,
    /// Records rebuilt, in non-decreasing time.
    pub records: Vec<Record>,
    /// Opens whose close never came (lost, or still open at the end).
    pub(crate) unpaired_opens: u64,
    /// Closes without an open.
    pub(crate) unpaired_closes: u64,
    /// Records whose payloads were cut short, and payloads without a record.
    pub(crate) broken_payloads: u64,
}

impl RiscZones {
    /// The next event of this RISC.
    pub(crate) fn event(&mut self, e: Event) {
        let t = e.token;
        if t.kind == Kind::Payload {
            match &mut self.pending {
                Some(p) if t.count == p.got => {
                    p.value |= (t.high as u64) << (16 * t.count as u32);
                    p.got += 1;
                    if p.got == p.need {
                        let done = *p;
                        self.pending = None;
                        self.records.push(match done.record {
                            Record::Zone {
                                id, end, duration, ..
                            } => Record::Zone {
                                id,
                                end,
                                duration,
                                value: Some(done.value as u32),
                            },
                            Record::Data { id, time, .. } => Record::Data {
                                id,
                                time,
                                data: done.value,
                            },
                            other => other,
                        });
                    }
                }
                _ => {
                    self.pending = None;
                    self.broken_payloads += 1;
                }
            }
            return;
        }
        if self.pending.take().is_some() {
            self.broken_payloads += 1;
        }
        match t.kind {
            Kind::Open => self.stack.push((t.high, e.time)),
            Kind::Close => {
                let Some(depth) = self.stack.iter().rposition(|(s, _)| *s == t.high) else {
                    self.unpaired_closes += 1;
                    return;
                };
                // Opens above the match lost their closes.
                self.unpaired_opens += (self.stack.len() - 1 - depth) as u64;
                self.stack.truncate(depth + 1);
                let (id, start) = self.stack.pop().unwrap_or((t.high, e.time));
                let zone = Record::Zone {
                    id,
                    end: e.time,
                    duration: e.time.saturating_sub(start),
                    value: None,
                };
                if t.count as u32 == VALUE_PAYLOADS {
                    self.pending = Some(Pending {
                        record: zone,
                        need: VALUE_PAYLOADS as u8,
                        got: 0,
                        value: 0,
                    });
                } else {
                    self.records.push(zone);
                }
            }
            Kind::Point => {
                if t.count as u32 == DATA_PAYLOADS {
                    self.pending = Some(Pending {
                        record: Record::Data {
                            id: t.high,
                            time: e.time,
                            data: 0,
                        },
                        need: DATA_PAYLOADS as u8,
                        got: 0,
                        value: 0,
                    });
                } else {
                    self.records.push(Record::Event {
                        id: t.high,
                        time: e.time,
                    });
                }
            }
            Kind::Payload => unreachable!("handled above"),
        }
    }

    /// The stream ended: what is still open or pending is lost.
    pub(crate) fn end(&mut self) {
        self.unpaired_opens += self.stack.len() as u64;
        self.stack.clear();
        if self.pending.take().is_some() {
            self.broken_payloads += 1;
        }
    }

    /// Zones, events and data that could not be rebuilt.
    pub(crate) fn lost(&self) -> u64 {
        self.unpaired_opens + self.unpaired_closes + self.broken_payloads
    }
}

/// The RISC an event's token names.
pub(crate) fn risc_of(e: &Event) -> Option<Risc> {
    Risc::from_index(e.token.risc as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ttprof_rt::stamp::token;

    fn units(events: &[(u32, u64)], flush_after: usize) -> Vec<[u32; 4]> {
        let mut words = Vec::new();
        for (i, (tok, t)) in events.iter().enumerate() {
            words.extend([*tok, *t as u32, (*t >> 32) as u32]);
            if i + 1 == flush_after {
                while words.len() % 4 != 0 {
                    words.push(0);
                }
            }
        }
        while words.len() % 4 != 0 {
            words.push(0);
        }
        words.chunks(4).map(|c| c.try_into().unwrap()).collect()
    }

    fn rebuild(events: &[(u32, u64)], flush_after: usize) -> RiscZones {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for u in units(events, flush_after) {
            p.unit(u, &mut out);
        }
        assert_eq!(out.len(), events.len());
        let mut z = RiscZones::default();
        for e in out {
            z.event(e);
        }
        z.end();
        z
    }

    #[test]
    fn nested_zones_values_events_and_data_come_back() {
        let o = |s| token(1, Kind::Open, 0, s);
        let c = |s| token(1, Kind::Close, 0, s);
        let big = 1u64 << 33;
        let ev = [
            (o(5), big + 10),
            (o(6), big + 12),
            (c(6), big + 20),
            (token(1, Kind::Point, 0, 7), big + 21),
            (token(1, Kind::Close, 2, 5), big + 30),
            (token(1, Kind::Payload, 0, 0xBEEF), big + 31),
            (token(1, Kind::Payload, 1, 0x1234), big + 32),
            (token(1, Kind::Point, 4, 8), big + 40),
            (token(1, Kind::Payload, 0, 1), big + 41),
            (token(1, Kind::Payload, 1, 2), big + 42),
            (token(1, Kind::Payload, 2, 3), big + 43),
            (token(1, Kind::Payload, 3, 4), big + 44),
        ];
        let z = rebuild(&ev, 3);
        assert_eq!(
            z.records,
            [
                Record::Zone {
                    id: 6,
                    end: big + 20,
                    duration: 8,
                    value: None
                },
                Record::Event {
                    id: 7,
                    time: big + 21
                },
                Record::Zone {
                    id: 5,
                    end: big + 30,
                    duration: 20,
                    value: Some(0x1234_BEEF)
                },
                Record::Data {
                    id: 8,
                    time: big + 40,
                    data: 0x0004_0003_0002_0001
                },
            ]
        );
        assert_eq!(z.lost(), 0);
    }

    #[test]
    fn lost_closes_and_opens_are_counted_not_guessed() {
        let o = |s| token(0, Kind::Open, 0, s);
        let c = |s| token(0, Kind::Close, 0, s);
        // 2 opens whose closes were lost inside zone 1; a close of 9 without its open; 4 left open.
        let z = rebuild(
            &[
                (o(1), 1),
                (o(2), 2),
                (o(3), 3),
                (c(1), 4),
                (c(9), 5),
                (o(4), 6),
            ],
            0,
        );
        assert_eq!(
            z.records,
            [Record::Zone {
                id: 1,
                end: 4,
                duration: 3,
                value: None
            }]
        );
        assert_eq!((z.unpaired_opens, z.unpaired_closes), (3, 1));
    }

    #[test]
    fn after_lost_units_the_parser_finds_the_next_event() {
        let mut p = Parser::default();
        let mut out = Vec::new();
        let tok = |i| token(2, Kind::Point, 0, i);
        // Events 0..8 at times 100.., as 6 units; units 1 and 2 are lost.
        let all = units(
            &(0..8).map(|i| (tok(i), 100 + i as u64)).collect::<Vec<_>>(),
            0,
        );
        p.unit(all[0], &mut out);
        p.lost_units();
        for u in &all[3..] {
            p.unit(*u, &mut out);
        }
        let got: Vec<u16> = out.iter().map(|e| e.token.high).collect();
        assert_eq!(
            got,
            [0, 4, 5, 6, 7],
            "event 1 straddled into the lost units; 4.. are whole"
        );
        assert!(p.skipped_words > 0);
    }
}

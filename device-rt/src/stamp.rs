//! The timestamper wire format: what the `timestamper` backend stores to the tile's debug
//! timestamper (`riscv_linker::mmio::TIMESTAMP`) and the host parses back. The one place this
//! format is defined; docs/design/timestamper.md gives the reasons, how tokens make zones,
//! value zones and data, the stream's padding, and what stays in the ring.
//!
//! Every store is a **96-bit event** (`APPEND_96B`, low three bits 4): the hardware appends
//! the stored word (the *token*) and the tile's 64-bit cycle counter, low word first, to the
//! tile's stream in L1. All five cores of a tile use this one size, so the shared stream never
//! mixes sizes (the page calls that undefined). A token's bits:
//!
//! | bits   | field |
//! |--------|-------|
//! | 0..3   | 4 (`APPEND_96B`) |
//! | 3..6   | the storing RISC ([`riscv_linker::Risc`] index: BRISC 0 .. NCRISC 4) |
//! | 6..8   | [`Kind`]: open, close, point, payload |
//! | 8..16  | open/close/point: how many payload events follow from this RISC (0; 2 for a value zone's 32-bit value; 4 for a data record's 64 bits); payload: its index |
//! | 16..32 | open/close/point: the site id (its 16-bit address, as on the ring); payload: 16 bits of the value, lowest first |
//!
//! A zone is an open and a close token of the same site on one RISC (zones nest); a point
//! token is an event (count 0) or a data record (count 4). A token is never 0.

/// The low three bits of every token: a 96-bit event.
pub const APPEND_96B: u32 = riscv_linker::mmio::timestamp::APPEND_96B;
/// Bit of the RISC index.
pub const RISC_SHIFT: u32 = 3;
/// Bit of the [`Kind`].
pub const KIND_SHIFT: u32 = 6;
/// Bit of the payload count (or a payload's index).
pub const COUNT_SHIFT: u32 = 8;
/// Bit of the site id (or a payload's 16 value bits).
pub const HIGH_SHIFT: u32 = 16;
/// Words per event.
pub const EVENT_WORDS: usize = 3;
/// Payload events after a value zone's close.
pub const VALUE_PAYLOADS: u32 = 2;
/// Payload events after a data record's point token.
pub const DATA_PAYLOADS: u32 = 4;

/// What a token says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A zone opens.
    Open = 0,
    /// A zone closes.
    Close = 1,
    /// A point in time: an event, or a data record (with payloads).
    Point = 2,
    /// 16 bits of the value of the open/close/point before it on this RISC.
    Payload = 3,
}

/// A token's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// RISC index (0..=4).
    pub risc: u8,
    /// What the token marks.
    pub kind: Kind,
    /// Payloads that follow (open/close/point) or this payload's index.
    pub count: u8,
    /// The site id, or a payload's 16 value bits.
    pub high: u16,
}

/// The token word for `risc`, `kind`, `count` and `high`.
#[inline(always)]
pub const fn token(risc: u32, kind: Kind, count: u32, high: u32) -> u32 {
    high << HIGH_SHIFT
        | (count & 0xFF) << COUNT_SHIFT
        | (kind as u32) << KIND_SHIFT
        | (risc & 7) << RISC_SHIFT
        | APPEND_96B
}

impl Token {
    /// Parses a token word: `None` when it is not one (low bits not 4, a RISC index past 4).
    pub const fn parse(word: u32) -> Option<Token> {
        if word & 7 != APPEND_96B {
            return None;
        }
        let risc = ((word >> RISC_SHIFT) & 7) as u8;
        if risc > 4 {
            return None;
        }
        let kind = match (word >> KIND_SHIFT) & 3 {
            0 => Kind::Open,
            1 => Kind::Close,
            2 => Kind::Point,
            _ => Kind::Payload,
        };
        Some(Token {
            risc,
            kind,
            count: (word >> COUNT_SHIFT) as u8,
            high: (word >> HIGH_SHIFT) as u16,
        })
    }

    /// The word this token is stored as.
    pub const fn word(&self) -> u32 {
        token(
            self.risc as u32,
            self.kind,
            self.count as u32,
            self.high as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_are_never_zero() {
        for risc in 0..5 {
            for kind in [Kind::Open, Kind::Close, Kind::Point, Kind::Payload] {
                for (count, high) in [(0, 0), (2, 0xFFFF), (4, 0x1234)] {
                    let w = token(risc, kind, count, high);
                    assert_ne!(w, 0);
                    let t = Token::parse(w).unwrap();
                    assert_eq!(
                        (t.risc as u32, t.kind, t.count as u32, t.high as u32),
                        (risc, kind, count, high)
                    );
                    assert_eq!(t.word(), w);
                }
            }
        }
        assert_eq!(Token::parse(0), None, "padding is no token");
        assert_eq!(Token::parse(5 << RISC_SHIFT | 4), None, "no sixth RISC");
        assert_eq!(Token::parse(0x1234_5001), None, "another event size");
    }
}

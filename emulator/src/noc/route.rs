//! Routes on the NoC torus and the resources a transfer occupies.
//!
//! Each chip has two NoCs over the same `width x height` grid of routers, each a 2D torus
//! with one link per direction it routes in: NoC0 sends east (+x) then south (+y), NoC1
//! north (-y) then west (-x) (dimension-ordered, wrapping at the edges). All coordinates
//! here are NoC0 coordinates; NoC1's own numbering is the mirror image, so its
//! "east/south" are NoC0's west/north.
//!
//! A resource is anything with a bandwidth: a link (the output of one router in one
//! direction), an NIU's injection port (into the NoC) or ejection port (out of it), and a
//! DRAM channel. [`Resources`] numbers them densely per chip.

use riscv_linker::NocCoord;

/// Dense resource numbering for one chip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Resources {
    pub width: u8,
    pub height: u8,
    pub dram_channels: u32,
}

/// The four per-node, per-NoC resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Port {
    /// The X link leaving this router (east on NoC0, west on NoC1).
    LinkX = 0,
    /// The Y link leaving this router (south on NoC0, north on NoC1).
    LinkY = 1,
    /// The NIU injecting into the router.
    Inject = 2,
    /// The router ejecting into the NIU.
    Eject = 3,
}

impl Resources {
    pub fn count(&self) -> usize {
        2 * self.width as usize * self.height as usize * 4 + self.dram_channels as usize
    }

    pub fn port(&self, noc: u8, at: NocCoord, port: Port) -> u32 {
        let node =
            (noc as u32 * self.height as u32 + at.y as u32) * self.width as u32 + at.x as u32;
        node * 4 + port as u32
    }

    pub fn dram(&self, channel: u32) -> u32 {
        (2 * self.width as u32 * self.height as u32 * 4) + channel
    }

    pub fn is_link(&self, r: u32) -> bool {
        (r as usize) < 2 * self.width as usize * self.height as usize * 4 && r % 4 < 2
    }

    pub fn is_dram(&self, r: u32) -> bool {
        r >= self.dram(0)
    }

    /// The links from `from` to `to` on NoC `noc`, appended to `out`; returns the number of
    /// router-to-router hops.
    pub fn route(&self, noc: u8, from: NocCoord, to: NocCoord, out: &mut Vec<u32>) -> u32 {
        let (w, h) = (self.width, self.height);
        let mut at = from;
        let mut hops = 0;
        let step_x = |c: NocCoord| NocCoord {
            x: if noc == 0 {
                (c.x + 1) % w
            } else {
                (c.x + w - 1) % w
            },
            y: c.y,
        };
        let step_y = |c: NocCoord| NocCoord {
            x: c.x,
            y: if noc == 0 {
                (c.y + 1) % h
            } else {
                (c.y + h - 1) % h
            },
        };
        let go_x = |at: &mut NocCoord, out: &mut Vec<u32>, hops: &mut u32| {
            while at.x != to.x {
                out.push(self.port(noc, *at, Port::LinkX));
                *at = step_x(*at);
                *hops += 1;
            }
        };
        if noc == 0 {
            go_x(&mut at, out, &mut hops);
        }
        while at.y != to.y {
            out.push(self.port(noc, at, Port::LinkY));
            at = step_y(at);
            hops += 1;
        }
        if noc != 0 {
            go_x(&mut at, out, &mut hops);
        }
        hops
    }

    /// Hops from `from` to `to` on NoC `noc`.
    pub fn hops(&self, noc: u8, from: NocCoord, to: NocCoord) -> u32 {
        let (w, h) = (self.width as u32, self.height as u32);
        let (fx, fy, tx, ty) = (from.x as u32, from.y as u32, to.x as u32, to.y as u32);
        if noc == 0 {
            (tx + w - fx) % w + (ty + h - fy) % h
        } else {
            (fx + w - tx) % w + (fy + h - ty) % h
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res() -> Resources {
        Resources {
            width: 10,
            height: 12,
            dram_channels: 6,
        }
    }

    #[test]
    fn noc0_goes_east_then_south_and_noc1_north_then_west() {
        let r = res();
        let (a, b) = (NocCoord::new(1, 1), NocCoord::new(3, 2));
        let mut links = Vec::new();
        assert_eq!(r.route(0, a, b, &mut links), 3);
        assert_eq!(
            links,
            vec![
                r.port(0, NocCoord::new(1, 1), Port::LinkX),
                r.port(0, NocCoord::new(2, 1), Port::LinkX),
                r.port(0, NocCoord::new(3, 1), Port::LinkY)
            ]
        );
        // NoC1 from a to b wraps: north 11 rows, west 8 columns.
        links.clear();
        assert_eq!(r.route(1, a, b, &mut links), 11 + 8);
        assert_eq!(links[0], r.port(1, a, Port::LinkY));
        assert_eq!(r.hops(1, a, b), 19);
        assert_eq!(r.hops(0, b, a), 8 + 11);
        assert_eq!(r.hops(1, b, a), 3);
    }

    #[test]
    fn resources_are_distinct() {
        let r = res();
        let mut all: Vec<u32> = Vec::new();
        for noc in 0..2 {
            for y in 0..12 {
                for x in 0..10 {
                    for p in [Port::LinkX, Port::LinkY, Port::Inject, Port::Eject] {
                        all.push(r.port(noc, NocCoord::new(x, y), p));
                    }
                }
            }
        }
        all.extend((0..6).map(|c| r.dram(c)));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert_eq!(n, r.count());
        assert!(r.is_dram(r.dram(0)) && !r.is_dram(r.port(1, NocCoord::new(9, 11), Port::Eject)));
    }
}

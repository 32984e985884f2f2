//! DRAM contents: each channel of a chip as a sparse array of 4 KiB pages (unwritten
//! bytes read as zero), so a 12 GiB Wormhole or 32 GiB Blackhole costs only what is used.

use std::collections::HashMap;

const PAGE: u64 = 4096;

/// The DRAM of one chip.
#[derive(Debug, Default)]
pub(crate) struct Dram {
    pages: HashMap<(u32, u64), Box<[u8; PAGE as usize]>>,
}

impl Dram {
    /// Copies `out.len()` bytes at `offset` of `channel` into `out`.
    pub fn read(&self, channel: u32, offset: u64, out: &mut [u8]) {
        let mut done = 0usize;
        while done < out.len() {
            let at = offset + done as u64;
            let (page, within) = (at / PAGE, (at % PAGE) as usize);
            let n = (PAGE as usize - within).min(out.len() - done);
            match self.pages.get(&(channel, page)) {
                Some(p) => out[done..done + n].copy_from_slice(&p[within..within + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// Writes `data` at `offset` of `channel`, only the bytes whose `keep` is true when
    /// `keep` is given (byte-enable writes).
    pub fn write(
        &mut self,
        channel: u32,
        offset: u64,
        data: &[u8],
        keep: Option<&dyn Fn(usize) -> bool>,
    ) {
        let mut done = 0usize;
        while done < data.len() {
            let at = offset + done as u64;
            let (page, within) = (at / PAGE, (at % PAGE) as usize);
            let n = (PAGE as usize - within).min(data.len() - done);
            let p = self
                .pages
                .entry((channel, page))
                .or_insert_with(|| Box::new([0u8; PAGE as usize]));
            for k in 0..n {
                if keep.is_none_or(|f| f(done + k)) {
                    p[within + k] = data[done + k];
                }
            }
            done += n;
        }
    }

    /// Bytes of host memory the pages take.
    #[allow(dead_code)]
    pub fn resident(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_pages_read_back_across_boundaries() {
        let mut d = Dram::default();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        d.write(3, 4000, &data, None);
        let mut out = vec![0u8; 10_100];
        d.read(3, 3950, &mut out);
        assert!(out[..50].iter().all(|&b| b == 0));
        assert_eq!(&out[50..10_050], &data[..]);
        let mut other = [1u8; 8];
        d.read(2, 4000, &mut other);
        assert_eq!(other, [0; 8], "channels are separate");
        d.write(3, 4000, &[9, 9, 9, 9], Some(&|i| i % 2 == 1));
        d.read(3, 4000, &mut out[..4]);
        assert_eq!(&out[..4], &[data[0], 9, data[2], 9]);
        assert_eq!(d.resident(), 4 * 4096);
    }
}

//! The harvesting of a card from tt-metal's cluster descriptor (`cluster_descriptor.yaml`,
//! written by tt-umd's topology discovery). Only these keys are read:
//!
//! ```yaml
//! arch: {0: wormhole_b0}                    # per chip (optional)
//! chips_with_mmio: [{0: 1}]                 # chip -> /dev/tenstorrent index (optional)
//! chip_pci_bdfs: {0: "0000:41:00.0"}        # chip -> PCI address (optional)
//! harvesting:
//!   0: {noc_translation: true, harvest_mask: 544}
//! ```
//!
//! `harvest_mask` is in NoC0 order (bit `i` = the `i`-th Tensix row on Wormhole, column on
//! Blackhole), the order tt-umd stores after converting the card's own layout.
//!
//! The file is untrusted input: only a regular file of at most [`MAX_BYTES`] is read (a
//! FIFO, `/dev/zero` or a directory is refused before it is opened), and YAML aliases
//! (`*name`) are refused before the document is built, so a few hundred bytes of nested
//! aliases ("billion laughs") cannot expand to gigabytes. tt-umd writes neither.

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::Arch;
use std::path::Path;
use yaml_rust2::{Yaml, YamlLoader};

/// One chip's entry of the `harvesting` map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipHarvest {
    /// Chip id in the descriptor.
    pub chip: u32,
    /// Its harvest mask (NoC0 order).
    pub mask: u32,
    /// Whether translation is on, when the descriptor says.
    pub translation: Option<bool>,
}

/// Which chip of a descriptor a card is: by `chip` given, else by PCI address, else by the
/// card index in `chips_with_mmio`, else the only chip.
#[derive(Clone, Debug, Default)]
pub(crate) struct CardKey<'a> {
    /// The chip id, when the caller knows it.
    pub chip: Option<u32>,
    /// The card's PCI address, to find its chip.
    pub(crate) pci_address: Option<&'a str>,
    /// The card's index.
    pub index: Option<u32>,
    /// The card's arch.
    pub arch: Option<Arch>,
}

fn int(y: &Yaml) -> Option<i64> {
    match y {
        Yaml::Integer(i) => Some(*i),
        Yaml::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => i64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

fn text(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

/// `key`'s map as `(chip, value)` pairs; a list of one-entry maps (`chips_with_mmio`) too.
fn chip_map<'y>(doc: &'y Yaml, key: &str) -> Vec<(i64, &'y Yaml)> {
    let mut out = Vec::new();
    let mut add = |h: &'y yaml_rust2::yaml::Hash| {
        for (k, v) in h {
            if let Some(c) = int(k) {
                out.push((c, v));
            }
        }
    };
    match &doc[key] {
        Yaml::Hash(h) => add(h),
        Yaml::Array(a) => a.iter().filter_map(|e| e.as_hash()).for_each(&mut add),
        _ => {}
    }
    out
}

/// The largest cluster descriptor read (tt-umd's for a whole Galaxy is tens of KB).
pub const MAX_BYTES: u64 = 1 << 20;

/// Finds the first alias in the event stream (the document is not built).
#[derive(Default)]
struct AliasFinder {
    alias: Option<yaml_rust2::scanner::Marker>,
}

impl yaml_rust2::parser::MarkedEventReceiver for AliasFinder {
    fn on_event(&mut self, ev: yaml_rust2::Event, mark: yaml_rust2::scanner::Marker) {
        if matches!(ev, yaml_rust2::Event::Alias(_)) && self.alias.is_none() {
            self.alias = Some(mark);
        }
    }
}

/// One chip of the descriptor: its harvesting, board name, arch and PCIe id where given.
pub type Chip = (ChipHarvest, Option<String>, Option<Arch>, Option<u32>);

/// Parses the descriptor text; `path` names it in errors. A document with an alias is
/// refused before it is built (see the module docs).
pub fn parse(path: &Path, text_: &str) -> Result<Vec<Chip>> {
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    let mut finder = AliasFinder::default();
    yaml_rust2::parser::Parser::new_from_str(text_)
        .load(&mut finder, true)
        .map_err(|e| bad(format!("is not YAML: {e}")))?;
    if let Some(at) = finder.alias {
        return Err(bad(format!(
            "line {} column {}: a YAML alias (*name): a cluster descriptor has none, and aliases can expand a small \
             file without bound, so they are refused",
            at.line(),
            at.col() + 1
        )));
    }
    let docs = YamlLoader::load_from_str(text_).map_err(|e| bad(format!("is not YAML: {e}")))?;
    let doc = docs
        .first()
        .ok_or_else(|| bad("is empty: expected a tt-metal cluster descriptor".into()))?;
    let harvesting = chip_map(doc, "harvesting");
    if harvesting.is_empty() {
        return Err(bad(
            "has no `harvesting` map (chip: {harvest_mask: N, noc_translation: bool}): expected a tt-metal cluster \
             descriptor"
                .into(),
        ));
    }
    let pci = chip_map(doc, "chip_pci_bdfs");
    let arch = chip_map(doc, "arch");
    let mmio = chip_map(doc, "chips_with_mmio");
    let mut out = Vec::new();
    for (chip, v) in harvesting {
        let chip_u = u32::try_from(chip)
            .map_err(|_| bad(format!("harvesting: chip {chip} is not a chip number")))?;
        let mask = match &v["harvest_mask"] {
            Yaml::BadValue => {
                return Err(bad(format!("harvesting: chip {chip} has no harvest_mask")))
            }
            m => int(m).and_then(|m| u32::try_from(m).ok()).ok_or_else(|| {
                bad(format!(
                    "harvesting: chip {chip}: harvest_mask {m:?} is not a 32-bit mask"
                ))
            })?,
        };
        let translation = v["noc_translation"].as_bool();
        let address = pci
            .iter()
            .find(|(c, _)| *c == chip)
            .and_then(|(_, v)| text(v));
        let chip_arch = match arch
            .iter()
            .find(|(c, _)| *c == chip)
            .and_then(|(_, v)| text(v))
        {
            None => None,
            Some(a) => Some(
                Arch::from_name(&a)
                    .or_else(|| {
                        a.eq_ignore_ascii_case("wormhole_b0")
                            .then_some(Arch::WormholeB0)
                    })
                    .ok_or_else(|| {
                        bad(format!(
                            "arch: chip {chip} is {a:?}, neither Wormhole nor Blackhole"
                        ))
                    })?,
            ),
        };
        let index = mmio
            .iter()
            .find(|(c, _)| *c == chip)
            .and_then(|(_, v)| int(v))
            .and_then(|i| u32::try_from(i).ok());
        out.push((
            ChipHarvest {
                chip: chip_u,
                mask,
                translation,
            },
            address,
            chip_arch,
            index,
        ));
    }
    Ok(out)
}

/// The harvesting of the card `key` describes, from the descriptor at `path`.
pub(crate) fn harvest_for(path: &Path, key: &CardKey, inputs: &Inputs) -> Result<ChipHarvest> {
    let bytes = crate::files::read_regular(
        path,
        "a cluster descriptor (YAML)",
        "read cluster descriptor",
        MAX_BYTES,
        inputs,
    )?;
    let text_ = String::from_utf8(bytes).map_err(|_| Error::BadFile {
        path: path.into(),
        what: "is not UTF-8 text: expected a cluster descriptor (YAML)".into(),
    })?;
    let chips = parse(path, &text_)?;
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    let found = if let Some(c) = key.chip {
        chips.iter().find(|e| e.0.chip == c).ok_or_else(|| {
            bad(format!(
                "has no harvesting entry for chip {c} (it lists chips {})",
                list(&chips)
            ))
        })?
    } else if let Some(e) = key
        .pci_address
        .and_then(|a| chips.iter().find(|e| e.1.as_deref() == Some(a)))
    {
        e
    } else if let Some(e) = key
        .index
        .and_then(|i| chips.iter().find(|e| e.3 == Some(i)))
    {
        e
    } else if chips.len() == 1 {
        &chips[0]
    } else {
        return Err(bad(format!(
            "lists chips {} and none is this card by PCI address ({}) or device index: say which with chip=N",
            list(&chips),
            key.pci_address.unwrap_or("unknown")
        )));
    };
    if let (Some(want), Some(have)) = (key.arch, found.2) {
        if want != have {
            return Err(bad(format!(
                "chip {} is a {have}, but the card is a {want}",
                found.0.chip
            )));
        }
    }
    Ok(found.0)
}

fn list(chips: &[Chip]) -> String {
    chips
        .iter()
        .map(|e| e.0.chip.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "arch:\n  0: wormhole_b0\n  1: wormhole_b0\nchips_with_mmio:\n  - 0: 1\nharvesting:\n  0:\n    noc_translation: true\n    harvest_mask: 544\n  1:\n    noc_translation: true\n    harvest_mask: 513\nchip_pci_bdfs:\n  0: 0000:41:00.0\n";
    const FLOW: &str = "arch: {\n   0: Wormhole,\n}\nchips_with_mmio: [\n   0: 0,\n]\n# bit 0 = first tensix row\nharvesting: {\n   0: {noc_translation: true, harvest_mask: 32},\n}\n";

    #[test]
    fn kmd_cluster_descriptors_in_block_and_flow_style_give_the_mask() {
        let p = Path::new("c.yaml");
        let chips = parse(p, BLOCK).unwrap();
        assert_eq!(chips.len(), 2);
        assert_eq!(
            chips[0].0,
            ChipHarvest {
                chip: 0,
                mask: 544,
                translation: Some(true)
            }
        );
        assert_eq!(chips[0].1.as_deref(), Some("0000:41:00.0"));
        assert_eq!((chips[0].2, chips[0].3), (Some(Arch::WormholeB0), Some(1)));
        let flow = parse(p, FLOW).unwrap();
        assert_eq!(
            flow[0].0,
            ChipHarvest {
                chip: 0,
                mask: 32,
                translation: Some(true)
            }
        );
        assert_eq!(
            flow[0].2,
            Some(Arch::WormholeB0),
            "\"Wormhole\" is accepted"
        );
    }

    #[test]
    fn kmd_cluster_descriptor_chip_is_chosen_by_pci_address_index_or_name() {
        let dir = crate::testing::temp_dir("kmd-cluster");
        let p = dir.join("c.yaml");
        std::fs::write(&p, BLOCK).unwrap();
        let by_pci = CardKey {
            pci_address: Some("0000:41:00.0"),
            ..Default::default()
        };
        assert_eq!(
            harvest_for(&p, &by_pci, &crate::inputs::Inputs::none())
                .unwrap()
                .mask,
            544
        );
        assert_eq!(
            harvest_for(
                &p,
                &CardKey {
                    index: Some(1),
                    ..Default::default()
                },
                &crate::inputs::Inputs::none()
            )
            .unwrap()
            .chip,
            0
        );
        assert_eq!(
            harvest_for(
                &p,
                &CardKey {
                    chip: Some(1),
                    ..Default::default()
                },
                &crate::inputs::Inputs::none()
            )
            .unwrap()
            .mask,
            513
        );
        let e = harvest_for(&p, &CardKey::default(), &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("c.yaml: lists chips 0, 1 and none is this card") && e.contains("chip=N"),
            "{e}"
        );
        let e = harvest_for(
            &p,
            &CardKey {
                chip: Some(7),
                ..Default::default()
            },
            &crate::inputs::Inputs::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no harvesting entry for chip 7"), "{e}");
        let bh = CardKey {
            chip: Some(0),
            arch: Some(Arch::Blackhole),
            ..Default::default()
        };
        assert!(harvest_for(&p, &bh, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string()
            .contains("chip 0 is a wormhole_b0, but the card is a blackhole"));
        for (text_, want) in [
            ("harvesting: [", "is not YAML"),
            ("arch: {0: blackhole}\n", "has no `harvesting` map"),
            (
                "harvesting: {0: {noc_translation: true}}\n",
                "chip 0 has no harvest_mask",
            ),
            (
                "harvesting: {0: {harvest_mask: banana}}\n",
                "harvest_mask String(\"banana\") is not a 32-bit mask",
            ),
        ] {
            std::fs::write(&p, text_).unwrap();
            let e = harvest_for(&p, &CardKey::default(), &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text_}: {e}");
        }
        let e = harvest_for(
            &dir.join("missing.yaml"),
            &CardKey::default(),
            &crate::inputs::Inputs::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("cannot read cluster descriptor") && e.contains("missing.yaml"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `levels` levels of aliases, each list naming the one before ten times: 10^levels
    /// strings once expanded ("billion laughs": 9 levels are 405 bytes and took 2.28 GB).
    fn alias_bomb(levels: usize) -> String {
        let mut y = String::from("a0: &a0 [\"lol\"]\n");
        for i in 1..=levels {
            let refs = vec![format!("*a{}", i - 1); 10].join(",");
            y.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        y.push_str(&format!(
            "harvesting: {{0: {{harvest_mask: 0}}}}\nx: *a{levels}\n"
        ));
        y
    }

    #[test]
    fn kmd_cluster_descriptors_with_aliases_fifos_devices_or_too_many_bytes_are_refused_without_reading_them_whole(
    ) {
        let dir = crate::testing::temp_dir("kmd-cluster-hostile");
        let p = dir.join("c.yaml");
        let key = CardKey::default();
        // A small alias first (refused: before, it parsed), then the bomb (which expanded
        // to gigabytes before): each refused before the document is built.
        for levels in [1, 9] {
            let bomb = alias_bomb(levels);
            std::fs::write(&p, &bomb).unwrap();
            let e = harvest_for(&p, &key, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("c.yaml: line 2 column") && e.contains("a YAML alias (*name)"),
                "{levels}: {e}"
            );
        }
        // An anchor without an alias is harmless YAML, and still read.
        std::fs::write(&p, "harvesting: &h {0: {harvest_mask: 32}}\n").unwrap();
        assert_eq!(
            harvest_for(&p, &key, &crate::inputs::Inputs::none())
                .unwrap()
                .mask,
            32
        );
        // More bytes than a descriptor has: refused before it is read.
        std::fs::File::create(&p)
            .unwrap()
            .set_len(MAX_BYTES + 1)
            .unwrap();
        let e = harvest_for(&p, &key, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "is {} bytes: expected a cluster descriptor (YAML) of at most {MAX_BYTES} bytes",
                MAX_BYTES + 1
            )),
            "{e}"
        );
        // Devices, directories and FIFOs: refused before they are opened (a FIFO hung, and
        // /dev/zero grew until the process ran out of memory).
        let e = harvest_for(Path::new("/dev/zero"), &key, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero: is not a regular file") && e.contains("cluster descriptor"),
            "{e}"
        );
        let e = harvest_for(&dir, &key, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a directory, not a cluster descriptor"),
            "{e}"
        );
        if let Some(e) = crate::files::with_fifo("kmd-cluster-fifo", |f| {
            harvest_for(f, &CardKey::default(), &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string()
        }) {
            assert!(
                e.contains("fifo: is not a regular file (a FIFO, socket or device?)"),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

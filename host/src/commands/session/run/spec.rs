//! The spellings of an op's parts, the same on the command line (`ttprof run --kernel
//! brisc=..`) and in a manifest: kernels (`RISC=ELF`, `RISC=CRATE_DIR:BINARY`,
//! `RISC=FILE.cpp`), runtime arguments (`RISC=V0,V1,..`), tiles (`X,Y`), L1 inputs
//! (`ADDR=VALUE`, `ADDR=@FILE`) and 32-bit numbers (decimal or 0x hex). Each error names
//! the value and what was expected ([`Error::Argument`]).

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::kernels;
use crate::session::L1Input;
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};

/// `--kernel RISC=ELF` (or `RISC=CRATE_DIR:BINARY`, `RISC=FILE.cpp`): one entry per RISC
/// (`trisc`: three).
pub(crate) fn parse_kernel_arg(s: &str) -> Result<Vec<(Risc, String)>> {
    let (risc, path) = s.split_once('=').ok_or_else(|| Error::Argument {
        what: format!(
            "--kernel {s:?}: expected RISC=ELF or RISC=CRATE_DIR:BINARY, e.g. brisc=target/reader"
        ),
    })?;
    Ok(parse_riscs(risc)?
        .into_iter()
        .map(|r| (r, path.to_string()))
        .collect())
}

/// Runtime arguments of one RISC: on every tile of the op, or on one tile (logical `X,Y`,
/// tt-metal's `SetRuntimeArgs` for one core).
pub(crate) type ArgSpec = (Risc, Option<String>, Vec<u32>);

/// `--arg RISC=V0,V1,..` or `--arg RISC@X,Y=V0,V1,..` (that tile's arguments).
pub(crate) fn parse_arg_arg(s: &str) -> Result<Vec<ArgSpec>> {
    let (target, words) = s.split_once('=').ok_or_else(|| Error::Argument {
        what: format!(
            "--arg {s:?}: expected RISC=V0,V1,.. or RISC@X,Y=V0,V1,.. e.g. brisc=4,0x30000"
        ),
    })?;
    let words = parse_words(s, words)?;
    parse_arg_target(target, words)
}

/// The `RISC` or `RISC@X,Y` of runtime arguments (an `--arg`, a manifest's `args` key).
pub(crate) fn parse_arg_target(target: &str, words: Vec<u32>) -> Result<Vec<ArgSpec>> {
    let (risc, tile) = match target.split_once('@') {
        Some((r, t)) => (r, Some(t.trim().to_string())),
        None => (target, None),
    };
    Ok(parse_riscs(risc)?
        .into_iter()
        .map(|r| (r, tile.clone(), words.clone()))
        .collect())
}

/// A RISC, or `trisc`: the three TRISCs, as tt-metal runs a compute kernel (unpack, math,
/// pack: one build per TRISC, with that TRISC's defines).
pub(crate) fn parse_riscs(s: &str) -> Result<Vec<Risc>> {
    if s.trim().eq_ignore_ascii_case("trisc") {
        return Ok(vec![Risc::Trisc0, Risc::Trisc1, Risc::Trisc2]);
    }
    parse_risc(s).map(|r| vec![r]).map_err(|_| Error::Argument {
        what: format!(
            "unknown RISC {s:?}: use brisc, ncrisc, trisc0, trisc1, trisc2 or trisc (all three)"
        ),
    })
}

/// Comma-separated 32-bit words (decimal or 0x hex); `what` names them in the error.
pub(crate) fn parse_words(what: &str, words: &str) -> Result<Vec<u32>> {
    if words.trim().is_empty() {
        return Ok(Vec::new());
    }
    words
        .split(',')
        .map(|w| {
            parse_u32(w).ok_or_else(|| Error::Argument {
                what: format!("runtime arguments {what:?}: {w:?} {}", u32_problem(w)),
            })
        })
        .collect()
}

/// A RISC by name (`brisc`, `ncrisc`, `trisc0`..`trisc2`, any case).
pub fn parse_risc(s: &str) -> Result<Risc> {
    let lower = s.trim().to_ascii_lowercase();
    Risc::ALL
        .into_iter()
        .find(|r| r.ident() == lower || r.name().eq_ignore_ascii_case(&lower))
        .ok_or_else(|| Error::Argument {
            what: format!("unknown RISC {s:?}: use brisc, ncrisc, trisc0, trisc1 or trisc2"),
        })
}

/// Logical `X,Y` of the grid to its NoC0 coordinate.
pub(crate) fn parse_tile(s: &str, arch: Arch, grid: (u8, u8)) -> Result<NocCoord> {
    let bad = || Error::Argument {
        what: format!(
            "tile {s:?}: expected logical worker coordinates X,Y inside the {}x{} grid",
            grid.0, grid.1
        ),
    };
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    let (x, y) = (
        x.trim().parse::<u8>().map_err(|_| bad())?,
        y.trim().parse::<u8>().map_err(|_| bad())?,
    );
    if x >= grid.0 || y >= grid.1 {
        return Err(bad());
    }
    arch.worker_noc(x, y).ok_or_else(bad)
}

/// `--l1 ADDR=VALUE` or `--l1 ADDR=@FILE` (the file noted in `inputs`).
pub(crate) fn parse_l1(s: &str, inputs: &Inputs) -> Result<L1Input> {
    let bad = |why: &str| Error::Argument {
        what: format!("--l1 {s:?}: {why} (expected ADDR=VALUE or ADDR=@FILE)"),
    };
    let (addr, value) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
    let addr = parse_u32(addr)
        .ok_or_else(|| bad(&format!("the address {addr:?} {}", u32_problem(addr))))?;
    match value.strip_prefix('@') {
        Some(file) => L1Input::file(addr, Path::new(file), inputs),
        None => Ok(L1Input::word(
            addr,
            parse_u32(value)
                .ok_or_else(|| bad(&format!("the value {value:?} {}", u32_problem(value))))?,
        )),
    }
}

/// A 32-bit number, decimal or `0x` hex, `_` allowed between digits.
pub fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Why `s` is not a [`parse_u32`] number, for messages: a whole number (decimal or 0x hex)
/// too large for 32 bits is out of range, not a typo.
pub fn u32_problem(s: &str) -> &'static str {
    let t = s.trim().replace('_', "");
    let digits = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()),
    };
    if digits {
        "is out of range (at most 0xffffffff, 32 bits)"
    } else {
        "is not a number (decimal or 0x hex)"
    }
}

/// `CRATE_DIR:BINARY` when the part before the last `:` is a directory with a Cargo.toml.
pub(crate) fn split_crate(spec: &str) -> Option<(&str, &str)> {
    let (dir, bin) = spec.rsplit_once(':')?;
    (!bin.is_empty() && Path::new(dir).join("Cargo.toml").is_file()).then_some((dir, bin))
}

/// The C/C++ sources of a `--kernel` value (`FILE.cpp` or `a.cpp,b.c`), if it names some.
pub(crate) fn c_sources(spec: &str) -> Option<Vec<PathBuf>> {
    let files: Vec<PathBuf> = spec.split(',').map(PathBuf::from).collect();
    files
        .iter()
        .all(|f| kernels::c_source_kind(f).is_some())
        .then_some(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::parse_grid;

    /// Every choice an error offers is one the same parser takes (issue 40: `build --core
    /// trisc` was refused by a message that offered `trisc`).
    #[test]
    fn a_refused_risc_is_offered_only_choices_that_parse() {
        fn offered(msg: &str) -> Vec<String> {
            let list = msg.split("use ").nth(1).expect("a list of choices");
            list.split([',', ' '])
                .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
                .filter(|w| w.contains("risc"))
                .map(str::to_string)
                .collect()
        }
        let one = parse_risc("foo").unwrap_err().to_string();
        assert_eq!(offered(&one).len(), 5, "{one}");
        for c in offered(&one) {
            assert!(parse_risc(&c).is_ok(), "{one} offers {c}");
        }
        let many = parse_riscs("foo").unwrap_err().to_string();
        assert_eq!(offered(&many).len(), 6, "{many}");
        for c in offered(&many) {
            assert!(parse_riscs(&c).is_ok(), "{many} offers {c}");
        }
    }

    #[test]
    fn arguments_parse_and_bad_ones_say_what_was_expected() {
        assert_eq!(parse_risc("TRISC1").unwrap(), Risc::Trisc1);
        assert_eq!(parse_risc("ncrisc").unwrap(), Risc::Ncrisc);
        assert!(parse_risc("trisc3")
            .unwrap_err()
            .to_string()
            .contains("use brisc"));
        assert_eq!(
            parse_l1("0x100=7", &Inputs::none()).unwrap(),
            L1Input::word(0x100, 7)
        );
        assert!(parse_l1("0x100", &Inputs::none())
            .unwrap_err()
            .to_string()
            .contains("ADDR=VALUE"));
        assert!(parse_l1("abc=1", &Inputs::none())
            .unwrap_err()
            .to_string()
            .contains("address \"abc\" is not a number"));
        assert_eq!(
            parse_tile("1,0", Arch::WormholeB0, (2, 2)).unwrap(),
            Arch::WormholeB0.worker_noc(1, 0).unwrap()
        );
        assert!(parse_tile("2,0", Arch::WormholeB0, (2, 2)).is_err());
        assert_eq!(parse_grid("4x2").unwrap(), (4, 2));
        assert!(parse_kernel_arg("brisc")
            .unwrap_err()
            .to_string()
            .contains("RISC=ELF"));
        assert_eq!(
            parse_arg_arg("ncrisc=4,0x10, 7").unwrap(),
            [(Risc::Ncrisc, None, vec![4, 16, 7])]
        );
        assert_eq!(
            parse_arg_arg("brisc=").unwrap(),
            [(Risc::Brisc, None, vec![])]
        );
        assert_eq!(
            parse_arg_arg("trisc=3").unwrap(),
            [Risc::Trisc0, Risc::Trisc1, Risc::Trisc2].map(|r| (r, None, vec![3]))
        );
        assert_eq!(
            parse_arg_arg("brisc@1,0=5").unwrap(),
            [(Risc::Brisc, Some("1,0".to_string()), vec![5])]
        );
        assert_eq!(parse_kernel_arg("TRISC=c.cpp").unwrap().len(), 3);
        assert!(parse_arg_arg("brisc=4,x")
            .unwrap_err()
            .to_string()
            .contains("\"x\" is not a number"));
        assert!(parse_arg_arg("4,5")
            .unwrap_err()
            .to_string()
            .contains("RISC=V0,V1"));
        assert_eq!(
            c_sources("a.cpp,b.c"),
            Some(vec![PathBuf::from("a.cpp"), PathBuf::from("b.c")])
        );
        assert_eq!(c_sources("target/reader"), None);
        assert_eq!(parse_u32("0x1_0"), Some(16));
        assert_eq!(parse_u32("12"), Some(12));
        assert_eq!(parse_u32("0x1_0000_0000"), None);
        // Out of range is said so (before: "is not a number"); a typo is not a number.
        for big in [
            "0x1_0000_0000",
            "4294967296",
            "99999999999999999999999999999999999999999",
        ] {
            assert_eq!(
                u32_problem(big),
                "is out of range (at most 0xffffffff, 32 bits)"
            );
        }
        for typo in ["0x", "12a", "-1", "", "0xg"] {
            assert_eq!(u32_problem(typo), "is not a number (decimal or 0x hex)");
        }
        let e = parse_l1("0x1_0000_0000=1", &Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the address \"0x1_0000_0000\" is out of range"),
            "{e}"
        );
        let e = parse_words("brisc", "1,4294967296")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"4294967296\" is out of range"), "{e}");
    }
}

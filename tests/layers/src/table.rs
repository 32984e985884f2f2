//! The layer table of one crate, read from a text file (`tests/layers/<crate>.txt`).
//!
//! ```text
//! # a comment (whole lines only)
//! src emulator/src            the crate's source directory, from the workspace root
//! crate ttprof_emu            the library's name, as src/bin/ files import it
//! layer 3 isa                 a layer: its number (1 = lowest) and name
//!     isa                     a module prefix in that layer: `isa` and `isa::*`
//!     chip::memory unit chip  ... with the unit its cycles are looked for in (default: the prefix)
//!     debug only              the module `debug` alone (its mod.rs), not `debug::*`
//! knot tensix REASON          units `tensix` and `tensix::*` may import each other in cycles
//! up isa::exec -> chip::memory REASON
//!                             an import that goes up, allowed (prefixes: `isa -> chip` is all)
//! cycle chip isa noc : REASON these units may form a cycle (exactly these)
//! ```
//!
//! The crate root (`src/lib.rs`) is the module `crate`; `src/bin/name.rs` is `bin::name`.

use std::fmt;

#[derive(Clone, Debug)]
pub(crate) struct Layer {
    pub(crate) number: u32,
    pub(crate) name: String,
}

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Module path prefix (`crate` for the root).
    pub(crate) prefix: String,
    /// Index into `Table::layers`.
    pub(crate) layer: usize,
    pub(crate) unit: String,
    /// `PREFIX only`: the module itself, not the modules inside it.
    pub(crate) only: bool,
    pub(crate) line: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct Up {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) reason: String,
    pub(crate) line: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct Cycle {
    /// Sorted unit names.
    pub(crate) units: Vec<String>,
    pub(crate) reason: String,
    pub(crate) line: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct Knot {
    pub(crate) prefix: String,
    pub(crate) reason: String,
    pub(crate) line: usize,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub(crate) src: String,
    pub(crate) lib_name: String,
    pub(crate) layers: Vec<Layer>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) ups: Vec<Up>,
    pub(crate) cycles: Vec<Cycle>,
    pub(crate) knots: Vec<Knot>,
}

/// A line of the table that does not parse.
#[derive(Debug)]
pub(crate) struct TableError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// `a` is `b` or inside it (`chip::memory` is in `chip`); `crate` holds only the root.
pub(crate) fn within(module: &str, prefix: &str) -> bool {
    module == prefix || (module.starts_with(prefix) && module[prefix.len()..].starts_with("::"))
}

fn is_module_path(s: &str) -> bool {
    !s.is_empty()
        && s.split("::").all(|seg| {
            !seg.is_empty()
                && seg
                    .chars()
                    .all(|c| c == '_' || c == '-' || c.is_alphanumeric())
        })
}

pub(crate) fn parse(text: &str) -> Result<Table, TableError> {
    let mut t = Table::default();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let err = |message: String| TableError { line, message };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let rest_after = |n: usize| -> String {
            // the text after the first n words, as written
            let mut s = trimmed;
            for _ in 0..n {
                s = s.trim_start();
                s = &s[s.find(char::is_whitespace).unwrap_or(s.len())..];
            }
            s.trim().to_string()
        };
        let indented = raw.starts_with(char::is_whitespace);
        if indented {
            let Some(layer) = t.layers.len().checked_sub(1) else {
                return Err(err("a module prefix before any `layer` line".into()));
            };
            let prefix = words[0];
            if !is_module_path(prefix) {
                return Err(err(format!("`{prefix}` is not a module path")));
            }
            let only = words.get(1) == Some(&"only");
            let unit = match &words[1 + only as usize..] {
                [] => prefix.to_string(),
                ["unit", unit] if is_module_path(unit) => unit.to_string(),
                _ => return Err(err("expected `PREFIX [only] [unit UNIT]`".into())),
            };
            if let Some(e) = t.entries.iter().find(|e| e.prefix == prefix) {
                return Err(err(format!("`{prefix}` is already on line {}", e.line)));
            }
            t.entries.push(Entry {
                prefix: prefix.into(),
                layer,
                unit,
                only,
                line,
            });
            continue;
        }
        match words[0] {
            "src" if words.len() == 2 => t.src = words[1].into(),
            "crate" if words.len() == 2 => t.lib_name = words[1].into(),
            "layer" if words.len() == 3 => {
                let number: u32 = words[1]
                    .parse()
                    .map_err(|_| err(format!("`{}` is not a layer number", words[1])))?;
                if let Some(last) = t.layers.last() {
                    if number < last.number {
                        return Err(err("layers are listed lowest first".into()));
                    }
                }
                t.layers.push(Layer {
                    number,
                    name: words[2].into(),
                });
            }
            "knot" if words.len() >= 3 => t.knots.push(Knot {
                prefix: words[1].into(),
                reason: rest_after(2),
                line,
            }),
            "up" if words.len() >= 5 && words[2] == "->" => {
                if !is_module_path(words[1]) || !is_module_path(words[3]) {
                    return Err(err(
                        "expected `up FROM -> TO REASON` with module paths".into()
                    ));
                }
                t.ups.push(Up {
                    from: words[1].into(),
                    to: words[3].into(),
                    reason: rest_after(4),
                    line,
                });
            }
            "cycle" => {
                let Some(colon) = words.iter().position(|w| *w == ":") else {
                    return Err(err("expected `cycle UNIT UNIT... : REASON`".into()));
                };
                let mut units: Vec<String> =
                    words[1..colon].iter().map(|s| s.to_string()).collect();
                units.sort();
                units.dedup();
                if units.len() < 2 || colon + 1 == words.len() {
                    return Err(err(
                        "expected `cycle UNIT UNIT... : REASON` (two units or more)".into(),
                    ));
                }
                t.cycles.push(Cycle {
                    units,
                    reason: rest_after(colon + 1),
                    line,
                });
            }
            _ => {
                return Err(err(format!(
                    "cannot read `{trimmed}` (lines: src, crate, layer, an indented module \
                     prefix, knot, up, cycle; see tests/layers/src/table.rs)"
                )))
            }
        }
    }
    if t.src.is_empty() {
        return Err(TableError {
            line: 0,
            message: "no `src DIR` line".into(),
        });
    }
    Ok(t)
}

impl Table {
    /// The entry of `module`: the longest prefix that holds it.
    pub(crate) fn entry(&self, module: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .filter(|e| {
                if e.only {
                    module == e.prefix
                } else {
                    within(module, &e.prefix)
                }
            })
            .max_by_key(|e| e.prefix.len())
    }

    /// The unit of `module` for cycles, after the knots.
    pub(crate) fn unit(&self, module: &str) -> Option<String> {
        let unit = self.entry(module)?.unit.clone();
        Some(self.knot_of(&unit).unwrap_or(unit))
    }

    /// The layer number of `module` (0 if it has none).
    pub(crate) fn layer_number(&self, module: &str) -> u32 {
        self.entry(module)
            .map_or(0, |e| self.layers[e.layer].number)
    }

    pub(crate) fn knot_of(&self, unit: &str) -> Option<String> {
        self.knots
            .iter()
            .find(|k| within(unit, &k.prefix))
            .map(|k| k.prefix.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_table() {
        let t = parse(
            "# comment\nsrc emulator/src\ncrate ttprof_emu\nlayer 1 base\n    error\n    \
             time::clock unit time\n    time only\nlayer 3 isa\n    isa\nknot tensix the coprocessor\n\
             up isa::exec -> chip::memory today: to be removed\ncycle isa chip : today: x y\n",
        )
        .unwrap();
        assert_eq!(t.src, "emulator/src");
        assert_eq!(t.entries.len(), 4);
        assert_eq!(t.entry("time").unwrap().prefix, "time");
        assert!(t.entry("time::x").is_none());
        assert_eq!(t.entry("time::clock::x").unwrap().unit, "time");
        assert_eq!(t.entry("isa::exec").unwrap().layer, 1);
        assert!(t.entry("isax").is_none());
        assert_eq!(t.ups[0].reason, "today: to be removed");
        assert_eq!(t.cycles[0].units, vec!["chip", "isa"]);
        assert_eq!(t.cycles[0].reason, "today: x y");
        assert_eq!(t.unit("tensix::sfpu"), None);
        assert!(parse("src x\n    isa\n").is_err());
        assert!(parse("src x\nlayer 2 a\nlayer 1 b\n").is_err());
        assert!(parse("src x\nup a b c\n").is_err());
    }
}

//! Zone sites: what a site id on the wire means.
//!
//! Every zone, event, data and sum site of a kernel is a one-byte symbol in the ELF section
//! `.ttprof_sites`; its address is the site id and its name is JSON metadata written by
//! `ttprof-rt-macros`:
//!
//! `{"v":1,"k":"zone","n":"read-tile","f":"src/bin/reader.rs","l":42,"c":13,"p":"kernels","u":3}`
//!
//! [`SiteTable`] maps ids to parsed [`SiteMeta`]. It is built from an ELF
//! ([`crate::elf::KernelElf`]) or, for the host simulator, from `ttprof_rt::sim::Sim::sites`.

use serde::Deserialize;
use std::fmt;

/// What kind of primitive a site records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    /// A zone: a start and an end.
    Zone,
    /// A zone that also records a 32-bit value.
    ValueZone,
    /// A point event.
    Event,
    /// A timestamped 64-bit payload.
    Data,
    /// A sum zone: many measurements shipped as one total and count.
    Sum,
}

impl SiteKind {
    /// The spelling in site metadata (`"k"`).
    pub const fn name(self) -> &'static str {
        match self {
            SiteKind::Zone => "zone",
            SiteKind::ValueZone => "value_zone",
            SiteKind::Event => "event",
            SiteKind::Data => "data",
            SiteKind::Sum => "sum",
        }
    }

    /// The kind spelled `s` in site metadata (`"k"`), or `None` for an unknown spelling.
    pub fn from_name(s: &str) -> Option<SiteKind> {
        [SiteKind::Zone, SiteKind::ValueZone, SiteKind::Event, SiteKind::Data, SiteKind::Sum]
            .into_iter()
            .find(|k| k.name() == s)
    }
}

impl fmt::Display for SiteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One site's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteMeta {
    /// What the site records.
    pub kind: SiteKind,
    /// The site's name as written in the kernel (never empty in parsed metadata).
    pub name: String,
    /// Source file as the compiler saw it (usually relative to the kernel crate).
    pub file: String,
    /// 1-based source line.
    pub line: u32,
    /// 1-based source column.
    pub column: u32,
    /// Cargo package that contains the site.
    pub package: String,
}

/// The version of the metadata format this build reads.
pub const META_VERSION: u32 = 1;

#[derive(Deserialize)]
struct RawMeta {
    v: u32,
    k: String,
    n: String,
    f: String,
    l: u32,
    c: u32,
    #[serde(default)]
    p: String,
}

impl SiteMeta {
    /// Parses a site's metadata JSON; the error says what was expected.
    pub fn parse(json: &str) -> Result<SiteMeta, String> {
        let raw: RawMeta = serde_json::from_str(json).map_err(|e| {
            format!("metadata is not the expected JSON {{\"v\":1,\"k\":..,\"n\":..,\"f\":..,\"l\":..,\"c\":..,\"p\":..}}: {e}")
        })?;
        if raw.v != META_VERSION {
            return Err(format!("metadata version {}, this build reads version {META_VERSION}", raw.v));
        }
        let kind = SiteKind::from_name(&raw.k)
            .ok_or_else(|| format!("unknown site kind {:?}, expected zone, value_zone, event, data or sum", raw.k))?;
        if raw.n.is_empty() {
            return Err("empty site name".into());
        }
        Ok(SiteMeta { kind, name: raw.n, file: raw.f, line: raw.l, column: raw.c, package: raw.p })
    }
}

/// Site id -> metadata for one kernel image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteTable {
    by_id: Vec<Option<SiteMeta>>,
}

impl SiteTable {
    /// Adds a site; an id already present is an error.
    pub fn insert(&mut self, id: u16, meta: SiteMeta) -> Result<(), String> {
        let i = id as usize;
        if self.by_id.len() <= i {
            self.by_id.resize(i + 1, None);
        }
        if let Some(old) = &self.by_id[i] {
            return Err(format!("two sites share id {id}: {:?} and {:?}", old.name, meta.name));
        }
        self.by_id[i] = Some(meta);
        Ok(())
    }

    /// Builds a table whose id `i` is `metas[i]` (the simulator's numbering).
    pub fn from_json_list<S: AsRef<str>>(metas: &[S]) -> Result<SiteTable, String> {
        let mut t = SiteTable::default();
        for (i, m) in metas.iter().enumerate() {
            let id = u16::try_from(i).map_err(|_| format!("more than {} sites", u16::MAX as u32 + 1))?;
            let meta = SiteMeta::parse(m.as_ref()).map_err(|e| format!("site {id}: {e}"))?;
            t.insert(id, meta)?;
        }
        Ok(t)
    }

    /// The metadata of site `id`, or `None` when the kernel defines no such site.
    #[inline]
    pub fn get(&self, id: u16) -> Option<&SiteMeta> {
        self.by_id.get(id as usize).and_then(|m| m.as_ref())
    }

    /// Number of sites.
    pub fn len(&self) -> usize {
        self.by_id.iter().filter(|m| m.is_some()).count()
    }

    /// Whether the table has no site.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every site with its id.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &SiteMeta)> {
        self.by_id.iter().enumerate().filter_map(|(i, m)| Some((i as u16, m.as_ref()?)))
    }

    /// The id of the first site with this name.
    pub fn find(&self, name: &str) -> Option<u16> {
        self.iter().find(|(_, m)| m.name == name).map(|(id, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_parses_and_bad_metadata_says_what_is_wrong() {
        let m = SiteMeta::parse(r#"{"v":1,"k":"value_zone","n":"a \"b\"","f":"src/x.rs","l":4,"c":9,"p":"k","u":2}"#).unwrap();
        assert_eq!((m.kind, m.name.as_str(), m.line, m.column), (SiteKind::ValueZone, "a \"b\"", 4, 9));
        assert!(SiteMeta::parse(r#"{"v":2,"k":"zone","n":"a","f":"","l":1,"c":1}"#).unwrap_err().contains("version 2"));
        assert!(SiteMeta::parse(r#"{"v":1,"k":"loop","n":"a","f":"","l":1,"c":1}"#).unwrap_err().contains("unknown site kind"));
        assert!(SiteMeta::parse("read-tile").unwrap_err().contains("expected JSON"));
        assert!(SiteMeta::parse(r#"{"v":1,"k":"zone","n":"a","f":""}"#).unwrap_err().contains("missing field"));
    }

    #[test]
    fn tables_reject_duplicate_ids() {
        let z = |n: &str| format!(r#"{{"v":1,"k":"zone","n":"{n}","f":"f.rs","l":1,"c":1,"p":"p"}}"#);
        let mut t = SiteTable::from_json_list(&[z("a"), z("b")]).unwrap();
        assert_eq!(t.get(1).unwrap().name, "b");
        assert_eq!(t.find("a"), Some(0));
        assert!(t.get(2).is_none());
        assert!(t.insert(1, SiteMeta::parse(&z("c")).unwrap()).unwrap_err().contains("share id 1"));
    }
}

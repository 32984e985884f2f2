//! Zone sites: what a site id on the wire means.
//!
//! Every zone, event, data and sum site of a kernel is a one-byte symbol in the ELF section
//! `.ttprof_sites`; its address is the site id and its name is JSON metadata written by
//! `ttprof-rt-macros`:
//!
//! `{"v":1,"k":"zone","n":"read-tile","f":"src/bin/reader.rs","l":42,"c":13,"p":"kernels","u":3}`
//!
//! A typed wait (`wait!`, `sum_wait!`) adds `"w"`, the resource it waits on ([`Wait`]):
//! `"cb_front:16"`, `"cb_back:0"`, `"noc_read"`, `"noc_write"`, `"noc_atomic"`,
//! `"semaphore:3"`, `"sync:7"`. Metadata without it is an ordinary zone. A signal
//! (`signal!`) is an event with `"s"`, the resource it releases ([`Signal`]): `"cb_push:16"`,
//! `"cb_pop:0"`, `"sem_inc:3"`, `"sem_set:3"`, `"noc_read_done"`, `"noc_write_done"`,
//! `"noc_atomic_done"`, `"sync:7"`. A counted zone (`counted_zone!`) is a value zone whose
//! kind names the performance counter bank its value counts: `"counted_fpu"`,
//! `"counted_instrn"`, `"counted_unpack"`, `"counted_pack"`, `"counted_l1"`
//! ([`SiteMeta::counter`]).
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
        [
            SiteKind::Zone,
            SiteKind::ValueZone,
            SiteKind::Event,
            SiteKind::Data,
            SiteKind::Sum,
        ]
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
    /// The resource the zone waits on, for a typed wait.
    pub wait: Option<Wait>,
    /// The resource the event releases, for a signal.
    pub signal: Option<Signal>,
    /// For a counted zone (`counted_zone!`, kind `counted_<bank>` in the metadata, a value
    /// zone on the wire): the performance counter bank whose value change it carries, one
    /// of [`COUNTED_BANKS`].
    pub counter: Option<&'static str>,
}

pub use crate::oplog::{COUNTED_BANKS, COUNTED_BANK_NAMES};

/// What a typed wait waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "resource", content = "index", rename_all = "snake_case")]
pub enum Wait {
    /// A consumer waiting for data at circular buffer N's front (`cb_wait_front`).
    CbFront(u32),
    /// A producer waiting for space at circular buffer N's back (`cb_reserve_back`).
    CbBack(u32),
    /// A NoC read barrier.
    NocRead,
    /// A NoC write barrier.
    NocWrite,
    /// A NoC atomic barrier.
    NocAtomic,
    /// Semaphore N.
    Semaphore(u32),
    /// tt-metal's `SYNC_WAIT(name, N)`: whatever key N names, released by `SYNC_SIGNAL(.., N)`.
    Sync(u32),
    /// The tile's Tensix semaphore N (a TRISC reading it until it is not zero): released by
    /// the coprocessor executing a `SEMPOST`, which no kernel can timestamp.
    TensixSem(u32),
    /// A TRISC's TTSync read (`CoprocessorDoneCheck`): its Tensix thread finishing.
    #[serde(rename = "ttsync")]
    TtSync,
}

/// What a signal releases (`signal!`): the other side of a [`Wait`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "resource", content = "index", rename_all = "snake_case")]
pub enum Signal {
    /// A producer published data into circular buffer N (`cb_push_back`).
    CbPush(u32),
    /// A consumer freed space in circular buffer N (`cb_pop_front`).
    CbPop(u32),
    /// Semaphore N incremented (locally or over the NoC).
    SemInc(u32),
    /// Semaphore N set (locally or over the NoC).
    SemSet(u32),
    /// The NoC reads this core issued completed.
    NocReadDone,
    /// The NoC writes this core issued were acknowledged.
    NocWriteDone,
    /// The NoC atomics this core issued completed.
    NocAtomicDone,
    /// tt-metal's `SYNC_SIGNAL(name, N)`.
    Sync(u32),
    /// A TRISC pushed `SEMPOST` of Tensix semaphore N to its Tensix thread (recorded at
    /// the push: the coprocessor executes it when the thread reaches it).
    TensixSemPost(u32),
}

/// `"name:N"` -> (name, Some(N)), `"name"` -> (name, None).
fn split_index(s: &str, what: &str) -> Result<(String, Option<u32>), String> {
    match s.split_once(':') {
        Some((w, i)) => Ok((
            w.to_string(),
            Some(
                i.parse::<u32>()
                    .map_err(|_| format!("{what} {s:?}: the index is not a number"))?,
            ),
        )),
        None => Ok((s.to_string(), None)),
    }
}

impl Signal {
    /// Parses metadata's `s` (`"cb_push:16"`, `"noc_read_done"`, ...).
    pub fn parse(s: &str) -> Result<Signal, String> {
        let (what, index) = split_index(s, "signal")?;
        match (what.as_str(), index) {
            ("cb_push", Some(i)) => Ok(Signal::CbPush(i)),
            ("cb_pop", Some(i)) => Ok(Signal::CbPop(i)),
            ("sem_inc", Some(i)) => Ok(Signal::SemInc(i)),
            ("sem_set", Some(i)) => Ok(Signal::SemSet(i)),
            ("sync", Some(i)) => Ok(Signal::Sync(i)),
            ("tensix_sem_post", Some(i)) => Ok(Signal::TensixSemPost(i)),
            ("noc_read_done", None) => Ok(Signal::NocReadDone),
            ("noc_write_done", None) => Ok(Signal::NocWriteDone),
            ("noc_atomic_done", None) => Ok(Signal::NocAtomicDone),
            _ => Err(format!(
                "unknown signal {s:?}: expected cb_push:N, cb_pop:N, sem_inc:N, sem_set:N, sync:N, tensix_sem_post:N, noc_read_done, noc_write_done or noc_atomic_done"
            )),
        }
    }

    /// Whether this signal ends waits on `w`.
    pub fn releases(self, w: Wait) -> bool {
        matches!(
            (self, w),
            (Signal::CbPush(a), Wait::CbFront(b))
                | (Signal::CbPop(a), Wait::CbBack(b))
                | (Signal::SemInc(a) | Signal::SemSet(a), Wait::Semaphore(b))
                | (Signal::Sync(a), Wait::Sync(b))
                | (Signal::TensixSemPost(a), Wait::TensixSem(b))
                if a == b
        ) || matches!(
            (self, w),
            (Signal::NocReadDone, Wait::NocRead)
                | (Signal::NocWriteDone, Wait::NocWrite)
                | (Signal::NocAtomicDone, Wait::NocAtomic)
        )
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signal::CbPush(i) => write!(f, "CB {i} push (data ready)"),
            Signal::CbPop(i) => write!(f, "CB {i} pop (space freed)"),
            Signal::SemInc(i) => write!(f, "semaphore {i} increment"),
            Signal::SemSet(i) => write!(f, "semaphore {i} set"),
            Signal::NocReadDone => f.write_str("NoC reads done"),
            Signal::NocWriteDone => f.write_str("NoC writes acknowledged"),
            Signal::NocAtomicDone => f.write_str("NoC atomics done"),
            Signal::Sync(i) => write!(f, "sync {i} signal"),
            Signal::TensixSemPost(i) => write!(f, "Tensix semaphore {i} post"),
        }
    }
}

impl Wait {
    /// Parses metadata's `w` (`"cb_front:16"`, `"noc_read"`, ...).
    pub fn parse(s: &str) -> Result<Wait, String> {
        let (what, index) = split_index(s, "wait")?;
        match (what.as_str(), index) {
            ("sync", Some(i)) => Ok(Wait::Sync(i)),
            ("cb_front", Some(i)) => Ok(Wait::CbFront(i)),
            ("cb_back", Some(i)) => Ok(Wait::CbBack(i)),
            ("semaphore", Some(i)) => Ok(Wait::Semaphore(i)),
            ("noc_read", None) => Ok(Wait::NocRead),
            ("noc_write", None) => Ok(Wait::NocWrite),
            ("noc_atomic", None) => Ok(Wait::NocAtomic),
            ("tensix_sem", Some(i)) => Ok(Wait::TensixSem(i)),
            ("ttsync", None) => Ok(Wait::TtSync),
            _ => Err(format!(
                "unknown wait {s:?}: expected cb_front:N, cb_back:N, semaphore:N, sync:N, noc_read, noc_write, noc_atomic, \
                 tensix_sem:N or ttsync"
            )),
        }
    }

    /// Whether it waits on another core of the tile through a circular buffer (else on the
    /// NoC or a semaphore: work in flight outside the core).
    pub(crate) fn is_cb(self) -> bool {
        matches!(self, Wait::CbFront(_) | Wait::CbBack(_))
    }

    /// Whether the Tensix coprocessor releases it: a Tensix semaphore (its post is recorded
    /// when a TRISC pushes it, [`Signal::TensixSemPost`]) or TTSync (no signal).
    pub(crate) fn is_coprocessor(self) -> bool {
        matches!(self, Wait::TensixSem(_) | Wait::TtSync)
    }
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wait::CbFront(i) => write!(f, "CB {i} front (data)"),
            Wait::CbBack(i) => write!(f, "CB {i} back (space)"),
            Wait::NocRead => f.write_str("NoC read barrier"),
            Wait::NocWrite => f.write_str("NoC write barrier"),
            Wait::NocAtomic => f.write_str("NoC atomic barrier"),
            Wait::Semaphore(i) => write!(f, "semaphore {i}"),
            Wait::Sync(i) => write!(f, "sync {i}"),
            Wait::TensixSem(i) => write!(f, "Tensix semaphore {i}"),
            Wait::TtSync => f.write_str("TTSync (its Tensix thread done)"),
        }
    }
}

/// The version of the metadata format this build reads.
pub(crate) const META_VERSION: u32 = 1;

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
    #[serde(default)]
    w: Option<String>,
    #[serde(default)]
    s: Option<String>,
}

impl SiteMeta {
    /// Parses a site's metadata JSON; the error says what was expected.
    pub fn parse(json: &str) -> Result<SiteMeta, String> {
        let raw: RawMeta = serde_json::from_str(json).map_err(|e| {
            format!("metadata is not the expected JSON {{\"v\":1,\"k\":..,\"n\":..,\"f\":..,\"l\":..,\"c\":..,\"p\":..}}: {e}")
        })?;
        if raw.v != META_VERSION {
            return Err(format!(
                "metadata version {}, this build reads version {META_VERSION}",
                raw.v
            ));
        }
        // A counted zone is a value zone on the wire, its value a counter's change.
        let counter = raw
            .k
            .strip_prefix("counted_")
            .and_then(|b| COUNTED_BANKS.iter().find(|&&c| c == b).copied());
        let kind = if counter.is_some() {
            Some(SiteKind::ValueZone)
        } else {
            SiteKind::from_name(&raw.k)
        };
        let kind = kind.ok_or_else(|| {
            format!(
                "unknown site kind {:?}, expected zone, value_zone, counted_<bank>, event, data or sum",
                raw.k
            )
        })?;
        if raw.n.is_empty() {
            return Err("empty site name".into());
        }
        let wait = raw.w.as_deref().map(Wait::parse).transpose()?;
        if wait.is_some() && !matches!(kind, SiteKind::Zone | SiteKind::Sum) {
            return Err(format!(
                "a {kind} site cannot be a wait (only a zone or a sum zone)"
            ));
        }
        let signal = raw.s.as_deref().map(Signal::parse).transpose()?;
        if signal.is_some() && kind != SiteKind::Event {
            return Err(format!("a {kind} site cannot be a signal (only an event)"));
        }
        Ok(SiteMeta {
            kind,
            name: raw.n,
            file: raw.f,
            line: raw.l,
            column: raw.c,
            package: raw.p,
            wait,
            signal,
            counter,
        })
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
            return Err(format!(
                "two sites share id {id}: {:?} and {:?}",
                old.name, meta.name
            ));
        }
        self.by_id[i] = Some(meta);
        Ok(())
    }

    /// Builds a table whose id `i` is `metas[i]` (the simulator's numbering).
    pub fn from_json_list<S: AsRef<str>>(metas: &[S]) -> Result<SiteTable, String> {
        let mut t = SiteTable::default();
        for (i, m) in metas.iter().enumerate() {
            let id =
                u16::try_from(i).map_err(|_| format!("more than {} sites", u16::MAX as u32 + 1))?;
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

    /// The metadata of site `id` to change (the ELF loader locating library sites).
    pub(crate) fn get_mut(&mut self, id: u16) -> Option<&mut SiteMeta> {
        self.by_id.get_mut(id as usize).and_then(|m| m.as_mut())
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
        self.by_id
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((i as u16, m.as_ref()?)))
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
        let m = SiteMeta::parse(
            r#"{"v":1,"k":"value_zone","n":"a \"b\"","f":"src/x.rs","l":4,"c":9,"p":"k","u":2}"#,
        )
        .unwrap();
        assert_eq!(
            (m.kind, m.name.as_str(), m.line, m.column),
            (SiteKind::ValueZone, "a \"b\"", 4, 9)
        );
        assert!(
            SiteMeta::parse(r#"{"v":2,"k":"zone","n":"a","f":"","l":1,"c":1}"#)
                .unwrap_err()
                .contains("version 2")
        );
        assert!(
            SiteMeta::parse(r#"{"v":1,"k":"loop","n":"a","f":"","l":1,"c":1}"#)
                .unwrap_err()
                .contains("unknown site kind")
        );
        assert!(SiteMeta::parse("read-tile")
            .unwrap_err()
            .contains("expected JSON"));
        assert!(SiteMeta::parse(r#"{"v":1,"k":"zone","n":"a","f":""}"#)
            .unwrap_err()
            .contains("missing field"));
    }

    #[test]
    fn a_counted_zone_is_a_value_zone_with_its_bank() {
        let m = SiteMeta::parse(
            r#"{"v":1,"k":"counted_unpack","n":"u","f":"k.cpp","l":3,"c":0,"p":"","u":"1:k.cpp"}"#,
        )
        .unwrap();
        assert_eq!((m.kind, m.counter), (SiteKind::ValueZone, Some("unpack")));
        let e = SiteMeta::parse(r#"{"v":1,"k":"counted_gpu","n":"u","f":"k","l":3,"c":0,"p":""}"#)
            .unwrap_err();
        assert!(e.contains("counted_<bank>"), "{e}");
    }

    #[test]
    fn typed_waits_parse_and_bad_ones_say_what_was_expected() {
        let w = |k: &str, w: &str| {
            SiteMeta::parse(&format!(
                r#"{{"v":1,"k":"{k}","n":"a","f":"","l":1,"c":1,"w":"{w}"}}"#
            ))
        };
        assert_eq!(
            w("zone", "cb_front:16").unwrap().wait,
            Some(Wait::CbFront(16))
        );
        assert_eq!(w("sum", "cb_back:0").unwrap().wait, Some(Wait::CbBack(0)));
        assert_eq!(w("zone", "noc_read").unwrap().wait, Some(Wait::NocRead));
        assert_eq!(
            w("zone", "semaphore:3").unwrap().wait,
            Some(Wait::Semaphore(3))
        );
        assert!(w("zone", "cb_front")
            .unwrap_err()
            .contains("unknown wait \"cb_front\""));
        assert!(w("zone", "cb_front:x")
            .unwrap_err()
            .contains("not a number"));
        assert!(w("event", "noc_read")
            .unwrap_err()
            .contains("cannot be a wait"));
        assert_eq!(
            SiteMeta::parse(r#"{"v":1,"k":"zone","n":"a","f":"","l":1,"c":1}"#)
                .unwrap()
                .wait,
            None
        );
        assert_eq!(Wait::CbFront(16).to_string(), "CB 16 front (data)");
        assert_eq!(w("zone", "sync:7").unwrap().wait, Some(Wait::Sync(7)));
    }

    #[test]
    fn signals_parse_and_release_their_waits() {
        let s = |k: &str, s: &str| {
            SiteMeta::parse(&format!(
                r#"{{"v":1,"k":"{k}","n":"a","f":"","l":1,"c":1,"s":"{s}"}}"#
            ))
        };
        assert_eq!(
            s("event", "cb_push:2").unwrap().signal,
            Some(Signal::CbPush(2))
        );
        assert_eq!(
            s("event", "noc_read_done").unwrap().signal,
            Some(Signal::NocReadDone)
        );
        assert!(s("zone", "cb_push:2")
            .unwrap_err()
            .contains("cannot be a signal"));
        assert!(s("event", "cb_push")
            .unwrap_err()
            .contains("unknown signal"));
        assert!(Signal::CbPush(2).releases(Wait::CbFront(2)));
        assert!(!Signal::CbPush(2).releases(Wait::CbFront(3)));
        assert!(!Signal::CbPush(2).releases(Wait::CbBack(2)));
        assert!(Signal::CbPop(0).releases(Wait::CbBack(0)));
        assert!(Signal::SemSet(1).releases(Wait::Semaphore(1)));
        assert!(Signal::SemInc(1).releases(Wait::Semaphore(1)));
        assert!(Signal::NocWriteDone.releases(Wait::NocWrite));
        assert!(!Signal::NocWriteDone.releases(Wait::NocRead));
        assert!(Signal::Sync(7).releases(Wait::Sync(7)));
    }

    #[test]
    fn tables_reject_duplicate_ids() {
        let z =
            |n: &str| format!(r#"{{"v":1,"k":"zone","n":"{n}","f":"f.rs","l":1,"c":1,"p":"p"}}"#);
        let mut t = SiteTable::from_json_list(&[z("a"), z("b")]).unwrap();
        assert_eq!(t.get(1).unwrap().name, "b");
        assert_eq!(t.find("a"), Some(0));
        assert!(t.get(2).is_none());
        assert!(t
            .insert(1, SiteMeta::parse(&z("c")).unwrap())
            .unwrap_err()
            .contains("share id 1"));
    }
}

//! A manifest: several named ops run in sequence (`ttprof run --manifest ops.toml`, TOML or
//! JSON by the file's extension). Its paths are relative to its own directory; every value
//! is spelled as on the command line ([`super::spec`]).

use super::spec::split_crate;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The largest manifest read.
const MAX_BYTES: u64 = 16 << 20;

/// A manifest as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub(crate) arch: Option<String>,
    pub(crate) grid: Option<String>,
    pub(crate) chips: Option<u32>,
    pub(crate) policy: Option<ManifestPolicy>,
    #[serde(rename = "op")]
    pub(crate) ops: Vec<ManifestOp>,
}

/// A manifest's `policy`: what a producer does when its ring is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ManifestPolicy {
    Block,
    Drop,
}

/// One op of a manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManifestOp {
    pub(crate) name: String,
    /// RISC -> ELF path or `CRATE_DIR:BINARY`, relative to the manifest.
    pub(crate) kernels: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) tiles: Vec<String>,
    #[serde(default)]
    pub(crate) l1: Vec<String>,
    /// RISC -> runtime arguments: `[4, 8]` or `"4,0x8"`.
    #[serde(default)]
    pub(crate) args: BTreeMap<String, ArgList>,
    /// DRAM inputs and outputs, as `--dram-in` / `--dram-out` take them (files relative to
    /// the manifest).
    #[serde(default)]
    pub(crate) dram_in: Vec<String>,
    #[serde(default)]
    pub(crate) dram_out: Vec<String>,
    #[serde(default = "one")]
    pub(crate) launches: u32,
    #[serde(default)]
    pub(crate) attributes: serde_json::Map<String, serde_json::Value>,
}

fn one() -> u32 {
    1
}

/// A manifest's runtime arguments of one RISC: integers, or a string as `--arg` takes it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ArgList {
    Words(Vec<u32>),
    Text(String),
}

/// Reads and parses the manifest at `path` (`.toml` or `.json`); an error names the file
/// and, for TOML, the line and column. The file is noted in `inputs`.
pub(crate) fn read(path: &Path, inputs: &Inputs) -> Result<Manifest> {
    let bytes = crate::files::read_regular(
        path,
        "a manifest (TOML or JSON)",
        "read manifest",
        MAX_BYTES,
        inputs,
    )?;
    parse(path, bytes)
}

/// Parses the manifest `bytes` read from `path` (TOML or JSON by its extension), as [`read`].
pub(crate) fn parse(path: &Path, bytes: Vec<u8>) -> Result<Manifest> {
    let text = String::from_utf8(bytes).map_err(|e| Error::BadFile {
        path: path.into(),
        what: format!("is not UTF-8 text ({e}): expected a TOML or JSON manifest"),
    })?;
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => toml::from_str(&text)
            .map_err(|e| bad(format!("not a valid manifest: {}", toml_error(&text, &e)))),
        Some("json") => {
            serde_json::from_str(&text).map_err(|e| bad(format!("not a valid manifest: {e}")))
        }
        _ => Err(bad("a manifest must be a .toml or .json file".into())),
    }
}

/// A TOML error as line, column, message and at most `ECHO_CHARS` characters of the line
/// around the error (the crate's own text echoes the whole line, 200 KB for a long one).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    const ECHO_CHARS: usize = 80;
    let Some(span) = e.span() else {
        return e.message().to_string();
    };
    let at = span.start.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let rest = &text[line_start..];
    let row = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let col = text[line_start..at].chars().count();
    let from = col.saturating_sub(ECHO_CHARS / 2);
    let echo: String = row.chars().skip(from).take(ECHO_CHARS).collect();
    let cut = |b: bool| if b { "..." } else { "" };
    format!(
        "line {line}, column {}: {} (near {}{echo:?}{})",
        col + 1,
        e.message().trim_end(),
        cut(from > 0),
        cut(row.chars().count() > from + ECHO_CHARS)
    )
}

/// A manifest's kernel relative to its own directory (`CRATE:BIN` keeps its binary name).
pub(crate) fn relative_kernel(base: &Path, spec: &str) -> String {
    match split_crate(spec) {
        Some((dir, bin)) => format!("{}:{bin}", base.join(dir).display()),
        None => base.join(spec).display().to_string(),
    }
}

/// A manifest's `ADDR=@FILE` L1 input relative to its own directory.
pub(crate) fn relative_l1(base: &Path, spec: &str) -> String {
    match spec.split_once("=@") {
        Some((addr, file)) => format!("{addr}=@{}", base.join(file).display()),
        None => spec.to_string(),
    }
}

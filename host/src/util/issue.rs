//! Problems found in device data that do not stop a readout: each names where it was found,
//! what was expected, and how many records or bytes it concerns.
//!
//! A readout never aborts because one ring is bad (tt-metal's "end marker found without a
//! start marker" aborted whole reports). Instead every problem becomes an [`Issue`]; callers
//! print them, and the CLI exits non-zero when any has [`Severity::Error`].

use crate::error::Location;
use std::fmt;

/// How bad an issue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Data is complete and correct, but something deserves attention (records dropped by
    /// the Drop policy and accounted for, a kernel still running, ...).
    Warning,
    /// Data was unreadable or could not be attributed: the output is incomplete.
    Error,
}

/// One problem, with where it was found and how many items it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Whether the output is still complete ([`Severity::Warning`]) or not ([`Severity::Error`]).
    pub severity: Severity,
    /// The ring or tile concerned, if the problem is tied to one.
    pub at: Option<Location>,
    /// What was found and what was expected.
    pub what: String,
    /// How many records (or bytes, as `what` says) this concerns; 0 when not countable.
    pub count: u64,
}

impl Issue {
    /// An [`Severity::Error`] issue at `at` (`None`: not tied to one ring or tile), count 0.
    pub fn error(at: Option<Location>, what: impl Into<String>) -> Issue {
        Issue {
            severity: Severity::Error,
            at,
            what: what.into(),
            count: 0,
        }
    }

    /// A [`Severity::Warning`] issue at `at` (`None`: not tied to one ring or tile), count 0.
    pub fn warning(at: Option<Location>, what: impl Into<String>) -> Issue {
        Issue {
            severity: Severity::Warning,
            at,
            what: what.into(),
            count: 0,
        }
    }

    /// The same issue concerning `count` records (or bytes, as its text says).
    pub fn with_count(mut self, count: u64) -> Issue {
        self.count = count;
        self
    }

    /// Whether the issue makes the output incomplete ([`Severity::Error`]).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Prints `issues` to stderr, each with its count when it concerns more than one item;
/// returns how many are errors (the CLI's exit status depends on it).
pub fn print(issues: &[Issue]) -> usize {
    for i in issues {
        if i.count > 1 {
            eprintln!("{i} [{} affected]", i.count);
        } else {
            eprintln!("{i}");
        }
    }
    issues.iter().filter(|i| i.is_error()).count()
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{level}: ")?;
        if let Some(at) = &self.at {
            write!(f, "{at}: ")?;
        }
        f.write_str(&crate::printable::printable(&self.what))
    }
}

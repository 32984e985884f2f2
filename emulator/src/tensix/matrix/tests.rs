//! Matrix Unit unit tests.

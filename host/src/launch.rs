//! placeholder: written by the examples/tests work

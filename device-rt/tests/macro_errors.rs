//! The runtime macros' compile errors, as a kernel author sees them: every `tests/ui/*.rs`
//! must fail to compile with exactly the message in its `.stderr` file (reviewed: each says
//! what is wrong at the user's own tokens, and what to write instead).
//!
//! The cases compile for the host, where the runtime builds with its simulated core (the
//! macros expand the same way as for a RISC-V kernel). After an intended change of a
//! message, `TRYBUILD=overwrite cargo test --release -p ttprof-rt --test macro_errors`
//! rewrites the `.stderr` files: review their diff before committing it.

#[test]
fn macro_misuse_is_a_compile_error_that_says_what_to_write() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

//! Whose floating-point rules the Tensix coprocessor model follows ([`Numerics`]).

/// Whose rules the coprocessor's floating-point arithmetic follows where the two public
/// references disagree: the Matrix Unit's `ELWADD`, `ELWSUB`, `ELWMUL`, `MVMUL` and the
/// Vector Unit's MAD (`SFPMAD` and its aliases), and `SFPSTORE` of FP32 (ttsim flushes a
/// denormal to signed zero, the page keeps its bits). docs/design/tensix-coprocessor.md,
/// "Numerics", gives the rules and the measured agreement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Numerics {
    /// Tenstorrent's functional simulator ttsim (the default): the fixed-point data path of
    /// `tensix/matrix/datapath.rs` (rounding half away from zero) and the non-fused MAD of
    /// `tensix/sfpu/arith.rs`, bit for bit with ttsim.
    #[default]
    Ttsim,
    /// The ISA documentation's functional models: `float` operations rounded to nearest
    /// even, results rounded to the `Dst` format to nearest even (`tensix/matrix/isa_doc.rs`), and
    /// a fused MAD with one NaN pattern.
    IsaDoc,
}

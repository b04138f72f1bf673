//! What the unit tests of every module share (compiled for tests only).

/// Cases per fuzzing property: 2000 by default, more with
/// `UNDERLAY_FUZZ_CASES=N cargo test --release --lib`.
pub(crate) fn fuzz_cases() -> u32 {
    std::env::var("UNDERLAY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

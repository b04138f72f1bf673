//! Which vector instruction set the per-pixel kernels may use on this CPU.
//!
//! Kernels are written once as plain loops and compiled twice: for the
//! build target's baseline and with AVX2 enabled; [`level`] picks the AVX2
//! version when the CPU has it. Both compute the same results. (AVX-512
//! would be faster still on CPUs that have it, but its target features
//! need Rust 1.89, above this crate's minimum Rust version.)

/// Instruction-set levels the mask kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// AVX2 (x86-64): 32 bytes per instruction.
    Avx2,
    /// The baseline of the build target.
    Base,
}

/// The widest level this CPU supports (detected once, then cached by std).
#[inline]
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Base
}

/// Defines a function whose body is compiled for the baseline and for
/// AVX2, and runs the AVX2 version when the CPU supports it. The body must
/// be safe code.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? { generic($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            if $crate::mask::simd::level() == $crate::mask::simd::Level::Avx2 {
                // SAFETY: the CPU supports AVX2, which `avx2` was compiled for.
                return unsafe { avx2($($arg),*) };
            }
            generic($($arg),*)
        }
    };
}
pub(crate) use multiversion;

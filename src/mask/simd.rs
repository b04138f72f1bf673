//! Which vector instruction set the per-pixel kernels may use on this CPU.
//!
//! Kernels are written once as plain loops and compiled several times with
//! different `#[target_feature]`s; [`level`] picks the widest one the CPU
//! runs. All versions compute the same results.

/// Instruction-set levels the mask kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// AVX-512 (F, BW, VL, DQ): 64 bytes per instruction.
    Avx512,
    /// AVX2: 32 bytes per instruction.
    Avx2,
    /// The baseline of the build target.
    Base,
}

/// The widest level this CPU supports (detected once, then cached by std).
#[inline]
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi2")
        {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
            return Level::Avx2;
        }
    }
    Level::Base
}

/// Defines a function whose body is compiled for AVX-512, AVX2 and the
/// baseline, and runs the widest version the CPU supports. The body must be
/// safe code; all versions compute the same thing.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi2")]
            fn avx512($($arg: $ty),*) $(-> $ret)? { generic($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,bmi2")]
            fn avx2($($arg: $ty),*) $(-> $ret)? { generic($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            match $crate::mask::simd::level() {
                // SAFETY: the CPU supports the features these were compiled for.
                $crate::mask::simd::Level::Avx512 => return unsafe { avx512($($arg),*) },
                // SAFETY: as above.
                $crate::mask::simd::Level::Avx2 => return unsafe { avx2($($arg),*) },
                $crate::mask::simd::Level::Base => {}
            }
            generic($($arg),*)
        }
    };
}
pub(crate) use multiversion;

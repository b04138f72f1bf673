//! Which vector instruction set the per-pixel kernels may use on this CPU,
//! decided at run time in one place for the mask, drawing and video code.
//!
//! Kernels are written once as plain loops and compiled twice: for the
//! build target's baseline and with AVX2 enabled; [`level`] picks the AVX2
//! version when the CPU has it. Both builds compute the same results (no
//! fused multiply–add is enabled), which the modules' tests check. Kernels
//! written with intrinsics ask [`has_avx2`] before calling them.
//!
//! The crate-private `multiversion!` macro writes the two builds and
//! the dispatch: around a body, or around an existing `#[inline(always)]`
//! function whose plain build tests compare against. (AVX-512 would be
//! faster still on CPUs that have it; no kernel is built for it yet.)

/// Instruction-set levels the kernels are compiled for.
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
        if std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Base
}

/// Whether the AVX2 kernels can run on this CPU.
#[inline]
pub fn has_avx2() -> bool {
    level() == Level::Avx2
}

/// Proof that this CPU supports AVX2: only [`Avx2::detect`] makes one. A
/// loop that calls a kernel many times detects once and hands the proof
/// to each call.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

impl Avx2 {
    /// `Some` when the CPU supports AVX2.
    #[inline]
    pub fn detect() -> Option<Avx2> {
        has_avx2().then_some(Avx2(()))
    }
}

/// Asks the CPU to bring the cache line holding `slice[at]` closer (a
/// hint: nothing happens when `at` is out of the slice or the CPU has no
/// such instruction). Drawing and encoding visit thin spans row after row,
/// each in a cache line of its own; asking for the next rows' lines early
/// lets their loads overlap.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = slice.get(at) {
        // SAFETY: a prefetch reads nothing and cannot fault; `p` is a valid
        // reference anyway. SSE is part of the x86-64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (p as *const T).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, at);
}

/// Defines a function compiled for the baseline and for AVX2 that runs the
/// AVX2 build when the CPU supports it ([`has_avx2`]).
///
/// - `fn name(args) -> ret { body }`: the body (safe code) is the kernel.
/// - `fn name(args) -> ret = kernel;`: `kernel` is an existing
///   `#[inline(always)]` function with the same arguments, kept callable on
///   its own (tests compare the two).
/// - `fn name(cpu: Option<Avx2>, args) -> ret = kernel;`: the same, with
///   the detection made once by the caller ([`Avx2::detect`]) instead of
///   at each call.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($cpu:ident: Option<Avx2>, $($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $kernel:path;) => {
        $(#[$meta])*
        $vis fn $name($cpu: Option<$crate::simd::Avx2>, $($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? { $kernel($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            if $cpu.is_some() {
                // SAFETY: an `Avx2` exists only when the CPU supports AVX2,
                // which `avx2` was compiled for.
                return unsafe { avx2($($arg),*) };
            }
            let _ = $cpu;
            $kernel($($arg),*)
        }
    };
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body
            $crate::simd::multiversion!(@dispatch generic, ($($arg: $ty),*) $(-> $ret)?)
        }
    };
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $kernel:path;) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            $crate::simd::multiversion!(@dispatch $kernel, ($($arg: $ty),*) $(-> $ret)?)
        }
    };
    (@dispatch $kernel:path, ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn avx2($($arg: $ty),*) $(-> $ret)? { $kernel($($arg),*) }
        #[cfg(target_arch = "x86_64")]
        if $crate::simd::has_avx2() {
            // SAFETY: the CPU supports AVX2, which `avx2` was compiled for.
            return unsafe { avx2($($arg),*) };
        }
        $kernel($($arg),*)
    }};
}
pub(crate) use multiversion;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_is_only_a_hint() {
        let v = vec![7u32; 100];
        // Inside, at the end, far outside and in an empty slice: nothing
        // happens and nothing changes.
        for at in [0, 99, 100, usize::MAX] {
            prefetch(&v, at);
        }
        prefetch::<u8>(&[], 0);
        assert!(v.iter().all(|&x| x == 7));
    }
}

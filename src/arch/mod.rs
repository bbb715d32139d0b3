//! CPU kernels: the one module, besides the memory map (`io::mmap`), that may
//! hold `unsafe` (docs/FORMAT.md keeps the rule).
//!
//! Each fast function is a `#[target_feature]` kernel chosen once at run time
//! (`is_x86_feature_detected!` on x86-64, `is_aarch64_feature_detected!` on
//! aarch64, cached), beside a portable scalar twin that is the reference: the
//! kernels are property-tested and fuzzed against their twins on every length
//! from 0 to 4096 and every alignment (the aarch64 ones under qemu in CI).
//!
//! Setting `RECORDWIRE_NO_SIMD=1` in the environment (read once, at the first
//! call) forces the scalar twins; CI runs the test suite once that way. Under
//! miri the scalar twins always run.
//!
//! The kernels (x86-64 in `x86.rs`, aarch64 in `aarch64.rs`):
//!
//! - [`crc32c()`]: CRC32C (Castagnoli) in three interleaved streams across
//!   the whole buffer, joined with a carry-less multiply by the constants of
//!   `scalar::K`: x86 SSE4.2 `crc32` and PCLMULQDQ; ARM `crc32cx` and PMULL
//!   (`vmull_p64`). Twin: slicing by 8.
//! - [`crc32c_u64`]: the CRC32C of one 8-byte word (a TFRecord length): one
//!   `crc32` (x86) or `crc32cx` (ARM) instruction; twin: eight table lookups.
//! - [`varint_words`]: a packed run of varints decoded a word at a time, each
//!   value one BMI2 `pext` out of the word (x86 only: ARM has no `pext`, and
//!   runs the twin); twin: three shift-and-mask steps ([`scalar::compact`]).
//! - [`varints_into`]: [`varint_words`] into a slice, 16 bytes at a time:
//!   16 one-byte varints widened together, by SSE4.1 `pmovzxbq` (x86, two
//!   values a store) or NEON `uxtl` steps (ARM, `vmovl`); on x86 else the
//!   twin's word steps across the next 64 bytes (or the block's two words),
//!   each word holding 2 to 4 varints of 1 to 4 bytes going through a
//!   256-entry table of SSSE3 `pshufb` controls indexed by its continuation
//!   bits (`pmovmskb`), the 7-bit groups joined by `pmaddwd` into four 32-bit
//!   lanes (Masked VByte's technique), the next step's start one LZCNT of the
//!   mask; other words by BMI2
//!   `pext` (x86), one per value, or the twin's `compact` (ARM); twin:
//!   [`varint_words`]' twin into the slice.
//! - [`varint_ends`]: the terminators of a packed run counted, and varints
//!   over 10 bytes found, 64 bytes at a time: the 64 continuation bits from
//!   SSE2 `pmovmskb` (x86) or from NEON (ARM: a test of each byte's high bit,
//!   weighted by its place, summed by three pairwise adds), counted with
//!   POPCNT (x86) or `count_ones` (ARM: NEON `cnt`), shifts and ANDs find
//!   runs of 10 continuation bits; twin: a word at a time
//!   (`scalar::varint_ends_word`).
//! - [`prefetch`]: asks for the cache lines of a slice ahead of use: SSE
//!   `prefetcht0` (x86-64 baseline, no detection); ARM runs the twin
//!   (`core::arch::aarch64::_prefetch` is not stable). Twin: one load per
//!   line.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(target_arch = "aarch64")]
mod aarch64;
pub mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Which kernels run: decided once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The portable scalar twins.
    Scalar,
    /// x86-64 with SSE4.2 (and the SSSE3 and SSE4.1 before it), PCLMULQDQ
    /// and POPCNT.
    X86Crc,
    /// aarch64 with the CRC32 instructions, PMULL (the `aes` feature) and
    /// NEON, as ARM server cores (Neoverse: Graviton, Ampere) and Apple's
    /// have. A core with CRC32 but without the crypto extension (the
    /// Cortex-A72 of a Raspberry Pi 4) runs the scalar twins.
    Arm,
}

const UNKNOWN: u8 = 0;
const SCALAR: u8 = 1;
const X86_CRC: u8 = 2;
/// Set beside `SCALAR`/`X86_CRC` when BMI1, BMI2 and LZCNT are there too
/// (every CPU with BMI2 has LZCNT; `varints_into` uses it).
const BMI2: u8 = 4;
/// aarch64 with crc, aes (PMULL) and neon.
const ARM: u8 = 8;

static LEVEL: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether `RECORDWIRE_NO_SIMD` asks for the scalar twins (any value but
/// empty and `0`).
fn no_simd_requested() -> bool {
    std::env::var_os("RECORDWIRE_NO_SIMD").is_some_and(|v| !v.is_empty() && v != "0")
}

fn detect() -> u8 {
    if cfg!(miri) || no_simd_requested() {
        return SCALAR;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let bmi2 = if std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            BMI2
        } else {
            0
        };
        // Every CPU with SSE4.2 has SSSE3 and SSE4.1, but each is a CPUID
        // bit of its own (a VM can hide one): the varint kernels use both.
        if std::arch::is_x86_feature_detected!("sse4.2")
            && std::arch::is_x86_feature_detected!("sse4.1")
            && std::arch::is_x86_feature_detected!("ssse3")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return X86_CRC | bmi2;
        }
        return SCALAR | bmi2;
    }
    #[cfg(target_arch = "aarch64")]
    {
        // `aes` is the target feature of `vmull_p64`; `pmull` is asked too,
        // as the two are separate bits of the CPU's report.
        if std::arch::is_aarch64_feature_detected!("neon")
            && std::arch::is_aarch64_feature_detected!("crc")
            && std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
        {
            return ARM;
        }
        return SCALAR;
    }
    #[allow(unreachable_code)]
    SCALAR
}

/// The detected feature bits, cached.
#[inline]
fn bits() -> u8 {
    let mut l = LEVEL.load(Ordering::Relaxed);
    if l == UNKNOWN {
        l = detect();
        LEVEL.store(l, Ordering::Relaxed);
    }
    l
}

/// Whether the BMI2 kernels run (BMI1, BMI2 and LZCNT detected once, like
/// [`level`]); only on x86-64 (elsewhere false, and called only by the tests).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub fn has_bmi2() -> bool {
    bits() & BMI2 != 0
}

/// The kernels in use (detected at the first call, then cached).
#[inline]
pub fn level() -> Level {
    match bits() & !BMI2 {
        X86_CRC => Level::X86Crc,
        ARM => Level::Arm,
        _ => Level::Scalar,
    }
}

/// The CRC32C of `data` continued from `crc` (the CRC of what came before;
/// 0 to start): `crc32c(crc32c(0, a), b) == crc32c(0, a ++ b)`.
///
/// Example: the test `tests::crc32c_example`.
#[inline]
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::X86Crc => x86::crc32c(crc, data),
        #[cfg(target_arch = "aarch64")]
        Level::Arm => aarch64::crc32c(crc, data),
        _ => scalar::crc32c(crc, data),
    }
}

/// The CRC32C of the 8 bytes of `word` (little-endian), from 0: a TFRecord
/// length header's CRC, before masking.
///
/// Example: the test `tests::crc32c_u64_example`.
#[inline]
pub fn crc32c_u64(word: u64) -> u32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::X86Crc => x86::crc32c_u64(word),
        #[cfg(target_arch = "aarch64")]
        Level::Arm => aarch64::crc32c_u64(word),
        _ => scalar::crc32c_u64(word),
    }
}

/// Decodes the varints at the start of `bytes` a word (8 bytes) at a time,
/// calling `each` with every value, while each word holds the end of at
/// least one varint; returns `(bytes used, values)`. It stops before the
/// first word in which no varint ends (a varint over 8 bytes long, or an
/// error, for the caller to read byte by byte) or when fewer than 8 bytes
/// are left.
///
/// Example: the test `tests::varint_words_example`.
#[inline]
pub fn varint_words<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() {
        return x86::varint_words(bytes, each);
    }
    scalar::varint_words(bytes, each)
}

/// [`varint_words`] writing the values into `out` instead of calling a
/// function: decodes the varints at the start of `bytes` while each word
/// (8 bytes) holds the end of at least one varint and `out` has room for
/// every varint a word can hold (8); returns `(bytes used, values)`, the
/// values in `out[..values]`. Nothing past `out[..values]` changes.
///
/// Example: the test `tests::varints_into_example`.
#[inline]
pub fn varints_into(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() && level() == Level::X86Crc {
        return x86::varints_into(bytes, out);
    }
    #[cfg(target_arch = "aarch64")]
    if level() == Level::Arm {
        return aarch64::varints_into(bytes, out);
    }
    scalar::varints_into(bytes, out)
}

/// What [`varint_ends`] found in the whole 64-byte blocks at the start of a
/// packed run of varints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarintEnds {
    /// Bytes looked at: the whole 64-byte blocks (a multiple of 64).
    pub used: usize,
    /// Bytes among them with a clear high bit: the varints ending there.
    pub ends: usize,
    /// Continuation bytes at the end of the blocks, joined to the run
    /// carried in when every byte was one, capped at 10.
    pub run: usize,
    /// Whether 10 continuation bytes followed each other (counting the run
    /// carried in): a varint over 10 bytes long.
    pub too_long: bool,
}

/// Counts the varints that end in the whole 64-byte blocks at the start of
/// `bytes`, and whether any is over 10 bytes long, without decoding them:
/// how a packed run is validated and counted. `run` is the number of
/// continuation bytes just before `bytes` (0 at a run's start; below 10,
/// since 10 are already too many); the bytes
/// after the last whole block are left to the caller, with the run
/// returned.
///
/// Example: the test `tests::varint_ends_example`.
#[inline]
pub fn varint_ends(bytes: &[u8], run: usize) -> VarintEnds {
    #[cfg(target_arch = "x86_64")]
    if level() == Level::X86Crc {
        return x86::varint_ends(bytes, run);
    }
    #[cfg(target_arch = "aarch64")]
    if level() == Level::Arm {
        return aarch64::varint_ends(bytes, run);
    }
    scalar::varint_ends(bytes, run)
}

/// Asks for every 64-byte cache line of `bytes` to be brought into the
/// cache, without waiting for them: what a random read does before it
/// looks at a frame (or at the frames it will read next), so that the lines
/// come from memory together rather than one after another as the CRC and
/// the lookup reach them. A hint only: it changes no value.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if level() != Level::Scalar {
        return x86::prefetch(bytes);
    }
    scalar::prefetch(bytes)
}

#[cfg(test)]
mod tests;

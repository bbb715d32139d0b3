//! CPU kernels: the one module, besides the memory map (`io::mmap`), that may
//! hold `unsafe` (docs/FORMAT.md keeps the rule).
//!
//! Each fast function is a `#[target_feature]` kernel chosen once at run time
//! (`is_x86_feature_detected!`, cached), beside a portable scalar twin that is
//! the reference: the kernels are property-tested and fuzzed against their
//! twins on every length from 0 to 4096 and every alignment.
//!
//! Setting `RECORDWIRE_NO_SIMD=1` in the environment (read once, at the first
//! call) forces the scalar twins; CI runs the test suite once that way. Under
//! miri the scalar twins always run.
//!
//! - [`crc32c()`]: CRC32C (Castagnoli), SSE4.2 `crc32` in three interleaved
//!   streams across the whole buffer, joined with a carry-less multiply
//!   (PCLMULQDQ); twin: slicing by 8.
//! - [`crc32c_u64`]: the CRC32C of one 8-byte word (a TFRecord length): one
//!   `crc32` instruction; twin: eight table lookups.
//! - [`varint_words`]: a packed run of varints decoded a word at a time, each
//!   value one BMI2 `pext` out of the word; twin: three shift-and-mask steps
//!   ([`scalar::compact`]).
//! - [`prefetch`]: asks for the cache lines of a slice ahead of use: SSE
//!   `prefetcht0` (x86-64 baseline, no detection); twin: one load per line.

use std::sync::atomic::{AtomicU8, Ordering};

pub mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Which kernels run: decided once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The portable scalar twins.
    Scalar,
    /// x86-64 with SSE4.2 and PCLMULQDQ.
    X86Crc,
}

const UNKNOWN: u8 = 0;
const SCALAR: u8 = 1;
const X86_CRC: u8 = 2;
/// Set beside `SCALAR`/`X86_CRC` when BMI1 and BMI2 are there too.
const BMI2: u8 = 4;

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
        {
            BMI2
        } else {
            0
        };
        if std::arch::is_x86_feature_detected!("sse4.2")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
        {
            return X86_CRC | bmi2;
        }
        return SCALAR | bmi2;
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

/// Whether the BMI2 kernels run (detected once, like [`level`]).
#[inline]
pub fn has_bmi2() -> bool {
    bits() & BMI2 != 0
}

/// The kernels in use (detected at the first call, then cached).
#[inline]
pub fn level() -> Level {
    match bits() & !BMI2 {
        X86_CRC => Level::X86Crc,
        _ => Level::Scalar,
    }
}

/// The CRC32C of `data` continued from `crc` (the CRC of what came before;
/// 0 to start): `crc32c(crc32c(0, a), b) == crc32c(0, a ++ b)`.
///
/// ```
/// use recordwire::arch::crc32c;
/// assert_eq!(crc32c(0, b"123456789"), 0xe306_9283);
/// assert_eq!(crc32c(crc32c(0, b"1234"), b"56789"), 0xe306_9283);
/// ```
#[inline]
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::X86Crc => x86::crc32c(crc, data),
        _ => scalar::crc32c(crc, data),
    }
}

/// The CRC32C of the 8 bytes of `word` (little-endian), from 0: a TFRecord
/// length header's CRC, before masking.
///
/// ```
/// use recordwire::arch::{crc32c, crc32c_u64};
/// assert_eq!(crc32c_u64(1234), crc32c(0, &1234u64.to_le_bytes()));
/// ```
#[inline]
pub fn crc32c_u64(word: u64) -> u32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::X86Crc => x86::crc32c_u64(word),
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
/// ```
/// use recordwire::arch::varint_words;
/// // 300, 1, 70000, 5 (2 + 1 + 3 + 1 bytes), then a lone byte
/// let bytes = [0xac, 0x02, 0x01, 0xf0, 0xa2, 0x04, 0x05, 0x80, 0x7f];
/// let mut values = Vec::new();
/// assert_eq!(varint_words(&bytes, &mut |v| values.push(v)), (7, 4));
/// assert_eq!(values, [300, 1, 70_000, 5]);
/// ```
#[inline]
pub fn varint_words<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() {
        return x86::varint_words(bytes, each);
    }
    scalar::varint_words(bytes, each)
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

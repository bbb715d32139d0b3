#![allow(unsafe_code)] // the ARM file of CPU intrinsics (see super)
//! aarch64 kernels: the ARMv8 CRC32C instructions (`crc32cx`, `crc32cb`)
//! joined with PMULL (`vmull_p64`). Each public function here is called by
//! the dispatcher only after `super::level()` found crc, aes (PMULL) and
//! neon on this CPU (`is_aarch64_feature_detected!`); each has its scalar
//! twin in `super::scalar`.
//!
//! Not here, so the twins run on ARM: the varint kernels, and `prefetch`
//! (`core::arch::aarch64::_prefetch` is unstable; the twin's one load per
//! line asks for the lines all the same).

// Value-only intrinsics are safe to call inside a target_feature fn on the
// newer compilers; each call stays in a block with its SAFETY note, as in
// x86.rs.
#![allow(unused_unsafe)]

use std::arch::aarch64::{__crc32cb, __crc32cd, vmull_p64};

use super::scalar::{K, MAX_LANE_WORDS, MIN_LANE_WORDS};

#[inline(always)]
fn load(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// `super::crc32c` with the CRC32C instructions and PMULL.
#[inline]
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: the dispatcher calls this only when `is_aarch64_feature_detected!`
    // found crc, aes (with pmull) and neon on the running CPU, which is all
    // the target_feature function requires; it takes a plain slice.
    unsafe { crc32c_armv8(crc, data) }
}

/// `super::crc32c_u64` with one `crc32cx`.
#[inline]
pub fn crc32c_u64(word: u64) -> u32 {
    // SAFETY: as for `crc32c`: called only when crc was detected.
    unsafe { crc32c_u64_armv8(word) }
}

#[target_feature(enable = "crc")]
unsafe fn crc32c_u64_armv8(word: u64) -> u32 {
    // SAFETY: crc is enabled for this function (the caller checked it);
    // values only.
    !unsafe { __crc32cd(!0, word) }
}

/// The state `s` moved past `8·m` bytes, before its reduction (see
/// `scalar::K`): one PMULL of the state by `K[m]`.
#[target_feature(enable = "neon,aes")]
unsafe fn shift_product(s: u32, m: usize) -> u64 {
    // SAFETY: aes (PMULL) and neon are enabled for this function (the
    // caller checked them); values only. The product of two 32-bit
    // polynomials fits the low 64 bits of the 128.
    unsafe { vmull_p64(u64::from(s), u64::from(K[m])) as u64 }
}

#[target_feature(enable = "crc,neon,aes")]
unsafe fn crc32c_armv8(crc: u32, data: &[u8]) -> u32 {
    let mut state = !crc;
    let mut rest = data;
    // Three streams over three equal lanes (a whole number of words each),
    // joined: state(A ++ B ++ C) = sa·x^(16L) ^ sb·x^(8L) ^ sc, sb and sc
    // from 0; the x86 kernel's rounds, with the same constants. Lanes span
    // the whole input, up to 4 KiB each, so only the last few words run in
    // one stream.
    while rest.len() >= 24 * MIN_LANE_WORDS {
        let m = (rest.len() / 24).min(MAX_LANE_WORDS);
        let l = 8 * m;
        let (a, tail) = rest.split_at(l);
        let (b, tail) = tail.split_at(l);
        let (c, tail) = tail.split_at(l);
        let (mut sa, mut sb, mut sc) = (state, 0u32, 0u32);
        for ((wa, wb), wc) in a
            .chunks_exact(8)
            .zip(b.chunks_exact(8))
            .zip(c.chunks_exact(8))
        {
            // SAFETY: crc is enabled for this function; values only.
            unsafe {
                sa = __crc32cd(sa, load(wa));
                sb = __crc32cd(sb, load(wb));
                sc = __crc32cd(sc, load(wc));
            }
        }
        // SAFETY: the features of this function are those `shift_product`
        // and the intrinsic need. `crc32cx` of the product from 0 reduces
        // it (times x^32), as x86's `crc32` does.
        state = unsafe {
            let folded = shift_product(sa, 2 * m) ^ shift_product(sb, m);
            __crc32cd(0, folded) ^ sc
        };
        rest = tail;
    }
    let mut words = rest.chunks_exact(8);
    for w in words.by_ref() {
        // SAFETY: crc is enabled for this function; values only.
        state = unsafe { __crc32cd(state, load(w)) };
    }
    for &b in words.remainder() {
        // SAFETY: as above.
        state = unsafe { __crc32cb(state, b) };
    }
    !state
}

#![allow(unsafe_code)] // the ARM file of CPU intrinsics (see super)
//! aarch64 kernels: the ARMv8 CRC32C instructions (`crc32cx`, `crc32cb`)
//! joined with PMULL (`vmull_p64`), and NEON for varints. Each public
//! function here is called by the dispatcher only after `super::level()`
//! found crc, aes (PMULL) and neon on this CPU
//! (`is_aarch64_feature_detected!`); each has its scalar twin in
//! `super::scalar`.
//!
//! Not here, so the twins run on ARM: `varint_words` (the x86 kernel is one
//! BMI2 `pext` per varint; ARM has no such instruction, and a kernel here
//! would do the twin's three shift-and-mask steps), and `prefetch`
//! (`core::arch::aarch64::_prefetch` is unstable; the twin's one load per
//! line asks for the lines all the same).
//!
//! Lanes are only ever moved through memory (`vld1q`/`vst1q`), never
//! reinterpreted between element sizes, so nothing here depends on the
//! byte order; only little-endian aarch64 is tested (under qemu in CI).

// Value-only intrinsics are safe to call inside a target_feature fn on the
// newer compilers; each call stays in a block with its SAFETY note, as in
// x86.rs.
#![allow(unused_unsafe)]

use std::arch::aarch64::{
    __crc32cb, __crc32cd, uint8x16_t, vandq_u8, vdupq_n_u8, vget_low_u16, vget_low_u32,
    vget_low_u8, vld1q_u8, vmaxvq_u8, vmovl_high_u16, vmovl_high_u32, vmovl_high_u8, vmovl_u16,
    vmovl_u32, vmovl_u8, vmull_p64, vpaddq_u8, vst1q_u64, vst1q_u8, vtstq_u8,
};

use super::scalar::{self, K, MAX_LANE_WORDS, MIN_LANE_WORDS};

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
    // the whole input, up to 16 KiB each, so only the last few words run in
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

/// `super::varints_into` with NEON.
#[inline]
pub fn varints_into(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    // SAFETY: called only when neon was detected: all the target_feature
    // function needs; plain slices.
    unsafe { varints_into_neon(bytes, out) }
}

/// The 16 bytes of `v` zero-extended to 64 bits, in order, into `slots`.
#[target_feature(enable = "neon")]
unsafe fn widen16(v: uint8x16_t, slots: &mut [u64]) {
    // SAFETY: neon is enabled for this function; values only.
    let quads = unsafe {
        let (lo, hi) = (vmovl_u8(vget_low_u8(v)), vmovl_high_u8(v));
        [
            vmovl_u16(vget_low_u16(lo)),
            vmovl_high_u16(lo),
            vmovl_u16(vget_low_u16(hi)),
            vmovl_high_u16(hi),
        ]
    };
    for (slot, quad) in slots.chunks_exact_mut(4).zip(quads) {
        // SAFETY: neon is enabled for this function; `slot` is four u64s
        // (32 bytes) of a live slice, each store two of them, unaligned.
        unsafe {
            vst1q_u64(slot.as_mut_ptr(), vmovl_u32(vget_low_u32(quad)));
            vst1q_u64(slot.as_mut_ptr().add(2), vmovl_high_u32(quad));
        }
    }
}

#[target_feature(enable = "neon")]
unsafe fn varints_into_neon(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    loop {
        // Sixteen one-byte varints (no high bit set), widened together.
        if let (Some(b), Some(slots)) = (bytes.get(i..i + 16), out.get_mut(n..n + 16)) {
            // SAFETY: `b` is 16 bytes of a live slice, read unaligned; neon
            // is enabled for this function.
            let v = unsafe { vld1q_u8(b.as_ptr()) };
            // SAFETY: as above; values only.
            if unsafe { vmaxvq_u8(v) } < 0x80 {
                // SAFETY: neon, which `widen16` needs, is enabled here;
                // `slots` holds the 16 values.
                unsafe { widen16(v, slots) };
                i += 16;
                n += 16;
                continue;
            }
        }
        // Other words as the twin does them, a word at a time while 8 slots
        // are free (no `pext` on ARM: the twin's `compact`).
        let (Some(w), Some(slots)) = (scalar::word_at(bytes, i), out.get_mut(n..n + 8)) else {
            break;
        };
        let ends = !w & scalar::HIGH_BITS;
        if ends == 0 {
            break;
        }
        let mut free = slots.iter_mut();
        i += scalar::varints_in_word(w, ends, &mut n, &mut |v| {
            if let Some(slot) = free.next() {
                *slot = v;
            }
        });
    }
    (i, n)
}

/// `super::varint_ends` with NEON, 64 bytes a round.
#[inline]
pub fn varint_ends(bytes: &[u8], run: usize) -> super::VarintEnds {
    // SAFETY: the dispatcher calls this only when `is_aarch64_feature_detected!`
    // found neon (with crc and aes), which is all the target_feature
    // function requires; it takes a plain slice.
    unsafe { varint_ends_neon(bytes, run) }
}

/// The continuation (high) bits of the 64 bytes of `block`, bit `i` for
/// byte `i`: NEON has no `pmovmskb`, so each byte's bit is set at its place
/// in its group of 8 (a test against 0x80, ANDed with weights 1, 2, …, 128),
/// and three pairwise adds sum each group of 8 into one byte.
#[target_feature(enable = "neon")]
unsafe fn continuation_bits(block: &[u8; 64]) -> u64 {
    const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
    let p = block.as_ptr();
    let mut bits = [0u8; 16];
    // SAFETY: neon is enabled for this function. The four loads are the
    // four 16-byte lanes of the 64-byte `block`, `WEIGHTS` is 16 bytes,
    // `bits` is 16 bytes of a live array: all in bounds, unaligned.
    unsafe {
        let (high, weights) = (vdupq_n_u8(0x80), vld1q_u8(WEIGHTS.as_ptr()));
        let l0 = vandq_u8(vtstq_u8(vld1q_u8(p), high), weights);
        let l1 = vandq_u8(vtstq_u8(vld1q_u8(p.add(16)), high), weights);
        let l2 = vandq_u8(vtstq_u8(vld1q_u8(p.add(32)), high), weights);
        let l3 = vandq_u8(vtstq_u8(vld1q_u8(p.add(48)), high), weights);
        // Pairs, then fours, then eights: byte k of the last holds the bits
        // of bytes 8k..8k+8 (k < 8).
        let fours = vpaddq_u8(vpaddq_u8(l0, l1), vpaddq_u8(l2, l3));
        vst1q_u8(bits.as_mut_ptr(), vpaddq_u8(fours, fours));
    }
    let mut low = [0u8; 8];
    low.copy_from_slice(&bits[..8]);
    u64::from_le_bytes(low)
}

#[target_feature(enable = "neon")]
unsafe fn varint_ends_neon(bytes: &[u8], mut run: usize) -> super::VarintEnds {
    let mut ends = 0;
    let mut too_long = false;
    let (blocks, rest) = bytes.as_chunks::<64>();
    let used = bytes.len() - rest.len();
    for block in blocks {
        // Bit i of `cont`: byte i continues its varint.
        // SAFETY: neon, which `continuation_bits` needs, is enabled here.
        let cont = unsafe { continuation_bits(block) };
        ends += 64 - cont.count_ones() as usize;
        // From here as the x86 kernel: a run carried in, with the block's
        // first continuation bytes.
        too_long |= run + cont.trailing_ones() as usize >= 10;
        // Runs of 10 inside the block: bit i of `r8 & (r2 >> 8)` is set
        // when bits i..i+10 of `cont` all are.
        let r2 = cont & (cont >> 1);
        let r4 = r2 & (r2 >> 2);
        let r8 = r4 & (r4 >> 4);
        too_long |= r8 & (r2 >> 8) != 0;
        run = if cont == u64::MAX {
            (run + 64).min(10)
        } else {
            cont.leading_ones() as usize
        };
    }
    super::VarintEnds {
        used,
        ends,
        run: run.min(10),
        too_long,
    }
}

#![allow(unsafe_code)] // the one file of CPU intrinsics (see super)
//! x86-64 kernels: SSE4.2 `crc32` and PCLMULQDQ, BMI2 `pext`, SSE2/SSE4.1 for
//! varints. Each public function here is
//! called by the dispatcher only after `super::level()` found the features on
//! this CPU; each has its scalar twin in `super::scalar`.

#![allow(unused_unsafe)] // intrinsics became safe inside target_feature fns in 1.87; MSRV is older

use std::arch::x86_64::{
    __m128i, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtepu8_epi64,
    _mm_cvtsi128_si64, _mm_cvtsi64_si128, _mm_loadu_si128, _mm_movemask_epi8, _mm_prefetch,
    _mm_srli_si128, _mm_storeu_si128, _pext_u64, _popcnt64, _MM_HINT_T0,
};

use super::scalar::{self, K, MAX_LANE_WORDS, MIN_LANE_WORDS};

#[inline(always)]
fn load(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// `super::crc32c` with SSE4.2 and PCLMULQDQ.
#[inline]
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found sse4.2 and pclmulqdq on the running CPU, which is all the
    // target_feature function requires; it takes a plain slice.
    unsafe { crc32c_sse42(crc, data) }
}

/// `super::crc32c_u64` with SSE4.2: one instruction.
#[inline]
pub fn crc32c_u64(word: u64) -> u32 {
    // SAFETY: as for `crc32c`: called only when sse4.2 was detected.
    unsafe { crc32c_u64_sse42(word) }
}

#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_u64_sse42(word: u64) -> u32 {
    // SAFETY: sse4.2 is enabled for this function (the caller checked it).
    !(unsafe { _mm_crc32_u64(u64::from(!0u32), word) } as u32)
}

/// The state `s` moved past `8·m` bytes (see [`K`]).
#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn shift_product(s: u64, m: usize) -> u64 {
    // SAFETY: pclmulqdq and sse2 are enabled for this function (the caller
    // checked them); the intrinsics work on values only.
    unsafe {
        let p = _mm_clmulepi64_si128(
            _mm_cvtsi64_si128(s as i64),
            _mm_cvtsi64_si128(i64::from(K[m])),
            0x00,
        );
        _mm_cvtsi128_si64(p) as u64
    }
}

#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn crc32c_sse42(crc: u32, data: &[u8]) -> u32 {
    let mut state = u64::from(!crc);
    let mut rest = data;
    // Three streams over three equal lanes (a whole number of words each),
    // joined: state(A ++ B ++ C) = sa·x^(16L) ^ sb·x^(8L) ^ sc, sb and sc
    // from 0. Lanes span the whole input, up to 4 KiB each, so only the last
    // few words run in one stream.
    while rest.len() >= 24 * MIN_LANE_WORDS {
        let m = (rest.len() / 24).min(MAX_LANE_WORDS);
        let l = 8 * m;
        let (a, tail) = rest.split_at(l);
        let (b, tail) = tail.split_at(l);
        let (c, tail) = tail.split_at(l);
        let (mut sa, mut sb, mut sc) = (state, 0u64, 0u64);
        for ((wa, wb), wc) in a
            .chunks_exact(8)
            .zip(b.chunks_exact(8))
            .zip(c.chunks_exact(8))
        {
            // SAFETY: sse4.2 is enabled for this function; values only.
            unsafe {
                sa = _mm_crc32_u64(sa, load(wa));
                sb = _mm_crc32_u64(sb, load(wb));
                sc = _mm_crc32_u64(sc, load(wc));
            }
        }
        // SAFETY: the features of this function are those `shift_product`
        // and the intrinsic need.
        state = unsafe {
            let folded = shift_product(sa, 2 * m) ^ shift_product(sb, m);
            _mm_crc32_u64(0, folded) ^ sc
        };
        rest = tail;
    }
    let mut words = rest.chunks_exact(8);
    for w in words.by_ref() {
        // SAFETY: sse4.2 is enabled for this function; values only.
        state = unsafe { _mm_crc32_u64(state, load(w)) };
    }
    let mut s = state as u32;
    for &b in words.remainder() {
        // SAFETY: as above.
        s = unsafe { _mm_crc32_u8(s, b) };
    }
    !s
}

/// `super::varint_words` with BMI2: each varint's value is one `pext` of
/// its bytes' payload bits out of the word.
#[inline]
pub fn varint_words<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found bmi1 and bmi2 on the running CPU, which is all the
    // target_feature function requires; it takes a plain slice.
    unsafe { varint_words_bmi2(bytes, each) }
}

#[target_feature(enable = "bmi1,bmi2")]
unsafe fn varint_words_bmi2<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    while let Some(w) = scalar::word_at(bytes, i) {
        let mut ends = !w & scalar::HIGH_BITS;
        if ends == 0 {
            break;
        }
        if ends == scalar::HIGH_BITS {
            for k in 0..8 {
                each((w >> (8 * k)) & 0x7f);
            }
            i += 8;
            n += 8;
            continue;
        }
        // The payload bits not yet consumed by earlier varints of the word.
        let mut rest = scalar::PAYLOAD_BITS;
        let mut used = 0;
        while ends != 0 {
            // Every bit up to and including this varint's terminator.
            let upto = ends ^ (ends - 1);
            // SAFETY: bmi2 is enabled for this function; values only.
            each(unsafe { _pext_u64(w, rest & upto) });
            n += 1;
            rest &= !upto;
            used = upto;
            ends &= ends - 1;
        }
        i += ((64 - used.leading_zeros()) / 8) as usize;
    }
    (i, n)
}

/// `super::varints_into` with SSE4.1 and BMI2.
#[inline]
pub fn varints_into(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    // SAFETY: called only when sse4.2 (so sse4.1), bmi1 and bmi2 were
    // detected: all the target_feature function needs; plain slices.
    unsafe { varints_into_sse41_bmi2(bytes, out) }
}

#[target_feature(enable = "sse4.1,bmi1,bmi2")]
unsafe fn varints_into_sse41_bmi2(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    loop {
        // Sixteen one-byte varints (no high bit set), widened two at a time.
        if let (Some(b), Some(slots)) = (bytes.get(i..i + 16), out.get_mut(n..n + 16)) {
            // SAFETY: `b` is 16 bytes of a live slice, read unaligned;
            // sse4.1 (and so sse2) is enabled for this function.
            let v = unsafe { _mm_loadu_si128(b.as_ptr().cast::<__m128i>()) };
            // SAFETY: as above; values only.
            if unsafe { _mm_movemask_epi8(v) } == 0 {
                // SAFETY: as above; values only.
                let pairs = unsafe {
                    [
                        _mm_cvtepu8_epi64(v),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<2>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<4>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<6>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<8>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<10>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<12>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<14>(v)),
                    ]
                };
                for (slot, pair) in slots.chunks_exact_mut(2).zip(pairs) {
                    // SAFETY: `slot` is two u64s (16 bytes) of a live
                    // slice, written unaligned.
                    unsafe { _mm_storeu_si128(slot.as_mut_ptr().cast::<__m128i>(), pair) };
                }
                i += 16;
                n += 16;
                continue;
            }
        }
        let (Some(w), Some(slots)) = (scalar::word_at(bytes, i), out.get_mut(n..n + 8)) else {
            break;
        };
        let mut ends = !w & scalar::HIGH_BITS;
        if ends == 0 {
            break;
        }
        // The word loop of `varint_words_bmi2`, kept apart rather than
        // shared through a closure: with one, the slot writes cost 6% more
        // instructions on the BERT-like loop (measured).
        // The payload bits not yet consumed by earlier varints of the word.
        let mut rest = scalar::PAYLOAD_BITS;
        let mut used = 0;
        for slot in slots.iter_mut() {
            if ends == 0 {
                break;
            }
            // Every bit up to and including this varint's terminator.
            let upto = ends ^ (ends - 1);
            // SAFETY: bmi2 is enabled for this function; values only.
            *slot = unsafe { _pext_u64(w, rest & upto) };
            n += 1;
            rest &= !upto;
            used = upto;
            ends &= ends - 1;
        }
        i += ((64 - used.leading_zeros()) / 8) as usize;
    }
    (i, n)
}

/// `super::varint_ends` with SSE2 and POPCNT, 64 bytes a round.
#[inline]
pub fn varint_ends(bytes: &[u8], run: usize) -> super::VarintEnds {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found sse4.2, pclmulqdq and popcnt (SSE2 is x86-64 baseline), which is
    // all the target_feature function requires; it takes a plain slice.
    unsafe { varint_ends_sse2(bytes, run) }
}

#[target_feature(enable = "sse2,popcnt")]
unsafe fn varint_ends_sse2(bytes: &[u8], mut run: usize) -> super::VarintEnds {
    let mut ends = 0;
    let mut too_long = false;
    let blocks = bytes.chunks_exact(64);
    let used = bytes.len() - blocks.remainder().len();
    for block in blocks {
        let mut cont = 0u64;
        for (k, lane) in block.chunks_exact(16).enumerate() {
            // SAFETY: `lane` is 16 bytes of a live slice, read unaligned;
            // sse2 is enabled for this function (x86-64 baseline).
            let m = unsafe { _mm_movemask_epi8(_mm_loadu_si128(lane.as_ptr().cast::<__m128i>())) };
            cont |= u64::from(m as u16) << (16 * k);
        }
        // Bit i of `cont`: byte i continues its varint.
        // SAFETY: popcnt is enabled for this function; values only.
        ends += 64 - unsafe { _popcnt64(cont as i64) } as usize;
        // A run carried in, with the block's first continuation bytes.
        too_long |= run + cont.trailing_ones() as usize >= 10;
        // Runs of 10 inside the block: bit i of `r10` is set when bits
        // i..i+10 of `cont` all are.
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

/// `super::prefetch` with SSE's `prefetcht0`, one per 64-byte line.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        // SAFETY: SSE (`prefetcht0`) is x86-64 baseline; a prefetch never
        // faults, and the address is a byte of a live slice.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
}

//! The content fingerprint of a data file (native index format, version 1).
//!
//! CRC32C (Castagnoli, unmasked) over the concatenation of:
//!
//! 1. the data size `S`, u64 little-endian;
//! 2. the first `min(S, 4096)` bytes of the data;
//! 3. the last `min(S, 4096)` bytes of the data (overlapping 2. in small files);
//! 4. the last table entry (the end of the last record), u64 little-endian;
//! 5. for each sampled record `k`, in increasing order: its offset `T[k]`
//!    (u64 little-endian), then the framing's header bytes at that offset
//!    (12 for TFRecord, 8 for OFRecord; fewer if the data ends first).
//!
//! The sampled records, for `n` records: with `s` the smallest power of two
//! such that `ceil(n / s) <= 64`, the ids `0, s, 2s, …` below `n`, and `n − 1`
//! when it is not one of them: at most 65 records spread over the whole file,
//! chosen so that a one-pass builder of a stream can keep them with bounded
//! memory (it doubles `s` as records arrive).

use crate::frame::{masked_crc32c, Framing};

/// Bytes hashed at each end of the data.
pub(crate) const EDGE: usize = 4096;
/// The most records sampled at a power-of-two stride (plus the last one).
pub(crate) const SAMPLES: u64 = 64;

/// The sampling stride for `n` records: the smallest power of two `s` with
/// `ceil(n / s) <= 64`.
pub(crate) fn stride(n: u64) -> u64 {
    let mut s: u64 = 1;
    while n.div_ceil(s) > SAMPLES {
        s <<= 1;
    }
    s
}

/// The sampled record ids for `n` records, in increasing order.
pub(crate) fn sample_ids(n: u64) -> impl Iterator<Item = u64> {
    let s = stride(n);
    let regular = (0..n.div_ceil(s)).map(move |k| k * s);
    let last = n.checked_sub(1).filter(|last| last % s != 0);
    regular.chain(last)
}

/// The incremental hash.
pub(crate) struct Hasher(u32);

impl Hasher {
    /// The hash of the data size, its first and last [`EDGE`] bytes and the
    /// end of the last record (items 1 to 4).
    pub(crate) fn new(size: u64, head: &[u8], tail: &[u8], end: u64) -> Self {
        let mut h = Hasher(0);
        h.add(&size.to_le_bytes());
        h.add(head);
        h.add(tail);
        h.add(&end.to_le_bytes());
        h
    }

    pub(crate) fn add(&mut self, bytes: &[u8]) {
        self.0 = crc32c::crc32c_append(self.0, bytes);
    }

    /// Item 5 for one record.
    pub(crate) fn add_sample(&mut self, offset: u64, header: &[u8]) {
        self.add(&offset.to_le_bytes());
        self.add(header);
    }

    pub(crate) fn finish(self) -> u32 {
        self.0
    }
}

/// The fingerprint of `data` as described by `offsets` (n + 1 entries).
pub(crate) fn of_data(data: &[u8], framing: Framing, offsets: &[u64]) -> u32 {
    let size = data.len();
    let head = &data[..size.min(EDGE)];
    let tail = &data[size - size.min(EDGE)..];
    let n = offsets.len().saturating_sub(1) as u64;
    let end = offsets.last().copied().unwrap_or(0);
    let mut h = Hasher::new(size as u64, head, tail, end);
    for k in sample_ids(n) {
        let offset = usize::try_from(k)
            .ok()
            .and_then(|k| offsets.get(k))
            .copied()
            .unwrap_or(u64::MAX);
        h.add_sample(offset, header_at(data, offset, framing));
    }
    h.finish()
}

/// [`of_data`] for a stream read through `source` (of the size the index
/// says): the edges and the sampled headers in one vectored read.
pub(crate) fn of_source(
    source: &dyn crate::io::ByteSource,
    framing: Framing,
    offsets: &[u64],
) -> Result<u32, crate::error::Error> {
    let size = source.len();
    let edge = size.min(EDGE as u64);
    let n = offsets.len().saturating_sub(1) as u64;
    let end = offsets.last().copied().unwrap_or(0);
    let header = framing.header_len() as u64;
    let samples: Vec<u64> = sample_ids(n)
        .map(|k| {
            usize::try_from(k)
                .ok()
                .and_then(|k| offsets.get(k))
                .copied()
                .unwrap_or(u64::MAX)
        })
        .collect();
    // Head, then the sampled headers (clipped to the data), then the tail:
    // sorted by start, as `read_ranges` wants.
    let mut ranges = Vec::with_capacity(samples.len() + 2);
    ranges.push(0..edge);
    ranges.extend(
        samples
            .iter()
            .map(|&o| o.min(size)..o.saturating_add(header).min(size)),
    );
    ranges.push(size - edge..size);
    let mut parts = Vec::with_capacity(ranges.len());
    source.read_scattered(&ranges, &mut parts)?;
    let (head, tail) = (&parts[0], &parts[parts.len() - 1]);
    let mut h = Hasher::new(size, head, tail, end);
    for (k, &offset) in samples.iter().enumerate() {
        h.add_sample(offset, &parts[k + 1]);
    }
    Ok(h.finish())
}

/// The header bytes at `offset`, as far as the data holds them.
fn header_at(data: &[u8], offset: u64, framing: Framing) -> &[u8] {
    let Ok(start) = usize::try_from(offset) else {
        return &[];
    };
    let Some(rest) = data.get(start..) else {
        return &[];
    };
    &rest[..rest.len().min(framing.header_len())]
}

/// The header bytes of a frame whose (good) header declared `data_len`: what
/// a streaming builder, which no longer has the bytes, hashes.
pub(crate) fn header_bytes(framing: Framing, data_len: u64, out: &mut [u8; 12]) -> &[u8] {
    let length = data_len.to_le_bytes();
    out[..8].copy_from_slice(&length);
    match framing {
        Framing::TfRecord => {
            out[8..].copy_from_slice(&masked_crc32c(&length).to_le_bytes());
            &out[..]
        }
        Framing::OfRecord => &out[..8],
    }
}

/// What a one-pass builder keeps to compute the fingerprint at the end: the
/// records sampled at the current stride, and the last record.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    stride: u64,
    /// (offset, data length) of the records `0, stride, 2 stride, …`.
    kept: Vec<(u64, u64)>,
    last: Option<(u64, u64, u64)>,
}

impl Sampler {
    pub(crate) fn new() -> Self {
        Sampler {
            stride: 1,
            kept: Vec::new(),
            last: None,
        }
    }

    /// Record `id` (ids arrive in order from 0) starts at `offset` and holds
    /// `data_len` bytes.
    pub(crate) fn push(&mut self, id: u64, offset: u64, data_len: u64) {
        self.last = Some((id, offset, data_len));
        if !id.is_multiple_of(self.stride) {
            return;
        }
        self.kept.push((offset, data_len));
        if self.kept.len() as u64 > SAMPLES {
            // Keep the multiples of the doubled stride: the even positions.
            self.stride <<= 1;
            let mut i = 0;
            self.kept.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
    }

    /// The fingerprint, given the size, the first and last bytes and the end
    /// of the last record.
    pub(crate) fn finish(
        self,
        framing: Framing,
        size: u64,
        head: &[u8],
        tail: &[u8],
        end: u64,
    ) -> u32 {
        let mut h = Hasher::new(size, head, tail, end);
        let mut buf = [0u8; 12];
        for &(offset, len) in &self.kept {
            h.add_sample(offset, header_bytes(framing, len, &mut buf));
        }
        if let Some((id, offset, len)) = self.last {
            if id % self.stride != 0 {
                h.add_sample(offset, header_bytes(framing, len, &mut buf));
            }
        }
        h.finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn strides() {
        assert_eq!(stride(0), 1);
        assert_eq!(stride(64), 1);
        assert_eq!(stride(65), 2);
        assert_eq!(stride(128), 2);
        assert_eq!(stride(129), 4);
        assert_eq!(stride(u64::MAX), 1 << 58);
        assert_eq!(sample_ids(0).count(), 0);
        assert_eq!(sample_ids(1).collect::<Vec<_>>(), [0]);
        assert_eq!(sample_ids(64).count(), 64);
        let ids: Vec<u64> = sample_ids(65).collect();
        assert_eq!(ids.len(), 33);
        assert_eq!(ids.last(), Some(&64));
        let ids: Vec<u64> = sample_ids(66).collect();
        assert_eq!(ids.len(), 34);
        assert_eq!(&ids[31..], &[62, 64, 65]);
        let ids: Vec<u64> = sample_ids(1000).collect();
        assert_eq!(&ids[..3], &[0, 16, 32]);
        assert_eq!(ids.last(), Some(&999));
        assert!(ids.len() <= 65);
    }

    #[test]
    fn the_sampler_keeps_the_sampled_ids() {
        for n in [0u64, 1, 2, 63, 64, 65, 66, 127, 128, 129, 1000, 4097] {
            let mut s = Sampler::new();
            for id in 0..n {
                s.push(id, id * 10, id);
            }
            let mut kept: Vec<u64> = s.kept.iter().map(|&(o, _)| o / 10).collect();
            if let Some((id, _, _)) = s.last {
                if id % s.stride != 0 {
                    kept.push(id);
                }
            }
            assert_eq!(s.stride, stride(n), "{n}");
            assert_eq!(kept, sample_ids(n).collect::<Vec<_>>(), "{n}");
        }
    }
}

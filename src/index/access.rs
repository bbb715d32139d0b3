//! Random access through an index.

use super::table::{stale, Index};
use crate::error::Error;
use crate::frame::{is_pad, parse_frame, FrameError, ReadOptions, Record, Status};

/// Brings the first 4 KiB of a frame into the cache before it is parsed
/// (`crate::arch::prefetch`): the lines come from memory together instead
/// of one after another as the CRC and the caller's lookup reach them.
/// Beyond 4 KiB the reads are sequential and the hardware prefetcher keeps
/// up.
#[inline]
fn touch_lines(frame: &[u8]) {
    crate::arch::prefetch(frame.get(..4096).unwrap_or(frame));
}

/// How many frames ahead [`Index::get_many`] asks for.
const AHEAD: usize = 8;
/// How much of each frame ahead it asks for (the rest follows sequentially).
const PREFETCH_BYTES: usize = 1024;

/// The most ids a batch sorts at once (positions are `u32`).
pub(crate) const MAX_BATCH: usize = u32::MAX as usize;

impl Index {
    /// Sets `scratch` to the positions of `chunk` (at most [`MAX_BATCH`]
    /// ids) sorted by the offsets of their records (ids past the end last):
    /// the order in which a batch is read.
    pub(crate) fn sort_by_offset(&self, chunk: &[u64], scratch: &mut Vec<u32>) {
        let starts = self.starts();
        let offset_of = |id: u64| {
            usize::try_from(id)
                .ok()
                .and_then(|i| starts.get(i))
                .copied()
                .unwrap_or(u64::MAX)
        };
        scratch.clear();
        // `chunk.len() <= u32::MAX`: the positions fit.
        scratch.extend((0..chunk.len()).map(|p| p as u32));
        scratch.sort_unstable_by_key(|&p| offset_of(chunk[p as usize]));
    }

    /// Record `id`, borrowed from `data` (the content of the data file this
    /// index belongs to), without allocating; `Ok(None)` when `id` is not
    /// below [`len`](Index::len).
    ///
    /// The frame header at the indexed offset is read and its length CRC
    /// checked (when `opts` asks), then **the frame length from the header is
    /// checked against the index**: it must end exactly where the next record
    /// starts (or, when the data holds pad frames, be followed only by pad
    /// frames up to there); otherwise the index does not describe this data
    /// and the error is `stale_index`, for that record. Then the data CRC is
    /// checked when `opts` asks (its error policy is not used). Errors carry
    /// the record id and the frame's offset; the caller adds the file name.
    ///
    /// `data` must also have the size the index was built for (one
    /// comparison); its content fingerprint is checked when the index is
    /// opened, not here.
    ///
    /// The record's `id` is `id`: its position among records, pad frames not
    /// counted.
    pub fn get<'d>(
        &self,
        data: &'d [u8],
        id: u64,
        opts: &ReadOptions,
    ) -> Result<Option<Record<'d>>, Error> {
        let Some(span) = self.frame_range(id) else {
            return Ok(None);
        };
        let at = span.start;
        let stale_here = |message: String| stale(at, message).with_record(id);
        if data.len() as u64 != self.data_size {
            return Err(stale_here(format!(
                "the data is {} bytes but the index was built for {} bytes",
                data.len(),
                self.data_size
            )));
        }
        // The span lies within the data (so both ends fit in usize).
        let (Ok(start), Ok(end)) = (usize::try_from(span.start), usize::try_from(span.end)) else {
            return Err(stale_here(format!("index range {span:?} is out of range")));
        };
        let Some(bytes) = data.get(start..end) else {
            return Err(stale_here(format!(
                "the index says record {id} spans bytes {}..{}, outside the data ({} bytes)",
                span.start,
                span.end,
                data.len()
            )));
        };
        touch_lines(bytes);
        self.check_frame(bytes, at, id, opts).map(Some)
    }

    /// Record `id` from `bytes`, the bytes its index entry spans (its frame,
    /// and the pad frames after it) at offset `at`: the frame parsed, its
    /// CRCs checked as `opts` asks, and its length checked against the
    /// index (see [`get`](Self::get)).
    pub(crate) fn check_frame<'d>(
        &self,
        bytes: &'d [u8],
        at: u64,
        id: u64,
        opts: &ReadOptions,
    ) -> Result<Record<'d>, Error> {
        let stale_here = |message: String| stale(at, message).with_record(id);
        let indexed = bytes.len() as u64;
        let frame = match parse_frame(bytes, self.framing, opts) {
            Ok(Status::Complete(frame)) => frame,
            Ok(Status::Incomplete(more)) => {
                return Err(stale_here(format!(
                    "the frame header declares {} bytes, the index gives this record {indexed} \
                     bytes",
                    more.needed()
                )))
            }
            Err(FrameError::DataCrcMismatch { frame_len, .. })
                if frame_len != bytes.len() && !self.gap_allowed(&bytes[frame_len..]) =>
            {
                // The index is wrong before the data is.
                return Err(self.length_mismatch(at, id, frame_len, indexed));
            }
            Err(damage) => return Err(Error::new(damage.kind(), at).with_record(id)),
        };
        if frame.len != bytes.len() && !self.gap_allowed(&bytes[frame.len..]) {
            return Err(self.length_mismatch(at, id, frame.len, indexed));
        }
        // Within the data: no overflow.
        let data_offset = at + frame.header_len as u64;
        Ok(Record {
            id,
            offset: at,
            data_offset,
            end: at + frame.len as u64,
            data: frame.data,
            file: None,
        })
    }

    fn length_mismatch(&self, at: u64, id: u64, frame_len: usize, indexed: u64) -> Error {
        let pads = if self.has_pads() {
            " (and what follows it is not pad frames)"
        } else {
            ""
        };
        stale(
            at,
            format!(
                "the frame header declares a frame of {frame_len} bytes, the index gives this \
                 record {indexed} bytes{pads}"
            ),
        )
        .with_record(id)
    }

    /// Whether `gap` (after a record's frame, up to the next record) may be
    /// there: in an index built with skips, anything (damaged bytes passed
    /// over); else pad frames, in an index that says the data has some.
    fn gap_allowed(&self, gap: &[u8]) -> bool {
        self.has_skips() || self.pads_fill(gap)
    }

    /// Whether `gap` (after a record's frame, up to the next record) is made
    /// of pad frames, in an index that says the data has some.
    fn pads_fill(&self, mut gap: &[u8]) -> bool {
        if !self.has_pads() {
            return false;
        }
        let opts = ReadOptions::default().with_data_crc(false);
        while !gap.is_empty() {
            match parse_frame(gap, self.framing, &opts) {
                Ok(Status::Complete(frame)) if is_pad(frame.data) => {
                    gap = &gap[frame.len..];
                }
                _ => return false,
            }
        }
        true
    }

    /// Serves a batch of records: checks them **in offset order** (where the
    /// I/O happens: frame headers, and data CRCs when `opts` asks), then calls
    /// `f(position, record)` for each id **in request order** (`position` in
    /// `ids`; `None` for an id not below [`len`](Index::len)).
    ///
    /// The first damaged or stale record (in offset order) ends the batch with
    /// its error, before any call of `f`. Nothing is allocated but `scratch`,
    /// which holds the batch's positions sorted by offset (4 bytes per id; it
    /// grows to the largest batch and can be reused from batch to batch).
    /// Batches of more than 2^32 − 1 ids are served in slices of that size.
    ///
    /// ```
    /// use recordwire::frame::{file_of, Framing, ReadOptions};
    /// use recordwire::index::Index;
    ///
    /// let data = file_of(Framing::TfRecord, [&b"a"[..], b"b", b"c", b"d"]);
    /// let index = Index::build(&data, Framing::TfRecord, false)?;
    /// let mut scratch = Vec::new();
    /// let mut got = Vec::new();
    /// index.get_many(&data, &[3, 0, 9, 2], &ReadOptions::default(), &mut scratch, |pos, rec| {
    ///     got.push((pos, rec.map(|r| r.data)));
    /// })?;
    /// assert_eq!(got, [(0, Some(&b"d"[..])), (1, Some(b"a")), (2, None), (3, Some(b"c"))]);
    /// # Ok::<(), recordwire::Error>(())
    /// ```
    pub fn get_many<'d>(
        &self,
        data: &'d [u8],
        ids: &[u64],
        opts: &ReadOptions,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize, Option<Record<'d>>),
    ) -> Result<(), Error> {
        for (chunk_no, chunk) in ids.chunks(MAX_BATCH).enumerate() {
            self.sort_by_offset(chunk, scratch);
            // Offset order: read and check, with the frames `AHEAD` places
            // further on already asked for, so that their lines come from
            // memory while this one is checked.
            let ahead = |k: usize| {
                let id = chunk[*scratch.get(k)? as usize];
                let span = self.frame_range(id)?;
                let start = usize::try_from(span.start).ok()?;
                let end = usize::try_from(span.end).ok()?.min(start + PREFETCH_BYTES);
                data.get(start..end)
            };
            for k in 0..AHEAD {
                if let Some(frame) = ahead(k) {
                    crate::arch::prefetch(frame);
                }
            }
            for (k, &p) in scratch.iter().enumerate() {
                if let Some(frame) = ahead(k + AHEAD) {
                    crate::arch::prefetch(frame);
                }
                self.get(data, chunk[p as usize], opts)?;
            }
            // Request order: hand out (headers again, from pages now in cache;
            // the data CRCs were checked above).
            let again = opts.with_data_crc(false);
            for (p, &id) in chunk.iter().enumerate() {
                f(chunk_no * MAX_BATCH + p, self.get(data, id, &again)?);
            }
        }
        Ok(())
    }
}

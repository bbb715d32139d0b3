//! Indexing a damaged file under [`ErrorPolicy::Skip`]: the offsets of the
//! valid records, and the byte ranges passed over.

use super::table::{Index, FLAG_SKIPS};
use crate::error::{Error, ErrorKind};
use crate::frame::{is_pad, records, ErrorPolicy, Framing, ReadOptions};

/// A byte range of a data file that indexing under [`ErrorPolicy::Skip`]
/// passed over, and the error that made it skip: the file's own bytes for a
/// plain file, those of the decompressed stream for a compressed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where the damage starts (the damaged frame's start).
    pub start: u64,
    /// Where reading went on: the next valid frame, or the end of the data
    /// (after a truncation, or a bad length CRC with no valid frame after it).
    pub end: u64,
    /// The error met at `start` (its kind, record id and offset).
    pub error: Error,
}

impl Index {
    /// Builds the index of the valid records of `buf` (a whole file), passing
    /// over damaged frames as [`records`] does under `policy`
    /// ([`ErrorPolicy::Skip`]; [`ErrorPolicy::Fail`] is [`build`](Self::build)
    /// with the skipped list empty): after a bad data CRC the damaged frame is
    /// skipped, after a bad length CRC the bytes up to the next valid frame
    /// header; a truncation ends the file. Returns the index and the ranges
    /// passed over, in file order.
    ///
    /// Record ids count the valid records only. When something was skipped,
    /// the index says so ([`has_skips`](Self::has_skips)): a record's frame may
    /// then be followed by skipped bytes, its length is taken from its header
    /// alone, and the index **cannot be written** in any format (it does not
    /// describe a valid file: written as a sidecar, it would be used as one).
    ///
    /// Errors: the error that reaches the policy's `max_errors`.
    ///
    /// ```
    /// use recordwire::frame::{file_of, ErrorPolicy, Framing};
    /// use recordwire::index::Index;
    ///
    /// let mut data = file_of(Framing::TfRecord, [&b"a"[..], b"b", b"c"]);
    /// data[17 + 12] ^= 1; // record 1's data
    /// let (index, skipped) = Index::build_skipping(&data, Framing::TfRecord, true, ErrorPolicy::skip())?;
    /// assert_eq!(index.offsets(), [0, 34, 51]);
    /// assert_eq!((skipped[0].start, skipped[0].end), (17, 34));
    /// assert_eq!(skipped[0].error.kind().name(), "data_crc_mismatch");
    /// assert!(index.has_skips());
    /// # Ok::<(), recordwire::Error>(())
    /// ```
    pub fn build_skipping(
        buf: &[u8],
        framing: Framing,
        verify_crcs: bool,
        policy: ErrorPolicy,
    ) -> Result<(Index, Vec<Skipped>), Error> {
        Index::build_skipping_cut(buf, framing, verify_crcs, policy, None)
    }

    /// [`build_skipping`](Self::build_skipping) of `buf`, the content of a
    /// decompressed stream that stopped early for `cut` (a decompression
    /// error), when it did: the frame being read there ends the file with
    /// that error (the valid records before it are kept).
    pub(crate) fn build_skipping_cut(
        buf: &[u8],
        framing: Framing,
        verify_crcs: bool,
        policy: ErrorPolicy,
        cut: Option<ErrorKind>,
    ) -> Result<(Index, Vec<Skipped>), Error> {
        let max_errors = match policy {
            ErrorPolicy::Fail => return Ok((Index::build(buf, framing, verify_crcs)?, Vec::new())),
            ErrorPolicy::Skip { max_errors } => max_errors,
        };
        let opts = ReadOptions::default()
            .with_length_crc(true)
            .with_data_crc(verify_crcs)
            .with_skip_pads(false)
            .with_policy(ErrorPolicy::Skip { max_errors: None });
        let mut it = records(buf, framing, opts).with_early_end(cut);
        let mut offsets: Vec<u64> = Vec::new();
        let mut skipped: Vec<Skipped> = Vec::new();
        let mut last_end = 0;
        let mut pads = false;
        while let Some(item) = it.next() {
            let id = offsets.len() as u64;
            match item {
                Ok(record) if is_pad(record.data) => pads = true,
                Ok(record) => {
                    offsets.push(record.offset);
                    last_end = record.end;
                }
                Err(e) => {
                    // As `records` numbers them (and `cat` reports them): each
                    // damaged frame counts as one.
                    let e = e.with_record(id + skipped.len() as u64);
                    // As `records` counts: the `max_errors`-th error ends it.
                    if max_errors.is_some_and(|m| skipped.len() as u64 + 1 >= m.max(1)) {
                        return Err(e);
                    }
                    let start = e.offset().unwrap_or(it.position());
                    // No range: the error ended the iteration (a
                    // truncation), so the rest of the data is passed over.
                    let end = it.skipped().map_or(buf.len() as u64, |(_, end)| end);
                    skipped.push(Skipped {
                        start,
                        end,
                        error: e,
                    });
                }
            }
        }
        offsets.push(last_end);
        offsets.shrink_to_fit();
        let mut index = Index::from_offsets(framing, offsets, buf, verify_crcs, pads);
        if !skipped.is_empty() {
            index.flags |= FLAG_SKIPS;
        }
        Ok((index, skipped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{file_of, tfrecord_frame, ReadOptions};

    fn data_of(index: &Index, data: &[u8]) -> Vec<Vec<u8>> {
        (0..index.len())
            .map(|id| {
                let r = index.get(data, id, &ReadOptions::default()).unwrap();
                r.unwrap().data.to_vec()
            })
            .collect()
    }

    #[test]
    fn a_clean_file_gives_the_index_of_build() {
        let data = file_of(Framing::TfRecord, [&b"a"[..], b"bc", b"def"]);
        let (index, skipped) =
            Index::build_skipping(&data, Framing::TfRecord, true, ErrorPolicy::skip()).unwrap();
        assert!(skipped.is_empty());
        assert!(!index.has_skips());
        assert_eq!(index, Index::build(&data, Framing::TfRecord, true).unwrap());
    }

    #[test]
    fn a_bad_length_crc_resynchronises_on_the_next_frame() {
        let mut data = file_of(Framing::TfRecord, [&b"a"[..], b"bb", b"ccc"]);
        data[8] ^= 0xff; // record 0's length CRC
        let (index, skipped) =
            Index::build_skipping(&data, Framing::TfRecord, false, ErrorPolicy::skip()).unwrap();
        assert_eq!(data_of(&index, &data), [b"bb".to_vec(), b"ccc".to_vec()]);
        assert_eq!(skipped.len(), 1);
        assert_eq!((skipped[0].start, skipped[0].end), (0, 17));
        assert_eq!(skipped[0].error.kind().name(), "length_crc_mismatch");
        assert_eq!(skipped[0].error.record(), Some(0));
    }

    #[test]
    fn a_bad_data_crc_skips_its_frame_and_the_records_around_it_read() {
        let mut data = file_of(Framing::TfRecord, [&b"a"[..], b"bb", b"ccc"]);
        data[17 + 12] ^= 1; // record 1's data
        let (index, skipped) =
            Index::build_skipping(&data, Framing::TfRecord, true, ErrorPolicy::skip()).unwrap();
        assert_eq!(data_of(&index, &data), [b"a".to_vec(), b"ccc".to_vec()]);
        assert_eq!((skipped[0].start, skipped[0].end), (17, 35));
        assert!(index.has_skips());
        // Not written in any format: it does not describe a valid file.
        assert!(index.write_native(&mut Vec::new()).is_err());
        let mut out = Vec::new();
        for format in [
            super::super::IndexFormat::Native,
            super::super::IndexFormat::Dali,
            super::super::IndexFormat::Lirs,
        ] {
            assert!(index.write_as(format, &data, &mut out).is_err());
        }
        assert!(out.is_empty());
    }

    #[test]
    fn a_truncation_ends_the_file() {
        let mut data = file_of(Framing::OfRecord, [&b"a"[..], b"bb"]);
        data.extend_from_slice(&tfrecord_frame(b"x")[..5]);
        let good = data.len() - 5;
        let (index, skipped) =
            Index::build_skipping(&data, Framing::OfRecord, false, ErrorPolicy::skip()).unwrap();
        assert_eq!(index.len(), 2);
        assert_eq!(
            (skipped[0].start, skipped[0].end),
            (good as u64, data.len() as u64)
        );
        assert_eq!(skipped[0].error.kind().name(), "truncated_header");
    }

    #[test]
    fn max_errors_gives_up() {
        let mut data = file_of(Framing::TfRecord, [&b"a"[..], b"b", b"c"]);
        data[17 + 12] ^= 1;
        data[2 * 17 + 12] ^= 1;
        let policy = ErrorPolicy::Skip {
            max_errors: Some(2),
        };
        let err = Index::build_skipping(&data, Framing::TfRecord, true, policy).unwrap_err();
        assert_eq!(
            (err.kind().name(), err.offset()),
            ("data_crc_mismatch", Some(34))
        );
    }
}

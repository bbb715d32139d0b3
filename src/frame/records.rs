//! Walking the frames of a buffer: records, errors and the error policy.
//!
//! The policy logic lives in [`Walker`], a small state machine that knows
//! nothing of where its bytes come from: it is given a window of the input
//! (`buf`, starting at absolute offset `base`) and whether more bytes can
//! follow (`eof`), and answers with a record, an error, a request for more
//! bytes, or the end. The slice iterator [`Records`] always has the whole
//! input; the streaming reader ([`crate::io::StreamRecords`]) feeds it chunks.
//! Both thus share one implementation of the error rules of SPEC §8.

use std::fmt;
use std::iter::FusedIterator;
use std::ops::Range;
use std::sync::Arc;

use super::pad::is_pad;
use super::parse::{find_tfrecord_header, parse_frame, FrameError, Incomplete, Status};
use super::{ErrorPolicy, Framing, ReadOptions, TFRECORD_HEADER_LEN};
use crate::error::{Error, ErrorKind};

/// One record: its id, where its frame is, and its data borrowed from the input.
///
/// All offsets are absolute: in a file, from its first byte; in a compressed
/// file, in the decompressed stream.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The record id: 0-based, in file order. A damaged frame (or a skipped
    /// damaged range) consumes one id, so ids match a reader of the undamaged file.
    pub id: u64,
    /// Offset of the frame start (its header).
    pub offset: u64,
    /// Offset of the first data byte: `offset + 12` for TFRecord, `offset + 8`
    /// for OFRecord. The base offset for payload decode errors.
    pub data_offset: u64,
    /// Offset just past the frame (its data CRC included): where the next frame starts.
    pub end: u64,
    /// The data, borrowed from the input.
    pub data: &'a [u8],
}

impl Record<'_> {
    /// Bytes of the whole frame (header, data and CRC): `end - offset`.
    pub fn frame_len(&self) -> u64 {
        self.end.saturating_sub(self.offset)
    }
}

/// Shows the position, the length and the first bytes of the data only.
impl fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Head<'b>(&'b [u8]);
        impl fmt::Debug for Head<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                const SHOWN: usize = 16;
                write!(f, "[{} bytes:", self.0.len())?;
                for b in self.0.iter().take(SHOWN) {
                    write!(f, " {b:02x}")?;
                }
                if self.0.len() > SHOWN {
                    f.write_str(" …")?;
                }
                f.write_str("]")
            }
        }
        f.debug_struct("Record")
            .field("id", &self.id)
            .field("offset", &self.offset)
            .field("data_offset", &self.data_offset)
            .field("end", &self.end)
            .field("data", &Head(self.data))
            .finish()
    }
}

/// Iterates over the frames of `buf`, which holds a whole file (offsets start
/// at 0, ids at 0).
///
/// Yields every record, and errors as SPEC §8 says, following
/// [`ReadOptions::policy`]: with [`ErrorPolicy::Fail`] the first error is the
/// last item; with [`ErrorPolicy::Skip`] damaged frames are reported and
/// skipped (see [`Records::skipped`]).
///
/// ```
/// use recordwire::frame::{records, write_tfrecord_frame, Framing, ReadOptions};
///
/// let mut file = Vec::new();
/// write_tfrecord_frame(&mut file, b"first");
/// write_tfrecord_frame(&mut file, b"second");
///
/// let mut it = records(&file, Framing::TfRecord, ReadOptions::default());
/// let first = it.next().unwrap()?;
/// assert_eq!((first.id, first.offset, first.data_offset, first.data), (0, 0, 12, &b"first"[..]));
/// let second = it.next().unwrap()?;
/// assert_eq!((second.id, second.offset, second.data), (1, 21, &b"second"[..]));
/// assert!(it.next().is_none());
/// # Ok::<(), recordwire::Error>(())
/// ```
pub fn records(buf: &[u8], framing: Framing, opts: ReadOptions) -> Records<'_> {
    records_at(buf, 0, 0, framing, opts)
}

/// Like [`records`], for a `buf` that is part of a bigger input: `buf[0]` is at
/// absolute offset `base_offset` and its first frame has id `first_id`.
///
/// ```
/// use recordwire::frame::{records_at, tfrecord_frame, Framing, ReadOptions};
///
/// let frame = tfrecord_frame(b"x");
/// let rec = records_at(&frame, 4096, 7, Framing::TfRecord, ReadOptions::default())
///     .next()
///     .unwrap()?;
/// assert_eq!((rec.id, rec.offset, rec.data_offset, rec.end), (7, 4096, 4108, 4113));
/// # Ok::<(), recordwire::Error>(())
/// ```
pub fn records_at(
    buf: &[u8],
    base_offset: u64,
    first_id: u64,
    framing: Framing,
    opts: ReadOptions,
) -> Records<'_> {
    Records {
        buf,
        base: base_offset,
        walker: Walker::new(framing, opts, base_offset, first_id),
    }
}

/// The iterator of [`records`] and [`records_at`]: `Result<Record, Error>`
/// items, in file order.
///
/// Every error carries the id of the frame being read
/// ([`Error::record`]) and the absolute offset of its start
/// ([`Error::offset`]). Besides iterating, it tells how many errors it has
/// yielded ([`errors`](Self::errors)) and what the last one made it skip
/// ([`skipped`](Self::skipped)).
#[derive(Clone)]
pub struct Records<'a> {
    buf: &'a [u8],
    base: u64,
    walker: Walker,
}

/// Shows the position, not the bytes.
impl fmt::Debug for Records<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Records")
            .field("framing", &self.walker.framing)
            .field("base", &self.base)
            .field("len", &self.buf.len())
            .field("position", &self.walker.pos)
            .field("next_id", &self.walker.next_id)
            .field("errors", &self.walker.errors)
            .field("done", &self.walker.done)
            .finish_non_exhaustive()
    }
}

impl<'a> Records<'a> {
    /// Attaches a file name to every error this iterator yields.
    #[must_use]
    pub fn with_file(mut self, name: impl Into<Arc<str>>) -> Self {
        self.walker.file = Some(name.into());
        self
    }

    /// Makes the end of `buf` an early end caused by `cause` (for instance a
    /// decompressor that failed there): where the input runs out, at a frame
    /// boundary or inside a frame, the iterator yields an error of that kind
    /// (record = the frame being read, offset = its start) instead of ending
    /// cleanly or reporting a truncation.
    #[must_use]
    pub fn with_early_end(mut self, cause: Option<ErrorKind>) -> Self {
        self.walker.cut = cause;
        self
    }

    /// The framing being read.
    pub fn framing(&self) -> Framing {
        self.walker.framing
    }

    /// The number of errors yielded so far.
    pub fn errors(&self) -> u64 {
        self.walker.errors
    }

    /// The byte range `[start, end)` that the error just yielded made the
    /// iterator pass over, when the policy is [`ErrorPolicy::Skip`] and the
    /// iteration goes on at `end`.
    ///
    /// - bad data CRC: the damaged frame;
    /// - bad length CRC: from the damaged frame to the next valid TFRecord
    ///   header, or to the end of the input when there is none.
    ///
    /// `None` after a record, and after an error that ends the iteration
    /// (with [`ErrorPolicy::Fail`], after a truncation, an OFRecord error, or
    /// the error that reaches `max_errors`): nothing after
    /// [`Error::offset`] is read then. So, in skip mode, the records' frames
    /// and the skipped ranges tile the input up to where the iteration stops.
    pub fn skipped(&self) -> Option<(u64, u64)> {
        self.walker.skipped
    }

    /// The absolute offset where the next frame is expected.
    pub fn position(&self) -> u64 {
        self.walker.pos
    }

    /// The id the next frame will get.
    pub fn next_id(&self) -> u64 {
        self.walker.next_id
    }

    /// The bytes not yet consumed (empty once the iteration has ended).
    pub fn remaining(&self) -> &'a [u8] {
        if self.walker.done {
            return &[];
        }
        self.walker
            .pos
            .checked_sub(self.base)
            .and_then(|rel| usize::try_from(rel).ok())
            .and_then(|rel| self.buf.get(rel..))
            .unwrap_or_default()
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.walker.step(self.buf, self.base, true) {
            Step::Record(found) => match found.record(self.buf) {
                Some(record) => Some(Ok(record)),
                None => {
                    self.walker.done = true;
                    None
                }
            },
            Step::Error(err) => Some(Err(err)),
            // With the whole input at hand the walker never asks for more.
            Step::Need { .. } | Step::End => {
                self.walker.done = true;
                None
            }
        }
    }
}

impl FusedIterator for Records<'_> {}

/// What [`Walker::step`] found.
#[derive(Debug)]
pub(crate) enum Step {
    /// A good record.
    Record(Found),
    /// An error (the walker knows whether it goes on after it).
    Error(Error),
    /// The window must hold at least `len` bytes starting at absolute offset
    /// `from` (or reach the end of the input) before the walker can answer.
    /// Bytes before `from` are no longer needed.
    Need { from: u64, len: u64 },
    /// The end: the input ended cleanly, or after an error that ends the walk.
    End,
}

/// A good frame: its position, and where its data is in the window.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) id: u64,
    pub(crate) offset: u64,
    pub(crate) data_offset: u64,
    pub(crate) end: u64,
    /// The data's range in the window `buf` given to [`Walker::step`].
    pub(crate) data: Range<usize>,
}

impl Found {
    /// The record, borrowing its data from the same window.
    pub(crate) fn record<'b>(&self, buf: &'b [u8]) -> Option<Record<'b>> {
        Some(Record {
            id: self.id,
            offset: self.offset,
            data_offset: self.data_offset,
            end: self.end,
            data: buf.get(self.data.clone())?,
        })
    }
}

/// A length CRC error waiting for the resynchronisation to end.
#[derive(Debug, Clone)]
struct Resync {
    error: Error,
    /// The next position to test for a header.
    scan: u64,
}

/// The walk over frames, apart from the bytes: position, next id, error count
/// and policy state.
#[derive(Debug, Clone)]
pub(crate) struct Walker {
    framing: Framing,
    opts: ReadOptions,
    /// Absolute offset of the next frame (during a resync: of the damaged frame).
    pos: u64,
    next_id: u64,
    errors: u64,
    done: bool,
    skipped: Option<(u64, u64)>,
    resync: Option<Resync>,
    /// The input ends early for this reason (a decompressor or read failure).
    cut: Option<ErrorKind>,
    file: Option<Arc<str>>,
}

impl Walker {
    pub(crate) fn new(framing: Framing, opts: ReadOptions, pos: u64, first_id: u64) -> Self {
        Walker {
            framing,
            opts,
            pos,
            next_id: first_id,
            errors: 0,
            done: false,
            skipped: None,
            resync: None,
            cut: None,
            file: None,
        }
    }

    pub(crate) fn set_file(&mut self, name: Option<Arc<str>>) {
        self.file = name;
    }

    pub(crate) fn file(&self) -> Option<&Arc<str>> {
        self.file.as_ref()
    }

    /// The input ends early for this reason: reported where it runs out.
    pub(crate) fn cut(&mut self, cause: ErrorKind) {
        self.cut = Some(cause);
    }

    pub(crate) fn framing(&self) -> Framing {
        self.framing
    }

    pub(crate) fn errors(&self) -> u64 {
        self.errors
    }

    pub(crate) fn skipped(&self) -> Option<(u64, u64)> {
        self.skipped
    }

    pub(crate) fn position(&self) -> u64 {
        self.pos
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id
    }

    /// One step of the walk over the window `buf`, which holds the input from
    /// absolute offset `base` on; `eof` says that nothing follows the window.
    ///
    /// The window must contain the walker's position (everything from the
    /// last [`Step::Need`]'s `from` on); if it does not, the walk ends.
    pub(crate) fn step(&mut self, buf: &[u8], base: u64, eof: bool) -> Step {
        // Pad frames (SPEC §7) are skipped here, in a loop rather than by
        // recursion so that a run of pads cannot exhaust the stack.
        // `step_frame` gives a skipped pad no id, which is how it is told
        // apart from a record here without looking at its bytes again.
        loop {
            let id = self.next_id;
            match self.step_frame(buf, base, eof) {
                Step::Record(_) if self.next_id == id => continue,
                step => return step,
            }
        }
    }

    fn step_frame(&mut self, buf: &[u8], base: u64, eof: bool) -> Step {
        self.skipped = None;
        if self.done {
            return Step::End;
        }
        if self.resync.is_some() {
            return self.resync_step(buf, base, eof);
        }
        let Some(rel) = window_index(self.pos, base, buf.len()) else {
            self.done = true;
            return Step::End;
        };
        let rest = buf.get(rel..).unwrap_or_default();
        if rest.is_empty() {
            if !eof {
                return Step::Need {
                    from: self.pos,
                    len: self.framing.header_len() as u64,
                };
            }
            return self.end_of_input(None);
        }
        match parse_frame(rest, self.framing, &self.opts) {
            Ok(Status::Complete(frame)) => {
                let (Some(end), Some(data_offset)) = (
                    self.pos.checked_add(frame.len as u64),
                    self.pos.checked_add(frame.header_len as u64),
                ) else {
                    self.done = true;
                    return Step::End;
                };
                // Both within `rest`, so within `buf`: no overflow.
                let start = rel + frame.header_len;
                let found = Found {
                    id: self.next_id,
                    offset: self.pos,
                    data_offset,
                    end,
                    data: start..start + frame.data.len(),
                };
                self.pos = end;
                if self.opts.skip_pads && is_pad(frame.data) {
                    // A pad consumes no id; `step` moves on to the next frame.
                    return Step::Record(found);
                }
                self.next_id = self.next_id.saturating_add(1);
                Step::Record(found)
            }
            Ok(Status::Incomplete(more)) if !eof => Step::Need {
                from: self.pos,
                len: more.needed(),
            },
            Ok(Status::Incomplete(more)) => self.end_of_input(Some(more)),
            Err(damage) => self.damaged(damage, buf, base, eof),
        }
    }

    /// The input has ended, at the walker's position (`more` = `None`) or
    /// inside the frame that starts there.
    fn end_of_input(&mut self, more: Option<Incomplete>) -> Step {
        self.done = true;
        let kind = match (self.cut.take(), more) {
            (Some(cause), _) => cause,
            (None, Some(more)) => more.error_kind(),
            (None, None) => return Step::End,
        };
        self.errors = self.errors.saturating_add(1);
        Step::Error(self.error(kind))
    }

    /// An error at the frame being read.
    fn error(&self, kind: ErrorKind) -> Error {
        let err = Error::new(kind, self.pos).with_record(self.next_id);
        match &self.file {
            Some(file) => err.with_file(Arc::clone(file)),
            None => err,
        }
    }

    /// A damaged frame at the walker's position: apply the policy.
    fn damaged(&mut self, damage: FrameError, buf: &[u8], base: u64, eof: bool) -> Step {
        let error = self.error(damage.kind());
        self.errors = self.errors.saturating_add(1);
        let give_up = match self.opts.policy {
            ErrorPolicy::Fail => true,
            ErrorPolicy::Skip { max_errors: None } => false,
            ErrorPolicy::Skip {
                max_errors: Some(max),
            } => self.errors >= max.max(1),
        };
        if give_up {
            self.done = true;
            return Step::Error(error);
        }
        match damage {
            FrameError::DataCrcMismatch { frame_len, .. } => {
                let Some(end) = self.pos.checked_add(frame_len as u64) else {
                    self.done = true;
                    return Step::Error(error);
                };
                self.skip_to(end);
                Step::Error(error)
            }
            FrameError::LengthCrcMismatch { .. } => {
                self.resync = Some(Resync {
                    error,
                    scan: self.pos.saturating_add(1),
                });
                self.resync_step(buf, base, eof)
            }
            FrameError::InvalidLength { .. } => {
                self.done = true;
                Step::Error(error)
            }
        }
    }

    /// Passes over `[pos, end)`, which consumes one id.
    fn skip_to(&mut self, end: u64) {
        self.skipped = Some((self.pos, end));
        self.pos = end;
        self.next_id = self.next_id.saturating_add(1);
    }

    /// Searches for the next valid TFRecord header after a bad length CRC,
    /// then yields the pending error with the skipped range.
    fn resync_step(&mut self, buf: &[u8], base: u64, eof: bool) -> Step {
        let Some(resync) = self.resync.as_mut() else {
            return Step::End;
        };
        let window = window_index(resync.scan, base, buf.len()).and_then(|rel| buf.get(rel..));
        let Some(window) = window else {
            self.done = true;
            self.resync = None;
            return Step::End;
        };
        let found = match find_tfrecord_header(window) {
            Some(i) => resync.scan.checked_add(i as u64),
            None if eof => base.checked_add(buf.len() as u64),
            None => {
                // Positions with 12 bytes left have all been tested.
                let tested = window.len().saturating_sub(TFRECORD_HEADER_LEN - 1);
                resync.scan = resync.scan.saturating_add(tested as u64);
                return Step::Need {
                    from: resync.scan,
                    len: TFRECORD_HEADER_LEN as u64,
                };
            }
        };
        let Some(Resync { error, .. }) = self.resync.take() else {
            return Step::End;
        };
        match found {
            Some(to) => self.skip_to(to),
            None => self.done = true,
        }
        Step::Error(error)
    }
}

/// The index of absolute offset `at` in a window of `len` bytes starting at
/// `base`, if it is inside the window or at its end.
fn window_index(at: u64, base: u64, len: usize) -> Option<usize> {
    let rel = usize::try_from(at.checked_sub(base)?).ok()?;
    (rel <= len).then_some(rel)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::frame::{
        file_of, masked_crc32c, ofrecord_frame, tfrecord_frame, write_tfrecord_frame,
    };

    fn skip(max_errors: Option<u64>) -> ReadOptions {
        ReadOptions::default().with_policy(ErrorPolicy::Skip { max_errors })
    }

    /// An item as compared in tests: (id, offset, data) or the error, and the skipped range.
    type Item = (Result<(u64, u64, Vec<u8>), Error>, Option<(u64, u64)>);

    /// Every item, with the skipped range seen right after it.
    fn walk(buf: &[u8], framing: Framing, opts: ReadOptions) -> Vec<Item> {
        let mut it = records(buf, framing, opts);
        let mut out = Vec::new();
        while let Some(item) = it.next() {
            let item = item.map(|r| (r.id, r.offset, r.data.to_vec()));
            out.push((item, it.skipped()));
        }
        assert!(it.next().is_none(), "fused");
        out
    }

    fn ok(id: u64, offset: u64, data: &[u8]) -> Result<(u64, u64, Vec<u8>), Error> {
        Ok((id, offset, data.to_vec()))
    }

    #[test]
    fn empty_input_has_no_records() {
        assert!(walk(b"", Framing::TfRecord, ReadOptions::default()).is_empty());
        assert!(walk(b"", Framing::OfRecord, ReadOptions::default()).is_empty());
    }

    #[test]
    fn reads_both_framings() {
        let datas: [&[u8]; 3] = [b"a", b"", b"hello world"];
        for framing in [Framing::TfRecord, Framing::OfRecord] {
            let file = file_of(framing, datas);
            let got: Vec<Record<'_>> = records(&file, framing, ReadOptions::default())
                .collect::<Result<_, _>>()
                .unwrap();
            let h = framing.header_len() as u64;
            let f = framing.footer_len() as u64;
            let mut offset = 0;
            for (i, (rec, data)) in got.iter().zip(datas).enumerate() {
                assert_eq!(rec.id, i as u64);
                assert_eq!(rec.offset, offset);
                assert_eq!(rec.data_offset, offset + h);
                assert_eq!(rec.data, data);
                offset += h + data.len() as u64 + f;
                assert_eq!(rec.end, offset);
                assert_eq!(rec.frame_len(), h + data.len() as u64 + f);
            }
            assert_eq!(got.len(), 3);
        }
    }

    #[test]
    fn record_debug_is_short() {
        let file = tfrecord_frame(&[0xab; 100]);
        let rec = records(&file, Framing::TfRecord, ReadOptions::default())
            .next()
            .unwrap()
            .unwrap();
        let shown = format!("{rec:?}");
        assert!(shown.starts_with(
            "Record { id: 0, offset: 0, data_offset: 12, end: 116, data: [100 bytes: ab ab"
        ));
        assert!(shown.ends_with(" …] }"), "{shown}");
    }

    #[test]
    fn truncated_header() {
        let mut file = tfrecord_frame(b"abc");
        file.extend_from_slice(&[1, 2, 3, 4, 5]);
        let items = walk(&file, Framing::TfRecord, ReadOptions::default());
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].0, ok(0, 0, b"abc"));
        let err = items[1].0.clone().unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedHeader {
                needed: 12,
                available: 5
            }
        );
        assert_eq!((err.record(), err.offset()), (Some(1), 19));
        // (The `[kind]` prefix is error.rs's business.)
        let shown = err.to_string();
        assert!(shown.starts_with("[truncated_header]"), "{shown}");
        assert!(
            shown.ends_with(
                " record 1 at byte 19: input ends inside a frame header: needed 12 bytes, 5 available"
            ),
            "{shown}"
        );
        // Also ends the iteration in skip mode, with no skipped range.
        let items = walk(&file, Framing::TfRecord, skip(None));
        assert_eq!(items.len(), 2);
        assert_eq!(items[1], (Err(err), None));

        let mut file = ofrecord_frame(b"abc");
        file.extend_from_slice(&[1, 2, 3]);
        let items = walk(&file, Framing::OfRecord, ReadOptions::default());
        let err = items[1].0.clone().unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedHeader {
                needed: 8,
                available: 3
            }
        );
        assert_eq!((err.record(), err.offset()), (Some(1), 11));
    }

    #[test]
    fn truncated_data() {
        let mut file = tfrecord_frame(b"abc");
        let second = tfrecord_frame(&[9; 16]);
        file.extend_from_slice(&second[..12 + 4]);
        for opts in [ReadOptions::default(), skip(None)] {
            let items = walk(&file, Framing::TfRecord, opts);
            assert_eq!(items.len(), 2);
            let err = items[1].0.clone().unwrap_err();
            assert_eq!(
                err.kind(),
                &ErrorKind::TruncatedData {
                    declared: 20,
                    available: 4
                }
            );
            assert_eq!((err.record(), err.offset()), (Some(1), 19));
            assert_eq!(items[1].1, None);
        }
        // Data complete, CRC cut short.
        let file = &tfrecord_frame(b"abcd")[..18];
        let err = walk(file, Framing::TfRecord, ReadOptions::default())[0]
            .0
            .clone()
            .unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedData {
                declared: 8,
                available: 6
            }
        );
        // OFRecord.
        let mut file = ofrecord_frame(b"xy");
        file.extend_from_slice(&ofrecord_frame(b"0123456789")[..12]);
        let err = walk(&file, Framing::OfRecord, ReadOptions::default())[1]
            .0
            .clone()
            .unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedData {
                declared: 10,
                available: 4
            }
        );
        assert_eq!((err.record(), err.offset()), (Some(1), 10));
    }

    #[test]
    fn invalid_length() {
        let mut file = ofrecord_frame(b"ok");
        file.extend_from_slice(&(-1i64).to_le_bytes());
        file.extend_from_slice(&ofrecord_frame(b"never read"));
        for opts in [ReadOptions::default(), skip(None)] {
            let items = walk(&file, Framing::OfRecord, opts);
            assert_eq!(items.len(), 2);
            assert_eq!(items[0].0, ok(0, 0, b"ok"));
            let err = items[1].0.clone().unwrap_err();
            assert_eq!(err.kind(), &ErrorKind::InvalidLength { length: -1 });
            assert_eq!((err.record(), err.offset()), (Some(1), 10));
            assert_eq!(items[1].1, None);
        }
    }

    /// Three frames, the middle one with a damaged data CRC.
    fn bad_data_crc_file() -> (Vec<u8>, u32) {
        let mut file = tfrecord_frame(b"zero");
        let mut bad = tfrecord_frame(b"one!");
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        let stored = u32::from_le_bytes(bad[last - 3..].try_into().unwrap());
        file.extend_from_slice(&bad);
        write_tfrecord_frame(&mut file, b"two");
        (file, stored)
    }

    #[test]
    fn data_crc_mismatch() {
        let (file, stored) = bad_data_crc_file();
        let expected = Error::new(
            ErrorKind::DataCrcMismatch {
                stored,
                computed: masked_crc32c(b"one!"),
            },
            20,
        )
        .with_record(1);

        let items = walk(&file, Framing::TfRecord, ReadOptions::default());
        assert_eq!(
            items,
            [(ok(0, 0, b"zero"), None), (Err(expected.clone()), None)]
        );

        let items = walk(&file, Framing::TfRecord, skip(None));
        assert_eq!(
            items,
            [
                (ok(0, 0, b"zero"), None),
                (Err(expected.clone()), Some((20, 40))),
                (ok(2, 40, b"two"), None),
            ]
        );

        // Not checked: the damaged record is delivered.
        let items = walk(
            &file,
            Framing::TfRecord,
            ReadOptions::default().with_data_crc(false),
        );
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].0, ok(1, 20, b"one!"));

        // With a file name.
        let err = records(&file, Framing::TfRecord, ReadOptions::default())
            .with_file("a.tfrecord")
            .nth(1)
            .unwrap()
            .unwrap_err();
        assert_eq!(err, expected.with_file("a.tfrecord"));
        let shown = err.to_string();
        assert!(shown.starts_with("[data_crc_mismatch]"), "{shown}");
        let details = format!(
            " a.tfrecord: record 1 at byte 20: stored {stored:#010x}, computed {:#010x}",
            masked_crc32c(b"one!")
        );
        assert!(shown.ends_with(&details), "{shown}");
    }

    #[test]
    fn length_crc_mismatch_resyncs_in_skip_mode() {
        let mut file = tfrecord_frame(b"zero"); // 0..20
        let mut bad = tfrecord_frame(b"one"); // 20..39
        bad[0] = 0xee; // the length: its CRC no longer matches
        file.extend_from_slice(&bad);
        file.extend_from_slice(&[0x55; 7]); // garbage 39..46
        write_tfrecord_frame(&mut file, b"two"); // 46..65
        let expected = Error::new(
            ErrorKind::LengthCrcMismatch {
                stored: masked_crc32c(&3u64.to_le_bytes()),
                computed: masked_crc32c(&0xeeu64.to_le_bytes()),
            },
            20,
        )
        .with_record(1);

        let items = walk(&file, Framing::TfRecord, ReadOptions::default());
        assert_eq!(
            items,
            [(ok(0, 0, b"zero"), None), (Err(expected.clone()), None)]
        );

        let items = walk(&file, Framing::TfRecord, skip(None));
        assert_eq!(
            items,
            [
                (ok(0, 0, b"zero"), None),
                (Err(expected.clone()), Some((20, 46))),
                (ok(2, 46, b"two"), None),
            ]
        );

        // No header after the damage: skipped to the end, then the end.
        let items = walk(&file[..50], Framing::TfRecord, skip(None));
        assert_eq!(items[1], (Err(expected), Some((20, 50))));
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn resync_finds_a_header_one_byte_after_the_damage() {
        // The damaged "frame" is a single garbage byte followed by a real frame.
        let mut file = vec![0xff];
        write_tfrecord_frame(&mut file, b"x");
        let items = walk(&file, Framing::TfRecord, skip(None));
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].1, Some((0, 1)));
        assert_eq!(
            items[0].0.as_ref().unwrap_err().kind().name(),
            "length_crc_mismatch"
        );
        assert_eq!(items[1].0, ok(1, 1, b"x"));
    }

    #[test]
    fn max_errors() {
        // Five frames with bad data CRCs, then a good one.
        let mut file = Vec::new();
        for i in 0..5u8 {
            let mut frame = tfrecord_frame(&[i; 3]);
            frame[15] ^= 1;
            file.extend_from_slice(&frame);
        }
        write_tfrecord_frame(&mut file, b"good");
        let all = walk(&file, Framing::TfRecord, skip(None));
        assert_eq!(all.len(), 6);
        assert_eq!(all[5].0, ok(5, 95, b"good"));

        let mut it = records(&file, Framing::TfRecord, skip(Some(3)));
        for id in 0..3 {
            let err = it.next().unwrap().unwrap_err();
            assert_eq!(err.record(), Some(id));
            assert_eq!(err.offset(), 19 * id);
            assert_eq!(it.errors(), id + 1);
        }
        assert_eq!(it.skipped(), None, "the last allowed error ends the walk");
        assert!(it.next().is_none());
        assert_eq!(it.errors(), 3);

        for max in [0, 1] {
            let items = walk(&file, Framing::TfRecord, skip(Some(max)));
            assert_eq!(items.len(), 1);
        }
    }

    #[test]
    fn fail_mode_is_fused_after_the_error() {
        let (file, _) = bad_data_crc_file();
        let mut it = records(&file, Framing::TfRecord, ReadOptions::default());
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().unwrap().is_err());
        assert_eq!(it.errors(), 1);
        assert!(it.next().is_none());
        assert!(it.next().is_none());
        assert!(it.remaining().is_empty());
    }

    #[test]
    fn offsets_are_absolute_with_a_base() {
        let (file, _) = bad_data_crc_file();
        let items: Vec<_> = records_at(&file, 1000, 50, Framing::TfRecord, skip(None)).collect();
        assert_eq!(items[0].as_ref().unwrap().offset, 1000);
        let err = items[1].as_ref().unwrap_err();
        assert_eq!((err.record(), err.offset()), (Some(51), 1020));
        let rec = items[2].as_ref().unwrap();
        assert_eq!(
            (rec.id, rec.offset, rec.data_offset, rec.end),
            (52, 1040, 1052, 1059)
        );
    }

    #[test]
    fn early_end_replaces_truncation_and_clean_end() {
        let cause = ErrorKind::Compression {
            message: "gzip: corrupt deflate stream".into(),
        };
        let mut file = tfrecord_frame(b"zero");
        // At a frame boundary.
        let items: Vec<_> = records(&file, Framing::TfRecord, ReadOptions::default())
            .with_early_end(Some(cause.clone()))
            .collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1], Err(Error::new(cause.clone(), 20).with_record(1)));
        // Inside a frame.
        file.extend_from_slice(&[1, 2, 3]);
        let items: Vec<_> = records(&file, Framing::TfRecord, skip(None))
            .with_early_end(Some(cause.clone()))
            .collect();
        assert_eq!(items[1], Err(Error::new(cause, 20).with_record(1)));
    }

    #[test]
    fn remaining_and_position() {
        let file = file_of(Framing::TfRecord, [&b"a"[..], b"b"]);
        let mut it = records(&file, Framing::TfRecord, ReadOptions::default());
        assert_eq!(it.remaining().len(), 34);
        it.next();
        assert_eq!(
            (it.position(), it.next_id(), it.remaining().len()),
            (17, 1, 17)
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn check_invariants(buf: &[u8], framing: Framing, opts: ReadOptions) {
            let mut it = records(buf, framing, opts);
            let mut data_total = 0usize;
            let mut covered = 0u64; // frames and skipped ranges tile the input
            let mut last_id = None;
            while let Some(item) = it.next() {
                match item {
                    Ok(rec) => {
                        assert_eq!(rec.offset, covered);
                        data_total += rec.data.len();
                        covered = rec.end;
                        assert!(!matches!(last_id, Some(l) if rec.id <= l));
                        last_id = Some(rec.id);
                    }
                    Err(err) => {
                        assert_eq!(err.offset(), covered);
                        assert!(!matches!(last_id, Some(l) if err.record() <= Some(l)));
                        last_id = err.record();
                        if let Some((start, end)) = it.skipped() {
                            assert_eq!(start, covered);
                            assert!(end > start);
                            covered = end;
                        }
                    }
                }
                assert!(covered <= buf.len() as u64);
            }
            assert!(data_total <= buf.len());
        }

        fn policies() -> impl Strategy<Value = ReadOptions> {
            (
                any::<bool>(),
                any::<bool>(),
                prop_oneof![
                    Just(ErrorPolicy::Fail),
                    proptest::option::of(0u64..4)
                        .prop_map(|max_errors| ErrorPolicy::Skip { max_errors }),
                ],
            )
                .prop_map(|(l, d, policy)| ReadOptions {
                    check_length_crc: l,
                    check_data_crc: d,
                    policy,
                    skip_pads: true,
                })
        }

        /// Valid frames, some bytes flipped, some garbage, maybe cut short.
        fn damaged_files() -> impl Strategy<Value = Vec<u8>> {
            (
                proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..8),
                proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..4),
                any::<proptest::sample::Index>(),
            )
                .prop_map(|(datas, flips, cut)| {
                    let mut file = file_of(Framing::TfRecord, datas.iter().map(|d| &d[..]));
                    if !file.is_empty() {
                        for (at, x) in flips {
                            let i = at.index(file.len());
                            file[i] ^= x;
                        }
                        let keep = cut.index(file.len() + 1);
                        if keep < file.len() && keep % 3 == 0 {
                            file.truncate(keep);
                        }
                    }
                    file
                })
        }

        proptest! {
            #![proptest_config(crate::test_util::proptest_config())]

            #[test]
            fn garbage_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..512), opts in policies()) {
                check_invariants(&buf, Framing::TfRecord, opts);
                check_invariants(&buf, Framing::OfRecord, opts);
            }

            #[test]
            fn damaged_files_never_panic(file in damaged_files(), opts in policies()) {
                check_invariants(&file, Framing::TfRecord, opts);
                check_invariants(&file, Framing::OfRecord, opts);
            }

            #[test]
            fn frames_round_trip(datas in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..10)) {
                for framing in [Framing::TfRecord, Framing::OfRecord] {
                    let file = file_of(framing, datas.iter().map(|d| &d[..]));
                    let got: Vec<Vec<u8>> = records(&file, framing, ReadOptions::default())
                        .map(|r| r.map(|r| r.data.to_vec()))
                        .collect::<Result<_, _>>()
                        .unwrap();
                    prop_assert_eq!(&got, &datas);
                }
            }
        }
    }
}

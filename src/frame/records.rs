//! Walking the frames of a buffer: records, errors and the error policy.
//!
//! The policy logic lives in [`Walker`], a small state machine that knows
//! nothing of where its bytes come from: it is given a window of the input
//! (`buf`, starting at absolute offset `base`) and whether more bytes can
//! follow (`eof`), and answers with a record, an error, a request for more
//! bytes, or the end. The slice iterator [`Records`] always has the whole
//! input; the streaming reader ([`crate::io::StreamRecords`]) feeds it chunks.
//! Both thus share one implementation of the error rules of docs/FORMAT.md §8.

use std::fmt;
use std::iter::FusedIterator;
use std::ops::Range;
use std::sync::Arc;

use super::detect::{not_record_file, Basis};
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
    /// The file it was read from, when the reader knows it (a
    /// [`RecordFile`](crate::io::RecordFile), a [`Source`](crate::io::Source),
    /// a [`Dataset`](crate::dataset::Dataset), or [`Records::with_file`]).
    pub file: Option<&'a Arc<str>>,
}

/// A record that owns (a share of) its bytes: what a
/// [`Dataset`](crate::dataset::Dataset) hands out. Its `data` is a
/// [`Bytes`](bytes::Bytes) that keeps its source alive (a slice of a
/// file's memory map, or of an inflated span of a compressed file): no
/// copy, `Send + 'static`, so that it can outlive the dataset and move to
/// another thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRecord {
    /// The record id (in a dataset: the global id).
    pub id: u64,
    /// Offset of the frame start (its header), in its file's stream.
    pub offset: u64,
    /// Offset of the first data byte: the base offset for payload decode
    /// errors.
    pub data_offset: u64,
    /// Offset just past the frame.
    pub end: u64,
    /// The data.
    pub data: bytes::Bytes,
    /// The file it was read from.
    pub file: Option<Arc<str>>,
}

impl OwnedRecord {
    /// `record`, whose data is a part of `owner`, owning its share of
    /// `owner` (no copy; copied only if it is not a part of `owner`).
    pub fn from_record(record: &Record<'_>, owner: &bytes::Bytes) -> OwnedRecord {
        let outer = owner.as_ptr_range();
        let inner = record.data.as_ptr_range();
        let data = if outer.start <= inner.start && inner.end <= outer.end {
            owner.slice_ref(record.data)
        } else {
            bytes::Bytes::copy_from_slice(record.data)
        };
        OwnedRecord {
            id: record.id,
            offset: record.offset,
            data_offset: record.data_offset,
            end: record.end,
            data,
            file: record.file.cloned(),
        }
    }

    /// A borrowed view of it.
    pub fn as_record(&self) -> Record<'_> {
        Record {
            id: self.id,
            offset: self.offset,
            data_offset: self.data_offset,
            end: self.end,
            data: &self.data,
            file: self.file.as_ref(),
        }
    }

    /// Bytes of the whole frame (header, data and CRC): `end - offset`.
    pub fn frame_len(&self) -> u64 {
        self.end.saturating_sub(self.offset)
    }

    /// A decode error met in this record's payload, as an [`Error`] that
    /// says which record of which file ([`Record::context`]).
    pub fn context(&self, err: crate::wire::DecodeError) -> Error {
        self.as_record().context(err)
    }
}

impl Record<'_> {
    /// Bytes of the whole frame (header, data and CRC): `end - offset`.
    pub fn frame_len(&self) -> u64 {
        self.end.saturating_sub(self.offset)
    }

    /// A decode error met in this record's payload, as an [`Error`] that says
    /// where: kind `decode_error`, this record's file (when known) and id, and
    /// the absolute offset of the bad byte.
    ///
    /// ```
    /// use recordwire::io::{OpenOptions, RecordFile};
    /// use recordwire::view::ExampleRef;
    ///
    /// let file = RecordFile::open("testdata/bad/tf_decode_error.tfrecord", &OpenOptions::default())?;
    /// let record = file.records().nth(2).unwrap()?;
    /// let err = ExampleRef::parse(record.data, record.data_offset)
    ///     .map_err(|e| record.context(e))
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "[decode_error]: testdata/bad/tf_decode_error.tfrecord: record 2 at byte 389: invalid wire type 7"
    /// );
    /// # Ok::<(), recordwire::Error>(())
    /// ```
    pub fn context(&self, err: crate::wire::DecodeError) -> Error {
        let e = Error::from(err).with_record(self.id);
        match self.file {
            Some(file) => e.with_file(Arc::clone(file)),
            None => e,
        }
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
/// Yields every record, and errors as docs/FORMAT.md §8 says, following
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
        file: None,
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
    /// The file named in every record ([`Record::file`]).
    file: Option<&'a Arc<str>>,
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

    /// Attaches a file name to every error and every record
    /// ([`Record::file`]) this iterator yields; the name is borrowed for as
    /// long as the records are.
    #[must_use]
    pub fn with_file_of_records(mut self, name: &'a Arc<str>) -> Self {
        self.walker.file = Some(Arc::clone(name));
        self.file = Some(name);
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

    /// Says how the framing was chosen, for the message of an error in the
    /// frame at byte 0 (docs/FORMAT.md §1.6).
    #[must_use]
    pub(crate) fn with_basis(mut self, basis: Basis) -> Self {
        self.walker.basis = basis;
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
            Step::Record(found) => match found.record(self.buf, self.file) {
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
    pub(crate) fn record<'b>(
        &self,
        buf: &'b [u8],
        file: Option<&'b Arc<str>>,
    ) -> Option<Record<'b>> {
        Some(Record {
            id: self.id,
            offset: self.offset,
            data_offset: self.data_offset,
            end: self.end,
            data: buf.get(self.data.clone())?,
            file,
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
    /// How the framing was chosen: an error in the frame at byte 0 of an
    /// input read on a guess may say that it is not a record file at all.
    basis: Basis,
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
            basis: Basis::Named,
        }
    }

    pub(crate) fn set_basis(&mut self, basis: Basis) {
        self.basis = basis;
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

    /// Ends the walk at `pos`, with `next_id` the id after its last frame
    /// (a walk made elsewhere, by [`split::walk_split`], on this one's behalf).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn finish_at(&mut self, pos: u64, next_id: u64) {
        (self.pos, self.next_id, self.done) = (pos, next_id, true);
    }

    /// One step of the walk over the window `buf`, which holds the input from
    /// absolute offset `base` on; `eof` says that nothing follows the window.
    ///
    /// The window must contain the walker's position (everything from the
    /// last [`Step::Need`]'s `from` on); if it does not, the walk ends.
    pub(crate) fn step(&mut self, buf: &[u8], base: u64, eof: bool) -> Step {
        // Pad frames (docs/FORMAT.md §7.5) are skipped here, in a loop rather than by
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
            return self.end_of_input(None, rest);
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
            Ok(Status::Incomplete(more)) => self.end_of_input(Some(more), rest),
            Err(damage) => self.damaged(damage, rest, buf, base, eof),
        }
    }

    /// The input has ended, at the walker's position (`more` = `None`) or
    /// inside the frame that starts there, whose bytes are `rest`.
    fn end_of_input(&mut self, more: Option<Incomplete>, rest: &[u8]) -> Step {
        self.done = true;
        let kind = match (self.cut.take(), more) {
            (Some(cause), _) => cause,
            (None, Some(more)) => more.error_kind(),
            (None, None) => return Step::End,
        };
        self.errors = self.errors.saturating_add(1);
        Step::Error(self.error(kind, rest))
    }

    /// An error at the frame being read, which starts with `rest`. In the
    /// frame at byte 0 of an input whose framing was not certain, it may say
    /// that the input is not a record file (docs/FORMAT.md §1.6).
    fn error(&self, kind: ErrorKind, rest: &[u8]) -> Error {
        let detail = match (self.pos, self.basis) {
            (_, Basis::Named | Basis::Header) | (1.., _) => None,
            (0, basis) => {
                let head = rest.get(..self.framing.header_len()).unwrap_or(rest);
                not_record_file(head, &kind, basis)
            }
        };
        let err = Error::new(kind, self.pos).with_record(self.next_id);
        let err = match detail {
            Some(detail) => err.with_detail(detail),
            None => err,
        };
        match &self.file {
            Some(file) => err.with_file(Arc::clone(file)),
            None => err,
        }
    }

    /// A damaged frame at the walker's position, which starts with `rest`
    /// (in the window `buf`): apply the policy.
    fn damaged(
        &mut self,
        damage: FrameError,
        rest: &[u8],
        buf: &[u8],
        base: u64,
        eof: bool,
    ) -> Step {
        let error = self.error(damage.kind(), rest);
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

pub(crate) mod split;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

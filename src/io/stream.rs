//! Reading frames from any [`Read`]: compressed files, pipes, stdin.

use std::fmt;
use std::io::Read;
use std::sync::Arc;

use super::compress::{fill_to, read_error};
use super::Compression;
use crate::error::Error;
use crate::frame::{Framing, ReadOptions, Record, Step, Walker};

/// Records read one at a time from any [`Read`]: a decompressor, a pipe, stdin.
///
/// This is **not zero-copy**: bytes are read (decompressed) into an internal
/// buffer that is reused from record to record, and each [`Record`] borrows
/// from it until the next call (a *lending* iterator, hence
/// [`next_record`](Self::next_record) instead of [`Iterator`]). Use
/// [`RecordFile`](super::RecordFile) for zero-copy access to plain files.
///
/// Errors, record ids, offsets (in the decompressed stream) and the
/// [`ErrorPolicy`](crate::frame::ErrorPolicy) are exactly those of the slice
/// iterator [`records`](crate::frame::records) (they share one
/// implementation), including the resynchronisation after a bad length CRC in
/// skip mode, which searches the stream as it arrives. A read error ends the
/// iteration with an error at the frame being read (its id, and the offset of
/// its start = the bytes consumed by the frames before it); with a
/// decompressor ([`with_compression`](Self::with_compression)) what it says
/// about its input — corrupt data, a truncated stream, garbage after the
/// stream — is a `compression_error`. Garbage after the last frame is found
/// too: the reader always reads to the end of the stream.
///
/// Memory: the buffer holds the current frame (and up to 1 MiB of read-ahead);
/// it grows only as bytes arrive, never with a declared length alone.
///
/// ```
/// use std::io::Write;
/// use flate2::{write::GzEncoder, Compression as Level};
/// use recordwire::frame::{file_of, Framing, ReadOptions};
/// use recordwire::io::{decoder, Compression, StreamRecords};
///
/// let plain = file_of(Framing::TfRecord, [&b"one"[..], b"two"]);
/// let mut gz = GzEncoder::new(Vec::new(), Level::default());
/// gz.write_all(&plain)?;
/// let gz = gz.finish()?;
///
/// let reader = decoder(std::io::Cursor::new(gz), Compression::Gzip);
/// let mut stream = StreamRecords::new(reader, Framing::TfRecord, ReadOptions::default())
///     .with_compression(Compression::Gzip);
/// let mut seen = Vec::new();
/// while let Some(record) = stream.next_record() {
///     seen.push(record?.data.to_vec());
/// }
/// assert_eq!(seen, [b"one", b"two"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StreamRecords<R> {
    reader: R,
    /// The input from absolute offset `base` on, as far as it has been read.
    buf: Vec<u8>,
    base: u64,
    eof: bool,
    walker: Walker,
    compression: Compression,
}

/// Shows the position, not the reader or the buffer.
impl<R> fmt::Debug for StreamRecords<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamRecords")
            .field("file", &self.walker.file())
            .field("framing", &self.walker.framing())
            .field("compression", &self.compression)
            .field("position", &self.walker.position())
            .field("next_id", &self.walker.next_id())
            .field("buffered", &self.buf.len())
            .finish_non_exhaustive()
    }
}

impl<R: Read> StreamRecords<R> {
    /// Frames of `framing` read from `reader`, which is read from its current
    /// position (offset 0, record id 0).
    pub fn new(reader: R, framing: Framing, opts: ReadOptions) -> Self {
        StreamRecords {
            reader,
            buf: Vec::new(),
            base: 0,
            eof: false,
            walker: Walker::new(framing, opts, 0, 0),
            compression: Compression::None,
        }
    }

    /// Says that `reader` is a decompressor of `compression`, so that its
    /// complaints about its input are reported as `compression_error` rather
    /// than `io_error`. (It does not add a decompressor: see
    /// [`decoder`](super::decoder).)
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Says how the framing was chosen, for the message of an error in the
    /// frame at byte 0 (docs/FORMAT.md §1.6).
    #[must_use]
    pub(crate) fn with_basis(mut self, basis: crate::frame::Basis) -> Self {
        self.walker.set_basis(basis);
        self
    }

    /// Attaches a file name to every error.
    #[must_use]
    pub fn with_file(mut self, name: impl Into<Arc<str>>) -> Self {
        self.walker.set_file(Some(name.into()));
        self
    }

    /// The next record, borrowed from the internal buffer until the next call;
    /// or an error; or `None` at the end.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, Error>> {
        loop {
            match self.walker.step(&self.buf, self.base, self.eof) {
                Step::Record(found) => return found.record(&self.buf, self.walker.file()).map(Ok),
                Step::Error(err) => return Some(Err(err)),
                Step::End => return None,
                Step::Need { from, len } => self.fill(from, len),
            }
        }
    }

    /// Forgets the bytes before absolute offset `from`, then reads until the
    /// buffer holds `len` bytes from there, or the input ends. Always reads at
    /// least once, so every call makes progress.
    fn fill(&mut self, from: u64, len: u64) {
        let done = from.saturating_sub(self.base).min(self.buf.len() as u64);
        // `done <= buf.len()`, so it fits in usize.
        let done = usize::try_from(done).unwrap_or(self.buf.len());
        if done > 0 {
            self.buf.drain(..done);
            self.base = self.base.saturating_add(done as u64);
        }
        if self.eof {
            return;
        }
        let target = len.max(self.buf.len() as u64 + 1);
        match fill_to(&mut self.reader, &mut self.buf, target) {
            Ok(eof) => self.eof = eof,
            Err(err) => {
                self.eof = true;
                self.walker.cut(read_error(&err, self.compression));
            }
        }
    }

    /// The framing being read.
    pub fn framing(&self) -> Framing {
        self.walker.framing()
    }

    /// What [`with_compression`](Self::with_compression) said (`None` by default).
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The file name given to [`with_file`](Self::with_file).
    pub fn file(&self) -> Option<&str> {
        self.walker.file().map(|f| &**f)
    }

    /// The number of errors yielded so far.
    pub fn errors(&self) -> u64 {
        self.walker.errors()
    }

    /// What the error just yielded made the reader pass over; see
    /// [`Records::skipped`](crate::frame::Records::skipped).
    pub fn skipped(&self) -> Option<(u64, u64)> {
        self.walker.skipped()
    }

    /// The absolute offset (in the decompressed stream) where the next frame
    /// is expected.
    pub fn position(&self) -> u64 {
        self.walker.position()
    }

    /// The id the next frame will get.
    pub fn next_id(&self) -> u64 {
        self.walker.next_id()
    }

    /// The reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The reader (positioned after what has been read, read-ahead included).
    pub fn into_inner(self) -> R {
        self.reader
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::frame::{file_of, records, tfrecord_frame, ErrorPolicy};
    use std::io;

    /// A reader that gives at most `step` bytes per read.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    type Item = (Result<(u64, u64, u64, Vec<u8>), Error>, Option<(u64, u64)>);

    fn from_slice(buf: &[u8], framing: Framing, opts: ReadOptions) -> Vec<Item> {
        let mut it = records(buf, framing, opts);
        let mut out = Vec::new();
        while let Some(item) = it.next() {
            out.push((
                item.map(|r| (r.id, r.offset, r.end, r.data.to_vec())),
                it.skipped(),
            ));
        }
        out
    }

    fn from_stream(reader: impl Read, framing: Framing, opts: ReadOptions) -> Vec<Item> {
        let mut it = StreamRecords::new(reader, framing, opts);
        let mut out = Vec::new();
        while let Some(item) = it.next_record() {
            let item = item.map(|r| (r.id, r.offset, r.end, r.data.to_vec()));
            out.push((item, it.skipped()));
        }
        assert!(it.next_record().is_none());
        out
    }

    #[test]
    fn same_as_the_slice_iterator() {
        let mut file = file_of(Framing::TfRecord, [&b"zero"[..], b"", &[5; 200]]);
        let mut bad = tfrecord_frame(b"bad length");
        bad[1] = 9;
        file.extend_from_slice(&bad);
        file.extend_from_slice(&tfrecord_frame(b"after"));
        file.extend_from_slice(&[1, 2, 3]);
        for opts in [
            ReadOptions::default(),
            ReadOptions::default().with_policy(ErrorPolicy::skip()),
        ] {
            let expected = from_slice(&file, Framing::TfRecord, opts);
            for step in [1, 2, 5, 13, 1000, usize::MAX] {
                let got = from_stream(Dribble { data: &file, step }, Framing::TfRecord, opts);
                assert_eq!(got, expected, "step {step}");
            }
        }
    }

    #[test]
    fn a_huge_declared_length_allocates_nothing_big() {
        let len = 1u64 << 40;
        let mut file = len.to_le_bytes().to_vec();
        file.extend_from_slice(&crate::frame::masked_crc32c(&file).to_le_bytes());
        file.extend_from_slice(&[0; 3000]);
        let mut it = StreamRecords::new(&file[..], Framing::TfRecord, ReadOptions::default());
        let err = it.next_record().unwrap().unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedData {
                declared: len + 4,
                available: 3000
            }
        );
        assert!(
            it.buf.capacity() <= 4 * 1024 * 1024,
            "{}",
            it.buf.capacity()
        );
    }

    /// A reader that fails after giving its bytes.
    struct Failing<'a>(&'a [u8], io::ErrorKind);

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::new(self.1, "boom"));
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn read_errors_end_the_stream_at_the_frame_being_read() {
        let file = file_of(Framing::TfRecord, [&b"zero"[..], b"one"]);
        // After two whole frames: the error is at the third frame.
        let mut it = StreamRecords::new(
            Failing(&file, io::ErrorKind::InvalidData),
            Framing::TfRecord,
            ReadOptions::default(),
        )
        .with_compression(Compression::Gzip)
        .with_file("x.gz");
        assert_eq!(it.next_record().unwrap().unwrap().id, 0);
        assert_eq!(it.next_record().unwrap().unwrap().id, 1);
        let err = it.next_record().unwrap().unwrap_err();
        assert_eq!(
            err,
            Error::new(
                ErrorKind::Compression {
                    message: "gzip stream: boom".into()
                },
                39
            )
            .with_record(2)
            .with_file("x.gz")
        );
        assert!(it.next_record().is_none());

        // Inside the second frame, plain reader: an io_error at record 1.
        let mut it = StreamRecords::new(
            Failing(&file[..25], io::ErrorKind::Other),
            Framing::TfRecord,
            ReadOptions::default(),
        );
        assert!(it.next_record().unwrap().is_ok());
        let err = it.next_record().unwrap().unwrap_err();
        assert_eq!(
            (err.kind().name(), err.record(), err.offset()),
            ("io_error", Some(1), Some(20))
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn stream_matches_slice(
                datas in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 0..6),
                flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..3),
                garbage in proptest::collection::vec(any::<u8>(), 0..20),
                step in 1usize..40,
                skip in any::<bool>(),
                max_errors in proptest::option::of(1u64..3),
                ofrecord in any::<bool>(),
            ) {
                let framing = if ofrecord { Framing::OfRecord } else { Framing::TfRecord };
                let mut file = file_of(framing, datas.iter().map(|d| &d[..]));
                if !file.is_empty() {
                    for (at, x) in flips {
                        let i = at.index(file.len());
                        file[i] ^= x;
                    }
                }
                file.extend_from_slice(&garbage);
                let policy = if skip { ErrorPolicy::Skip { max_errors } } else { ErrorPolicy::Fail };
                let opts = ReadOptions::default().with_policy(policy);
                let expected = from_slice(&file, framing, opts);
                let got = from_stream(Dribble { data: &file, step }, framing, opts);
                prop_assert_eq!(got, expected);
            }
        }
    }
}

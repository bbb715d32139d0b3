//! Building an index: one pass over the frames.

use std::io::Read;

use super::fingerprint::{Sampler, EDGE};
use super::table::Index;
use crate::error::Error;
use crate::frame::{is_pad, parse_frame, Framing, ReadOptions, Status};
use crate::io::{decoder, resolve, OpenOptions, StreamRecords};

/// [`Index::build_with_progress`] reports at least every this many bytes.
const PROGRESS_STEP: usize = 16 << 20;

impl Index {
    /// Builds the index of the record file whose whole content is `buf`, in
    /// one pass over its frames.
    ///
    /// Memory: the table, 8 bytes per record (in a growing `Vec`; it is
    /// shrunk to fit at the end). Every TFRecord length CRC is checked (the
    /// lengths are what the index is made of); the data CRCs only when
    /// `verify_crcs` (which then reads every byte, and is recorded in the
    /// index: [`crcs_verified`](Index::crcs_verified)). Pad frames are left
    /// out.
    ///
    /// Errors: the framing layer's (docs/FORMAT.md §8.1: `truncated_header`,
    /// `truncated_data`, `length_crc_mismatch`, `data_crc_mismatch`,
    /// `invalid_length`) at the first damaged frame, with its offset and the
    /// id it would have had. There is no skip policy: an index of a damaged
    /// file would be wrong.
    ///
    /// ```
    /// use recordwire::frame::{file_of, Framing};
    /// use recordwire::index::Index;
    ///
    /// let mut data = file_of(Framing::OfRecord, [&b"a"[..], b"bc"]);
    /// assert_eq!(Index::build(&data, Framing::OfRecord, false)?.offsets(), [0, 9, 19]);
    /// data.truncate(18);
    /// let err = Index::build(&data, Framing::OfRecord, false).unwrap_err();
    /// assert_eq!((err.kind().name(), err.record(), err.offset()), ("truncated_data", Some(1), Some(9)));
    /// # Ok::<(), recordwire::Error>(())
    /// ```
    pub fn build(buf: &[u8], framing: Framing, verify_crcs: bool) -> Result<Index, Error> {
        Index::build_with_progress(buf, framing, verify_crcs, |_| {})
    }

    /// [`build`](Self::build), calling `progress` with the number of bytes
    /// done every 16 MiB or so, and once at the end (for a progress bar).
    pub fn build_with_progress(
        buf: &[u8],
        framing: Framing,
        verify_crcs: bool,
        mut progress: impl FnMut(u64),
    ) -> Result<Index, Error> {
        // The builder sees pad frames (to flag them) and skips them itself.
        let opts = ReadOptions::default()
            .with_length_crc(true)
            .with_data_crc(verify_crcs)
            .with_skip_pads(false);
        let mut offsets: Vec<u64> = Vec::new();
        let mut last_end: u64 = 0;
        let mut pads = false;
        let mut pos: usize = 0;
        let mut next_report = PROGRESS_STEP;
        while let Some(rest) = buf.get(pos..).filter(|r| !r.is_empty()) {
            let at = pos as u64;
            let id = offsets.len() as u64;
            match parse_frame(rest, framing, &opts) {
                Ok(Status::Complete(frame)) => {
                    // `frame.len <= rest.len()`: no overflow.
                    let end = pos + frame.len;
                    if is_pad(frame.data) {
                        pads = true;
                    } else {
                        offsets.push(at);
                        last_end = end as u64;
                    }
                    pos = end;
                }
                Ok(Status::Incomplete(more)) => {
                    return Err(Error::new(more.error_kind(), at).with_record(id))
                }
                Err(damage) => return Err(Error::new(damage.kind(), at).with_record(id)),
            }
            if pos >= next_report {
                progress(pos as u64);
                next_report = pos.saturating_add(PROGRESS_STEP);
            }
        }
        progress(buf.len() as u64);
        offsets.push(last_end);
        offsets.shrink_to_fit();
        Ok(Index::from_offsets(
            framing,
            offsets,
            buf,
            verify_crcs,
            pads,
        ))
    }

    /// Builds the index of a record file read from `reader` (a pipe, stdin, a
    /// compressed file), in one pass with bounded memory: the table (8 bytes
    /// per record), the current frame, and 8 KiB for the fingerprint.
    ///
    /// Framing and compression are detected from the first bytes unless
    /// `options` name them, as [`Source`](crate::io::Source) does; a GZIP or
    /// ZLIB stream is decompressed, and **the offsets then refer to the
    /// decompressed stream** (and the data size is its size), which is what
    /// [`RecordFile`](crate::io::RecordFile) holds for such a file: the index
    /// is the same as [`build`](Self::build) over the decompressed content.
    /// The data CRCs are verified when `options.read.check_data_crc`; length
    /// CRCs always; the error policy is not used (the first error ends the
    /// build). Errors are those of [`build`](Self::build), plus
    /// `compression_error` and `io_error`.
    ///
    /// For progress, wrap `reader` in a reader that counts the bytes.
    ///
    /// ```
    /// use std::io::Write;
    /// use flate2::{write::GzEncoder, Compression as Level};
    /// use recordwire::frame::{file_of, Framing};
    /// use recordwire::index::Index;
    /// use recordwire::io::OpenOptions;
    ///
    /// let plain = file_of(Framing::TfRecord, [&b"one"[..], b"two"]);
    /// let mut gz = GzEncoder::new(Vec::new(), Level::default());
    /// gz.write_all(&plain)?;
    /// let gz = gz.finish()?;
    ///
    /// let index = Index::build_from_reader(std::io::Cursor::new(gz), &OpenOptions::default())?;
    /// assert_eq!(index, Index::build(&plain, Framing::TfRecord, true)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_from_reader(
        reader: impl Read + Send + 'static,
        options: &OpenOptions,
    ) -> Result<Index, Error> {
        let mut reader = reader;
        let prefix =
            read_prefix(&mut reader, crate::frame::TFRECORD_HEADER_LEN).map_err(Error::io)?;
        let crate::io::Resolved {
            compression,
            framing,
            basis,
        } = resolve(&prefix, None, options);
        let reader = decoder(std::io::Cursor::new(prefix).chain(reader), compression);
        Index::build_stream(
            reader,
            framing,
            compression,
            basis,
            options.read.check_data_crc,
        )
    }

    /// [`build_from_reader`](Self::build_from_reader) once the framing is
    /// known: `reader` gives the (decompressed) frames; `compression` says
    /// what decompressed them, for the kind of its read errors.
    pub(crate) fn build_stream(
        reader: impl std::io::Read + Send,
        framing: Framing,
        compression: crate::io::Compression,
        basis: crate::frame::Basis,
        verify_crcs: bool,
    ) -> Result<Index, Error> {
        // The builder sees pad frames (to flag them) and skips them itself.
        let opts = ReadOptions::default()
            .with_length_crc(true)
            .with_data_crc(verify_crcs)
            .with_skip_pads(false);
        let tee = Tee::new(reader);
        let mut stream = StreamRecords::new(tee, framing, opts)
            .with_compression(compression)
            .with_basis(basis);
        let mut offsets: Vec<u64> = Vec::new();
        let mut sampler = Sampler::new();
        let mut last_end = 0;
        let mut pads = false;
        while let Some(item) = stream.next_record() {
            let id = offsets.len() as u64;
            // Ids in errors count records, not the pad frames before them.
            let record = item.map_err(|e| e.with_record(id))?;
            if is_pad(record.data) {
                pads = true;
                continue;
            }
            sampler.push(id, record.offset, record.data.len() as u64);
            offsets.push(record.offset);
            last_end = record.end;
        }
        let tee = stream.into_inner();
        offsets.push(last_end);
        offsets.shrink_to_fit();
        let tail = tee.tail();
        let fingerprint = sampler.finish(framing, tee.total, &tee.head, tail, last_end);
        Ok(Index::from_parts(
            framing,
            offsets,
            tee.total,
            fingerprint,
            verify_crcs,
            pads,
        ))
    }
}

/// Reads up to `len` bytes (fewer only at the end of the input).
fn read_prefix(reader: &mut impl Read, len: usize) -> std::io::Result<Vec<u8>> {
    let mut prefix = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        match reader.read(&mut prefix[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    prefix.truncate(filled);
    Ok(prefix)
}

/// A reader that remembers the first and last [`EDGE`] bytes that pass
/// through it, and counts them.
struct Tee<R> {
    inner: R,
    total: u64,
    head: Vec<u8>,
    /// The last bytes read: at least the last `EDGE` (up to `3 EDGE` before trimming).
    tail: Vec<u8>,
}

impl<R> Tee<R> {
    fn new(inner: R) -> Self {
        Tee {
            inner,
            total: 0,
            head: Vec::with_capacity(EDGE),
            tail: Vec::with_capacity(3 * EDGE),
        }
    }

    /// The last `min(total, EDGE)` bytes.
    fn tail(&self) -> &[u8] {
        &self.tail[self.tail.len().saturating_sub(EDGE)..]
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n.min(buf.len())];
        self.total = self.total.saturating_add(got.len() as u64);
        let room = EDGE - self.head.len();
        self.head.extend_from_slice(&got[..room.min(got.len())]);
        self.tail
            .extend_from_slice(&got[got.len().saturating_sub(EDGE)..]);
        if self.tail.len() > 2 * EDGE {
            let cut = self.tail.len() - EDGE;
            self.tail.drain(..cut);
        }
        Ok(n)
    }
}

//! Building a checkpoint index: one pass of `crate::deflate` over the
//! compressed file, recording checkpoints at block starts, with the frames of
//! the decompressed stream indexed by the plain index's own streaming builder.

use std::io::{self, Read};

use bytes::Bytes;

use super::{Checkpoint, GzIndex, MIN_SPACING};
use crate::deflate::{
    end_byte, gzip_header, gzip_trailer, zlib_header, zlib_trailer, Adler32, Inflate, Progress,
    GZIP_TRAILER_LEN, WINDOW, ZLIB_TRAILER_LEN,
};
use crate::error::Error;
use crate::frame::{Basis, Framing};
use crate::index::table::Index;
use crate::io::Compression;

/// Output decoded per call of the inflater before the frames see it.
const STEP: usize = 256 * 1024;
/// Output kept before it is dropped (all but the last window).
const KEEP: usize = 4 << 20;

/// Where the walk over the compressed file is.
enum State {
    /// Before a GZIP member header, or (ZLIB) the stream header.
    Header { at: usize },
    /// Inside a member's deflate data.
    Body,
    /// After the last member (or the ZLIB stream): reads return 0.
    Done,
}

/// The checkpoints and windows gathered so far.
#[derive(Default)]
pub(super) struct Found {
    pub points: Vec<Checkpoint>,
    pub windows: Vec<u8>,
    /// Decompressed offsets where a GZIP member starts.
    pub member_starts: Vec<u64>,
}

/// A `Read` of the decompressed stream that records checkpoints as it goes.
pub(super) struct Walker<'a> {
    data: &'a [u8],
    compression: Compression,
    spacing: u64,
    state: State,
    inflate: Inflate,
    /// Decoded output; `out[0]` is decompressed offset `base`.
    out: Vec<u8>,
    base: u64,
    /// Bytes of `out` handed to the reader.
    read: usize,
    /// Bytes of `out` in the checksum.
    hashed: usize,
    /// Decompressed offset where the current member starts.
    member_start: u64,
    last_point: u64,
    crc: flate2::Crc,
    adler: Adler32,
    window_encoder: flate2::Compress,
    pub(super) found: Found,
    /// An inflate error met after some output of its step: the output is
    /// handed out first (the records before the damage), then the error.
    pending: Option<io::Error>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(data: &'a [u8], compression: Compression, spacing: u64) -> Self {
        Walker {
            data,
            compression,
            spacing: spacing.max(MIN_SPACING),
            state: State::Header { at: 0 },
            inflate: Inflate::at(0),
            out: Vec::with_capacity(KEEP + STEP + 512),
            base: 0,
            read: 0,
            hashed: 0,
            member_start: 0,
            last_point: 0,
            crc: flate2::Crc::new(),
            adler: Adler32::new(),
            window_encoder: flate2::Compress::new(flate2::Compression::fast(), false),
            found: Found::default(),
            pending: None,
        }
    }

    fn now(&self) -> u64 {
        self.base + self.out.len() as u64
    }

    fn invalid(what: impl std::fmt::Display) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, what.to_string())
    }

    /// A checkpoint here: at `bit`, with the window before it (none at a
    /// member start).
    fn point(&mut self, bit: u64) -> io::Result<()> {
        let now = self.now();
        let from = self
            .out
            .len()
            .saturating_sub(WINDOW)
            .max(self.member_start.saturating_sub(self.base) as usize);
        let window = &self.out[from..];
        let window_at = self.found.windows.len() as u64;
        if !window.is_empty() {
            self.window_encoder.reset();
            let room = window.len() + window.len() / 8 + 64;
            self.found.windows.reserve(room);
            let status = self.window_encoder.compress_vec(
                window,
                &mut self.found.windows,
                flate2::FlushCompress::Finish,
            )?;
            if status != flate2::Status::StreamEnd {
                return Err(io::Error::other(
                    "a window did not fit its compressed bound",
                ));
            }
        }
        self.found.points.push(Checkpoint {
            out: now,
            bit,
            window_at,
            window_clen: (self.found.windows.len() as u64 - window_at) as u32,
            window_len: window.len() as u32,
        });
        self.last_point = now;
        Ok(())
    }

    fn hash(&mut self) {
        let new = &self.out[self.hashed..];
        match self.compression {
            Compression::Zlib => self.adler.update(new),
            _ => self.crc.update(new),
        }
        self.hashed = self.out.len();
    }

    /// Decodes some more output (or reaches the end).
    fn step(&mut self) -> io::Result<()> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        // Everything handed out: drop what no back-reference can reach.
        if self.out.len() > KEEP && self.read == self.out.len() {
            let drop = self.out.len() - WINDOW;
            self.out.drain(..drop);
            self.base += drop as u64;
            self.read -= drop;
            self.hashed -= drop;
        }
        match self.state {
            State::Done => Ok(()),
            State::Header { at } => {
                let start = match self.compression {
                    Compression::Zlib => zlib_header(self.data, at).map(|h| h.deflate_start),
                    _ => gzip_header(self.data, at).map(|h| h.deflate_start),
                }
                .map_err(Self::invalid)?;
                self.member_start = self.now();
                self.found.member_starts.push(self.member_start);
                self.crc = flate2::Crc::new();
                self.adler = Adler32::new();
                let bit = start as u64 * 8;
                self.inflate = Inflate::at(bit);
                self.point(bit)?;
                self.state = State::Body;
                Ok(())
            }
            State::Body => {
                let limit = self.out.len() + STEP;
                let before = self.out.len();
                let progress = match self.inflate.run(self.data, &mut self.out, limit, true) {
                    Ok(progress) => progress,
                    // The output before the damage first, then the error.
                    Err(e) if self.out.len() > before => {
                        self.pending = Some(Self::invalid(e));
                        return Ok(());
                    }
                    Err(e) => return Err(Self::invalid(e)),
                };
                self.hash();
                match progress {
                    Progress::Limit => {}
                    Progress::Block { bit } => {
                        if self.now() - self.last_point >= self.spacing {
                            self.point(bit)?;
                        }
                    }
                    Progress::End { bit } => {
                        let at = end_byte(bit);
                        self.state = match self.compression {
                            Compression::Zlib => {
                                zlib_trailer(self.data, at)
                                    .and_then(|t| t.check(&self.adler))
                                    .map_err(Self::invalid)?;
                                let after = at + ZLIB_TRAILER_LEN;
                                if after != self.data.len() {
                                    return Err(Self::invalid(format_args!(
                                        "{} bytes after the end of the ZLIB stream",
                                        self.data.len() - after
                                    )));
                                }
                                State::Done
                            }
                            _ => {
                                gzip_trailer(self.data, at)
                                    .and_then(|t| t.check(&self.crc))
                                    .map_err(Self::invalid)?;
                                let after = at + GZIP_TRAILER_LEN;
                                if after == self.data.len() {
                                    State::Done
                                } else {
                                    State::Header { at: after }
                                }
                            }
                        };
                    }
                }
                Ok(())
            }
        }
    }
}

impl Read for Walker<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.read == self.out.len() {
            if matches!(self.state, State::Done) {
                return Ok(0);
            }
            self.step()?;
        }
        let n = buf.len().min(self.out.len() - self.read);
        buf[..n].copy_from_slice(&self.out[self.read..self.read + n]);
        self.read += n;
        Ok(n)
    }
}

impl GzIndex {
    /// Builds the checkpoint index of `data`, a whole GZIP (any number of
    /// members) or ZLIB file of `framing` records, in one pass and constant
    /// memory: a checkpoint at the start of every GZIP member (or of the ZLIB
    /// stream), and one at the first deflate block that starts at least
    /// `spacing` bytes of output after the last (1: at every block), with
    /// the 32 KiB of output before it (stored compressed). The records are
    /// indexed as [`Index::build_from_reader`] indexes a decompressed
    /// stream: data CRCs checked when `verify_crcs`, pad frames flagged.
    ///
    /// Errors: any error of the frames (kind, decompressed offset, record
    /// id), and `compression_error` for damaged compressed data, bad headers
    /// or checksums, or bytes after the last member (the whole stream is
    /// checked, trailers included).
    ///
    /// ```
    /// use std::io::Write;
    /// use recordwire::frame::{file_of, Framing, ReadOptions};
    /// use recordwire::index::GzIndex;
    /// use recordwire::io::Compression;
    ///
    /// let records: Vec<Vec<u8>> = (0..2000).map(|i| format!("record {i}").into_bytes()).collect();
    /// let plain = file_of(Framing::TfRecord, records.iter().map(|r| &r[..]));
    /// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    /// gz.write_all(&plain)?;
    /// let gz = bytes::Bytes::from(gz.finish()?);
    ///
    /// let index = GzIndex::build(&gz, Compression::Gzip, Framing::TfRecord, 4096, true)?;
    /// assert_eq!(index.len(), 2000);
    /// let mut cache = Default::default();
    /// let record = index.get(&gz, 1234, &ReadOptions::default(), &mut cache)?.unwrap();
    /// assert_eq!(record.data, b"record 1234");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(
        data: &Bytes,
        compression: Compression,
        framing: Framing,
        spacing: u64,
        verify_crcs: bool,
    ) -> Result<GzIndex, Error> {
        let compression = match compression {
            Compression::Zlib => Compression::Zlib,
            _ => Compression::Gzip,
        };
        let mut walker = Walker::new(data, compression, spacing);
        let records =
            Index::build_stream(&mut walker, framing, compression, Basis::Named, verify_crcs)?;
        let spacing = walker.spacing;
        let found = std::mem::take(&mut walker.found);
        let offsets = records.offsets();
        // Block-compressed: more than one member, and each starts a record
        // (or the end).
        let end = records.data_size();
        let block_compressed = found.member_starts.len() > 1
            && found
                .member_starts
                .iter()
                .all(|s| *s == end || offsets.binary_search(s).is_ok());
        Ok(GzIndex::from_parts(
            data,
            compression,
            spacing,
            found.points,
            Bytes::from(found.windows),
            records,
            block_compressed,
        ))
    }
}

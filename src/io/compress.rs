//! Decompression of whole-file GZIP and ZLIB streams, and reading in bounded chunks.

use std::io::{self, BufRead, BufReader, Read};

use super::Compression;
use crate::error::ErrorKind;

/// The smallest read the readers ask for (read-ahead for small frames).
pub(crate) const MIN_READ: usize = 64 * 1024;
/// The largest read the readers ask for: a buffer never grows by more than
/// this beyond the bytes that have really arrived.
pub(crate) const MAX_READ: usize = 1024 * 1024;

/// Which container wraps the deflate data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    Zlib,
    Gzip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before a GZIP member header (or the end of a multi-member file).
    Header { first: bool },
    /// Inside the deflate data.
    Body,
    /// After the deflate data: the GZIP trailer, or the end of a ZLIB file.
    Trailer,
    /// Done (or failed): reads return 0.
    End,
}

/// A strict streaming inflater over `flate2::Decompress`, for whole-file
/// GZIP (every member of a multi-member file) and ZLIB streams.
///
/// - **No lost output.** Every byte decompressed before damage is returned;
///   the error comes on the next read. (flate2's `read` decoders return an
///   error for a read that produced bytes and then met the damage, and drop
///   those bytes: up to a whole read of records before the damage.)
/// - **Strict.** A stream that ends before its end marker and checksum is
///   `UnexpectedEof`; bytes after a ZLIB stream, or after a GZIP member that
///   are not another member, are `InvalidData`, as are bad headers,
///   checksums and lengths.
#[derive(Debug)]
pub struct Inflater<R> {
    inner: R,
    container: Container,
    state: State,
    inflate: flate2::Decompress,
    crc: flate2::Crc,
    /// An error met after returning the bytes decoded before it.
    pending: Option<io::Error>,
    /// Decompressed bytes not yet read: `out[start..end]`. The inflater
    /// always writes into this buffer with at least [`Self::OUT`] bytes of
    /// room, more than its 32 KiB window, so whatever it has decoded when it
    /// meets damage is written out, whatever size the caller reads in.
    out: Vec<u8>,
    start: usize,
    end: usize,
}

/// A strict ZLIB decoder ([`Inflater`] for ZLIB). TensorFlow's ZLIB record
/// files hold exactly one ZLIB stream, so anything after it is garbage.
pub type ZlibReader<R> = Inflater<R>;

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

fn early_end(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the stream ends inside {what}"),
    )
}

impl<R: BufRead> Inflater<R> {
    /// A decoder of the ZLIB stream in `reader`.
    pub fn new(reader: R) -> Self {
        Inflater::with(reader, Container::Zlib)
    }

    /// A decoder of the GZIP members in `reader`.
    pub fn gzip(reader: R) -> Self {
        Inflater::with(reader, Container::Gzip)
    }

    fn with(inner: R, container: Container) -> Self {
        Inflater {
            inner,
            container,
            state: match container {
                Container::Zlib => State::Body,
                Container::Gzip => State::Header { first: true },
            },
            inflate: flate2::Decompress::new(container == Container::Zlib),
            crc: flate2::Crc::new(),
            pending: None,
            out: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    /// Room the inflater is given for each call (twice its window).
    const OUT: usize = 64 * 1024;

    /// Reads exactly `out.len()` bytes of a header or trailer.
    fn read_exact(&mut self, out: &mut [u8], what: &str) -> io::Result<()> {
        self.inner.read_exact(out).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => early_end(what),
            _ => e,
        })
    }

    /// Skips a zero-terminated header field.
    fn skip_zero_terminated(&mut self) -> io::Result<()> {
        loop {
            let mut b = [0u8; 1];
            self.read_exact(&mut b, "a GZIP header")?;
            if b[0] == 0 {
                return Ok(());
            }
        }
    }

    /// Reads a GZIP member header; `Ok(false)` at the clean end of the input
    /// between members (not allowed before the first).
    fn header(&mut self, first: bool) -> io::Result<bool> {
        if !first && self.inner.fill_buf()?.is_empty() {
            return Ok(false);
        }
        let mut h = [0u8; 10];
        self.read_exact(&mut h, "a GZIP header")?;
        if h[0] != 0x1f || h[1] != 0x8b {
            return Err(invalid(if first {
                "not a GZIP header"
            } else {
                "trailing bytes after the last GZIP member"
            }));
        }
        if h[2] != 8 {
            return Err(invalid(format!(
                "GZIP compression method {} is not deflate",
                h[2]
            )));
        }
        let flags = h[3];
        if flags & 0xe0 != 0 {
            return Err(invalid("reserved GZIP header flags are set"));
        }
        if flags & 0x04 != 0 {
            let mut len = [0u8; 2];
            self.read_exact(&mut len, "a GZIP header")?;
            let mut left = u16::from_le_bytes(len) as usize;
            while left > 0 {
                let mut chunk = [0u8; 256];
                let n = left.min(chunk.len());
                self.read_exact(&mut chunk[..n], "a GZIP header")?;
                left -= n;
            }
        }
        if flags & 0x08 != 0 {
            self.skip_zero_terminated()?;
        }
        if flags & 0x10 != 0 {
            self.skip_zero_terminated()?;
        }
        if flags & 0x02 != 0 {
            let mut crc16 = [0u8; 2];
            self.read_exact(&mut crc16, "a GZIP header")?;
        }
        Ok(true)
    }

    /// Checks a GZIP trailer (CRC-32 and length of the member's data).
    fn gzip_trailer(&mut self) -> io::Result<()> {
        let mut t = [0u8; 8];
        self.read_exact(&mut t, "a GZIP trailer")?;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != self.crc.sum() {
            return Err(invalid("GZIP member CRC-32 mismatch"));
        }
        if size != self.crc.amount() {
            return Err(invalid("GZIP member length mismatch"));
        }
        Ok(())
    }

    fn step(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self.state {
            State::End => Ok(Some(0)),
            State::Header { first } => {
                if self.header(first)? {
                    self.inflate.reset(false);
                    self.crc.reset();
                    self.state = State::Body;
                } else {
                    self.state = State::End;
                }
                Ok(None)
            }
            State::Trailer => {
                match self.container {
                    Container::Gzip => {
                        self.gzip_trailer()?;
                        self.state = State::Header { first: false };
                    }
                    Container::Zlib => {
                        // The checksum was checked by the inflater; nothing may follow.
                        if !self.inner.fill_buf()?.is_empty() {
                            return Err(invalid("trailing bytes after the end of the zlib stream"));
                        }
                        self.state = State::End;
                    }
                }
                Ok(None)
            }
            State::Body => {
                let input = self.inner.fill_buf()?;
                let eof = input.is_empty();
                let (in_before, out_before) = (self.inflate.total_in(), self.inflate.total_out());
                let result = self
                    .inflate
                    .decompress(input, buf, flate2::FlushDecompress::None);
                let consumed = (self.inflate.total_in() - in_before) as usize;
                let produced = (self.inflate.total_out() - out_before) as usize;
                self.inner.consume(consumed);
                if self.container == Container::Gzip {
                    self.crc.update(&buf[..produced]);
                }
                let error = match result {
                    Ok(flate2::Status::StreamEnd) => {
                        self.state = State::Trailer;
                        None
                    }
                    Ok(_) if produced == 0 && consumed == 0 => Some(if eof {
                        early_end("the compressed data")
                    } else {
                        invalid("the inflater made no progress")
                    }),
                    Ok(_) => None,
                    Err(e) => Some(invalid(format!("corrupt deflate stream ({e})"))),
                };
                match (error, produced) {
                    (Some(e), 0) => Err(e),
                    (Some(e), n) => {
                        self.pending = Some(e);
                        Ok(Some(n))
                    }
                    (None, 0) => Ok(None),
                    (None, n) => Ok(Some(n)),
                }
            }
        }
    }
}

impl<R: BufRead> Read for Inflater<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.start == self.end {
            if let Some(e) = self.pending.take() {
                self.state = State::End;
                return Err(e);
            }
            if self.out.is_empty() {
                self.out = vec![0; Self::OUT];
            }
            let mut out = std::mem::take(&mut self.out);
            let filled = loop {
                match self.step(&mut out) {
                    Ok(Some(n)) => break Ok(n),
                    Ok(None) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => break Err(e),
                    Err(e) => {
                        self.state = State::End;
                        break Err(e);
                    }
                }
            };
            self.out = out;
            let n = filled?;
            (self.start, self.end) = (0, n);
        }
        let n = buf.len().min(self.end - self.start);
        buf[..n].copy_from_slice(&self.out[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

/// `reader`'s bytes, decompressed as `compression` says (`None` and `Auto`
/// pass them through): GZIP and ZLIB with [`Inflater`] (every member of a
/// multi-member GZIP file; an error for anything after the last member or
/// the ZLIB stream; every byte before damage delivered).
pub fn decoder<R: Read + Send + 'static>(
    reader: R,
    compression: Compression,
) -> Box<dyn Read + Send> {
    match compression {
        Compression::Auto | Compression::None => Box::new(reader),
        Compression::Gzip => Box::new(Inflater::gzip(BufReader::new(reader))),
        Compression::Zlib => Box::new(Inflater::new(BufReader::new(reader))),
    }
}

/// The error kind of a failed read from a reader of `compression`: what a
/// decompressor says about its input (corrupt, truncated, garbage after the
/// stream) is a `compression_error`, anything else an `io_error`.
pub(crate) fn read_error(err: &io::Error, compression: Compression) -> ErrorKind {
    // One of ours carried through `Read` (a remote object's stream): its
    // own kind and message, without its file and offset, which the caller
    // gives again (the record's).
    if let Some(ours) = err.get_ref().and_then(|e| e.downcast_ref::<crate::Error>()) {
        return ours.kind().clone();
    }
    let from_decompressor = matches!(
        err.kind(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
    );
    match compression {
        Compression::Gzip | Compression::Zlib if from_decompressor => ErrorKind::Compression {
            message: format!("{} stream: {err}", compression.name()).into(),
        },
        _ => ErrorKind::Io {
            message: err.to_string().into(),
            io_kind: err.kind(),
        },
    }
}

/// Reads from `reader` onto the end of `buf` until `buf` holds `target` bytes
/// or the reader ends; `Ok(true)` when it ended.
///
/// Each read asks for at most [`MAX_READ`] bytes, so `buf` grows only as bytes
/// really arrive, whatever `target` is.
pub(crate) fn fill_to(reader: &mut impl Read, buf: &mut Vec<u8>, target: u64) -> io::Result<bool> {
    while (buf.len() as u64) < target {
        let want = target - buf.len() as u64;
        let chunk = usize::try_from(want)
            .unwrap_or(MAX_READ)
            .clamp(MIN_READ, MAX_READ);
        let old = buf.len();
        buf.resize(old.saturating_add(chunk), 0);
        let result = reader.read(buf.get_mut(old..).unwrap_or_default());
        match result {
            Ok(0) => {
                buf.truncate(old);
                return Ok(true);
            }
            Ok(n) => buf.truncate(old.saturating_add(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(old),
            Err(e) => {
                buf.truncate(old);
                return Err(e);
            }
        }
    }
    Ok(false)
}

/// Everything `reader` gives, and the error that stopped it early, if any.
pub(crate) fn read_all(mut reader: impl Read) -> (Vec<u8>, Option<io::Error>) {
    let mut out = Vec::new();
    match fill_to(&mut reader, &mut out, u64::MAX) {
        Ok(_) => (out, None),
        Err(e) => (out, Some(e)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn zlib_round_trip_and_trailing_garbage() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let z = zlib(&data);
        let (out, err) = read_all(ZlibReader::new(&z[..]));
        assert!(err.is_none());
        assert_eq!(out, data);

        let mut garbage = z.clone();
        garbage.extend_from_slice(b"junk");
        let (out, err) = read_all(ZlibReader::new(&garbage[..]));
        assert_eq!(out, data, "everything before the garbage is delivered");
        let err = err.unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let kind = read_error(&err, Compression::Zlib);
        assert_eq!(kind.name(), "compression_error");
        assert_eq!(
            kind.to_string(),
            "zlib stream: trailing bytes after the end of the zlib stream"
        );

        let (out, err) = read_all(ZlibReader::new(&z[..z.len() - 3]));
        assert!(out.len() <= data.len());
        assert_eq!(err.unwrap().kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn gzip_multi_member_and_garbage() {
        let mut two = gzip(b"hello ");
        two.extend_from_slice(&gzip(b"world"));
        let (out, err) = read_all(decoder(io::Cursor::new(two.clone()), Compression::Gzip));
        assert!(err.is_none());
        assert_eq!(out, b"hello world");

        two.extend_from_slice(b"\0\0\0\0");
        let (out, err) = read_all(decoder(io::Cursor::new(two), Compression::Gzip));
        assert_eq!(out, b"hello world");
        assert_eq!(
            read_error(&err.unwrap(), Compression::Gzip).name(),
            "compression_error"
        );
    }

    #[test]
    fn gzip_optional_header_fields_and_damage_after_valid_output() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut gz = flate2::GzBuilder::new()
            .filename("a.tfrecord")
            .comment("made by a test")
            .extra(vec![1, 2, 3, 4])
            .write(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &data).unwrap();
        let gz = gz.finish().unwrap();
        let (out, err) = read_all(Inflater::gzip(&gz[..]));
        assert!(err.is_none(), "{err:?}");
        assert_eq!(out, data);
        // A wrong CRC-32 in the trailer: all the data, then the error.
        let mut bad = gz.clone();
        let n = bad.len();
        bad[n - 8] ^= 1;
        let (out, err) = read_all(Inflater::gzip(&bad[..]));
        assert_eq!(out, data);
        assert_eq!(err.unwrap().kind(), io::ErrorKind::InvalidData);
        // A ZLIB stream whose second block is damaged keeps the first
        // block's output (a stored block of 1000 bytes, then a reserved
        // block type), however small the reads.
        let mut z = vec![0x78, 0x01, 0x00, 0xe8, 0x03, 0x17, 0xfc];
        z.extend_from_slice(&data[..1000]);
        z.push(0x07); // BFINAL = 1, BTYPE = 11 (reserved)
        for chunk in [65536usize, 4096, 1000, 7, 1] {
            let mut r = Inflater::new(&z[..]);
            let mut out = Vec::new();
            let mut buf = vec![0u8; chunk];
            let err = loop {
                match r.read(&mut buf) {
                    Ok(0) => break None,
                    Ok(k) => out.extend_from_slice(&buf[..k]),
                    Err(e) => break Some(e),
                }
            };
            assert_eq!(out, data[..1000], "reads of {chunk}");
            assert_eq!(err.unwrap().kind(), io::ErrorKind::InvalidData);
            assert_eq!(r.read(&mut buf).unwrap(), 0, "ended after the error");
        }
    }

    #[test]
    fn read_errors_of_plain_readers_are_io_errors() {
        let err = io::Error::new(io::ErrorKind::UnexpectedEof, "eof");
        assert_eq!(read_error(&err, Compression::None).name(), "io_error");
        let err = io::Error::new(io::ErrorKind::PermissionDenied, "no");
        assert_eq!(read_error(&err, Compression::Gzip).name(), "io_error");
    }

    /// A reader that gives at most 3 bytes per read and is interrupted every other call.
    struct Dribble<'a>(&'a [u8], bool);

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(3).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn fill_to_grows_only_as_bytes_arrive() {
        let data = [7u8; 10];
        let mut buf = Vec::new();
        // Ask for a terabyte: get what there is, and a small buffer.
        assert!(fill_to(&mut Dribble(&data, false), &mut buf, 1 << 40).unwrap());
        assert_eq!(buf, data);
        assert!(buf.capacity() <= 2 * MAX_READ);

        let mut buf = vec![1];
        assert!(!fill_to(&mut Dribble(&data, false), &mut buf, 5).unwrap());
        assert_eq!(
            buf.len(),
            7,
            "stops as soon as the target is reached: 1 + 3 + 3"
        );
    }
}

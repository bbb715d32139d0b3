//! Decompression of whole-file GZIP and ZLIB streams, and reading in bounded chunks.

use std::io::{self, BufRead, BufReader, Read};

use flate2::read::MultiGzDecoder;

use super::Compression;
use crate::error::ErrorKind;

/// The smallest read the readers ask for (read-ahead for small frames).
pub(crate) const MIN_READ: usize = 64 * 1024;
/// The largest read the readers ask for: a buffer never grows by more than
/// this beyond the bytes that have really arrived.
pub(crate) const MAX_READ: usize = 1024 * 1024;

/// A strict ZLIB decoder: like flate2's `ZlibDecoder`, but bytes after the end
/// of the ZLIB stream are an error (`InvalidData`), as is a stream that ends
/// before its end marker and checksum (`UnexpectedEof`).
///
/// TensorFlow's ZLIB record files hold exactly one ZLIB stream, so anything
/// after it is garbage.
#[derive(Debug)]
pub struct ZlibReader<R> {
    inner: flate2::bufread::ZlibDecoder<R>,
    finished: bool,
}

impl<R: BufRead> ZlibReader<R> {
    /// A decoder of the ZLIB stream in `reader`.
    pub fn new(reader: R) -> Self {
        ZlibReader {
            inner: flate2::bufread::ZlibDecoder::new(reader),
            finished: false,
        }
    }
}

impl<R: BufRead> Read for ZlibReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.finished || buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            // The stream has ended (flate2 reports an early end as UnexpectedEof):
            // nothing may follow it.
            if !self.inner.get_mut().fill_buf()?.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "trailing bytes after the end of the zlib stream",
                ));
            }
            self.finished = true;
        }
        Ok(n)
    }
}

/// `reader`'s bytes, decompressed as `compression` says (`None` and `Auto`
/// pass them through): GZIP with [`MultiGzDecoder`] (every member of a
/// multi-member file, and an error for anything after the last member that is
/// not another member), ZLIB with [`ZlibReader`].
pub fn decoder<R: Read + Send + 'static>(
    reader: R,
    compression: Compression,
) -> Box<dyn Read + Send> {
    match compression {
        Compression::Auto | Compression::None => Box::new(reader),
        Compression::Gzip => Box::new(MultiGzDecoder::new(reader)),
        Compression::Zlib => Box::new(ZlibReader::new(BufReader::new(reader))),
    }
}

/// The error kind of a failed read from a reader of `compression`: what a
/// decompressor says about its input (corrupt, truncated, garbage after the
/// stream) is a `compression_error`, anything else an `io_error`.
pub(crate) fn read_error(err: &io::Error, compression: Compression) -> ErrorKind {
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

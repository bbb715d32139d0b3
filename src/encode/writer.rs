//! Record writers: TFRecord (both CRCs) and OFRecord frames, optionally in a
//! GZIP or ZLIB stream, buffered, written to a temporary file beside the
//! target and renamed over it only on success.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::{GzEncoder, ZlibEncoder};

use crate::frame::{masked_crc32c, Framing};
use crate::io::Compression;

/// How to write records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Framing of the output.
    pub framing: Framing,
    /// `None`, `Gzip` or `Zlib` (`Auto` means `None`).
    pub compression: Compression,
    /// Compression level, 0 to 9 (default 6, as zlib's default).
    pub level: u32,
    /// Size of the write buffer.
    pub buffer: usize,
    /// Page-aware padding (docs/FORMAT.md §7.5, the thesis's writer option): before a
    /// record no larger than a page that would cross a page boundary, write a
    /// pad frame ([`crate::frame::pad`]) so that it starts on the next page
    /// (or the one after, when the gap is shorter than the smallest pad
    /// frame). Offsets count bytes of the uncompressed stream.
    pub pad_to_page: Option<u64>,
    /// Block-compressed GZIP (with `compression: Gzip`): end the GZIP member
    /// after the first record that brings it to at least this many bytes of
    /// uncompressed frames, and start a new one, so that every member holds
    /// whole records. The file is still one valid multi-member GZIP stream
    /// for any reader; [`GzIndex`](crate::index::GzIndex) then reads any
    /// record by inflating one member, with no windows to store. `None`
    /// (the default): one member.
    pub gzip_block: Option<u64>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            framing: Framing::TfRecord,
            compression: Compression::None,
            level: 6,
            buffer: 1 << 16,
            pad_to_page: None,
            gzip_block: None,
        }
    }
}

impl WriterOptions {
    /// Options for `framing`, uncompressed.
    pub fn new(framing: Framing) -> Self {
        WriterOptions {
            framing,
            ..Self::default()
        }
    }

    /// Sets the compression.
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Block-compressed GZIP output: members of about `block` bytes of
    /// uncompressed frames, each holding whole records (sets the compression
    /// to GZIP). 64 KiB to 1 MiB is the useful range: smaller blocks compress
    /// worse, larger ones take longer to inflate for one record.
    ///
    /// ```
    /// use recordwire::encode::{RecordWriter, WriterOptions};
    /// use recordwire::frame::{records, Framing, ReadOptions};
    ///
    /// let options = WriterOptions::new(Framing::TfRecord).with_gzip_blocks(64 * 1024);
    /// let mut w = RecordWriter::new(Vec::new(), options);
    /// for i in 0..10_000u32 {
    ///     w.write_record(format!("record {i}").as_bytes())?;
    /// }
    /// let gz = w.finish()?;
    /// // One stream to any GZIP reader (several members).
    /// let mut plain = Vec::new();
    /// std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut plain)?;
    /// let read: Vec<_> = records(&plain, Framing::TfRecord, ReadOptions::default())
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!((read.len(), read[9_999].data), (10_000, &b"record 9999"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_gzip_blocks(mut self, block: u64) -> Self {
        self.compression = Compression::Gzip;
        self.gzip_block = Some(block.max(1));
        self
    }

    /// Sets page-aware padding (`None` or a page size of at least 64 bytes).
    #[must_use]
    pub fn with_pad_to_page(mut self, page: Option<u64>) -> Self {
        self.pad_to_page = page;
        self
    }
}

enum Sink<W: Write> {
    Plain(BufWriter<W>),
    Gzip(GzEncoder<BufWriter<W>>),
    Zlib(ZlibEncoder<BufWriter<W>>),
    /// Block-compressed GZIP: the member being written, or (between
    /// members) the writer under them; its uncompressed bytes so far, the
    /// block size and level of every member, and whether any member was
    /// written.
    GzipBlocks {
        member: Option<GzEncoder<BufWriter<W>>>,
        idle: Option<BufWriter<W>>,
        written: u64,
        block: u64,
        level: flate2::Compression,
    },
}

fn member_lost() -> io::Error {
    io::Error::other("a GZIP member failed to end")
}

impl<W: Write> Sink<W> {
    fn writer(&mut self) -> io::Result<&mut dyn Write> {
        Ok(match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
            Sink::Zlib(w) => w,
            Sink::GzipBlocks {
                member,
                idle,
                level,
                ..
            } => {
                if member.is_none() {
                    // The next member starts with the next bytes.
                    let inner = idle.take().ok_or_else(member_lost)?;
                    *member = Some(GzEncoder::new(inner, *level));
                }
                member.as_mut().ok_or_else(member_lost)?
            }
        })
    }

    /// After a frame of `frame_len` bytes: ends the GZIP member when it has
    /// reached its block size (block-compressed output only).
    fn frame_written(&mut self, frame_len: u64) -> io::Result<()> {
        if let Sink::GzipBlocks {
            member,
            idle,
            written,
            block,
            ..
        } = self
        {
            *written += frame_len;
            if *written >= *block {
                let done = member.take().ok_or_else(member_lost)?;
                *idle = Some(done.finish()?);
                *written = 0;
            }
        }
        Ok(())
    }

    fn finish(self) -> io::Result<W> {
        let buffered = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
            Sink::Zlib(w) => w.finish()?,
            Sink::GzipBlocks { member, idle, .. } => match (member, idle) {
                // The last member (or the one empty member of an empty file).
                (Some(member), _) => member.finish()?,
                // The last record ended a member.
                (None, Some(idle)) => idle,
                (None, None) => return Err(member_lost()),
            },
        };
        buffered.into_inner().map_err(|e| e.into_error())
    }
}

/// A temporary file beside its target, removed unless committed.
struct Pending {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes framed records to any writer, or atomically to a file.
///
/// With [`RecordWriter::create`], records go to a temporary file in the
/// target's directory, which [`finish`](RecordWriter::finish) syncs and
/// renames over the target. If anything fails, or the writer is dropped
/// without `finish`, the temporary file is removed: nothing ever appears
/// under the final name half-written, and an existing file there stays
/// untouched. (A process killed outright may leave the temporary file,
/// named `.<target>.tmp-<pid>-<n>`, but never a partial target.)
///
/// ```
/// use recordwire::encode::{RecordWriter, WriterOptions};
/// use recordwire::frame::{records, Framing, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out.tfrecord");
/// let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord))?;
/// w.write_record(b"hello")?;
/// w.write_record(b"world")?;
/// w.finish()?;
/// let bytes = std::fs::read(&path)?;
/// let got: Vec<_> = records(&bytes, Framing::TfRecord, ReadOptions::default())
///     .map(|r| r.map(|r| r.data.to_vec()))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(got, [b"hello".to_vec(), b"world".to_vec()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordWriter<W: Write> {
    sink: Option<Sink<W>>,
    framing: Framing,
    pending: Option<Pending>,
    records: u64,
    bytes: u64,
    /// Bytes of frames written (the uncompressed stream position).
    position: u64,
    pad_to_page: Option<u64>,
    pads: u64,
    pad_bytes: u64,
}

impl<W: Write> std::fmt::Debug for RecordWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("framing", &self.framing)
            .field("records", &self.records)
            .field("bytes", &self.bytes)
            .finish()
    }
}

static TEMP_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl RecordWriter<File> {
    /// Creates a writer that replaces `path` atomically on
    /// [`finish`](Self::finish).
    pub fn create(path: impl AsRef<Path>, options: WriterOptions) -> io::Result<Self> {
        let target = path.as_ref().to_path_buf();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
            })?
            .to_string_lossy()
            .into_owned();
        loop {
            let n = TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
            match File::options().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    let mut w = RecordWriter::new(file, options);
                    w.pending = Some(Pending {
                        temp,
                        target,
                        committed: false,
                    });
                    return Ok(w);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl<W: Write> RecordWriter<W> {
    /// A writer of framed records into `inner` (no temporary file).
    pub fn new(inner: W, options: WriterOptions) -> Self {
        let buffered = BufWriter::with_capacity(options.buffer.max(1), inner);
        let level = flate2::Compression::new(options.level.min(9));
        let sink = match options.compression {
            Compression::Gzip if options.gzip_block.is_some() => Sink::GzipBlocks {
                member: Some(GzEncoder::new(buffered, level)),
                idle: None,
                written: 0,
                block: options.gzip_block.unwrap_or(1).max(1),
                level,
            },
            Compression::Gzip => Sink::Gzip(GzEncoder::new(buffered, level)),
            Compression::Zlib => Sink::Zlib(ZlibEncoder::new(buffered, level)),
            Compression::None | Compression::Auto => Sink::Plain(buffered),
        };
        RecordWriter {
            sink: Some(sink),
            framing: options.framing,
            pending: None,
            records: 0,
            bytes: 0,
            position: 0,
            pad_to_page: options.pad_to_page.filter(|&p| p > 0),
            pads: 0,
            pad_bytes: 0,
        }
    }

    fn out(&mut self) -> io::Result<&mut dyn Write> {
        match self.sink.as_mut() {
            Some(s) => s.writer(),
            None => Err(io::Error::other("writer already failed or finished")),
        }
    }

    /// Writes one record: its frame header, `data`, and (TFRecord) its CRC.
    pub fn write_record(&mut self, data: &[u8]) -> io::Result<()> {
        let r = self.write_frame(data);
        if r.is_err() {
            // A failed write leaves the stream in an unknown state: refuse
            // further writes; the temporary file is removed on drop.
            self.sink = None;
        }
        r
    }

    fn write_frame(&mut self, data: &[u8]) -> io::Result<()> {
        let framing = self.framing;
        let len = data.len() as u64;
        let frame_len = len + (framing.header_len() + framing.footer_len()) as u64;
        if let Some(page) = self.pad_to_page {
            let used = self.position % page;
            if frame_len <= page && used + frame_len > page {
                let min = crate::frame::pad::min_pad_frame_len(framing) as u64;
                let mut gap = page - used;
                if gap < min {
                    gap += (min - gap).div_ceil(page) * page;
                }
                let mut pad = Vec::new();
                let gap_len =
                    usize::try_from(gap).map_err(|_| io::Error::other("page too large"))?;
                if !crate::frame::pad::write_pad_frame(&mut pad, gap_len, framing) {
                    return Err(io::Error::other(format!(
                        "cannot build a pad frame of {gap} bytes"
                    )));
                }
                self.out()?.write_all(&pad)?;
                self.position += gap;
                self.pads += 1;
                self.pad_bytes += gap;
            }
        }
        let out = self.out()?;
        match framing {
            Framing::TfRecord => {
                let mut header = [0u8; 12];
                header[..8].copy_from_slice(&len.to_le_bytes());
                let crc = masked_crc32c(&header[..8]);
                header[8..].copy_from_slice(&crc.to_le_bytes());
                out.write_all(&header)?;
                out.write_all(data)?;
                out.write_all(&masked_crc32c(data).to_le_bytes())?;
            }
            Framing::OfRecord => {
                out.write_all(&(len as i64).to_le_bytes())?;
                out.write_all(data)?;
            }
        }
        self.records += 1;
        self.bytes += len;
        self.position += frame_len;
        if let Some(sink) = self.sink.as_mut() {
            sink.frame_written(frame_len)?;
        }
        Ok(())
    }

    /// Pad frames written so far, and the bytes they take.
    pub fn pads(&self) -> (u64, u64) {
        (self.pads, self.pad_bytes)
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Data bytes written so far (frames excluded).
    pub fn data_bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes everything, ends the compressed stream, and (for
    /// [`create`](RecordWriter::create)) syncs the temporary file and renames
    /// it over the target. Returns the inner writer.
    pub fn finish(mut self) -> io::Result<W>
    where
        W: FinishTarget,
    {
        let sink = self
            .sink
            .take()
            .ok_or_else(|| io::Error::other("writer already failed"))?;
        let inner = sink.finish()?;
        if let Some(p) = self.pending.as_mut() {
            inner.sync()?;
            std::fs::rename(&p.temp, &p.target)?;
            p.committed = true;
        }
        Ok(inner)
    }
}

/// What [`RecordWriter::finish`] needs of the inner writer: a way to make
/// the bytes durable before the rename.
pub trait FinishTarget {
    /// Makes written data durable (`fsync` for files; nothing otherwise).
    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

impl FinishTarget for File {
    fn sync(&self) -> io::Result<()> {
        self.sync_all()
    }
}

impl FinishTarget for Vec<u8> {}
impl FinishTarget for io::Stdout {}
impl FinishTarget for io::StdoutLock<'_> {}
impl<T: FinishTarget + ?Sized> FinishTarget for &mut T {
    fn sync(&self) -> io::Result<()> {
        (**self).sync()
    }
}
impl FinishTarget for Box<dyn Write + Send> {}
impl FinishTarget for dyn Write + '_ {}
impl FinishTarget for dyn Write + Send + '_ {}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced,
/// then renamed over it; on any error the temporary file is removed and an
/// existing `path` is untouched.
pub fn write_file_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut w = RecordWriter::create(path, WriterOptions::default())?;
    let sink = w
        .sink
        .as_mut()
        .ok_or_else(|| io::Error::other("writer failed"))?;
    sink.writer()?.write_all(bytes)?;
    w.finish().map(|_| ())
}

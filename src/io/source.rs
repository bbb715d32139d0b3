//! One entry point for every input: a plain file (mapped), a compressed file
//! or a pipe (streamed).

use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use super::compress::{decoder, fill_to};
use super::file::{load, open_file, STDIN_NAME};
use super::{framing_hint, resolve, Compression, OpenOptions, RecordFile, Resolved, StreamRecords};
use crate::error::Error;
use crate::frame::{Framing, PartEnd, PartVisitor, Record, Split, Step, Walker};

/// A record input of any kind, walked record by record with
/// [`next_record`](Self::next_record) or [`for_each_record`](Self::for_each_record).
///
/// [`Source::open`] picks the reader from what it finds:
///
/// | input | reader |
/// |---|---|
/// | plain regular file | [`RecordFile`]: memory map (or read, with `mmap: false`), zero-copy |
/// | GZIP / ZLIB file | [`StreamRecords`] over the decompressor: streamed, bounded memory, not zero-copy |
/// | `-` (stdin), pipe, device | [`StreamRecords`] (over a decompressor when compressed) |
///
/// Both readers give the same records and the same errors, ids and offsets
/// (offsets in the decompressed stream for compressed inputs).
///
/// ```
/// use std::ops::ControlFlow;
/// use recordwire::frame::{file_of, ErrorPolicy, Framing, ReadOptions};
/// use recordwire::io::{OpenOptions, Source};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data.ofrecord");
/// std::fs::write(&path, file_of(Framing::OfRecord, [&b"one"[..], b"two"]))?;
///
/// let options = OpenOptions::default()
///     .with_read(ReadOptions::default().with_policy(ErrorPolicy::skip()));
/// let mut source = Source::open(&path, &options)?;
/// assert_eq!(source.framing(), Framing::OfRecord);
///
/// // The lending loop: each record borrows from the source until the next call.
/// let mut total = 0;
/// while let Some(item) = source.next_record() {
///     match item {
///         Ok(record) => total += record.data.len(),
///         Err(err) => eprintln!("skipped {:?}: {err}", source.skipped()),
///     }
/// }
/// assert_eq!((total, source.errors()), (6, 0));
///
/// // Or with a closure that can stop early.
/// let mut source = Source::open(&path, &options)?;
/// let first = source.for_each_record(|item| match item {
///     Ok(record) => ControlFlow::Break(record.data.to_vec()),
///     Err(_) => ControlFlow::Continue(()),
/// });
/// assert_eq!(first, ControlFlow::Break(b"one".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Source {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// A whole file in memory, and the walk over it.
    File { file: RecordFile, walker: Walker },
    /// A stream.
    Stream(StreamRecords<Box<dyn Read + Send>>),
}

/// Opens `path` (`-` for stdin) as a [`Source`]; the same as [`Source::open`].
pub fn open_source(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Source, Error> {
    Source::open(path, options)
}

impl Source {
    /// Opens `path`, or stdin for `-`, detecting framing and compression
    /// unless `options` name them, from the first bytes and the name
    /// ([`framing_hint`]; docs/FORMAT.md §1.6, "Detection"; see the table
    /// above for the reader used).
    ///
    /// Errors: `io_error` (with the file name) when the input cannot be
    /// opened, or its first bytes cannot be read. Damage inside is reported
    /// while walking, and so is an input whose first bytes fit neither
    /// framing: the first item is then an error at record 0, byte 0, that
    /// says `not a TFRecord or OFRecord file: …` ([`Error::detail`]).
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Source, Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            return Source::from_reader(std::io::stdin(), STDIN_NAME, options);
        }
        #[cfg(feature = "remote")]
        if let Some(local) = super::remote::file_url_path(path) {
            return Source::open(local, options);
        }
        let name: Arc<str> = path.display().to_string().into();
        let hint = framing_hint(path);
        #[cfg(feature = "remote")]
        if super::remote::is_remote(path) {
            // Streamed with large requests and read-ahead.
            let source = Arc::new(super::remote::RemoteSource::open(&name, &options.storage)?);
            let reader = super::remote::RemoteReader::new(source);
            return Source::stream(reader, name, hint, options);
        }
        let (file, meta) = open_file(path, &name)?;
        if !meta.is_file() || !options.mmap {
            // A pipe or device, or a file not to be mapped (`--no-mmap`):
            // read in chunks, in constant memory, as a stream.
            return Source::stream(file, name, hint, options);
        }
        let (raw, map) = load(file, &meta, options.mmap, &name)?;
        match resolve(&raw, hint, options).compression {
            Compression::Gzip | Compression::Zlib => {
                // Stream from the map: only the decompressed window is held.
                Source::stream(std::io::Cursor::new(raw), name, hint, options)
            }
            Compression::None | Compression::Auto => {
                let file = RecordFile::from_content(raw, name, hint, options, map);
                Ok(Source::from_file(file))
            }
        }
    }

    /// Streams records from `reader`, detecting framing and compression from
    /// its first bytes unless `options` name them (`name` is not read for a
    /// framing hint). Errors carry `name`.
    pub fn from_reader(
        reader: impl Read + Send + 'static,
        name: impl Into<Arc<str>>,
        options: &OpenOptions,
    ) -> Result<Source, Error> {
        Source::stream(reader, name.into(), None, options)
    }

    /// Streams records from `reader`, whose name suggests `hint`.
    fn stream(
        reader: impl Read + Send + 'static,
        name: Arc<str>,
        hint: Option<Framing>,
        options: &OpenOptions,
    ) -> Result<Source, Error> {
        let mut reader = reader;
        let mut prefix = Vec::new();
        fill_to(
            &mut reader,
            &mut prefix,
            crate::frame::TFRECORD_HEADER_LEN as u64,
        )
        .map_err(|e| Error::io(e).with_file(Arc::clone(&name)))?;
        let Resolved {
            compression,
            framing,
            basis,
        } = resolve(&prefix, hint, options);
        let reader = decoder(std::io::Cursor::new(prefix).chain(reader), compression);
        let stream = StreamRecords::new(reader, framing, options.read)
            .with_compression(compression)
            .with_basis(basis)
            .with_file(name);
        Ok(Source {
            inner: Inner::Stream(stream),
        })
    }

    /// Walks the records of an open [`RecordFile`], with its read options.
    pub fn from_file(file: RecordFile) -> Source {
        let mut walker = Walker::new(file.framing(), file.read_options(), 0, 0);
        walker.set_file(Some(Arc::clone(file.name_arc())));
        walker.set_basis(file.basis());
        if let Some(cause) = file.early_end_kind() {
            walker.cut(cause);
        }
        Source {
            inner: Inner::File { file, walker },
        }
    }

    /// Streams records from `stream`.
    pub fn from_stream(stream: StreamRecords<Box<dyn Read + Send>>) -> Source {
        Source {
            inner: Inner::Stream(stream),
        }
    }

    /// The next record (borrowed from the source until the next call), or an
    /// error, or `None` at the end. Errors follow the read options' policy,
    /// as in [`Records`](crate::frame::Records).
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, Error>> {
        match &mut self.inner {
            Inner::File { file, walker } => match walker.step(file.bytes(), 0, true) {
                Step::Record(found) => found.record(file.bytes(), Some(file.name_arc())).map(Ok),
                Step::Error(err) => Some(Err(err)),
                Step::Need { .. } | Step::End => None,
            },
            Inner::Stream(stream) => stream.next_record(),
        }
    }

    /// Walks the rest of the input on `split.threads` threads when it is held
    /// in memory and can be split ([`crate::frame::walk_split`]), else on this
    /// one: each part's items go to a visitor from `make`, and the visitors
    /// reach `sink` in input order, with what to add to their items' ids. The
    /// items are those [`next_record`](Self::next_record) would give.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn walk_split<V, M, S>(&mut self, split: Split, make: M, mut sink: S)
    where
        V: PartVisitor,
        M: Fn() -> V + Sync,
        S: FnMut(V, u64, PartEnd) -> std::ops::ControlFlow<()>,
    {
        match &mut self.inner {
            Inner::File { file, walker } => {
                let (mut at, mut id) = (walker.position(), walker.next_id());
                crate::frame::walk_split(file.bytes(), walker, split, make, |v, shift, end| {
                    (at, id) = (end.end, shift.saturating_add(end.ids));
                    sink(v, shift, end)
                });
                // The walk is used up.
                walker.finish_at(at, id);
            }
            Inner::Stream(stream) => {
                let mut visitor = make();
                let (start, first) = (stream.position(), stream.next_id());
                while let Some(item) = stream.next_record() {
                    visitor.visit(item);
                }
                let end = PartEnd {
                    start,
                    end: stream.position(),
                    ids: stream.next_id().saturating_sub(first),
                    done: true,
                };
                let _ = sink(visitor, 0, end);
            }
        }
    }

    /// Calls `f` with every item [`next_record`](Self::next_record) gives,
    /// until the end or until `f` breaks (whose value is returned).
    pub fn for_each_record<B>(
        &mut self,
        mut f: impl FnMut(Result<Record<'_>, Error>) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        while let Some(item) = self.next_record() {
            if let ControlFlow::Break(b) = f(item) {
                return ControlFlow::Break(b);
            }
        }
        ControlFlow::Continue(())
    }

    /// The name used in errors: the path as given, or `<stdin>`.
    pub fn name(&self) -> &str {
        match &self.inner {
            Inner::File { file, .. } => file.name(),
            Inner::Stream(stream) => stream.file().unwrap_or_default(),
        }
    }

    /// The framing being read.
    pub fn framing(&self) -> Framing {
        match &self.inner {
            Inner::File { file, .. } => file.framing(),
            Inner::Stream(stream) => stream.framing(),
        }
    }

    /// The compression of the input ([`Compression::None`] when plain).
    pub fn compression(&self) -> Compression {
        match &self.inner {
            Inner::File { file, .. } => file.compression(),
            Inner::Stream(stream) => stream.compression(),
        }
    }

    /// The whole file, when the input is one held in memory (zero-copy for a
    /// mapped file); `None` for a stream.
    pub fn as_file(&self) -> Option<&RecordFile> {
        match &self.inner {
            Inner::File { file, .. } => Some(file),
            Inner::Stream(_) => None,
        }
    }

    /// The number of errors yielded so far.
    pub fn errors(&self) -> u64 {
        match &self.inner {
            Inner::File { walker, .. } => walker.errors(),
            Inner::Stream(stream) => stream.errors(),
        }
    }

    /// What the error just yielded made the walk pass over; see
    /// [`Records::skipped`](crate::frame::Records::skipped).
    pub fn skipped(&self) -> Option<(u64, u64)> {
        match &self.inner {
            Inner::File { walker, .. } => walker.skipped(),
            Inner::Stream(stream) => stream.skipped(),
        }
    }

    /// The absolute offset (decompressed, for a compressed input) where the
    /// next frame is expected.
    pub fn position(&self) -> u64 {
        match &self.inner {
            Inner::File { walker, .. } => walker.position(),
            Inner::Stream(stream) => stream.position(),
        }
    }

    /// The id the next frame will get.
    pub fn next_id(&self) -> u64 {
        match &self.inner {
            Inner::File { walker, .. } => walker.next_id(),
            Inner::Stream(stream) => stream.next_id(),
        }
    }
}

//! Opening a [`Shard`]: its bytes as stored, its framing and compression,
//! and its index (given, the sidecar, the local cache's copy, or built).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::shard::{IndexOrigin, Shard};
use super::stored::{IndexFile, Stored, Streamer};
use crate::error::Error;
use crate::frame::{explain_first_frame, Basis, ErrorPolicy, Framing, ReadOptions};
use crate::index::{
    stale, Access, GzIndex, GzSource, Index, IndexFormat, Skipped, DEFAULT_SPACING,
};
use crate::io::{
    framing_hint, resolve, ByteSource, Compression, MemorySource, OpenOptions, Resolved, STDIN_NAME,
};

impl Shard {
    /// Opens the record file at `path` (`-` for stdin, read whole) with its
    /// index: the sidecar `<path>.rwindex` when it is current for this data
    /// (a native index of a plain file, a checkpoint index of a compressed
    /// one), else one built in memory (one pass over the frames, data CRCs
    /// not verified: [`get`](Self::get) checks them per record; a compressed
    /// file is indexed with checkpoints every [`DEFAULT_SPACING`] bytes of
    /// output, and is never decompressed whole). Why a sidecar was not used
    /// is kept in [`origin`](Self::origin).
    ///
    /// Framing and compression are detected from the first bytes and the
    /// name, unless `options` name them (docs/FORMAT.md §1.6). With
    /// [`OpenOptions::mmap`] off, a plain file is read range by range with
    /// positioned reads; a compressed one is read whole (compressed).
    ///
    /// Errors: `io_error` when the file cannot be read, the framing or
    /// compression errors of a damaged file met while indexing, all with the
    /// file name.
    ///
    /// **Under the skip policy** (`options.read.policy` is
    /// [`ErrorPolicy::Skip`]) a damaged file opens with the valid records
    /// only, as [`Index::build_skipping`] finds them (data CRCs verified when
    /// `options.read.check_data_crc`, so that every id can be read); what
    /// was passed over is in [`skipped`](Self::skipped). The sidecar is then
    /// not used (the file is always indexed afresh), and the index built is
    /// never written anywhere ([`Index::has_skips`]). A plain file is read
    /// whole for it (mapped, or into memory with `mmap` off). A compressed
    /// file is indexed with checkpoints as usual when that succeeds; when it
    /// is damaged it is decompressed into memory up to the damage, and a
    /// decompression error ends it there (the records before it are kept).
    /// An index given to [`open_with`](Self::open_with) is used as given.
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Shard, Error> {
        Shard::open_with(path, options, None)
    }

    /// [`open`](Self::open) with the index file at `index` instead of the
    /// sidecar: any of the formats recordwire reads, told apart by their
    /// content (native, DALI's text index, a raw offset table, or a
    /// checkpoint index for a compressed file). An index that does not
    /// belong to the data is a `stale_index` error.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: &OpenOptions,
        index: Option<&Path>,
    ) -> Result<Shard, Error> {
        Shard::open_inner(path.as_ref(), options, index, true)?
            .ok_or_else(|| unreachable_none(path.as_ref()))
    }

    /// Opens the record file at `path` with its sidecar index only:
    /// `Ok(None)` when it has none, `stale_index` (with the sidecar's name)
    /// when the one there does not belong to the data. Nothing is built, so
    /// this costs a few reads: what `count` uses before counting by reading.
    pub fn open_sidecar(
        path: impl AsRef<Path>,
        options: &OpenOptions,
    ) -> Result<Option<Shard>, Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            return Ok(None);
        }
        Shard::open_inner(path, options, None, false)
    }

    fn open_inner(
        path: &Path,
        options: &OpenOptions,
        index: Option<&Path>,
        build: bool,
    ) -> Result<Option<Shard>, Error> {
        #[cfg(feature = "remote")]
        if let Some(local) = crate::io::remote::file_url_path(path) {
            return Shard::open_inner(&local, options, index, build);
        }
        let name: Arc<str> = if path == Path::new("-") {
            STDIN_NAME.into()
        } else {
            path.display().to_string().into()
        };
        #[cfg(feature = "remote")]
        if crate::io::remote::is_remote(path) {
            let (stored, sidecar) = super::remote::open_stored(&name, options, index, build)?;
            return Shard::open_stored(path, name, stored, sidecar, options, index, build);
        }
        let stored = Stored::open(path, &name, options.mmap)?;
        let sidecar = (path != Path::new("-"))
            .then(|| IndexFile::local_sidecar(path, options.mmap))
            .flatten();
        Shard::open_stored(path, name, stored, sidecar, options, index, build)
    }

    /// Opens the shard whose bytes are `stored`, named `name`, with its
    /// sidecar (or cached index) `sidecar`.
    fn open_stored(
        path: &Path,
        name: Arc<str>,
        stored: Stored,
        sidecar: Option<Result<IndexFile, Error>>,
        options: &OpenOptions,
        index: Option<&Path>,
        build: bool,
    ) -> Result<Option<Shard>, Error> {
        if !build && sidecar.is_none() {
            return Ok(None);
        }
        #[cfg(feature = "remote")]
        let stored_info = match &stored {
            Stored::Remote(r) => Some(Arc::clone(r)),
            _ => None,
        };
        let stored_len = stored.source().len();
        let prefix = stored
            .source()
            .read_range(0..stored_len.min(crate::frame::TFRECORD_HEADER_LEN as u64))
            .map_err(|e| e.with_file(Arc::clone(&name)))?;
        let hint = (path != Path::new("-"))
            .then(|| framing_hint(path))
            .flatten();
        let resolved = resolve(&prefix, hint, options);
        let skip = match options.read.policy {
            ErrorPolicy::Skip { .. } if build && index.is_none() => Some(options.read),
            _ => None,
        };
        let given = match index {
            Some(ix) => Some(read_index_file(ix, options)?),
            None => None,
        };
        let opened = match (resolved.compression, skip) {
            (Compression::Gzip | Compression::Zlib, Some(read)) => {
                Opened::compressed_skipping(stored, &resolved, read).map(Some)
            }
            (Compression::Gzip | Compression::Zlib, None) => {
                Opened::compressed(stored, &resolved, given, sidecar, build)
            }
            (_, Some(read)) => Opened::plain_skipping(stored, &resolved, read, &prefix).map(Some),
            (_, None) => Opened::plain(stored, &resolved, given, sidecar, &prefix, build),
        };
        let Some(Opened {
            source,
            index: idx,
            gz,
            origin,
            skipped,
        }) = opened.map_err(|e| match e.file() {
            // An index file's own error names it.
            Some(_) => e,
            None => e.with_file(Arc::clone(&name)),
        })?
        else {
            return Ok(None);
        };
        #[cfg(feature = "remote")]
        let remote = stored_info;
        let shard = Shard {
            name,
            source,
            index: idx,
            gz,
            framing: resolved.framing,
            compression: resolved.compression,
            basis: resolved.basis,
            read: options.read,
            origin,
            stored_len,
            payload: Arc::default(),
            skipped: skipped.into(),
        };
        #[cfg(feature = "remote")]
        if let Some(object) = remote {
            // Open: reads may go through the span cache from now on.
            object.start_spans();
            super::remote::remember(&shard, &object, &options.storage);
        }
        let _ = shard.advise(Access::Random);
        Ok(Some(shard))
    }

    /// A shard over `source` (the stream its records are read from), named
    /// `name`, with `index`, which must be its index: same framing, and its
    /// data size and content fingerprint those of the source
    /// (`stale_index` otherwise). For sources of one's own (a remote file,
    /// a buffer in memory).
    pub fn new(
        name: impl Into<Arc<str>>,
        source: Arc<dyn ByteSource>,
        index: Index,
        framing: Framing,
        read: ReadOptions,
    ) -> Result<Shard, Error> {
        let name = name.into();
        if index.framing() != framing {
            return Err(framing_mismatch(0, index.framing(), framing).with_file(name));
        }
        check_source(&index, &*source).map_err(|e| e.with_file(Arc::clone(&name)))?;
        Ok(Shard {
            name,
            stored_len: source.len(),
            source,
            index,
            gz: None,
            framing,
            compression: Compression::None,
            basis: Basis::Named,
            read,
            origin: IndexOrigin::Given,
            payload: Arc::default(),
            skipped: Arc::new([]),
        })
    }
}

fn framing_mismatch(at: u64, index: Framing, data: Framing) -> Error {
    stale(
        at,
        format!("the index is for {index} data, the data is read as {data}"),
    )
}

/// Checks that `index` belongs to the stream of `source`: its size and
/// content fingerprint, read through the source when it is not in memory.
fn check_source(index: &Index, source: &dyn ByteSource) -> Result<(), Error> {
    match source.in_memory() {
        Some(bytes) => index.check_data(bytes),
        None => index.check_ranges(source),
    }
}

/// What opening found: the source records are read from, the index, and
/// where it came from.
struct Opened {
    source: Arc<dyn ByteSource>,
    index: Index,
    gz: Option<Arc<GzSource>>,
    origin: IndexOrigin,
    skipped: Vec<Skipped>,
}

impl Opened {
    /// A plain file under the skip policy: the index of its valid records
    /// (the sidecar not used), over its bytes in memory.
    fn plain_skipping(
        stored: Stored,
        resolved: &Resolved,
        read: ReadOptions,
        prefix: &[u8],
    ) -> Result<Opened, Error> {
        // Read whole (a remote object streamed, with read-ahead).
        let source: Arc<dyn ByteSource> = match stored.source().in_memory() {
            Some(_) => stored.into_source(),
            None => Arc::new(MemorySource::new(stored.whole()?)),
        };
        let Some(data) = source.in_memory() else {
            return Err(Error::io(std::io::Error::other(
                "the data is not in memory",
            )));
        };
        let _ = Access::Sequential.advise(&*source);
        let (index, skipped) =
            Index::build_skipping(data, resolved.framing, read.check_data_crc, read.policy)
                .map_err(|e| explain_first_frame(e, prefix, resolved.framing, resolved.basis))?;
        Ok(Opened {
            source,
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected: None },
            skipped,
        })
    }

    /// A compressed file under the skip policy: its checkpoint index when
    /// it indexes cleanly (data CRCs verified as `read` says); else its
    /// content decompressed into memory up to the damage, and the index of
    /// its valid records.
    fn compressed_skipping(
        stored: Stored,
        resolved: &Resolved,
        read: ReadOptions,
    ) -> Result<Opened, Error> {
        let data = stored.whole()?;
        let built = GzIndex::build(
            &data,
            resolved.compression,
            resolved.framing,
            DEFAULT_SPACING,
            read.check_data_crc,
        );
        if let Ok(gz) = built {
            let index = gz.records().clone();
            let gz = Arc::new(GzSource::new(data, Arc::new(gz))?);
            return Ok(Opened {
                source: Arc::clone(&gz) as Arc<dyn ByteSource>,
                index,
                gz: Some(gz),
                origin: IndexOrigin::Built { rejected: None },
                skipped: Vec::new(),
            });
        }
        let (content, cut) = inflate_until_damage(data, resolved.compression);
        let (index, skipped) = Index::build_skipping_cut(
            &content,
            resolved.framing,
            read.check_data_crc,
            read.policy,
            cut,
        )?;
        Ok(Opened {
            source: Arc::new(MemorySource::new(Bytes::from(content))),
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected: None },
            skipped,
        })
    }

    /// A compressed file: its checkpoint index (given, the sidecar, or
    /// built), and the inflating source over it.
    fn compressed(
        stored: Stored,
        resolved: &Resolved,
        given: Option<IndexFile>,
        sidecar: Option<Result<IndexFile, Error>>,
        build: bool,
    ) -> Result<Option<Opened>, Error> {
        // An index opens against the stored file as it is (its fingerprint
        // read with ranged reads when it is not in memory); only a build
        // reads it whole, and then serves from what it read.
        let open = |f: IndexFile| {
            let source = stored.source();
            match f.trusted {
                true => GzIndex::open_native_trusted(f.bytes, source.len()),
                false => GzIndex::open_native_source(f.bytes, source),
            }
            .map_err(|e| e.with_file(f.name))
        };
        let mut built_from = None;
        let (gz, origin) = match given {
            Some(ix) => (open(ix)?, IndexOrigin::Given),
            None => {
                let mut origin = IndexOrigin::Sidecar;
                let rejected = match sidecar {
                    Some(Ok(f)) if f.is_checkpoint_index() => {
                        if f.trusted {
                            origin = IndexOrigin::Cached;
                        }
                        Some(open(f))
                    }
                    Some(Ok(f)) => Some(Err(stale(
                        0,
                        "the sidecar is not a checkpoint index (RWGZIDX): the data is compressed",
                    )
                    .with_file(f.name))),
                    Some(Err(e)) => Some(Err(e)),
                    None => None,
                };
                match rejected {
                    Some(Ok(index)) => (index, origin),
                    Some(Err(e)) if !build => return Err(e),
                    _ if !build => return Ok(None),
                    other => {
                        let data = stored.whole()?;
                        let built = GzIndex::build(
                            &data,
                            resolved.compression,
                            resolved.framing,
                            DEFAULT_SPACING,
                            false,
                        )?;
                        built_from = Some(data);
                        let rejected = other.and_then(Result::err);
                        (built, IndexOrigin::Built { rejected })
                    }
                }
            }
        };
        if gz.records().framing() != resolved.framing {
            return Err(framing_mismatch(
                0,
                gz.records().framing(),
                resolved.framing,
            ));
        }
        let index = gz.records().clone();
        let gz = Arc::new(match built_from {
            Some(data) => GzSource::new(data, Arc::new(gz))?,
            // Checked as it was opened.
            None => GzSource::checked(stored.into_source(), Arc::new(gz)),
        });
        let source: Arc<dyn ByteSource> = Arc::clone(&gz) as Arc<dyn ByteSource>;
        Ok(Some(Opened {
            source,
            index,
            gz: Some(gz),
            origin,
            skipped: Vec::new(),
        }))
    }

    /// A plain file: its index (given in any format, the native sidecar, or
    /// built).
    fn plain(
        stored: Stored,
        resolved: &Resolved,
        given: Option<IndexFile>,
        sidecar: Option<Result<IndexFile, Error>>,
        prefix: &[u8],
        build: bool,
    ) -> Result<Option<Opened>, Error> {
        if let Some(ix) = given {
            let (source, index) = load_index(ix, stored, resolved.framing)?;
            return Ok(Some(Opened {
                source,
                index,
                gz: None,
                origin: IndexOrigin::Given,
                skipped: Vec::new(),
            }));
        }
        let stream = stored.streamer();
        let source = stored.into_source();
        let _ = Access::Random.advise(&*source);
        let rejected = match sidecar {
            Some(Ok(f)) if !f.is_checkpoint_index() => {
                let origin = if f.trusted {
                    IndexOrigin::Cached
                } else {
                    IndexOrigin::Sidecar
                };
                match native_index(f, &*source, resolved.framing) {
                    Ok(index) => {
                        return Ok(Some(Opened {
                            source,
                            index,
                            gz: None,
                            origin,
                            skipped: Vec::new(),
                        }))
                    }
                    Err(e) if !build => return Err(e),
                    Err(e) => Some(e),
                }
            }
            Some(Ok(f)) => Some(
                stale(
                    0,
                    "the sidecar is a checkpoint index (RWGZIDX), the data is not compressed",
                )
                .with_file(f.name),
            ),
            Some(Err(e)) if !build => return Err(e),
            Some(Err(e)) => Some(e),
            None => None,
        };
        match rejected {
            Some(e) if !build => return Err(e),
            _ if !build => return Ok(None),
            _ => {}
        }
        let index = build_index(&*source, stream, resolved)
            .map_err(|e| explain_first_frame(e, prefix, resolved.framing, resolved.basis))?;
        Ok(Some(Opened {
            source,
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected },
            skipped: Vec::new(),
        }))
    }
}

/// The content of the compressed `data`, up to where it is damaged, and
/// the error there (a `compression_error`) if it is.
fn inflate_until_damage(
    data: Bytes,
    compression: Compression,
) -> (Vec<u8>, Option<crate::error::ErrorKind>) {
    let mut reader = crate::io::decoder(std::io::Cursor::new(data), compression);
    let mut content = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => return (content, None),
            Ok(n) => content.extend_from_slice(&chunk[..n.min(chunk.len())]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return (
                    content,
                    Some(crate::io::compress_read_error(&e, compression)),
                )
            }
        }
    }
}

/// Builds the index of a plain stream: from memory, or streamed through
/// positioned reads in 1 MiB steps.
fn build_index(
    source: &dyn ByteSource,
    stream: Option<Streamer>,
    resolved: &Resolved,
) -> Result<Index, Error> {
    if let Some(bytes) = source.in_memory() {
        let _ = Access::Sequential.advise(source);
        return Index::build(bytes, resolved.framing, false);
    }
    let reader: Box<dyn Read + Send + '_> = match stream {
        Some(stream) => stream(),
        None => Box::new(SourceReader { source, at: 0 }),
    };
    Index::build_stream(
        reader,
        resolved.framing,
        Compression::None,
        resolved.basis,
        false,
    )
}

/// A source read in order, as `std::io::Read`.
struct SourceReader<'s> {
    source: &'s dyn ByteSource,
    at: u64,
}

impl Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const STEP: u64 = 1 << 20;
        let end = self
            .at
            .saturating_add((buf.len() as u64).min(STEP))
            .min(self.source.len());
        if end <= self.at {
            return Ok(0);
        }
        let bytes = self
            .source
            .read_range(self.at..end)
            .map_err(std::io::Error::other)?;
        buf[..bytes.len()].copy_from_slice(&bytes);
        self.at = end;
        Ok(bytes.len())
    }
}

/// The native index file `file` of the stream of `source` (framing
/// `framing`): its header, fingerprint (unless the file is
/// [`trusted`](IndexFile::trusted), then only the size) and table checked,
/// `stale_index` with the index file's name otherwise.
fn native_index(
    file: IndexFile,
    source: &dyn ByteSource,
    framing: Framing,
) -> Result<Index, Error> {
    let name = file.name;
    let index = Index::open_native_parts(file.bytes)
        .and_then(|index| {
            if file.trusted {
                index.check_size(source.len()).map(|()| index)
            } else {
                check_source(&index, source).map(|()| index)
            }
        })
        .and_then(|index| index.verify_table().map(|()| index))
        .map_err(|e| e.with_file(Arc::clone(&name)))?;
    if index.framing() != framing {
        return Err(framing_mismatch(12, index.framing(), framing).with_file(name));
    }
    Ok(index)
}

/// Reads the index file at `path` (a local path, or with feature `remote` a
/// URL) whole.
fn read_index_file(path: &Path, options: &OpenOptions) -> Result<IndexFile, Error> {
    #[cfg(feature = "remote")]
    if crate::io::remote::is_remote(path) {
        return super::remote::read_index_url(path, options);
    }
    #[cfg(feature = "remote")]
    if let Some(local) = crate::io::remote::file_url_path(path) {
        return IndexFile::local(&local, true);
    }
    let _ = options;
    IndexFile::local(path, true)
}

/// The index file `file`, in any of the formats (native, DALI text, raw
/// offset table), told apart by its content, checked against the data. A
/// text or raw index is checked frame by frame against the data, which is
/// then read whole when it was not in memory.
fn load_index(
    file: IndexFile,
    stored: Stored,
    framing: Framing,
) -> Result<(Arc<dyn ByteSource>, Index), Error> {
    if file.is_checkpoint_index() {
        return Err(stale(
            0,
            "a checkpoint index (RWGZIDX) is for a compressed file; the data is not compressed",
        )
        .with_file(file.name));
    }
    let format = IndexFormat::detect(&file.bytes);
    if format == IndexFormat::Native {
        let source = stored.into_source();
        let index = native_index(file, &*source, framing)?;
        return Ok((source, index));
    }
    let data = stored.whole()?;
    let index =
        Index::read_as(format, file.bytes, &data, framing).map_err(|e| e.with_file(file.name))?;
    Ok((Arc::new(MemorySource::new(data)), index))
}

/// Cannot happen: opening with `build` always gives a shard.
fn unreachable_none(path: &Path) -> Error {
    Error::io(std::io::Error::other("no index was built")).with_file(path.display().to_string())
}

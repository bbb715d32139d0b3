//! A compressed record file opened for random access: its compressed bytes
//! (mapped, never decompressed whole) and its checkpoint index.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::{GzCache, GzIndex, DEFAULT_SPACING, GZ_MAGIC};
use crate::error::Error;
use crate::frame::{Framing, ReadOptions, Record};
use crate::index::{sidecar_path, stale, IndexOrigin};
use crate::io::{framing_hint, resolve, Compression, OpenOptions, RecordFile};
use crate::order::{Order, OrderError, OrderSpec};

/// A GZIP or ZLIB record file with its [`GzIndex`]: records by id, counts
/// and orders, inflating only the spans that are read. What
/// [`Shard`](crate::index::Shard) is to a plain file.
///
/// ```
/// use std::io::Write;
/// use recordwire::encode::{RecordWriter, WriterOptions};
/// use recordwire::frame::Framing;
/// use recordwire::index::{GzCache, GzShard};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("train.tfrecord.gz");
/// let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord).with_gzip_blocks(4096))?;
/// for i in 0..1000 {
///     w.write_record(format!("record {i}").as_bytes())?;
/// }
/// w.finish()?;
///
/// // No sidecar yet: the index is built (one streaming pass), then kept.
/// let shard = GzShard::open(&path, &Default::default())?;
/// assert!(shard.index().is_block_compressed());
/// shard.index().write_native_file(recordwire::index::sidecar_path(&path))?;
///
/// let shard = GzShard::open(&path, &Default::default())?;
/// let mut cache = GzCache::new();
/// assert_eq!(shard.len(), 1000);
/// assert_eq!(shard.get(999, &mut cache)?.unwrap().data, b"record 999");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct GzShard {
    data: Bytes,
    name: Arc<str>,
    read: ReadOptions,
    index: Arc<GzIndex>,
    origin: IndexOrigin,
}

/// Whether the file at `path` starts like a checkpoint index.
pub(crate) fn is_gz_index(path: &Path) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == GZ_MAGIC)
}

impl GzShard {
    /// Opens the compressed file at `path` (mapped unless `options.mmap` is
    /// off, and never decompressed whole) with its checkpoint index: the
    /// sidecar `<path>.rwindex` when it is a current checkpoint index of this
    /// file, else one built in memory ([`GzIndex::build`], every
    /// [`DEFAULT_SPACING`], data CRCs not verified: [`get`](Self::get) checks
    /// them). Compression and framing are detected as for any file, or as
    /// `options` name them; a file that is not GZIP or ZLIB is refused
    /// (`compression_error`).
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<GzShard, Error> {
        GzShard::open_with(path, options, None)
    }

    /// [`open`](Self::open) with the index file `index` (a checkpoint
    /// index) instead of the sidecar.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: &OpenOptions,
        index: Option<&Path>,
    ) -> Result<GzShard, Error> {
        let path = path.as_ref();
        let data = RecordFile::stored_bytes(path, options.mmap)?;
        let name: Arc<str> = path.display().to_string().into();
        let resolved = resolve(&data, framing_hint(path), options);
        if !matches!(resolved.compression, Compression::Gzip | Compression::Zlib) {
            return Err(Error::new(
                crate::error::ErrorKind::Compression {
                    message: "not a GZIP or ZLIB file: checkpoint indexes are for compressed files"
                        .into(),
                },
                0,
            )
            .with_file(name));
        }
        let (index, origin) = match index {
            Some(ix) => (GzIndex::load_native(ix, &data)?, IndexOrigin::Given),
            None => {
                let sidecar = sidecar_path(path);
                let rejected = if is_gz_index(&sidecar) {
                    match GzIndex::load_native(&sidecar, &data) {
                        Ok(index) => {
                            return GzShard::new(
                                data,
                                name,
                                resolved.framing,
                                options,
                                index,
                                IndexOrigin::Sidecar,
                            )
                        }
                        Err(e) => Some(e),
                    }
                } else if sidecar.is_file() {
                    Some(
                        stale(0, "the sidecar is not a checkpoint index (RWGZIDX)")
                            .with_file(sidecar.display().to_string()),
                    )
                } else {
                    None
                };
                let index = GzIndex::build(
                    &data,
                    resolved.compression,
                    resolved.framing,
                    DEFAULT_SPACING,
                    false,
                )
                .map_err(|e| e.with_file(Arc::clone(&name)))?;
                (index, IndexOrigin::Built { rejected })
            }
        };
        GzShard::new(data, name, resolved.framing, options, index, origin)
    }

    fn new(
        data: Bytes,
        name: Arc<str>,
        framing: Framing,
        options: &OpenOptions,
        index: GzIndex,
        origin: IndexOrigin,
    ) -> Result<GzShard, Error> {
        if index.records().framing() != framing {
            return Err(stale(
                0,
                format!(
                    "the index is for {} data, the data is read as {framing}",
                    index.records().framing()
                ),
            )
            .with_file(name));
        }
        Ok(GzShard {
            data,
            name,
            read: options.read,
            index: Arc::new(index),
            origin,
        })
    }

    /// The number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.index.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The file's name in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's name, shared (what its records' `file` points to).
    pub fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// The framing of its records.
    pub fn framing(&self) -> Framing {
        self.index.records().framing()
    }

    /// The compressed bytes.
    pub fn compressed(&self) -> &Bytes {
        &self.data
    }

    /// Its checkpoint index.
    pub fn index(&self) -> &GzIndex {
        &self.index
    }

    /// Where the index came from.
    pub fn origin(&self) -> &IndexOrigin {
        &self.origin
    }

    /// The order of the records for `spec` ([`GzIndex::order`]): the page
    /// modes group records by pages of the decompressed stream, or, with a
    /// page size of 0, by checkpoint span (each inflated once per window).
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        self.index.order(spec)
    }

    /// Record `id` ([`GzIndex::get`] with the file's read options), its
    /// errors carrying the file name.
    pub fn get<'s>(&'s self, id: u64, cache: &'s mut GzCache) -> Result<Option<Record<'s>>, Error> {
        self.index
            .get(&self.data, id, &self.read, cache)
            .map(|r| {
                r.map(|r| Record {
                    file: Some(&self.name),
                    ..r
                })
            })
            .map_err(|e| e.with_file(Arc::clone(&self.name)))
    }

    /// A batch of records in offset order ([`GzIndex::get_many`]).
    pub fn get_many(
        &self,
        ids: &[u64],
        cache: &mut GzCache,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize, Option<Record<'_>>),
    ) -> Result<(), Error> {
        let file = Some(&self.name);
        self.index
            .get_many(&self.data, ids, &self.read, cache, scratch, |p, r| {
                f(p, r.map(|r| Record { file, ..r }))
            })
            .map_err(|e| e.with_file(Arc::clone(&self.name)))
    }
}

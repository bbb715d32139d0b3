//! The local cache of remote objects' indexes.

use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::Error;

/// The directory of recordwire's local cache: `RECORDWIRE_CACHE_DIR` when
/// set, else the platform's cache directory (`$XDG_CACHE_HOME/recordwire`
/// or `~/.cache/recordwire` on Linux, `~/Library/Caches/recordwire` on
/// macOS, `%LOCALAPPDATA%\recordwire` on Windows); `None` when none of
/// these can be found.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("RECORDWIRE_CACHE_DIR") {
        return Some(dir);
    }
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Caches"))
    } else {
        var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache")))
    };
    base.map(|b| b.join("recordwire"))
}

/// The cache directory `options` name (`cache_dir`: a directory, or `none`
/// for none), else [`cache_dir`].
fn cache_root(options: &super::options::StorageOptions) -> Option<PathBuf> {
    match options.get("cache_dir") {
        Some(dir) if dir.is_empty() || dir.eq_ignore_ascii_case("none") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => cache_dir(),
    }
}

/// FNV-1a, 64 bits, over `parts` (each followed by a newline): short file
/// names for URLs.
fn name_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(b"\n") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Fetched spans of one remote object kept on local disk (the `span_disk`
/// storage option: its size limit), under `spans/` in the cache directory:
/// one file per span, named by the object's URL, ETag and span size and the
/// span's number, so that a span is found only for the same object content.
/// The directory is shared by every object and every process of the machine
/// (DataLoader workers, ranks, the next epoch's run): files are written
/// atomically, a hit refreshes the file's time, and whoever writes evicts
/// the least recently used files until the directory is under the limit. A
/// span larger than the limit is not kept (and still read). Failures to
/// read or write are not errors: the span is fetched instead.
#[derive(Debug, Clone)]
pub(crate) struct SpanDisk {
    dir: PathBuf,
    stem: String,
    limit: u64,
}

impl SpanDisk {
    /// The disk cache of the object at `url` with `etag`, when `options` ask
    /// for one (`span_disk` > 0), there is a cache directory and the object
    /// has an ETag (without one, content cannot be told apart).
    pub(crate) fn for_object(
        options: &super::options::StorageOptions,
        tuning: &super::options::Tuning,
        url: &str,
        etag: Option<&str>,
    ) -> Option<SpanDisk> {
        let etag = etag?;
        if tuning.span_disk == 0 {
            return None;
        }
        let dir = cache_root(options)?.join("spans");
        let size = tuning.span_size.to_string();
        let h = name_hash([url.as_bytes(), etag.as_bytes(), size.as_bytes()]);
        Some(SpanDisk {
            dir,
            stem: format!("{h:016x}"),
            limit: tuning.span_disk,
        })
    }

    fn path(&self, span: u64) -> PathBuf {
        self.dir.join(format!("{}-{span}.span", self.stem))
    }

    /// Span `span`, when it is kept whole (`len` bytes).
    pub(crate) fn get(&self, span: u64, len: u64) -> Option<Bytes> {
        let path = self.path(span);
        let bytes = std::fs::read(&path).ok()?;
        if bytes.len() as u64 != len {
            return None;
        }
        // Recently used: eviction goes by modification time.
        if let Ok(file) = std::fs::File::options().append(true).open(&path) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        Some(Bytes::from(bytes))
    }

    /// Keeps span `span`, then evicts least recently used spans until the
    /// directory is within the limit.
    pub(crate) fn put(&self, span: u64, bytes: &[u8]) {
        if bytes.len() as u64 > self.limit || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if crate::io::write_atomically(&self.path(span), bytes).is_ok() {
            self.evict();
        }
    }

    /// Removes the least recently used span files (of any object) until the
    /// directory holds at most `limit` bytes of them.
    fn evict(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "span"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.limit {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.limit {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Indexes of remote objects kept on local disk, under `indexes/` in
/// [`cache_dir`]: each entry is the index file (native or checkpoint) of one
/// URL, with the object's size and ETag when it was indexed. An entry is
/// found only for the same URL, size and ETag; without an ETag, the caller
/// checks the index's content fingerprint against the object as for any
/// index.
///
/// Entries are written atomically (a temporary file renamed), so that the
/// processes of one machine (DataLoader workers, ranks) share what one of
/// them learned.
#[derive(Debug, Clone)]
pub struct IndexCache {
    dir: PathBuf,
}

impl IndexCache {
    /// The cache in [`cache_dir`], if there is one.
    pub fn open_default() -> Option<IndexCache> {
        cache_dir().map(|d| IndexCache::new(d.join("indexes")))
    }

    /// The cache that `options` name (`cache_dir`: a directory, or `none`
    /// for no cache), else [`open_default`](Self::open_default).
    pub fn for_options(options: &super::options::StorageOptions) -> Option<IndexCache> {
        cache_root(options).map(|d| IndexCache::new(d.join("indexes")))
    }

    /// A cache in `dir` (made when the first entry is written).
    pub fn new(dir: impl Into<PathBuf>) -> IndexCache {
        IndexCache { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, url: &str) -> (PathBuf, PathBuf) {
        // A short file name for any URL; the URL itself is kept in the
        // entry's meta file and compared.
        let stem = format!("{:016x}", name_hash([url.as_bytes()]));
        (
            self.dir.join(format!("{stem}.index")),
            self.dir.join(format!("{stem}.meta")),
        )
    }

    fn meta_text(url: &str, size: u64, etag: Option<&str>) -> String {
        format!("{url}\n{size}\n{}\n", etag.unwrap_or(""))
    }

    /// The index kept for `url` at `size` and `etag`, if any (`None` too
    /// when the entry cannot be read: the cache is an optimisation).
    pub fn get(&self, url: &str, size: u64, etag: Option<&str>) -> Option<Bytes> {
        let (index, meta) = self.entry(url);
        let text = std::fs::read_to_string(meta).ok()?;
        if text != IndexCache::meta_text(url, size, etag) {
            return None;
        }
        std::fs::read(index).ok().map(Bytes::from)
    }

    /// Keeps `index` for `url` at `size` and `etag`.
    pub fn put(&self, url: &str, size: u64, etag: Option<&str>, index: &[u8]) -> Result<(), Error> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(e).with_file(self.dir.display().to_string()))?;
        let (index_path, meta_path) = self.entry(url);
        // The index first, then the meta that makes it valid.
        crate::io::write_atomically(&index_path, index)?;
        crate::io::write_atomically(
            &meta_path,
            IndexCache::meta_text(url, size, etag).as_bytes(),
        )
    }
}

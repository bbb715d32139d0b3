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
    pub fn for_options(options: &super::StorageOptions) -> Option<IndexCache> {
        match options.get("cache_dir") {
            Some(dir) if dir.is_empty() || dir.eq_ignore_ascii_case("none") => None,
            Some(dir) => Some(IndexCache::new(PathBuf::from(dir).join("indexes"))),
            None => IndexCache::open_default(),
        }
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
        // FNV-1a, 64 bits: a short file name for any URL; the URL itself is
        // kept in the entry's meta file and compared.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in url.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let stem = format!("{h:016x}");
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

//! Datasets of many files: shards behaving as one id space.

use std::path::{Path, PathBuf};

use super::{sidecar_path, stale, Access, Index, SIDECAR_EXTENSION};
use crate::error::Error;
use crate::frame::{ReadOptions, Record};
use crate::io::{OpenOptions, RecordFile};
use crate::order::{Order, OrderError, OrderSpec};
use bytes::Bytes;

/// Where a [`Shard`]'s index came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexOrigin {
    /// The current sidecar index `<file>.rwindex`, used in place.
    Sidecar,
    /// Built in memory while opening, because there was no sidecar
    /// (`rejected` is `None`) or because the sidecar was rejected for the
    /// reason given (stale, damaged, another framing, unreadable).
    Built {
        /// Why the sidecar was not used, if there was one.
        rejected: Option<Error>,
    },
    /// Given by the caller ([`Shard::new`]).
    Given,
}

/// One data file of a [`Dataset`] with its index.
#[derive(Debug, Clone)]
pub struct Shard {
    file: RecordFile,
    index: Index,
    origin: IndexOrigin,
}

impl Shard {
    /// Opens the data file at `path` ([`RecordFile::open`]: mapped, or
    /// decompressed into memory) and its index: the sidecar `<path>.rwindex`
    /// when it is current for this data ([`Index::load_native`]), else one
    /// built in memory ([`Index::build`], data CRCs not verified:
    /// [`get`](Self::get) checks them per record). Why a sidecar was not used
    /// is kept in [`origin`](Self::origin).
    ///
    /// Errors: `io_error` when the file cannot be read, a compression error
    /// when it cannot be decompressed whole, the framing errors of a damaged
    /// file when the index is built; all carry the file name.
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Shard, Error> {
        let path = path.as_ref();
        let file = RecordFile::open(path, options)?;
        if let Some(cause) = file.early_end() {
            return Err(Error::new(cause.clone(), file.len() as u64).with_file(file.name()));
        }
        let rejected = match load_sidecar(path, &file, options.mmap) {
            Ok(Some(index)) => {
                return Ok(Shard {
                    file,
                    index,
                    origin: IndexOrigin::Sidecar,
                });
            }
            Ok(None) => None,
            Err(e) => Some(e),
        };
        // Building reads every header in file order; from then on, ids.
        let _ = Access::Sequential.advise(&file);
        let index = Index::build(file.bytes(), file.framing(), false)
            .map_err(|e| file.explain(e).with_file(file.name()))?;
        let _ = Access::Random.advise(&file);
        Ok(Shard {
            file,
            index,
            origin: IndexOrigin::Built { rejected },
        })
    }

    /// A shard of `file` with `index`, which must be its index: same framing,
    /// and its data size and content fingerprint those of the file's content
    /// ([`Index::check_data`]); `stale_index` otherwise.
    pub fn new(file: RecordFile, index: Index) -> Result<Shard, Error> {
        if index.framing() != file.framing() {
            return Err(stale(
                0,
                format!(
                    "the index is for {} data, the data is read as {}",
                    index.framing(),
                    file.framing()
                ),
            )
            .with_file(file.name()));
        }
        let _ = Access::Random.advise(&file);
        index
            .check_data(file.bytes())
            .map_err(|e| e.with_file(file.name()))?;
        Ok(Shard {
            file,
            index,
            origin: IndexOrigin::Given,
        })
    }

    /// Advises the kernel how the records are about to be read ([`Access`]):
    /// a shard opens advised for [`Access::Random`] (reading by id); give
    /// [`Access::Sequential`] before reading in file order. Only a hint: a
    /// file read into memory ignores it, and so may the system.
    pub fn advise(&self, access: Access) -> std::io::Result<()> {
        access.advise(&self.file)
    }

    /// The order of this shard's records for `spec` (the page modes read
    /// the index's offsets).
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        Order::new(self.len(), self.index.starts(), spec)
    }

    /// The data of record `id` as an owned handle that shares the file's
    /// memory (no copy; `Send + 'static`, so it can go to another thread,
    /// and valid after the shard is dropped); `Ok(None)` past the end.
    pub fn get_bytes(&self, id: u64) -> Result<Option<Bytes>, Error> {
        Ok(self.get(id)?.map(|r| self.file.record_bytes(&r)))
    }

    /// The data file.
    pub fn file(&self) -> &RecordFile {
        &self.file
    }

    /// Its index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Where the index came from.
    pub fn origin(&self) -> &IndexOrigin {
        &self.origin
    }

    /// The number of records.
    pub fn len(&self) -> u64 {
        self.index.len()
    }

    /// Whether the shard has no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Record `id` of this file ([`Index::get`] with the file's read
    /// options); the record and errors carry the file name.
    pub fn get(&self, id: u64) -> Result<Option<Record<'_>>, Error> {
        let record = self
            .index
            .get(self.file.bytes(), id, &self.file.read_options())
            .map_err(|e| e.with_file(self.file.name()))?;
        Ok(record.map(|r| Record {
            file: Some(self.file.name_arc()),
            ..r
        }))
    }

    /// A batch of records of this file ([`Index::get_many`] with the file's
    /// read options); the records and errors carry the file name.
    pub fn get_many<'s>(
        &'s self,
        ids: &[u64],
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize, Option<Record<'s>>),
    ) -> Result<(), Error> {
        let file = Some(self.file.name_arc());
        self.index
            .get_many(
                self.file.bytes(),
                ids,
                &self.file.read_options(),
                scratch,
                |i, record| f(i, record.map(|r| Record { file, ..r })),
            )
            .map_err(|e| e.with_file(self.file.name()))
    }
}

/// Many data files ("shards") as one id space: the records of the first
/// shard, then those of the second, and so on. The global id of local record
/// `l` of shard `s` is `base(s) + l`, `base(s)` being the number of records
/// in the shards before `s`.
///
/// ```
/// use recordwire::frame::{file_of, Framing};
/// use recordwire::index::Dataset;
/// use recordwire::io::OpenOptions;
///
/// let dir = tempfile::tempdir()?;
/// for (name, records) in [("a-0.tfrecord", &[&b"a0"[..], b"a1"][..]), ("a-1.tfrecord", &[b"b0"])] {
///     std::fs::write(dir.path().join(name), file_of(Framing::TfRecord, records.iter().copied()))?;
/// }
/// let paths = Dataset::glob(dir.path().join("a-?.tfrecord"))?;
/// let dataset = Dataset::open(&paths, &OpenOptions::default())?;
/// assert_eq!(dataset.len(), 3);
/// assert_eq!(dataset.locate(2), Some((1, 0)));
/// let record = dataset.get(2)?.unwrap();
/// assert_eq!((record.id, record.offset, record.data), (2, 0, &b"b0"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    shards: Vec<Shard>,
    /// `bases[s]`: the global id of shard `s`'s first record; one more entry
    /// for the total.
    bases: Vec<u64>,
}

impl Dataset {
    /// Opens every file of `paths`, in the order given, as a [`Shard`]
    /// ([`Shard::open`]).
    pub fn open<P: AsRef<Path>>(
        paths: impl IntoIterator<Item = P>,
        options: &OpenOptions,
    ) -> Result<Dataset, Error> {
        let shards = paths
            .into_iter()
            .map(|p| Shard::open(p, options))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Dataset::from_shards(shards))
    }

    /// Opens the files that match `pattern` ([`glob`](Self::glob)), in name
    /// order.
    pub fn open_glob(pattern: impl AsRef<Path>, options: &OpenOptions) -> Result<Dataset, Error> {
        Dataset::open(Dataset::glob(pattern)?, options)
    }

    /// A dataset of `shards`, in that order.
    pub fn from_shards(shards: Vec<Shard>) -> Dataset {
        let mut bases = Vec::with_capacity(shards.len() + 1);
        let mut total: u64 = 0;
        bases.push(0);
        for shard in &shards {
            total = total.saturating_add(shard.len());
            bases.push(total);
        }
        Dataset { shards, bases }
    }

    /// The regular files that match `pattern`, sorted by name.
    ///
    /// Wildcards are allowed in the last path component only: `*` matches
    /// any run of characters (none included), `?` exactly one; everything
    /// else, and the directory part, is literal. As in a shell, a name
    /// starting with `.` is matched only by a pattern starting with `.`.
    /// Index files are left out: sidecars (`*.rwindex`) by name, unless the
    /// pattern itself ends with `.rwindex`, and every index recordwire
    /// writes (native, DALI text, raw offset table) by its first bytes
    /// ([`index_file_format`](super::index_file_format)), so that a DALI
    /// `FILE.idx` beside `FILE` does not join `train-*`. No match gives an
    /// empty list.
    ///
    /// Errors: `io_error` when the directory cannot be read.
    pub fn glob(pattern: impl AsRef<Path>) -> Result<Vec<PathBuf>, Error> {
        let pattern = pattern.as_ref();
        let Some(name_pattern) = pattern.file_name() else {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the pattern has no file name part",
            );
            return Err(Error::io(e).with_file(pattern.display().to_string()));
        };
        let parent = pattern.parent().unwrap_or(Path::new(""));
        let dir = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let io = |e: std::io::Error| Error::io(e).with_file(dir.display().to_string());
        let suffix = format!(".{SIDECAR_EXTENSION}");
        let pattern_bytes = name_pattern.as_encoded_bytes();
        let want_sidecars = pattern_bytes.ends_with(suffix.as_bytes());
        let want_hidden = pattern_bytes.starts_with(b".");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            let bytes = name.as_encoded_bytes();
            if (bytes.starts_with(b".") && !want_hidden)
                || (bytes.ends_with(suffix.as_bytes()) && !want_sidecars)
            {
                continue;
            }
            let matched = match (name_pattern.to_str(), name.to_str()) {
                (Some(p), Some(n)) => {
                    let p: Vec<char> = p.chars().collect();
                    let n: Vec<char> = n.chars().collect();
                    wildcard(&p, &n, '*', '?')
                }
                _ => wildcard(pattern_bytes, bytes, b'*', b'?'),
            };
            if !matched {
                continue;
            }
            let path = parent.join(&name);
            if path.is_file() && (want_sidecars || !is_index_file(&path)) {
                found.push(path);
            }
        }
        found.sort();
        Ok(found)
    }

    /// Advises the kernel how the records of every shard are about to be
    /// read ([`Shard::advise`]): [`Access::Random`] (the default) for a
    /// shuffled order, [`Access::Sequential`] for file order.
    pub fn advise(&self, access: Access) -> std::io::Result<()> {
        let mut first_error = None;
        for shard in &self.shards {
            if let Err(e) = shard.advise(access) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The order of the dataset's global ids for `spec`. The page modes see
    /// each shard's pages apart: a shard's offsets are shifted past the
    /// previous shard's, to a multiple of the page size, so that no page
    /// holds records of two files.
    ///
    /// ```
    /// use recordwire::frame::{file_of, Framing};
    /// use recordwire::index::Dataset;
    /// use recordwire::io::OpenOptions;
    /// use recordwire::order::{Mode, OrderSpec};
    ///
    /// let dir = tempfile::tempdir()?;
    /// for (name, n) in [("a", 3), ("b", 4)] {
    ///     let records = vec![&[7u8; 1000][..]; n];
    ///     std::fs::write(dir.path().join(name), file_of(Framing::TfRecord, records))?;
    /// }
    /// let dataset = Dataset::open_glob(dir.path().join("*"), &OpenOptions::default())?;
    /// let spec = OrderSpec { mode: Mode::PageAware { page_size: 4096 }, seed: 3, ..OrderSpec::default() };
    /// let epoch: Vec<u64> = dataset.order(spec)?.epoch(0).iter().collect();
    /// let mut sorted = epoch.clone();
    /// sorted.sort_unstable();
    /// assert_eq!(sorted, (0..7).collect::<Vec<u64>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        let files: Vec<(&[u64], u64)> = self
            .shards
            .iter()
            .map(|s| (s.index.starts(), s.file.len() as u64))
            .collect();
        Order::of_files(&files, spec)
    }

    /// The data of global record `global` as an owned handle sharing its
    /// file's memory ([`Shard::get_bytes`]); `Ok(None)` past the end.
    pub fn get_bytes(&self, global: u64) -> Result<Option<Bytes>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        // Errors carry the shard's file already (`Shard::get`).
        self.shards[shard].get_bytes(local)
    }

    /// The total number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.bases.last().copied().unwrap_or(0)
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shards, in id order.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// The global id of each shard's first record, then the total: one more
    /// entry than there are shards.
    pub fn bases(&self) -> &[u64] {
        &self.bases
    }

    /// The shard that holds global record `global`, and the record's local
    /// id in it (a binary search over the bases); `None` past the end.
    pub fn locate(&self, global: u64) -> Option<(usize, u64)> {
        if global >= self.len() {
            return None;
        }
        // The last shard whose base is <= global: it holds `global`, since
        // the next base is > global (empty shards share their base with the
        // next one and are passed over).
        let shard = self
            .bases
            .partition_point(|&b| b <= global)
            .checked_sub(1)?;
        Some((shard, global - self.bases[shard]))
    }

    /// Global record `global` ([`Shard::get`] in its shard); `Ok(None)` past
    /// the end. The record's `id` is the global id; its offsets are in its
    /// shard's file. Errors carry the shard's file name and the local id.
    pub fn get(&self, global: u64) -> Result<Option<Record<'_>>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        let record = self.shards[shard].get(local)?;
        Ok(record.map(|r| Record { id: global, ..r }))
    }

    /// Global record `global` with other read options than its file's.
    pub fn get_with(&self, global: u64, opts: &ReadOptions) -> Result<Option<Record<'_>>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        let shard = &self.shards[shard];
        let record = shard
            .index
            .get(shard.file.bytes(), local, opts)
            .map_err(|e| e.with_file(shard.file.name()))?;
        Ok(record.map(|r| Record {
            id: global,
            file: Some(shard.file.name_arc()),
            ..r
        }))
    }
}

/// Whether `name` matches `pattern`, where `star` matches any run and `one`
/// exactly one element (the classic linear matcher that backtracks to the
/// last star).
fn wildcard<T: PartialEq + Copy>(pattern: &[T], name: &[T], star: T, one: T) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(&c) if c == star => {
                resume = Some((p, n));
                p += 1;
            }
            Some(&c) if c == one || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match resume {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    resume = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == star)
}

/// The current sidecar index of the data file at `path`, already open as
/// `file`: `Ok(None)` when there is none (or `path` is stdin), an error
/// (`stale_index`, with the sidecar's name) when the one there does not
/// belong to the data. Advises the map for random access first: checking a
/// sidecar touches some 70 pages spread over the file, and with the kernel's
/// default read-around (8 MiB on some disks) that alone would read hundreds
/// of MiB of a cold file.
pub(crate) fn load_sidecar(
    path: &Path,
    file: &RecordFile,
    mmap: bool,
) -> Result<Option<Index>, Error> {
    let sidecar = sidecar_path(path);
    // A checkpoint index is for reading the compressed file by id
    // ([`super::GzShard`]); the whole-file reader has no use for it.
    if path == Path::new("-") || !sidecar.is_file() || super::gz::is_gz_index(&sidecar) {
        return Ok(None);
    }
    let _ = Access::Random.advise(file);
    let index = Index::load_native(&sidecar, file.bytes(), mmap)?;
    if index.framing() != file.framing() {
        return Err(stale(
            12,
            format!(
                "the index is for {} data, the data is read as {}",
                index.framing(),
                file.framing()
            ),
        )
        .with_file(sidecar.display().to_string()));
    }
    Ok(Some(index))
}

/// Whether the file at `path` is an index file ([`super::index_file_format`]);
/// a file that cannot be read is not (opening it will say why).
fn is_index_file(path: &Path) -> bool {
    index_file_at(path).is_some()
}

/// The format of the index file at `path`, or `None` when it is not one (or
/// cannot be read: opening it will say why).
pub(crate) fn index_file_at(path: &Path) -> Option<super::IndexFormat> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    let len = file.metadata().map_or(0, |m| m.len());
    let mut head = vec![0u8; super::INDEX_SNIFF_LEN];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    super::index_file_format(&name, &head[..filled], len)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        let p: Vec<char> = p.chars().collect();
        let n: Vec<char> = n.chars().collect();
        wildcard(&p, &n, '*', '?')
    }

    #[test]
    fn wildcards() {
        assert!(m("*", ""));
        assert!(m("*", "abc"));
        assert!(m("a*c", "abbbc"));
        assert!(m("a*c", "ac"));
        assert!(!m("a*c", "acb"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "ac"));
        assert!(m("train-*.tfrecord", "train-00001.tfrecord"));
        assert!(!m("train-*.tfrecord", "train-00001.tfrecord.rwindex"));
        assert!(m("*-*-*", "a-b-c-d"));
        assert!(!m("*-*-*x", "a-b-c-d"));
        assert!(m("d?t?", "dätä"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("a**", "a"));
    }
}

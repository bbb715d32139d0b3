//! The indexed commands on GZIP and ZLIB files: `index` writes a checkpoint
//! index, and `count`, `get` and `order` read through it, inflating only the
//! spans they need (`bench` is in `bench/`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::indexed::{data_or_fatal, fatal, no_record, open_each};
use super::{report, CmdResult, Failure, ReadArgs};
use crate::error::Error;
use crate::frame::ErrorPolicy;
use crate::index::{sidecar_path, GzCaches, GzDataset, GzIndex, GzShard, IndexOrigin};
use crate::io::{framing_hint, resolve, Compression, OpenOptions, RecordFile};

/// The first bytes of `path`, enough to tell its compression (none for
/// stdin or an unreadable file).
fn prefix(path: &Path) -> Option<Vec<u8>> {
    if path == Path::new("-") {
        return None;
    }
    let mut head = Vec::with_capacity(crate::frame::TFRECORD_HEADER_LEN);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::fs::File::open(path).ok()?,
            crate::frame::TFRECORD_HEADER_LEN as u64,
        ),
        &mut head,
    )
    .ok()?;
    Some(head)
}

/// Whether `path` is a GZIP or ZLIB file (as named by `--compression`, or
/// detected from its first bytes).
pub(super) fn is_compressed(path: &Path, read: &ReadArgs) -> bool {
    let Some(head) = prefix(path) else {
        return false;
    };
    let options = read.open_options(ErrorPolicy::Fail);
    matches!(
        resolve(&head, framing_hint(path), &options).compression,
        Compression::Gzip | Compression::Zlib
    )
}

/// Says on stderr that a sidecar was passed over, and why.
fn note_rejected(shard: &GzShard, stderr: &mut dyn Write) {
    if let IndexOrigin::Built {
        rejected: Some(why),
    } = shard.origin()
    {
        let _ = writeln!(
            stderr,
            "note: {}: the sidecar index was not used ({why}): the checkpoint index was built \
             in memory (`recordwire index` writes it)",
            shard.name()
        );
    }
}

/// Opens `path` for random access, with `index` or its sidecar.
pub(super) fn open(path: &Path, read: &ReadArgs, index: Option<&Path>) -> Result<GzShard, Error> {
    let options: OpenOptions = read.open_options(ErrorPolicy::Fail);
    GzShard::open_with(path, &options, index)
}

/// `index` of a compressed file: the checkpoint index, as its sidecar or
/// `out`.
pub(super) fn index(
    path: &Path,
    read: &ReadArgs,
    spacing: u64,
    out: Option<&Path>,
    stderr: &mut dyn Write,
) -> CmdResult {
    let options = read.open_options(ErrorPolicy::Fail);
    let data = &RecordFile::stored_bytes(path, options.mmap).map_err(fatal)?;
    let name = path.display().to_string();
    let resolved = resolve(data, framing_hint(path), &options);
    let started = std::time::Instant::now();
    let index = GzIndex::build(
        data,
        resolved.compression,
        resolved.framing,
        spacing,
        options.read.check_data_crc,
    )
    .map_err(|e| data_or_fatal(e.with_file(name.as_str()), stderr))?;
    let elapsed = started.elapsed();
    let out: PathBuf = out.map_or_else(|| sidecar_path(path), Path::to_path_buf);
    if out == Path::new("-") {
        return Err(Failure::Usage(
            "a checkpoint index is binary: give --out a file".into(),
        ));
    }
    index.write_native_file(&out).map_err(fatal)?;
    let windows = index
        .checkpoints()
        .iter()
        .filter(|p| p.window_len > 0)
        .count();
    let _ = writeln!(
        stderr,
        "{}: {} records indexed into {} (checkpoint index: {} checkpoints, {windows} with a \
         window{}; {} bytes, {:.2}% of the compressed file; {:.2} s)",
        name,
        index.len(),
        out.display(),
        index.checkpoints().len(),
        if index.is_block_compressed() {
            "; block-compressed"
        } else {
            ""
        },
        index.native_len(),
        100.0 * index.native_len() as f64 / data.len().max(1) as f64,
        elapsed.as_secs_f64(),
    );
    Ok(())
}

/// `count` of a compressed file with a current checkpoint sidecar: its
/// record count (`None`: no usable sidecar, count by reading).
pub(super) fn sidecar_count(path: &Path, read: &ReadArgs, stderr: &mut dyn Write) -> Option<u64> {
    let sidecar = sidecar_path(path);
    if !sidecar.is_file() {
        return None;
    }
    let data = RecordFile::stored_bytes(path, !read.no_mmap).ok()?;
    match GzIndex::load_native(&sidecar, &data) {
        Ok(index) => Some(index.len()),
        Err(e) => {
            let _ = writeln!(
                stderr,
                "note: {}: not used ({e}): counting by reading the file",
                sidecar.display()
            );
            None
        }
    }
}

/// `get` on compressed files: each id inflated from its checkpoint (ids
/// global over the files in order).
pub(super) fn get(
    files: &[PathBuf],
    ids: &[u64],
    read: &ReadArgs,
    index: Option<&Path>,
    features: Option<Vec<String>>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let shards = open_each(files, |path| open(path, read, index), note_rejected, stderr)?;
    let Some(first) = shards.first() else {
        return Err(Failure::Usage("no record file".into()));
    };
    let chosen = read.payload_of_gz(first, stderr);
    let filter: Option<Vec<Vec<u8>>> =
        features.map(|v| v.into_iter().map(String::into_bytes).collect());
    let name = match &shards[..] {
        [one] => one.name().to_string(),
        many => format!("{} files", many.len()),
    };
    let dataset = GzDataset::from_shards(shards);
    let json = super::indexed::JsonLine {
        payload: chosen.kind,
        strict: read.strict,
        filter: filter.as_deref(),
    };
    let mut notes = super::payload::Notes::new(chosen);
    let mut out = std::io::BufWriter::new(stdout);
    let mut caches = GzCaches::default();
    let mut line = Vec::new();
    let mut result = Ok(());
    for &id in ids {
        let record = match dataset.get(id, &mut caches) {
            Ok(Some(r)) => r,
            Ok(None) => {
                out.flush()?;
                let shards = dataset.shards().len();
                result = Err(no_record(&name, id, shards, dataset.len()));
                break;
            }
            Err(e) => {
                out.flush()?;
                report(stderr, &e);
                result = Err(Failure::Data);
                break;
            }
        };
        if let Err(e) = json.write(&record, &mut line, &mut out, &mut notes, stderr) {
            result = Err(e);
            break;
        }
    }
    notes.finish(&name, stderr);
    result?;
    out.flush()?;
    Ok(())
}

/// Compressed files as one id space, for `order`.
pub(super) fn dataset(
    files: &[PathBuf],
    read: &ReadArgs,
    stderr: &mut dyn Write,
) -> Result<GzDataset, Failure> {
    let shards = open_each(files, |path| open(path, read, None), note_rejected, stderr)?;
    Ok(GzDataset::from_shards(shards))
}

/// `order` of one compressed file: its ids (the page modes group the
/// records by pages of the decompressed stream).
pub(super) fn order(
    path: &Path,
    read: &ReadArgs,
    index: Option<&Path>,
    stderr: &mut dyn Write,
) -> Result<GzShard, Failure> {
    let shard = open(path, read, index).map_err(|e| data_or_fatal(e, stderr))?;
    note_rejected(&shard, stderr);
    Ok(shard)
}

/// For `inspect` of a GZIP file: whether it is block-compressed (several
/// members, each starting at a record) and its number of members, from its
/// current checkpoint sidecar or one walk of its members; `None` when it is
/// not a regular GZIP file or cannot be walked (the record walk reports why).
pub(super) fn block_compression(path: &Path, read: &ReadArgs) -> Option<(bool, usize)> {
    let options = read.open_options(ErrorPolicy::Fail);
    let head = prefix(path)?;
    let resolved = resolve(&head, framing_hint(path), &options);
    if resolved.compression != Compression::Gzip {
        return None;
    }
    let data = RecordFile::stored_bytes(path, options.mmap).ok()?;
    let index = GzIndex::load_native(sidecar_path(path), &data)
        .or_else(|_| GzIndex::build(&data, Compression::Gzip, resolved.framing, u64::MAX, false))
        .ok()?;
    let members = index
        .checkpoints()
        .iter()
        .filter(|p| p.window_len == 0)
        .count();
    Some((index.is_block_compressed(), members))
}

//! `index` on GZIP and ZLIB files: the checkpoint index (`count`, `get`,
//! `order` and `bench` read compressed files through it as they read plain
//! files through theirs: see `indexed.rs`), and what `inspect` says of a
//! GZIP file's members.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::indexed::{data_or_fatal, fatal};
use super::{CmdResult, Failure, ReadArgs};
use crate::frame::ErrorPolicy;
use crate::index::{sidecar_path, GzIndex};
use crate::io::{framing_hint, resolve, Compression, RecordFile};

/// The first bytes of `path`, enough to tell its compression (none for
/// stdin or an unreadable file).
fn prefix(path: &Path, options: &crate::io::OpenOptions) -> Option<Vec<u8>> {
    if path == Path::new("-") {
        return None;
    }
    #[cfg(feature = "remote")]
    if crate::io::remote::is_remote(path) {
        use crate::io::ByteSource;
        let url = path.display().to_string();
        let source = crate::io::remote::RemoteSource::open(&url, &options.storage).ok()?;
        let end = source.len().min(crate::frame::TFRECORD_HEADER_LEN as u64);
        return source.read_range(0..end).ok().map(|b| b.to_vec());
    }
    let _ = options;
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
    let options = read.open_options(ErrorPolicy::Fail);
    let Some(head) = prefix(path, &options) else {
        return false;
    };
    matches!(
        resolve(&head, framing_hint(path), &options).compression,
        Compression::Gzip | Compression::Zlib
    )
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
    let data = &RecordFile::stored_bytes_with(path, &options).map_err(fatal)?;
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
    let mut bytes = Vec::new();
    index.write_native(&mut bytes)?;
    super::write_index_file(&out, bytes, &options).map_err(fatal)?;
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

/// For `inspect` of a GZIP file: whether it is block-compressed (several
/// members, each starting at a record) and its number of members, from its
/// current checkpoint sidecar or one walk of its members; `None` when it is
/// not a regular GZIP file or cannot be walked (the record walk reports why).
pub(super) fn block_compression(path: &Path, read: &ReadArgs) -> Option<(bool, usize)> {
    let options = read.open_options(ErrorPolicy::Fail);
    let head = prefix(path, &options)?;
    let resolved = resolve(&head, framing_hint(path), &options);
    if resolved.compression != Compression::Gzip {
        return None;
    }
    let data = RecordFile::stored_bytes_with(path, &options).ok()?;
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

//! The one `unsafe` of the crate: mapping a file into memory.

use std::fs::File;

use memmap2::Mmap;

/// Maps the whole of `file` into memory, read-only.
///
/// # The hazard
///
/// `Mmap::map` is unsafe because the mapped bytes are the file's own pages,
/// which the type system cannot protect:
///
/// - the map is read-only (`PROT_READ`, and this crate never turns it into a
///   mutable map), so nothing in this process writes to it;
/// - another process can still change the file while it is mapped. If it
///   writes to it, the `&[u8]` we hand out changes under our feet (a record's
///   data could change after its CRC was checked); if it *truncates* it,
///   touching a page past the new end raises `SIGBUS` and kills the process,
///   which no Rust code can catch.
///
/// We accept this, like every reader of mapped files, for record files that
/// are written once and then only read. Callers fall back to a plain read when
/// mapping fails, and users who cannot promise that the file stays unchanged
/// while it is open turn mapping off
/// ([`OpenOptions::mmap`](super::OpenOptions::mmap), `--no-mmap`).
#[allow(unsafe_code)]
pub(crate) fn map(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: a read-only map that we never write through; if another process
    // truncates the file while it is mapped, reading past the new end raises
    // SIGBUS (see "The hazard" above): accepted, `mmap: false` avoids it.
    unsafe { Mmap::map(file) }
}

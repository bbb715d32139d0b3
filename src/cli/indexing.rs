//! The front ends of `index`, `get` and `order`: their arguments checked,
//! and for `index` and `get` the choice between the plain path
//! ([`super::indexed`]) and the compressed one ([`super::gz`]); `order`
//! makes that choice in [`super::indexed::order`].

use std::io::Write;
use std::path::PathBuf;

use super::{
    args, each_file, gz, indexed, CmdResult, Failure, GetCommand, IndexCommand, OrderCommand,
};
use crate::index::IndexFormat;
use crate::order::OrderSpec;

/// Runs `index`: each file gets its own index (`--out` goes with one file).
pub(super) fn index(c: &IndexCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    if c.out.is_some() && c.files.len() > 1 {
        return Err(Failure::Usage("--out goes with a single file".into()));
    }
    let out = c.out.as_deref();
    // Where each index goes is checked before anything is read: an
    // `http(s)://` output (or input, whose sidecar would go beside it) is
    // refused up front.
    #[cfg(feature = "remote")]
    {
        let options = crate::io::remote::StorageOptions::new(c.read.storage_option.iter().cloned());
        let targets: Vec<String> = match out {
            Some(o) => vec![o.display().to_string()],
            None => c
                .files
                .iter()
                .map(|f| format!("{}.{}", f.display(), crate::index::SIDECAR_EXTENSION))
                .collect(),
        };
        for target in targets
            .iter()
            .filter(|t| crate::io::remote::is_remote(t.as_str()))
        {
            crate::io::remote::check_writable(target, &options)
                .map_err(|e| Failure::Fatal(e, super::EXIT_USAGE))?;
        }
    }
    each_file(&c.files, |file| {
        if c.format == IndexFormat::Native && gz::is_compressed(file, &c.read) {
            gz::index(file, &c.read, c.spacing, out, stderr)
        } else {
            indexed::index(file, &c.read, c.format, out, stdout, stderr)
        }
    })
}

/// Runs `get`: the records with the given ids, through the index. Its
/// arguments after the first file mix more files and ids (an argument of
/// digits only, or `-`, is an id).
pub(super) fn get(c: GetCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    let (ids, more): (Vec<String>, Vec<String>) =
        c.ids.into_iter().partition(|a| args::is_id_word(a));
    if ids.is_empty() && c.ids_file.is_none() {
        return Err(Failure::Usage(
            "no record ids: give them after the files, with --ids-file, or - for stdin".into(),
        ));
    }
    let files: Vec<PathBuf> = std::iter::once(c.file)
        .chain(more.into_iter().map(PathBuf::from))
        .collect();
    // Plain and compressed files alike, each through its index.
    indexed::get(
        &files,
        &indexed::record_ids(&ids, c.ids_file.as_deref())?,
        &c.read,
        c.index.as_deref(),
        c.features,
        &c.schema,
        stdout,
        stderr,
    )
}

/// Runs `order`: one epoch's order of record ids.
pub(super) fn order(c: &OrderCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    let spec = OrderSpec {
        mode: c.mode.mode(c.page_size, c.window),
        seed: c.seed,
        rank: c.rank,
        world: c.world,
        worker: c.worker,
        workers: c.workers,
        tail: c.tail,
    };
    indexed::order(
        &c.files,
        &c.read,
        c.index.as_deref(),
        spec,
        c.epoch,
        stdout,
        stderr,
    )
}

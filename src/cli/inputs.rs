//! The record files a command was given, with the index files among them
//! passed over: a shell glob such as `data/*` also picks up the sidecars
//! (`FILE.rwindex`) that `recordwire index` wrote beside the data.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{args, Command, Failure, GetCommand};
use crate::index::IndexFormat;

/// Passes over the index files (of any format) among the record files of
/// `command` when it is given other record files too, with a note on stderr
/// for each; an index file with no record file beside it (given alone, or
/// among index files only) is a usage error that names it. Local files,
/// `file://` URLs and remote objects alike ([`crate::dataset::index_file_at`]).
pub(super) fn pass_over_index_files(
    command: &mut Command,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    match command {
        Command::Cat(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Dump(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Verify(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Count(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Index(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Order(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Inspect(c) => keep_record_files(&mut c.files, &c.read, stderr),
        Command::Export(c) => keep_record_files(&mut c.inputs, &c.read, stderr),
        Command::Get(c) => keep_get_files(c, stderr),
        Command::Bench(c) => refuse_index(&c.file, &c.read),
        Command::Convert(c) => refuse_index(&c.input, &c.read),
        Command::Decode(_) | Command::Encode(_) | Command::Pack(_) | Command::Import(_) => Ok(()),
    }
}

/// Expands the globs of URLs among the record files of `command`: of a
/// store (`s3://bucket/train-*.tfrecord`: one listing of the folder) and
/// `file://` ones (as their local paths), in name order, sidecars
/// (`*.rwindex`) left out unless the pattern names them; the other index
/// files are then passed over with a note, as for a shell's glob
/// ([`pass_over_index_files`]). A pattern that matches nothing, or one of
/// an `http(s)://` URL, is a usage error. (Local globs are the shell's.)
#[cfg(feature = "remote")]
pub(super) fn expand_remote_globs(command: &mut Command) -> Result<(), Failure> {
    use crate::io::remote::{file_url_path, is_remote};
    let (files, read) = match command {
        Command::Cat(c) => (&mut c.files, &c.read),
        Command::Dump(c) => (&mut c.files, &c.read),
        Command::Verify(c) => (&mut c.files, &c.read),
        Command::Count(c) => (&mut c.files, &c.read),
        Command::Index(c) => (&mut c.files, &c.read),
        Command::Order(c) => (&mut c.files, &c.read),
        Command::Inspect(c) => (&mut c.files, &c.read),
        Command::Export(c) => (&mut c.inputs, &c.read),
        _ => return Ok(()),
    };
    let is_url_glob =
        |f: &Path| (is_remote(f) || file_url_path(f).is_some()) && crate::dataset::has_wildcard(f);
    if !files.iter().any(|f| is_url_glob(f.as_path())) {
        return Ok(());
    }
    let options = read.open_options(crate::frame::ErrorPolicy::Fail);
    let mut expanded = Vec::with_capacity(files.len());
    for file in std::mem::take(files) {
        if !is_url_glob(file.as_path()) {
            expanded.push(file);
            continue;
        }
        let found = crate::dataset::glob_matches(&file, &options)
            .map_err(|e| Failure::Fatal(e, super::EXIT_USAGE))?;
        expanded.extend(found);
    }
    *files = expanded;
    Ok(())
}

/// The format of `path` when it is an index file (stdin never is).
fn index_format(path: &Path, read: &args::ReadArgs) -> Option<IndexFormat> {
    if path == Path::new("-") {
        None
    } else {
        #[cfg(feature = "remote")]
        let storage = crate::io::remote::StorageOptions::new(read.storage_option.iter().cloned());
        #[cfg(not(feature = "remote"))]
        let storage = {
            let _ = read;
        };
        crate::dataset::index_file_at(path, &storage)
    }
}

/// The usage error for an index file given where a record file belongs.
fn not_a_record_file(path: &Path, format: IndexFormat) -> Failure {
    Failure::Usage(format!(
        "{}: this is an index file ({format}), not a record file; give an index with --index",
        path.display()
    ))
}

fn note_passing_over(path: &Path, format: IndexFormat, stderr: &mut dyn Write) {
    let _ = writeln!(
        stderr,
        "note: passing over {}: an index file ({format}), not a record file",
        path.display()
    );
}

/// Refuses `path` when it is an index file.
fn refuse_index(path: &Path, read: &args::ReadArgs) -> Result<(), Failure> {
    match index_format(path, read) {
        Some(format) => Err(not_a_record_file(path, format)),
        None => Ok(()),
    }
}

/// Removes the index files from `files` when a record file is left.
fn keep_record_files(
    files: &mut Vec<PathBuf>,
    read: &args::ReadArgs,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    let formats: Vec<Option<IndexFormat>> = files.iter().map(|f| index_format(f, read)).collect();
    if formats.iter().all(Option::is_none) {
        return Ok(());
    }
    if formats.iter().all(Option::is_some) {
        if let (Some(path), Some(Some(format))) = (files.first(), formats.first()) {
            return Err(not_a_record_file(path, *format));
        }
    }
    for (path, format) in std::mem::take(files).into_iter().zip(formats) {
        match format {
            Some(format) => note_passing_over(&path, format, stderr),
            None => files.push(path),
        }
    }
    Ok(())
}

/// [`keep_record_files`] for `get`, whose record files are its first
/// argument and those of the others that are not ids.
fn keep_get_files(c: &mut GetCommand, stderr: &mut dyn Write) -> Result<(), Failure> {
    let is_file = |word: &String| !args::is_id_word(word);
    let mut files: Vec<PathBuf> = std::iter::once(c.file.clone())
        .chain(c.ids.iter().filter(|w| is_file(w)).map(PathBuf::from))
        .collect();
    let given = files.len();
    keep_record_files(&mut files, &c.read, stderr)?;
    if files.len() == given {
        return Ok(());
    }
    let mut files = files.into_iter();
    if let Some(first) = files.next() {
        c.file = first;
    }
    // The others came from `ids`, as text: back to text without loss.
    let ids = std::mem::take(&mut c.ids)
        .into_iter()
        .filter(|w| !is_file(w));
    c.ids = files
        .map(|f| f.to_string_lossy().into_owned())
        .chain(ids)
        .collect();
    Ok(())
}

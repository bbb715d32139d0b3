//! The files a pattern names: local globs, `file://` URLs and listings of
//! object stores, with the index files among them told apart.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::index::{index_file_format, IndexFormat, INDEX_SNIFF_LEN, SIDECAR_EXTENSION};
use crate::io::OpenOptions;

/// The storage options of `options` (none without feature `remote`).
#[cfg(feature = "remote")]
pub(super) fn storage_of(options: &OpenOptions) -> &crate::io::remote::StorageOptions {
    &options.storage
}

/// The storage options of `options` (none without feature `remote`).
#[cfg(not(feature = "remote"))]
pub(super) fn storage_of(_: &OpenOptions) -> &() {
    &()
}

/// The storage options [`index_file_at`] takes.
#[cfg(feature = "remote")]
type Storage = crate::io::remote::StorageOptions;
#[cfg(not(feature = "remote"))]
type Storage = ();

/// Whether the last part of `pattern` holds a wildcard (`*` or `?`).
pub(crate) fn has_wildcard(pattern: &Path) -> bool {
    match pattern.to_str() {
        Some(s) => s
            .rsplit_once('/')
            .map_or(s, |(_, name)| name)
            .contains(['*', '?']),
        None => pattern
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().iter().any(|&b| b == b'*' || b == b'?')),
    }
}

/// What `pattern` matches, as [`Dataset::expand`](super::Dataset::expand) finds it but with the
/// index files still among them (sidecars left out by name, unless the
/// pattern ends `.rwindex`): the command line names each index file it
/// passes over. `pattern` itself when it has no wildcard.
pub(crate) fn matches(pattern: &Path, options: &OpenOptions) -> Result<Vec<PathBuf>, Error> {
    if !has_wildcard(pattern) {
        return Ok(vec![pattern.to_path_buf()]);
    }
    let named = || pattern.display().to_string();
    #[cfg(feature = "remote")]
    {
        use crate::io::remote;
        if let Some(url) = pattern.to_str().filter(|s| remote::is_remote(s)) {
            let suffix = format!(".{SIDECAR_EXTENSION}");
            let found: Vec<PathBuf> = remote::glob(url, &options.storage)?
                .into_iter()
                .filter(|u| !u.ends_with(&suffix) || url.ends_with(&suffix))
                .map(PathBuf::from)
                .collect();
            if found.is_empty() {
                return Err(Error::usage("no object matches").with_file(named()));
            }
            return Ok(found);
        }
        if let Some(local) = remote::file_url_path(pattern) {
            let found = glob_local(&local, false)?
                .iter()
                .map(|p| remote::file_url_of(p).map_or_else(|| p.clone(), PathBuf::from))
                .collect::<Vec<_>>();
            if found.is_empty() {
                return Err(Error::usage("no file matches").with_file(named()));
            }
            return Ok(found);
        }
    }
    let _ = options;
    let found = glob_local(pattern, false)?;
    if found.is_empty() {
        return Err(Error::usage("no file matches").with_file(named()));
    }
    Ok(found)
}

/// [`Dataset::glob`](super::Dataset::glob), index files left out by content only when
/// `leave_out_indexes` (sidecars by name always, unless asked for).
pub(super) fn glob_local(pattern: &Path, leave_out_indexes: bool) -> Result<Vec<PathBuf>, Error> {
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
        if path.is_file() && (want_sidecars || !leave_out_indexes || !is_index_file(&path)) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
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

/// Whether the file at `path` is an index file ([`index_file_format`]);
/// a file that cannot be read is not (opening it will say why).
fn is_index_file(path: &Path) -> bool {
    local_index_file_at(path).is_some()
}

/// The format of the index file at `path` (a local path, a `file://` URL,
/// or with feature `remote` the URL of an object, read with `storage`), or
/// `None` when it is not one (or cannot be read: opening it will say why).
/// Of a remote object only one named as `recordwire index` names an index
/// (`.rwindex`, `.idx`, `.offsets`) is looked at (its first bytes, one
/// request), so that a dataset's shards cost no request more.
pub(crate) fn index_file_at(path: &Path, storage: &Storage) -> Option<IndexFormat> {
    #[cfg(feature = "remote")]
    {
        use crate::io::remote;
        if let Some(local) = remote::file_url_path(path) {
            return local_index_file_at(&local);
        }
        if let Some(url) = path.to_str().filter(|s| remote::is_remote(s)) {
            let name = url.rsplit_once('/').map_or(url, |(_, name)| name);
            let candidate = [".rwindex", ".idx", ".offsets"]
                .iter()
                .any(|suffix| name.ends_with(suffix));
            if !candidate {
                return None;
            }
            let object = remote::RemoteSource::open(url, storage).ok()?;
            let len = crate::io::ByteSource::len(&object);
            let sniff = len.min(INDEX_SNIFF_LEN as u64);
            let head = object.in_head(&(0..sniff))?;
            return index_file_format(name, &head, len);
        }
    }
    let _ = storage;
    local_index_file_at(path)
}

/// [`index_file_at`] for a local path.
fn local_index_file_at(path: &Path) -> Option<IndexFormat> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    let len = file.metadata().map_or(0, |m| m.len());
    let mut head = vec![0u8; INDEX_SNIFF_LEN];
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
    index_file_format(&name, &head[..filled], len)
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

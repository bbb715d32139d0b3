//! Shards in object storage (feature `remote`): where their index comes
//! from (the local index cache, the sidecar beside the object, or one
//! streaming pass) and what is remembered after opening.

use std::path::Path;
use std::sync::Arc;

use super::shard::{IndexOrigin, Shard};
use super::stored::{IndexFile, Stored};
use crate::error::Error;
use crate::frame::ErrorPolicy;
use crate::index::SIDECAR_EXTENSION;
use crate::io::remote::{IndexCache, Location, RemoteSource, StorageOptions};
use crate::io::{ByteSource, OpenOptions};

/// Opens the remote object `url` (one request) and finds its index file:
/// the local cache's copy for this URL, size and ETag (trusted), else the
/// sidecar `URL.rwindex` beside it (one more request; `None` when there is
/// none). Nothing is looked up when an index is given or the skip policy
/// builds one afresh.
pub(super) fn open_stored(
    url: &Arc<str>,
    options: &OpenOptions,
    index: Option<&Path>,
    build: bool,
) -> Result<(Stored, Option<Result<IndexFile, Error>>), Error> {
    let source = Arc::new(RemoteSource::open(url, &options.storage)?);
    let skip = matches!(options.read.policy, ErrorPolicy::Skip { .. }) && build;
    let sidecar = if index.is_some() || skip {
        None
    } else {
        match cached(&source, &options.storage) {
            Some(file) => Some(Ok(file)),
            None => sidecar(&source),
        }
    };
    Ok((Stored::Remote(source), sidecar))
}

/// The local cache's index for `source`, when it has an ETag and the cache
/// one for it.
fn cached(source: &RemoteSource, options: &StorageOptions) -> Option<IndexFile> {
    let etag = source.etag()?;
    let cache = IndexCache::for_options(options)?;
    let bytes = cache.get(source.url(), source.len(), Some(etag))?;
    Some(IndexFile {
        name: cache.dir().display().to_string().into(),
        bytes,
        trusted: true,
    })
}

/// The sidecar beside the object `source`, if there is one: a step of its
/// opening, within the same time (`retry_timeout`).
fn sidecar(source: &RemoteSource) -> Option<Result<IndexFile, Error>> {
    let sidecar = source.location().sibling(&format!(".{SIDECAR_EXTENSION}"));
    match sidecar.get_all(source.opening(), "GET of the sidecar index") {
        Ok(Some(bytes)) => Some(Ok(IndexFile {
            name: Arc::clone(&sidecar.url),
            bytes,
            trusted: false,
        })),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// The index file at the URL `path` (named to `open_with`).
pub(super) fn read_index_url(path: &Path, options: &OpenOptions) -> Result<IndexFile, Error> {
    let url = path.display().to_string();
    let location = Location::parse(&url, &options.storage)?;
    match location.get_all(&location.op(), "GET of the index")? {
        Some(bytes) => Ok(IndexFile {
            name: Arc::clone(&location.url),
            bytes,
            trusted: false,
        }),
        None => Err(Error::io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "not found",
        ))
        .with_file(location.url)),
    }
}

/// Keeps the index of `shard`, read from `object`, in the local cache when
/// it was fetched or built (not when it came from there, was given, or
/// passed over damage) and the object has an ETag to key it by. The cache
/// is an optimisation: failing to write it is not an error.
pub(super) fn remember(shard: &Shard, object: &RemoteSource, options: &StorageOptions) {
    let (Some(etag), Some(cache)) = (object.etag(), IndexCache::for_options(options)) else {
        return;
    };
    if !matches!(
        shard.origin(),
        IndexOrigin::Sidecar | IndexOrigin::Built { .. }
    ) || !shard.skipped().is_empty()
    {
        return;
    }
    let mut bytes = Vec::new();
    let written = match shard.gz_index() {
        Some(gz) => gz.write_native(&mut bytes),
        None => shard.index().write_native(&mut bytes),
    };
    if written.is_ok() {
        let _ = cache.put(object.url(), object.len(), Some(etag), &bytes);
    }
}

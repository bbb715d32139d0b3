//! Whole objects: read in one stream, written with one `PUT` or a multipart
//! upload, and asked for with one `HEAD`.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use object_store::ObjectStoreExt;

use super::location::Location;
use super::options::StorageOptions;
use super::reader::RemoteReader;
use super::runtime::block_on;
use super::source::RemoteSource;
use crate::error::Error;
use crate::io::ByteSource;

/// The whole object, streamed with large requests and read-ahead
/// ([`RemoteReader`]), reported to the [`observe_fetches`](super::observe_fetches) observer.
pub fn read_whole(source: &Arc<RemoteSource>) -> Result<bytes::Bytes, Error> {
    use std::io::Read;
    let mut content = Vec::with_capacity(usize::try_from(source.len()).unwrap_or(0));
    RemoteReader::observed(Arc::clone(source))
        .read_to_end(&mut content)
        .map_err(|e| Error::io(e).with_file(Arc::clone(source.url_arc())))?;
    Ok(bytes::Bytes::from(content))
}

/// Writes `bytes` as the whole object at `url` (one `PUT`; the stores make
/// it appear whole or not at all), as `recordwire index` writes a sidecar
/// beside a remote object.
pub fn put(url: &str, bytes: bytes::Bytes, options: &StorageOptions) -> Result<(), Error> {
    Location::for_write(url, options)?.put(bytes)
}

/// Whether there is an object at `url` (one `HEAD`), as a writing command
/// asks before it replaces one without `--force`.
pub fn exists(url: &str, options: &StorageOptions) -> Result<bool, Error> {
    let location = Location::parse(url, options)?;
    match location.head() {
        Ok(_) => Ok(true),
        Err(e) if matches!(e.kind(), crate::ErrorKind::Io { io_kind, .. } if *io_kind == std::io::ErrorKind::NotFound) => {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Output of at most this many bytes is written with one `PUT`
/// ([`put_file`]); larger output with a multipart upload.
pub const MULTIPART_ABOVE: u64 = 64 << 20;
/// The part size of a multipart upload ([`put_file`]).
const PART_SIZE: usize = 16 << 20;
/// Parts of a multipart upload in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

/// Checks, before anything is written, that `url` can be written: a URL
/// of a store that names an object (not `http(s)://`, whose servers take no
/// `PUT` here; not a bucket or a folder; a scheme recordwire knows). Errors
/// are `usage_error`s naming the URL; a bad storage option is an
/// `io_error`. No request is made.
pub fn check_writable(url: &str, options: &StorageOptions) -> Result<(), Error> {
    Location::for_write(url, options).map(|_| ())
}

/// Writes the finished local file `local` as the whole object at `url`:
/// one `PUT` of its bytes up to [`MULTIPART_ABOVE`], else a multipart
/// upload in parts of 16 MiB, 4 in flight (aborted on failure). Either way
/// the object appears whole or not at all. What the command line's
/// writing commands (`pack`, `convert`, `export`, …) do with the temporary
/// file they wrote.
pub fn put_file(url: &str, local: &Path, options: &StorageOptions) -> Result<(), Error> {
    use std::io::Read;
    let location = Location::for_write(url, options)?;
    let local_error = |e: std::io::Error| Error::io(e).with_file(local.display().to_string());
    let mut file = std::fs::File::open(local).map_err(local_error)?;
    let len = file.metadata().map_err(local_error)?.len();
    if len <= MULTIPART_ABOVE {
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut bytes).map_err(local_error)?;
        return location.put(bytes.into());
    }
    // Each step (starting the upload, waiting for room for a part,
    // finishing) is bounded by `retry_timeout` on its own: the upload as a
    // whole takes what its size takes.
    let starting = location.clone();
    let upload = block_on(async move {
        let op = starting.op();
        let path = starting.path.clone();
        let request = format!("start of a multipart upload of {len} bytes");
        starting
            .run(&op, &request, |store| async move {
                store.put_multipart(&path).await
            })
            .await
            .map_err(|f| f.into_error(&starting.url))
    })?;
    let mut upload = object_store::WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
    let mut buf = vec![0u8; PART_SIZE];
    let mut sent = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = block_on(async move { upload.abort().await });
                return Err(local_error(e));
            }
        };
        if n == 0 {
            break;
        }
        sent += n as u64;
        // On the runtime (a full part starts an upload task there), then
        // back pressure: wait while too many parts are in flight (the
        // upload moves into the runtime's future and back).
        let chunk = bytes::Bytes::copy_from_slice(&buf[..n]);
        let request = format!("upload of a part (bytes up to {sent} of {len})");
        let at = location.clone();
        let (back, waited) = block_on(async move {
            upload.put(chunk);
            let waited = bounded(&at, &request, upload.wait_for_capacity(PARTS_IN_FLIGHT)).await;
            (upload, waited)
        });
        upload = back;
        if let Err(e) = waited {
            let _ = block_on(async move { upload.abort().await });
            return Err(e);
        }
    }
    let request = format!("completion of a multipart upload of {len} bytes");
    block_on(async move { bounded(&location, &request, upload.finish()).await }).map(|_| ())
}

/// `fut`, the step `request` on `location`'s object, as an operation of its
/// own (bounded by `retry_timeout`).
async fn bounded<T>(
    location: &Location,
    request: &str,
    fut: impl Future<Output = Result<T, object_store::Error>>,
) -> Result<T, Error> {
    let op = location.op();
    op.run(&location.url, request, fut)
        .await
        .map_err(|f| f.into_error(&location.url))
}

//! Record files in object storage and on HTTP servers (feature `remote`).
//!
//! Anywhere a path is accepted (library, command line, Python), a URL may
//! stand instead: `s3://bucket/key` (and `s3a://`), `gs://bucket/key`,
//! `az://container/key` (and `abfs://`, `abfss://`, `azure://`), or
//! `http://`/`https://` for a server that honours `Range`. `file://PATH` is
//! the local file at `PATH` (mapped, as any local path). Bytes are fetched
//! with ranged `GET`s through the [`object_store`] crate: a record is one
//! request once the index is loaded ([`RemoteSource`]), several records are
//! sorted, coalesced and fetched concurrently
//! ([`ByteSource::read_ranges`]), and a whole
//! object is streamed with large requests and read-ahead ([`RemoteReader`]).
//!
//! Credentials and endpoints come from the environment, as `object_store`'s
//! `from_env` builders read it (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP=true` for a plain
//! HTTP endpoint, `GOOGLE_APPLICATION_CREDENTIALS`, `AZURE_STORAGE_*`), and
//! from [`StorageOptions`], which override them (the convention of pandas,
//! polars and deltalake: `--storage-option K=V` on the command line,
//! `storage_options={...}` in Python).
//!
//! All requests run on one tokio runtime per process, made on first use and
//! made again in a child process after a `fork` (the parent's runtime and
//! connections are left alone there); clients are kept per store and
//! options, so that the shards of a bucket share their connections.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::path::Path as ObjectPath;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreExt, ObjectStoreScheme, RetryConfig};

use crate::error::Error;
use crate::io::ByteSource;

mod cache;
mod connector;
mod reader;
mod source;
mod wait;

pub use cache::{cache_dir, IndexCache};
pub use reader::RemoteReader;
pub use source::{RemoteSource, RemoteStats, SpanCache};
pub use wait::{observe_waits, Wait, WaitObserver, NOTE_AFTER};
pub(crate) use wait::{Failed, Failure, Op};

/// What a whole-object read made while opening (to build an index: the
/// one streaming pass over an object without a sidecar or a cached index)
/// reports to the observer set with [`observe_fetches`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch<'a> {
    /// A read of `len` bytes of the object at `url` starts.
    Started {
        /// The object's URL.
        url: &'a str,
        /// The bytes it will read.
        len: u64,
    },
    /// `n` more bytes of the object at `url` came.
    Read {
        /// The object's URL.
        url: &'a str,
        /// The bytes.
        n: u64,
    },
    /// The read is over (done, failed or dropped), `unread` of its bytes
    /// not read.
    Ended {
        /// The object's URL.
        url: &'a str,
        /// The bytes of `len` that were not read.
        unread: u64,
    },
}

/// A function told of whole-object reads ([`Fetch`]), from any thread.
pub type FetchObserver = Arc<dyn Fn(Fetch<'_>) + Send + Sync>;

static OBSERVER: std::sync::RwLock<Option<FetchObserver>> = std::sync::RwLock::new(None);

/// Sets (or, with `None`, removes) the process's observer of the
/// whole-object reads that opening makes to build an index: what
/// `recordwire`'s progress bar for remote shards is drawn from. Streams the
/// caller reads itself ([`RemoteReader::new`]) are not reported.
pub fn observe_fetches(observer: Option<FetchObserver>) {
    *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = observer;
}

/// The observer, if one is set.
pub(crate) fn fetch_observer() -> Option<FetchObserver> {
    OBSERVER.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The whole object, streamed with large requests and read-ahead
/// ([`RemoteReader`]), reported to the [`observe_fetches`] observer.
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

/// Whether `path` names a remote object (`s3://`, `gs://`, `az://`, `abfs://`,
/// `http(s)://`, …) rather than a local file. `file://` URLs are local. A
/// URL of a scheme recordwire does not read (`ftp://…`) counts as remote
/// too, so that opening or writing it is refused with "unsupported scheme"
/// ([`ErrorKind::Usage`](crate::ErrorKind::Usage)) rather than looked for
/// as a local path.
///
/// ```
/// use recordwire::io::remote::is_remote;
///
/// assert!(is_remote("s3://bucket/train-0.tfrecord"));
/// assert!(is_remote("https://example.com/data/train.tfrecord"));
/// assert!(is_remote("ftp://example.com/train.tfrecord"));
/// assert!(!is_remote("file:///data/train.tfrecord"));
/// assert!(!is_remote("data/train.tfrecord"));
/// ```
pub fn is_remote(path: impl AsRef<Path>) -> bool {
    path.as_ref()
        .to_str()
        .and_then(url_scheme)
        .is_some_and(|s| !s.eq_ignore_ascii_case("file"))
}

/// The local path of a `file://` URL, when `path` is one: `file:///PATH` or
/// `file://localhost/PATH`, percent-escapes decoded. `?` and `#` are part of
/// the path (wildcards, names), not a query or a fragment.
///
/// ```
/// use std::path::Path;
/// use recordwire::io::remote::file_url_path;
///
/// assert_eq!(file_url_path("file:///data/x.tfrecord").as_deref(), Some(Path::new("/data/x.tfrecord")));
/// assert_eq!(file_url_path("file:///data/a-?.tfrecord").as_deref(), Some(Path::new("/data/a-?.tfrecord")));
/// assert_eq!(file_url_path("file:///my%20data/x").as_deref(), Some(Path::new("/my data/x")));
/// assert_eq!(file_url_path("/data/x.tfrecord"), None);
/// ```
pub fn file_url_path(path: impl AsRef<Path>) -> Option<std::path::PathBuf> {
    let s = path.as_ref().to_str()?;
    if !url_scheme(s)?.eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = &s[s.find("://")? + 3..];
    let rest = match rest.get(..9) {
        Some(host) if host.eq_ignore_ascii_case("localhost") => &rest[9..],
        _ => rest,
    };
    if !rest.starts_with('/') {
        return None;
    }
    let decoded: Vec<u8> = percent_decode(rest.as_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(std::ffi::OsString::from_vec(decoded).into())
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(decoded).ok().map(Into::into)
    }
}

/// `%XX` escapes decoded (a `%` not followed by two hex digits is kept).
fn percent_decode(s: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// The `file://` URL of the local path `path`, for names found by a glob
/// of a `file://` pattern (as `Url::from_file_path` writes it).
pub(crate) fn file_url_of(path: &Path) -> Option<String> {
    url::Url::from_file_path(path).ok().map(String::from)
}

/// The schemes recordwire reads, lower case.
const SCHEMES: [&str; 10] = [
    "s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "http", "https", "file",
];

/// The scheme of `s` when it is a URL (`SCHEME://…`, the scheme two or
/// more letters, digits, `+`, `-` or `.` starting with a letter, so that a
/// Windows drive `C://` is not one), whether recordwire reads it or not.
fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if rest.is_empty()
        || scheme.len() < 2
        || !first_ok
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(scheme)
}

/// The usage error for a URL of a scheme recordwire does not read.
fn unsupported_scheme(url: &str, scheme: &str) -> Error {
    Error::usage(format!(
        "unsupported scheme {scheme}://: recordwire reads s3://, gs://, az:// (abfs://, abfss://, \
         azure://), http(s):// and file:// URLs"
    ))
    .with_file(url)
}

/// The usage error for a URL that names a bucket, a container or a folder
/// of a store rather than an object, when `url` is one.
fn not_an_object(url: &str, parsed: &url::Url, path: &ObjectPath) -> Option<Error> {
    let scheme = parsed.scheme().to_ascii_lowercase();
    let what = match scheme.as_str() {
        "s3" | "s3a" | "gs" => "a bucket",
        "az" | "abfs" | "abfss" | "azure" => "a container",
        _ => return None,
    };
    let what = if path.as_ref().is_empty() {
        what
    } else if url.ends_with('/') {
        "a folder"
    } else {
        return None;
    };
    let glob = if url.ends_with('/') {
        format!("{url}*")
    } else {
        format!("{url}/*")
    };
    Some(Error::usage(format!("names {what}, not an object: use {glob}")).with_file(url))
}

/// Options for remote stores: the `object_store` configuration keys of the
/// URL's store (`aws_endpoint`, `aws_access_key_id`, `aws_region`,
/// `allow_http`, `timeout`, `google_service_account`,
/// `azure_storage_account_name`, …, with or without their `aws_`/`google_`/
/// `azure_` prefix), which override the environment, and recordwire's own:
///
/// | key | meaning | default |
/// |---|---|---|
/// | `max_retries` | retries of a failed request (5xx but 501, 429, timeouts, dropped connections) | 10 |
/// | `retry_timeout` | the most one open, read or write may take in all, its requests, retries and answers included (`30s`, `500ms`, or seconds); after 5 s of waiting the command line notes what it waits for | 30 s |
/// | `coalesce_gap` | ranges of one read closer than this many bytes are fetched in one request (of at most `request_size` bytes); 0 joins only ranges that touch | 1 MiB |
/// | `coalesce_waste` | but a request carries at most this many percent more bytes than its ranges asked for, so that a read's requests never fetch more than that much beyond its ranges however they are spread (a full shuffle's batch, say) | 10 |
/// | `concurrency` | requests in flight for one read of many ranges | 32 |
/// | `request_size` | bytes per request when an object is streamed in order | 8 MiB |
/// | `readahead` | requests in flight ahead of a stream | 4 |
/// | `cache_dir` | the local cache's directory (`none`: no cache) | [`cache_dir`] |
/// | `span_size` | bytes per span when spans are cached (one request each) | 8 MiB |
/// | `span_cache` | bytes of fetched spans kept in memory, least recently used out (0: none) | 0 |
/// | `span_disk` | bytes of fetched spans kept on disk under `cache_dir`'s `spans/`, least recently used out, shared by the processes of the machine (0: none) | 0 |
///
/// Three of `object_store`'s keys bound each try of a request (a try that
/// runs out is retried, within `retry_timeout`):
///
/// | key | meaning | default |
/// |---|---|---|
/// | `connect_timeout` | connecting to the server | 5 s |
/// | `read_timeout` | waiting for the first byte of an answer, or for the next one | 5 s (recordwire's; `object_store` has none) |
/// | `timeout` | one try, from connecting to the last byte of the answer | 30 s |
///
/// So a server that accepts connections and never answers fails an open
/// after `retry_timeout` (30 s), with one error line that names the URL,
/// the request and how long it waited; an S3 bucket read without
/// credentials (no `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` and no
/// instance metadata endpoint that gives some) says that no credentials
/// were found and how to give them (`aws_skip_signature=true` for a public
/// bucket). A plain `http://` endpoint needs `allow_http=true` (or
/// `AWS_ALLOW_HTTP=true`), which the error says; an answer of 501 (not
/// implemented) is never retried.
///
/// With `span_cache` set, every read fetches the whole `span_size`-aligned
/// spans it falls in (one request each, fetched concurrently) and keeps them:
/// an epoch in page-aware or quasi-random order with `page_size =
/// span_size` (and `span_cache` at least `window` spans) then fetches each
/// span once, and a second epoch of a dataset that fits reads from memory.
/// A span larger than the whole cache is still read (and not kept): the
/// cache never stops a read. Without it (the default), each record or
/// coalesced group of records is its own request, the right thing for a
/// full shuffle.
///
/// An unknown key is an error when the store is made, naming the key. The
/// `Debug` form shows the keys only, never a value (they hold secrets).
///
/// ```
/// use recordwire::io::remote::StorageOptions;
///
/// let options = StorageOptions::new([("aws_endpoint", "http://127.0.0.1:9000"), ("allow_http", "true")]);
/// assert_eq!(options.get("allow_http"), Some("true"));
/// assert_eq!(format!("{options:?}"), r#"StorageOptions(["allow_http", "aws_endpoint"])"#);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StorageOptions(Option<Arc<[(String, String)]>>);

impl StorageOptions {
    /// Options from key-value pairs (keys are matched without case; a key
    /// given twice keeps its last value).
    pub fn new<K: AsRef<str>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut map: std::collections::BTreeMap<String, String> = Default::default();
        for (k, v) in pairs {
            map.insert(k.as_ref().to_ascii_lowercase(), v.into());
        }
        if map.is_empty() {
            return StorageOptions(None);
        }
        StorageOptions(Some(map.into_iter().collect()))
    }

    /// Options from `K=V` strings (`--storage-option`): an `io_error`
    /// (invalid input) for one without `=`.
    pub fn parse<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Result<Self, Error> {
        let mut pairs = Vec::new();
        for item in items {
            let item = item.as_ref();
            let Some((k, v)) = item.split_once('=') else {
                return Err(invalid(format!(
                    "a storage option is KEY=VALUE, not {}",
                    crate::names::quoted(item.as_bytes())
                )));
            };
            pairs.push((k.trim().to_string(), v.to_string()));
        }
        Ok(StorageOptions::new(pairs))
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs()
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    /// The pairs, sorted by key.
    pub fn pairs(&self) -> &[(String, String)] {
        self.0.as_deref().unwrap_or(&[])
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        self.pairs().is_empty()
    }
}

/// The keys only: values may be secrets.
impl fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StorageOptions")
            .field(&self.pairs().iter().map(|(k, _)| k).collect::<Vec<_>>())
            .finish()
    }
}

/// How reads of one store are made (recordwire's own storage options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    pub(crate) coalesce_gap: u64,
    pub(crate) coalesce_waste: u64,
    pub(crate) concurrency: usize,
    pub(crate) request_size: u64,
    pub(crate) readahead: usize,
    pub(crate) span_size: u64,
    pub(crate) span_cache: u64,
    pub(crate) span_disk: u64,
    /// The most one operation (an open, a read, a write) may take.
    pub(crate) retry_timeout: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            coalesce_gap: 1 << 20,
            coalesce_waste: 10,
            concurrency: 32,
            request_size: 8 << 20,
            readahead: 4,
            span_size: 8 << 20,
            span_cache: 0,
            span_disk: 0,
            retry_timeout: RETRY_TIMEOUT,
        }
    }
}

/// The default of `retry_timeout`: the most one operation may take.
const RETRY_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of `object_store`'s `read_timeout` (none of its own): the
/// wait for an answer's first byte, or its next one.
const READ_TIMEOUT: &str = "5s";

/// recordwire's own storage options and their defaults, in the order of
/// the table of [`StorageOptions`] (`--storage-option`'s help is made from
/// it).
pub const OWN_KEYS: [(&str, &str); 11] = [
    ("max_retries", "10"),
    ("retry_timeout", "30s"),
    ("coalesce_gap", "1MiB"),
    ("coalesce_waste", "10"),
    ("concurrency", "32"),
    ("request_size", "8MiB"),
    ("readahead", "4"),
    (
        "cache_dir",
        "RECORDWIRE_CACHE_DIR or ~/.cache/recordwire; none: no cache",
    ),
    ("span_size", "8MiB"),
    ("span_cache", "0"),
    ("span_disk", "0"),
];

/// `object_store`'s keys that bound each try of a request, with their
/// defaults in recordwire (see [`StorageOptions`]).
pub const TIMEOUT_KEYS: [(&str, &str); 3] = [
    ("connect_timeout", "5s"),
    ("read_timeout", READ_TIMEOUT),
    ("timeout", "30s"),
];

fn invalid(message: String) -> Error {
    Error::io(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        message,
    ))
}

fn parse_number(key: &str, value: &str) -> Result<u64, Error> {
    value.trim().parse::<u64>().map_err(|_| {
        invalid(format!(
            "storage option {key}: {} is not a whole number",
            crate::names::quoted(value.as_bytes())
        ))
    })
}

fn parse_duration(key: &str, value: &str) -> Result<Duration, Error> {
    let v = value.trim();
    let (number, scale) = if let Some(ms) = v.strip_suffix("ms") {
        (ms, 1e-3)
    } else if let Some(s) = v.strip_suffix('s') {
        (s, 1.0)
    } else if let Some(m) = v.strip_suffix("min") {
        (m, 60.0)
    } else {
        (v, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Duration::from_secs_f64(x * scale)),
        _ => Err(invalid(format!(
            "storage option {key}: {} is not a duration (30s, 500ms, or seconds)",
            crate::names::quoted(value.as_bytes())
        ))),
    }
}

impl StorageOptions {
    /// recordwire's own options, read and checked.
    pub(crate) fn tuning(&self) -> Result<(Tuning, RetryConfig), Error> {
        let mut tuning = Tuning::default();
        let mut retry = RetryConfig {
            retry_timeout: RETRY_TIMEOUT,
            ..RetryConfig::default()
        };
        for (k, v) in self.pairs() {
            match k.as_str() {
                "max_retries" => retry.max_retries = parse_number(k, v)? as usize,
                "retry_timeout" => {
                    retry.retry_timeout = parse_duration(k, v)?;
                    tuning.retry_timeout = retry.retry_timeout;
                }
                "coalesce_gap" => tuning.coalesce_gap = parse_number(k, v)?,
                "coalesce_waste" => tuning.coalesce_waste = parse_number(k, v)?,
                "concurrency" => tuning.concurrency = parse_number(k, v)?.max(1) as usize,
                "request_size" => tuning.request_size = parse_number(k, v)?.max(4096),
                "readahead" => tuning.readahead = parse_number(k, v)? as usize,
                "span_size" => tuning.span_size = parse_number(k, v)?.max(4096),
                "span_cache" => tuning.span_cache = parse_number(k, v)?,
                "span_disk" => tuning.span_disk = parse_number(k, v)?,
                _ => {}
            }
        }
        Ok((tuning, retry))
    }

    /// The options for `object_store`'s builders (recordwire's own left out).
    fn store_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs()
            .iter()
            .filter(|(k, _)| !OWN_KEYS.iter().any(|(own, _)| own == k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// One object: its store's client, its path in the store and its URL.
#[derive(Clone)]
pub(crate) struct Location {
    /// The URL as given (names it in errors).
    pub(crate) url: Arc<str>,
    pub(crate) key: StoreKey,
    pub(crate) path: ObjectPath,
    pub(crate) tuning: Tuning,
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// What a client is made from: the URL's store (scheme and authority) and
/// the options. Clients are kept per key in the process.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct StoreKey {
    base: Arc<str>,
    options: StorageOptions,
}

impl Location {
    /// Parses `url` (one [`is_remote`] accepts) and checks `options`.
    ///
    /// Every URL that is opened, listed or written goes through here, and
    /// is refused before any request when it cannot name an object
    /// (`usage_error`): a scheme recordwire does not read, and the root of
    /// a bucket or container or a folder (`s3://bucket/`, `gs://b`,
    /// `s3://b/dir/`), whose listing a glob reads (`s3://bucket/*`). A
    /// pattern for [`glob`] passes (`allow_folder`): its last part is a
    /// name to match.
    pub(crate) fn parse(url: &str, options: &StorageOptions) -> Result<Location, Error> {
        Location::parse_as(url, options, false)
    }

    fn parse_as(url: &str, options: &StorageOptions, pattern: bool) -> Result<Location, Error> {
        let named: Arc<str> = url.into();
        if let Some(scheme) = url_scheme(url) {
            if !SCHEMES
                .iter()
                .any(|known| scheme.eq_ignore_ascii_case(known))
            {
                return Err(unsupported_scheme(url, scheme));
            }
        }
        let parsed = url::Url::parse(url)
            .map_err(|e| invalid(format!("not a URL: {e}")).with_file(Arc::clone(&named)))?;
        let (_, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
            invalid(format!("not a URL of a store: {e}")).with_file(Arc::clone(&named))
        })?;
        if !pattern {
            if let Some(e) = not_an_object(url, &parsed, &path) {
                return Err(e);
            }
        }
        let (tuning, _) = options
            .tuning()
            .map_err(|e| e.with_file(Arc::clone(&named)))?;
        let base: Arc<str> = parsed[..url::Position::BeforePath].into();
        let location = Location {
            url: named,
            key: StoreKey {
                base,
                options: options.clone(),
            },
            path,
            tuning,
        };
        // Make the client now: bad options fail here, once.
        location.client()?;
        Ok(location)
    }

    /// [`Location::parse`] for a write: also refuses `http(s)://` (an HTTP
    /// server takes no `PUT` in recordwire's model of it) before any
    /// request.
    pub(crate) fn for_write(url: &str, options: &StorageOptions) -> Result<Location, Error> {
        if url_scheme(url)
            .is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
        {
            return Err(Error::usage(
                "cannot write to an http:// or https:// URL: HTTP servers are read only here \
                 (they take no PUT); write to a local file or to an object store \
                 (s3://, gs://, az://)",
            )
            .with_file(url));
        }
        Location::parse(url, options)
    }

    /// The location of `name` beside this object (`KEY.rwindex`).
    pub(crate) fn sibling(&self, suffix: &str) -> Location {
        Location {
            url: format!("{}{suffix}", self.url).into(),
            key: self.key.clone(),
            path: ObjectPath::from(format!("{}{suffix}", self.path)),
            tuning: self.tuning,
        }
    }

    /// The location of the object at `path` of the same store, named
    /// `url`.
    pub(crate) fn at(&self, path: ObjectPath) -> Location {
        let url = format!("{}/{}", self.key.base, path).into();
        Location {
            url,
            key: self.key.clone(),
            path,
            tuning: self.tuning,
        }
    }

    /// The client of this object's store in this process.
    pub(crate) fn client(&self) -> Result<Client, Error> {
        let process = process();
        let mut clients = process.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(&self.key) {
            return Ok(client.clone());
        }
        let client = make_store(&self.key).map_err(|e| e.with_file(Arc::clone(&self.url)))?;
        clients.insert(self.key.clone(), client.clone());
        Ok(client)
    }

    /// An operation on this object, bounded by `retry_timeout`.
    pub(crate) fn op(&self) -> Op {
        Op::new(self.tuning.retry_timeout)
    }

    /// Runs the step `request` of `op` on this object: asks the instance
    /// metadata endpoint for credentials first where the store takes them
    /// from there (cached by the store once given), then `call` with the
    /// store's client.
    pub(crate) async fn run<T, F, Fut>(&self, op: &Op, request: &str, call: F) -> Result<T, Failure>
    where
        F: FnOnce(Arc<dyn ObjectStore>) -> Fut,
        Fut: Future<Output = Result<T, object_store::Error>>,
    {
        let client = self.client().map_err(|e| op.failed(e, request))?;
        if let Some(instance) = &client.instance {
            let provider = Arc::clone(&instance.provider);
            let asking = format!(
                "a request to the instance metadata endpoint {} for AWS credentials (none are set)",
                instance.endpoint
            );
            op.run(&self.url, &asking, async move {
                provider.get_credential().await.map(|_| ())
            })
            .await
            .map_err(|f| op.failed(no_credentials(&instance.endpoint, &f), request))?;
        }
        op.run(&self.url, request, call(client.store)).await
    }

    /// The metadata of the object (one `HEAD`).
    pub(crate) fn head(&self) -> Result<object_store::ObjectMeta, Error> {
        let op = self.op();
        let location = self.clone();
        block_on(async move {
            let path = location.path.clone();
            let run = location.run(&op, "HEAD", |store| async move { store.head(&path).await });
            run.await.map_err(|f| f.into_error(&location.url))
        })
    }

    /// The whole object (one `GET`, a step of `op`): `Ok(None)` when there
    /// is none.
    pub(crate) fn get_all(&self, op: &Op, request: &str) -> Result<Option<bytes::Bytes>, Error> {
        let (op, request, location) = (op.clone(), request.to_string(), self.clone());
        block_on(async move {
            let path = location.path.clone();
            let got = location.run(&op, &request, |store| async move {
                store.get(&path).await?.bytes().await
            });
            match got.await {
                Ok(bytes) => Ok(Some(bytes)),
                Err(f) if f.is_not_found() => Ok(None),
                Err(f) => Err(f.into_error(&location.url)),
            }
        })
    }

    /// Writes `bytes` as the whole object (one `PUT`, atomic in the stores).
    pub(crate) fn put(&self, bytes: bytes::Bytes) -> Result<(), Error> {
        let op = self.op();
        let location = self.clone();
        let request = format!("PUT of {} bytes", bytes.len());
        block_on(async move {
            let path = location.path.clone();
            let put = location.run(&op, &request, |store| async move {
                store.put(&path, bytes.into()).await.map(|_| ())
            });
            put.await.map_err(|f| f.into_error(&location.url))
        })
    }
}

/// A store's client, and where its credentials come from when that is the
/// instance metadata endpoint.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) store: Arc<dyn ObjectStore>,
    instance: Option<Arc<Instance>>,
}

/// An S3 store without credentials of its own: it asks `endpoint`.
struct Instance {
    provider: object_store::aws::AwsCredentialProvider,
    endpoint: String,
}

/// The error of an S3 store that found no credentials: where they would
/// come from, and what the instance metadata endpoint (the last place
/// looked) said.
fn no_credentials(endpoint: &str, failure: &Failure) -> Error {
    let why = match &failure.failed {
        Failed::TimedOut => format!("it gave no answer in {}", wait::seconds(failure.elapsed)),
        Failed::Store(e) => retried(e).0,
        Failed::Ready(e) => e.to_string(),
    };
    Error::io(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
             (or the storage options aws_access_key_id and aws_secret_access_key; \
             AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, and \
             AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, are read too, ~/.aws profiles and \
             AWS_PROFILE are not), or aws_skip_signature=true for a public bucket; \
             the instance metadata endpoint {endpoint} gave none: {why}"
        ),
    ))
}

/// A store error met by `request` after `elapsed`, as an `io_error`: its
/// kind (not found, permission denied, …) and a one-line message that
/// names the request, the real time it took (all its retries; the store's
/// own text counts from its last attempt) and the retries.
pub(crate) fn store_error(e: object_store::Error, request: &str, elapsed: Duration) -> Error {
    use std::io::ErrorKind as K;
    let (kind, message) = match &e {
        object_store::Error::NotFound { .. } => (K::NotFound, "not found".to_string()),
        object_store::Error::PermissionDenied { .. } => {
            (K::PermissionDenied, "permission denied".to_string())
        }
        object_store::Error::Unauthenticated { .. } => (
            K::PermissionDenied,
            "not authenticated (check the credentials)".to_string(),
        ),
        object_store::Error::Precondition { .. } => (
            K::Other,
            "the object changed since it was opened (its ETag differs): reopen it".to_string(),
        ),
        other if one_line(other).contains("URL scheme is not allowed") => (
            K::PermissionDenied,
            format!(
                "{request}: a plain http:// URL is refused unless allowed: set the storage \
                 option allow_http=true (or AWS_ALLOW_HTTP=true in the environment)"
            ),
        ),
        other => {
            let (cause, retries) = retried(other);
            let after = match retries {
                Some(n) if n > 0 => format!(" and {n} retries"),
                _ => String::new(),
            };
            (
                K::Other,
                format!(
                    "{request} failed after {}{after}: {cause}",
                    wait::seconds(elapsed)
                ),
            )
        }
    };
    Error::io(std::io::Error::new(kind, message))
}

/// The longest cause a message quotes (a server's error page can be long).
const MAX_CAUSE: usize = 300;

/// What went wrong, on one line, without `object_store`'s retry summary
/// (`Error performing GET URL in 2.5s, after 10 retries, …`, whose time
/// counts from the last attempt), and the retries it made when it says.
fn retried(e: &(dyn std::error::Error + 'static)) -> (String, Option<usize>) {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = at {
        let text = err.to_string();
        if let Some(rest) = text.strip_prefix("Error performing ") {
            let retries = rest
                .split_once(", after ")
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            let cause = match err.source() {
                Some(inner) => one_line(inner),
                None => rest
                    .split_once(" - ")
                    .map_or(text.clone(), |(_, c)| c.to_string()),
            };
            return (shorten(cause), retries);
        }
        at = err.source();
    }
    (shorten(one_line(e)), None)
}

fn shorten(mut text: String) -> String {
    if text.len() > MAX_CAUSE {
        let mut end = MAX_CAUSE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The error and its causes on one line.
fn one_line(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

/// Where a store builder's credentials come from, when that is the
/// instance metadata endpoint (none given, and signing not skipped): the
/// endpoint.
fn instance_endpoint(b: &object_store::aws::AmazonS3Builder) -> Option<String> {
    use object_store::aws::AmazonS3ConfigKey as K;
    let set = |key: K| b.get_config_value(&key).is_some_and(|v| !v.is_empty());
    let given = set(K::AccessKeyId)
        || set(K::SecretAccessKey)
        || (set(K::WebIdentityTokenFile) && set(K::RoleArn))
        || set(K::ContainerCredentialsRelativeUri)
        || set(K::ContainerCredentialsFullUri)
        || b.get_config_value(&K::SkipSignature)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    (!given).then(|| {
        b.get_config_value(&K::MetadataEndpoint)
            .unwrap_or_else(|| "http://169.254.169.254".to_string())
    })
}

/// Makes the client of `key`: the store's builder from the environment,
/// then recordwire's defaults, the URL, then the options (an unknown key
/// is an error).
fn make_store(key: &StoreKey) -> Result<Client, Error> {
    let url = url::Url::parse(&key.base).map_err(|e| invalid(format!("not a URL: {e}")))?;
    let (scheme, _) = ObjectStoreScheme::parse(&url)
        .map_err(|e| invalid(format!("not a URL of a store: {e}")))?;
    let (_, retry) = key.options.tuning()?;
    let unknown = |k: &str| invalid(format!("unknown storage option {:?} for this store", k));
    // The same steps for each store's builder (their config key types
    // differ). `read_timeout` has no default in object_store: recordwire's
    // applies unless the environment or the options give one.
    macro_rules! configure {
        ($builder:expr, $env_read_timeout:expr) => {{
            let mut b = $builder.with_http_connector(connector::Connector);
            if !$env_read_timeout {
                let k = "read_timeout"
                    .parse()
                    .map_err(|_| unknown("read_timeout"))?;
                b = b.with_config(k, READ_TIMEOUT);
            }
            for (k, v) in key.options.store_pairs() {
                b = b.with_config(k.parse().map_err(|_| unknown(k))?, v);
            }
            b.with_retry(retry)
        }};
    }
    let read_timeout = ClientConfigKey::ReadTimeout;
    let built = |e: object_store::Error| invalid(one_line(&e));
    let url_text = url.as_str();
    let client = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
            let b = AmazonS3Builder::from_env().with_url(url_text);
            let env = b.get_config_value(&AmazonS3ConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            let endpoint = instance_endpoint(&b);
            let s3 = b.build().map_err(built)?;
            let instance = endpoint.map(|endpoint| {
                Arc::new(Instance {
                    provider: Arc::clone(s3.credentials()),
                    endpoint,
                })
            });
            Client {
                store: Arc::new(s3),
                instance,
            }
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
            let b = GoogleCloudStorageBuilder::from_env().with_url(url_text);
            let env = b.get_config_value(&GoogleConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        ObjectStoreScheme::MicrosoftAzure => {
            use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
            let b = MicrosoftAzureBuilder::from_env().with_url(url_text);
            let env = b.get_config_value(&AzureConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        ObjectStoreScheme::Http => {
            let b = configure!(
                object_store::http::HttpBuilder::new().with_url(url_text),
                false
            );
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        other => {
            return Err(invalid(format!(
                "{other:?} URLs are not read as remote objects"
            )))
        }
    };
    Ok(client)
}

/// The runtime and clients of this process.
struct Process {
    pid: u32,
    runtime: tokio::runtime::Runtime,
    stores: Mutex<HashMap<StoreKey, Client>>,
}

static PROCESS: Mutex<Option<Arc<Process>>> = Mutex::new(None);

/// This process's runtime and clients: made on first use, and made anew in
/// a child after a `fork` (the parent's are forgotten there, never dropped:
/// their threads do not exist in the child, and their connections are the
/// parent's).
fn process() -> Arc<Process> {
    let pid = std::process::id();
    let mut slot = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref() {
        if p.pid == pid {
            return Arc::clone(p);
        }
    }
    if let Some(parent) = slot.take() {
        std::mem::forget(parent);
    }
    // rustls needs its crypto provider chosen once per process (`ring`:
    // see Cargo.toml); an error means one is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("recordwire-io")
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("recordwire: the I/O runtime cannot start: {e}"));
    let p = Arc::new(Process {
        pid,
        runtime,
        stores: Mutex::default(),
    });
    *slot = Some(Arc::clone(&p));
    p
}

/// Runs `fut` on this process's runtime and waits for it: from any thread,
/// also one of another tokio runtime (the future then runs on ours while
/// this thread waits).
pub(crate) fn block_on<F>(fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let process = process();
    if tokio::runtime::Handle::try_current().is_err() {
        return process.runtime.block_on(fut);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    process.runtime.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .unwrap_or_else(|_| panic!("recordwire: an I/O task ended without its result"))
}

/// Spawns `fut` on this process's runtime.
pub(crate) fn spawn<F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    process().runtime.spawn(fut)
}

/// The objects that match `pattern` (a URL whose last part may hold `*`
/// and `?`; in a name, `*` matches any run of characters, `?` one), from one
/// listing of its folder, sorted. HTTP servers cannot be listed: a glob
/// there is an error.
pub fn glob(pattern: &str, options: &StorageOptions) -> Result<Vec<String>, Error> {
    if url_scheme(pattern)
        .is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
    {
        return Err(Error::usage(
            "an HTTP server cannot be listed, so a URL of http:// or https:// takes no wildcard: \
             name each object",
        )
        .with_file(pattern));
    }
    let location = Location::parse_as(pattern, options, true)?;
    let full = location.path.as_ref().to_string();
    let (folder, name_pattern) = match full.rsplit_once('/') {
        Some((folder, name)) => (Some(ObjectPath::from(folder)), name.to_string()),
        None => (None, full.clone()),
    };
    if folder
        .as_ref()
        .is_some_and(|f| f.as_ref().contains(['*', '?']))
    {
        return Err(
            invalid("wildcards are allowed in the last part of a URL only".into())
                .with_file(Arc::clone(&location.url)),
        );
    }
    let listing = location.clone();
    let listed = block_on(async move {
        let op = listing.op();
        let request = format!(
            "LIST of {}/{}",
            listing.key.base,
            folder.as_ref().map_or("", |f| f.as_ref())
        );
        let list = listing.run(&op, &request, |store| async move {
            store.list_with_delimiter(folder.as_ref()).await
        });
        list.await.map_err(|f| f.into_error(&listing.url))
    })?;
    let pattern: Vec<char> = name_pattern.chars().collect();
    let mut found: Vec<String> = listed
        .objects
        .into_iter()
        .filter_map(|meta| {
            let chars: Vec<char> = meta.location.filename()?.chars().collect();
            wildcard(&pattern, &chars).then(|| location.at(meta.location).url.to_string())
        })
        .collect();
    found.sort();
    Ok(found)
}

/// Whether `pattern` has a wildcard (`*` or `?`) in its last part.
pub fn has_wildcard(pattern: &str) -> bool {
    pattern
        .rsplit_once('/')
        .map_or(pattern, |(_, name)| name)
        .contains(['*', '?'])
}

/// Whether `name` matches `pattern` (`*`: any run, `?`: one character).
fn wildcard(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = n;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            n = mark;
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == '*' {
        p += 1;
    }
    p == pattern.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of recordwire's own is read by [`StorageOptions::tuning`]
    /// (a bad number or duration is refused naming it) or by the cache,
    /// and is in the tables of [`StorageOptions`] and docs/FORMAT.md
    /// §11.2; and the timeouts have their documented defaults.
    #[test]
    fn every_own_key_is_read_and_documented() {
        let rustdoc = include_str!("mod.rs");
        let format = include_str!("../../../docs/FORMAT.md");
        for (key, _) in OWN_KEYS {
            assert!(
                rustdoc.contains(&format!("/// | `{key}` |")),
                "{key}: rustdoc"
            );
            assert!(format.contains(&format!("`{key}`")), "{key}: FORMAT.md");
            if key == "cache_dir" {
                continue;
            }
            let err = StorageOptions::new([(key, "x")]).tuning().unwrap_err();
            assert!(err.to_string().contains(key), "{key}: {err}");
        }
        for (key, _) in TIMEOUT_KEYS {
            assert!(
                rustdoc.contains(&format!("/// | `{key}` |")),
                "{key}: rustdoc"
            );
            assert!(format.contains(&format!("`{key}`")), "{key}: FORMAT.md");
        }
        let (tuning, retry) = StorageOptions::default().tuning().unwrap();
        assert_eq!(tuning.retry_timeout, Duration::from_secs(30));
        assert_eq!(retry.retry_timeout, Duration::from_secs(30));
        let (tuning, retry) = StorageOptions::new([("retry_timeout", "1.5s")])
            .tuning()
            .unwrap();
        assert_eq!(tuning.retry_timeout, Duration::from_millis(1500));
        assert_eq!(retry.retry_timeout, Duration::from_millis(1500));
    }

    /// `object_store`'s summary of a retried request (whose time counts
    /// from its last attempt only) gives way to the cause and the retries.
    #[test]
    fn the_store_summary_of_retries_is_replaced_by_the_cause() {
        #[derive(Debug)]
        struct Text(&'static str, Option<Box<Text>>);
        impl fmt::Display for Text {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Text {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|t| t as _)
            }
        }
        let e = Text(
            "Generic S3 error: Error performing GET http://h/b/k in 2.5s, after 10 retries, \
             max_retries: 10, retry_timeout: 180s  - Server returned non-2xx status code: 503",
            Some(Box::new(Text(
                "Error performing GET http://h/b/k in 2.5s, after 10 retries, max_retries: 10, \
                 retry_timeout: 180s  - Server returned non-2xx status code: 503",
                Some(Box::new(Text(
                    "Server returned non-2xx status code: 503",
                    None,
                ))),
            ))),
        );
        assert_eq!(
            retried(&e),
            (
                "Server returned non-2xx status code: 503".to_string(),
                Some(10)
            )
        );
        let store = object_store::Error::Generic {
            store: "S3",
            source: Box::new(e),
        };
        assert_eq!(
            store_error(store, "GET of bytes 0..10", Duration::from_millis(9300)).to_string(),
            "[io_error]: GET of bytes 0..10 failed after 9.3 s and 10 retries: \
             Server returned non-2xx status code: 503"
        );
    }
}

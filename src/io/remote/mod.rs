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
use object_store::{ObjectStore, ObjectStoreExt, ObjectStoreScheme, RetryConfig};

use crate::error::Error;
use crate::io::ByteSource;

mod cache;
mod reader;
mod source;

pub use cache::{cache_dir, IndexCache};
pub use reader::RemoteReader;
pub use source::{RemoteSource, RemoteStats};

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
    Location::parse(url, options)?.put(bytes)
}

/// Whether `path` names a remote object (`s3://`, `gs://`, `az://`, `abfs://`,
/// `http(s)://`, …) rather than a local file. `file://` URLs are local.
///
/// ```
/// use recordwire::io::remote::is_remote;
///
/// assert!(is_remote("s3://bucket/train-0.tfrecord"));
/// assert!(is_remote("https://example.com/data/train.tfrecord"));
/// assert!(!is_remote("file:///data/train.tfrecord"));
/// assert!(!is_remote("data/train.tfrecord"));
/// ```
pub fn is_remote(path: impl AsRef<Path>) -> bool {
    path.as_ref()
        .to_str()
        .is_some_and(|s| scheme_of(s).is_some_and(|s| s != "file"))
}

/// The local path of a `file://` URL, when `path` is one.
///
/// ```
/// use std::path::Path;
/// use recordwire::io::remote::file_url_path;
///
/// assert_eq!(file_url_path("file:///data/x.tfrecord").as_deref(), Some(Path::new("/data/x.tfrecord")));
/// assert_eq!(file_url_path("/data/x.tfrecord"), None);
/// ```
pub fn file_url_path(path: impl AsRef<Path>) -> Option<std::path::PathBuf> {
    let s = path.as_ref().to_str()?;
    if scheme_of(s)? != "file" {
        return None;
    }
    url::Url::parse(s).ok()?.to_file_path().ok()
}

/// The URL scheme of `s` when it is one recordwire reads, lower case.
fn scheme_of(s: &str) -> Option<&'static str> {
    let (scheme, rest) = s.split_once("://")?;
    if rest.is_empty() {
        return None;
    }
    const SCHEMES: [&str; 10] = [
        "s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "http", "https", "file",
    ];
    SCHEMES
        .into_iter()
        .find(|known| scheme.eq_ignore_ascii_case(known))
}

/// Options for remote stores: the `object_store` configuration keys of the
/// URL's store (`aws_endpoint`, `aws_access_key_id`, `aws_region`,
/// `allow_http`, `timeout`, `google_service_account`,
/// `azure_storage_account_name`, …, with or without their `aws_`/`google_`/
/// `azure_` prefix), which override the environment, and recordwire's own:
///
/// | key | meaning | default |
/// |---|---|---|
/// | `max_retries` | retries of a failed request (5xx, 429, timeouts, dropped connections) | 10 |
/// | `retry_timeout` | give up retrying after this long (`30s`, `500ms`, or seconds) | 180 s |
/// | `coalesce_gap` | ranges of one read closer than this many bytes are fetched in one request (of at most `request_size` bytes); 0 for one request per range | 1 MiB |
/// | `concurrency` | requests in flight for one read of many ranges | 32 |
/// | `request_size` | bytes per request when an object is streamed in order | 8 MiB |
/// | `readahead` | requests in flight ahead of a stream | 4 |
/// | `cache_dir` | the local cache's directory (`none`: no cache) | [`cache_dir`] |
/// | `span_size` | bytes per span when spans are cached (one request each) | 8 MiB |
/// | `span_cache` | bytes of fetched spans kept in memory, least recently used out (0: none) | 0 |
/// | `span_disk` | bytes of fetched spans kept on disk under `cache_dir`'s `spans/`, least recently used out, shared by the processes of the machine (0: none) | 0 |
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
    pub(crate) concurrency: usize,
    pub(crate) request_size: u64,
    pub(crate) readahead: usize,
    pub(crate) span_size: u64,
    pub(crate) span_cache: u64,
    pub(crate) span_disk: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            coalesce_gap: 1 << 20,
            concurrency: 32,
            request_size: 8 << 20,
            readahead: 4,
            span_size: 8 << 20,
            span_cache: 0,
            span_disk: 0,
        }
    }
}

const OWN_KEYS: [&str; 10] = [
    "cache_dir",
    "span_size",
    "span_cache",
    "span_disk",
    "max_retries",
    "retry_timeout",
    "coalesce_gap",
    "concurrency",
    "request_size",
    "readahead",
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
        let mut retry = RetryConfig::default();
        for (k, v) in self.pairs() {
            match k.as_str() {
                "max_retries" => retry.max_retries = parse_number(k, v)? as usize,
                "retry_timeout" => retry.retry_timeout = parse_duration(k, v)?,
                "coalesce_gap" => tuning.coalesce_gap = parse_number(k, v)?,
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
            .filter(|(k, _)| !OWN_KEYS.contains(&k.as_str()))
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
    pub(crate) fn parse(url: &str, options: &StorageOptions) -> Result<Location, Error> {
        let named: Arc<str> = url.into();
        let parsed = url::Url::parse(url)
            .map_err(|e| invalid(format!("not a URL: {e}")).with_file(Arc::clone(&named)))?;
        let (_, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
            invalid(format!("not a URL of a store: {e}")).with_file(Arc::clone(&named))
        })?;
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
        location.store()?;
        Ok(location)
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
    pub(crate) fn store(&self) -> Result<Arc<dyn ObjectStore>, Error> {
        let process = process();
        let mut stores = process.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(store) = stores.get(&self.key) {
            return Ok(Arc::clone(store));
        }
        let store = make_store(&self.key).map_err(|e| e.with_file(Arc::clone(&self.url)))?;
        stores.insert(self.key.clone(), Arc::clone(&store));
        Ok(store)
    }

    /// An error of this object's store as a recordwire `io_error` naming the
    /// URL (never a credential), at `offset` when given.
    pub(crate) fn error(&self, e: object_store::Error, offset: Option<u64>) -> Error {
        let err = io_error(e).with_file(Arc::clone(&self.url));
        match offset {
            Some(at) => err.with_offset(at),
            None => err,
        }
    }

    /// The metadata of the object (one `HEAD`).
    pub(crate) fn head(&self) -> Result<object_store::ObjectMeta, Error> {
        let store = self.store()?;
        let path = self.path.clone();
        block_on(async move { store.head(&path).await }).map_err(|e| self.error(e, None))
    }

    /// The whole object (one `GET`): `Ok(None)` when there is none.
    pub(crate) fn get_all(&self) -> Result<Option<bytes::Bytes>, Error> {
        let store = self.store()?;
        let path = self.path.clone();
        let got = block_on(async move { store.get(&path).await?.bytes().await });
        match got {
            Ok(bytes) => Ok(Some(bytes)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(e, None)),
        }
    }

    /// Writes `bytes` as the whole object (one `PUT`, atomic in the stores).
    pub(crate) fn put(&self, bytes: bytes::Bytes) -> Result<(), Error> {
        let store = self.store()?;
        let path = self.path.clone();
        block_on(async move { store.put(&path, bytes.into()).await })
            .map(|_| ())
            .map_err(|e| self.error(e, None))
    }
}

/// A store error as an `io_error`: its kind (not found, permission denied,
/// …) and a one-line message.
fn io_error(e: object_store::Error) -> Error {
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
        other => (K::Other, one_line(other)),
    };
    Error::io(std::io::Error::new(kind, message))
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

/// Makes the client of `key`: the store's builder from the environment,
/// then the URL, then the options (an unknown key is an error).
fn make_store(key: &StoreKey) -> Result<Arc<dyn ObjectStore>, Error> {
    let url = url::Url::parse(&key.base).map_err(|e| invalid(format!("not a URL: {e}")))?;
    let (scheme, _) = ObjectStoreScheme::parse(&url)
        .map_err(|e| invalid(format!("not a URL of a store: {e}")))?;
    let (_, retry) = key.options.tuning()?;
    let unknown = |k: &str| invalid(format!("unknown storage option {:?} for this store", k));
    // The same steps for each store's builder (their config key types differ).
    macro_rules! build {
        ($builder:expr) => {{
            let mut b = $builder;
            for (k, v) in key.options.store_pairs() {
                b = b.with_config(k.parse().map_err(|_| unknown(k))?, v);
            }
            b.with_retry(retry)
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }};
    }
    let url_text = url.as_str();
    let built = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            build!(object_store::aws::AmazonS3Builder::from_env().with_url(url_text))
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            build!(object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url_text))
        }
        ObjectStoreScheme::MicrosoftAzure => {
            build!(object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url_text))
        }
        ObjectStoreScheme::Http => {
            build!(object_store::http::HttpBuilder::new().with_url(url_text))
        }
        other => {
            return Err(invalid(format!(
                "{other:?} URLs are not read as remote objects"
            )))
        }
    };
    built.map_err(|e| invalid(one_line(&e)))
}

/// The runtime and clients of this process.
struct Process {
    pid: u32,
    runtime: tokio::runtime::Runtime,
    stores: Mutex<HashMap<StoreKey, Arc<dyn ObjectStore>>>,
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
    let location = Location::parse(pattern, options)?;
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
    let store = location.store()?;
    let listed = block_on(async move { store.list_with_delimiter(folder.as_ref()).await })
        .map_err(|e| location.error(e, None))?;
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

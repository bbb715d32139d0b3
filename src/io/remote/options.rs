//! [`StorageOptions`]: the stores' configuration keys and recordwire's own
//! ([`Tuning`]), read and checked.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use object_store::RetryConfig;

use crate::error::Error;

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
/// | `cache_dir` | the local cache's directory (`none`: no cache) | [`cache_dir`](super::cache_dir) |
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
pub(super) const READ_TIMEOUT: &str = "5s";

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

pub(super) fn invalid(message: String) -> Error {
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
    pub(super) fn store_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs()
            .iter()
            .filter(|(k, _)| !OWN_KEYS.iter().any(|(own, _)| own == k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
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
        let rustdoc = include_str!("options.rs");
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
}

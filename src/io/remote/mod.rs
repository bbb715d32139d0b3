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
//! ([`ByteSource::read_ranges`](crate::io::ByteSource::read_ranges)), and a
//! whole object is streamed with large requests and read-ahead
//! ([`RemoteReader`]).
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

mod cache;
mod connector;
mod errors;
mod fetch;
mod listing;
mod location;
mod objects;
mod options;
mod reader;
mod runtime;
mod source;
mod store;
mod urls;
mod wait;

pub use cache::{cache_dir, IndexCache};
pub use fetch::{observe_fetches, Fetch, FetchObserver};
pub use listing::{glob, has_wildcard};
pub(crate) use location::Location;
pub use objects::{check_writable, exists, put, put_file, read_whole, MULTIPART_ABOVE};
pub use options::{StorageOptions, OWN_KEYS, TIMEOUT_KEYS};
pub use reader::RemoteReader;
pub use source::{RemoteSource, RemoteStats, SpanCache};
pub(crate) use urls::file_url_of;
pub use urls::{file_url_path, is_remote};
pub use wait::{observe_waits, Wait, WaitObserver, NOTE_AFTER};

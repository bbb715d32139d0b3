//! [`Location`]: one object, its store's client, its path and its URL, and
//! the requests made on it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, ObjectStoreScheme};

use super::options::{invalid, StorageOptions, Tuning};
use super::runtime::{block_on, process};
use super::store::{make_store, no_credentials, Client, StoreKey};
use super::urls::{not_an_object, unsupported_scheme, url_scheme, SCHEMES};
use super::wait::{Failure, Op};
use crate::error::Error;

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

    pub(super) fn parse_as(
        url: &str,
        options: &StorageOptions,
        pattern: bool,
    ) -> Result<Location, Error> {
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

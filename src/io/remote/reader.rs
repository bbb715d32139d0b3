//! [`RemoteReader`]: an object streamed in order, with large requests and
//! read-ahead.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::Arc;

use bytes::Bytes;

use super::fetch::{Fetch, FetchObserver};
use super::runtime::{block_on, spawn};
use super::source::RemoteSource;
use crate::error::Error;
use crate::io::ByteSource;

/// Reads a [`RemoteSource`] front to back as [`std::io::Read`]: requests of
/// `request_size` bytes (a storage option, 8 MiB by default), `readahead` of
/// them in flight ahead of the reader (4). What `cat`, `verify`, `count`,
/// `export` and index building read remote objects with.
pub struct RemoteReader {
    source: Arc<RemoteSource>,
    /// The next offset to request.
    next: u64,
    pending: VecDeque<tokio::task::JoinHandle<Result<Bytes, Error>>>,
    current: Bytes,
    /// Told of what is read ([`RemoteReader::observed`]), with the bytes
    /// not yet handed out.
    observer: Option<(FetchObserver, u64)>,
}

impl std::fmt::Debug for RemoteReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteReader")
            .field("url", &self.source.url())
            .field("next", &self.next)
            .field("in_flight", &self.pending.len())
            .finish()
    }
}

impl RemoteReader {
    /// A reader of `source` from its first byte.
    pub fn new(source: Arc<RemoteSource>) -> RemoteReader {
        RemoteReader::from_offset(source, 0)
    }

    /// A reader of `source` from byte `offset`.
    pub fn from_offset(source: Arc<RemoteSource>, offset: u64) -> RemoteReader {
        RemoteReader {
            next: offset.min(source.len()),
            source,
            pending: VecDeque::new(),
            current: Bytes::new(),
            observer: None,
        }
    }

    /// A reader of the whole of `source` whose progress goes to the
    /// observer set with [`observe_fetches`](super::observe_fetches), if
    /// any: what opening reads an object with to build its index.
    pub fn observed(source: Arc<RemoteSource>) -> RemoteReader {
        let mut reader = RemoteReader::new(source);
        if let Some(observer) = super::fetch::fetch_observer() {
            let len = reader.source.len();
            observer(Fetch::Started {
                url: reader.source.url(),
                len,
            });
            reader.observer = Some((observer, len));
        }
        reader
    }

    /// Starts requests until `readahead + 1` are in flight or the object
    /// is all asked for.
    fn top_up(&mut self) {
        let tuning = self.source.location().tuning;
        let len = self.source.len();
        while self.pending.len() <= tuning.readahead && self.next < len {
            let end = self.next.saturating_add(tuning.request_size).min(len);
            let range = self.next..end;
            self.next = end;
            // The first bytes came with opening: no request for them.
            let task = match self.source.in_head(&range) {
                Some(bytes) => spawn(async move { Ok(bytes) }),
                None => spawn(self.source.fetch(range)),
            };
            self.pending.push_back(task);
        }
    }
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.current.is_empty() {
            self.top_up();
            let Some(task) = self.pending.pop_front() else {
                return Ok(0);
            };
            let bytes = block_on(task)
                .map_err(std::io::Error::other)?
                .map_err(std::io::Error::other)?;
            self.current = bytes;
            self.top_up();
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        let rest = self.current.split_off(n);
        self.current = rest;
        if let Some((observer, unread)) = &mut self.observer {
            *unread -= (n as u64).min(*unread);
            observer(Fetch::Read {
                url: self.source.url(),
                n: n as u64,
            });
        }
        Ok(n)
    }
}

impl Drop for RemoteReader {
    fn drop(&mut self) {
        for task in &self.pending {
            task.abort();
        }
        if let Some((observer, unread)) = self.observer.take() {
            observer(Fetch::Ended {
                url: self.source.url(),
                unread,
            });
        }
    }
}

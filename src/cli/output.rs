//! Where a writing command's output goes (`pack`, `encode`, `convert`,
//! `import`, `export`): stdout, a local path, a `file://` URL (its local
//! path), or the URL of an object in a store, which is written as a local
//! temporary file first and then uploaded whole when the command has
//! finished it ([`crate::io::remote::put_file`]: one `PUT`, or a multipart
//! upload for large output), so that the object appears whole or not at
//! all, as a local output does.

use std::path::{Path, PathBuf};

use super::{Failure, EXIT_USAGE};

/// The output of one command.
pub(super) struct Destination {
    /// Where the command writes: the path given, the local path of a
    /// `file://` URL, or the temporary file of a remote output.
    local: PathBuf,
    /// A remote output: its URL and storage options, and the temporary
    /// folder that holds `local` (removed with it).
    #[cfg(feature = "remote")]
    remote: Option<(String, crate::io::remote::StorageOptions, PathBuf)>,
}

impl Destination {
    /// The destination of `out`. A URL is checked before anything is read
    /// or written ([`crate::io::remote::check_writable`]: an `http(s)://`
    /// URL, a bucket or a folder, an unknown scheme are usage errors).
    #[cfg(feature = "remote")]
    pub(super) fn new(out: &Path, storage: &[(String, String)]) -> Result<Destination, Failure> {
        use crate::io::remote::{self, StorageOptions};
        if let Some(local) = remote::file_url_path(out) {
            return Ok(Destination {
                local,
                remote: None,
            });
        }
        let Some(url) = out.to_str().filter(|s| remote::is_remote(s)) else {
            return Ok(Destination {
                local: out.to_path_buf(),
                remote: None,
            });
        };
        let options = StorageOptions::new(storage.iter().cloned());
        remote::check_writable(url, &options).map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
        // The object's own name, in a folder of its own, so that what the
        // commands tell from the output's name (framing, compression) and
        // the writer's temporary-and-rename both work as for a local path.
        let name = url.rsplit_once('/').map_or(url, |(_, name)| name);
        let folder = temporary_folder().map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
        Ok(Destination {
            local: folder.join(name),
            remote: Some((url.to_string(), options, folder)),
        })
    }

    /// The destination of `out` (a local path: no feature `remote`).
    #[cfg(not(feature = "remote"))]
    pub(super) fn new(out: &Path, _: &[(String, String)]) -> Result<Destination, Failure> {
        Ok(Destination {
            local: out.to_path_buf(),
        })
    }

    /// The path the command writes to.
    pub(super) fn local(&self) -> &Path {
        &self.local
    }

    /// Whether the output is uploaded to a store when it is finished.
    #[cfg(feature = "remote")]
    pub(super) fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// No output is remote without feature `remote`.
    #[cfg(not(feature = "remote"))]
    pub(super) fn is_remote(&self) -> bool {
        false
    }

    /// Uploads a remote output's finished file (and removes it); nothing
    /// for a local one. Call once the command has written [`local`](Self::local)
    /// whole; a destination dropped without it leaves nothing behind.
    pub(super) fn finish(self) -> Result<(), Failure> {
        #[cfg(feature = "remote")]
        if let Some((url, options, _)) = &self.remote {
            crate::io::remote::put_file(url, &self.local, options)
                .map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
        }
        Ok(())
    }
}

#[cfg(feature = "remote")]
impl Drop for Destination {
    fn drop(&mut self) {
        if let Some((_, _, folder)) = &self.remote {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}

/// A new folder of this process under the system's temporary directory.
#[cfg(feature = "remote")]
fn temporary_folder() -> Result<PathBuf, crate::Error> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let folder = base.join(format!("recordwire-upload-{}-{n}", std::process::id()));
        match std::fs::create_dir(&folder) {
            Ok(()) => return Ok(folder),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(crate::Error::io(e).with_file(folder.display().to_string())),
        }
    }
}

//! Globs of objects: one listing of the folder of a URL whose last part
//! holds `*` or `?`.

use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::ObjectStore;

use super::location::Location;
use super::options::{invalid, StorageOptions};
use super::runtime::block_on;
use super::urls::url_scheme;
use crate::error::Error;

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

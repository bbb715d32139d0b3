//! The crate's layering, checked on its source: every module imports only
//! from the modules below it (the order of the crate documentation's
//! "Layers"), so that no import circle or upward import can come back.
//!
//! A reference is any `crate::<item>` path outside test code and comments;
//! the items re-exported at the crate root count as the module they come from.
//!
//! Inside a module, the files of [`FOLDERS`] are checked the same way: their
//! imports of one another (`super::<file>`, `crate::<module>::<file>`, and an
//! item the module's `mod.rs` re-exports from a file) form no circle.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, bottom first; modules on one line are side by side and may
/// not import each other.
const LAYERS: &[&[&str]] = &[
    &["arch", "deflate"],
    &["names", "json_text"],
    &["wire"],
    &["error"],
    &["frame"],
    &["view", "io", "order"],
    &["batch"],
    &["index"],
    // Record files opened with their indexes, and datasets of them.
    &["dataset"],
    // The loader reads a dataset's batches ahead on threads.
    &["loader"],
    &["encode"],
    &["arrow"],
    &["json"],
    // Any message by a schema given at run time (its JSON uses json's
    // number printers).
    &["schema"],
    &["dump"],
    &["cli"],
    // `__internals` (feature `internals`, not API): entry points into the
    // kernels and the inflater for the fuzz targets, benches and examples.
    &["internals"],
];

/// Items of the crate root and the module they belong to.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("DecodeError", "wire"),
    ("DecodeReason", "wire"),
    ("Error", "error"),
    ("ErrorKind", "error"),
    ("Result", "error"),
    ("option_names", "names"),
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The module a `crate::<first>` path names.
fn module_of(first: &str) -> Option<&str> {
    if rank(first).is_some() {
        return Some(first);
    }
    ROOT_ITEMS
        .iter()
        .find(|(item, _)| *item == first)
        .map(|(_, module)| *module)
}

/// The source of `text` without its test modules and comments.
fn non_test_code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // A test module (or test-only item) runs to the end of the file
            // in this crate's layout; stop there.
            let rest: Vec<&str> = lines.clone().take(3).collect();
            if rest.iter().any(|l| l.trim_start().starts_with("mod ")) {
                break;
            }
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Every `crate::<name>` in `code`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` in macros names the crate too; `foo_crate::` does not.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

/// The violations in the source of `module`: `(module, target, why)`.
fn violations(module: &str, code: &str) -> Vec<String> {
    let Some(own) = rank(module) else {
        return vec![format!("{module}: not in LAYERS")];
    };
    let mut out = Vec::new();
    for path in crate_paths(&non_test_code(code)) {
        match module_of(&path) {
            None => out.push(format!(
                "{module} -> crate::{path}: unknown (add it to ROOT_ITEMS)"
            )),
            Some(target) if target == module => {}
            Some(target) => {
                let theirs = rank(target).unwrap_or(usize::MAX);
                if theirs >= own {
                    out.push(format!(
                        "{module} -> {target}: {}",
                        if theirs == own {
                            "side by side"
                        } else {
                            "upward"
                        }
                    ));
                }
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "tests") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_from_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let first = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a file name");
        let module = first.trim_end_matches(".rs");
        if matches!(module, "lib" | "main" | "test_util") {
            continue;
        }
        seen.insert(module.to_owned());
        let text = std::fs::read_to_string(file).expect("a readable source file");
        problems.extend(
            violations(module, &text)
                .into_iter()
                .map(|v| format!("{}: {v}", rel.display())),
        );
    }
    let layered: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|l| l.iter())
        .map(|m| m.to_string())
        .collect();
    assert_eq!(
        seen, layered,
        "the modules of src/ and those of LAYERS differ"
    );
    assert!(
        problems.is_empty(),
        "imports against the layering:\n{}",
        problems.join("\n")
    );
}

/// The modules whose files may not import one another in a circle.
const FOLDERS: &[&str] = &["batch", "dataset", "index", "loader", "view"];

/// The first path segment after each `super::` in `code`, and each item of
/// a `super::{a::X, b, c::{..}}` group.
fn super_paths(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("super::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "super::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // The group's top-level items: split at commas outside braces.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && depth == 0 => {
                        item_start = false;
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            found.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The items `mod.rs` re-exports or imports from its files (`pub use
/// file::{A, B}`, `use file::C`): item -> file.
fn reexports(mod_rs: &str, files: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in non_test_code(mod_rs).split(';') {
        let line = line.trim();
        let Some(path) = line
            .strip_prefix("pub use ")
            .or_else(|| line.strip_prefix("pub(crate) use "))
            .or_else(|| line.strip_prefix("use "))
        else {
            continue;
        };
        let Some((file, items)) = path.split_once("::") else {
            continue;
        };
        if !files.contains(file) {
            continue;
        }
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let item = item.trim();
            // The name the files see: the alias, or the path's last segment.
            let seen = item.rsplit(" as ").next().unwrap_or(item);
            let name = seen.rsplit("::").next().unwrap_or(seen).trim();
            if !name.is_empty() && name != "self" {
                out.push((name.to_owned(), file.to_owned()));
            }
        }
    }
    out
}

/// The files of `module` each file's code names: `sources` is (file stem,
/// source) for every file but `mod.rs` and the tests.
fn file_imports(
    module: &str,
    mod_rs: &str,
    sources: &[(String, String)],
) -> Vec<(String, BTreeSet<String>)> {
    let files: BTreeSet<String> = sources.iter().map(|(f, _)| f.clone()).collect();
    let items = reexports(mod_rs, &files);
    let prefix = format!("crate::{module}::");
    sources
        .iter()
        .map(|(file, text)| {
            let code = non_test_code(text);
            let mut names = super_paths(&code);
            // `crate::module::x` is `super::x` seen from a file of the module.
            names.extend(super_paths(&code.replace(&prefix, "super::")));
            let targets = names
                .iter()
                .filter_map(|n| {
                    if files.contains(n) {
                        Some(n.clone())
                    } else {
                        items.iter().find(|(i, _)| i == n).map(|(_, f)| f.clone())
                    }
                })
                .filter(|t| t != file)
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// The circles of the graph `edges` (node -> the nodes it imports): each
/// set of two or more nodes that all reach one another, sorted.
fn circles(edges: &[(String, BTreeSet<String>)]) -> Vec<Vec<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(node) = todo.pop() {
            for (_, targets) in edges.iter().filter(|(n, _)| *n == node) {
                for t in targets {
                    if seen.insert(t.clone()) {
                        todo.push(t.clone());
                    }
                }
            }
        }
        seen
    };
    let reaches: Vec<(String, BTreeSet<String>)> =
        edges.iter().map(|(n, _)| (n.clone(), reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (node, from_node) in &reaches {
        if !from_node.contains(node) || out.iter().any(|c| c.contains(node)) {
            continue;
        }
        let mut circle: Vec<String> = reaches
            .iter()
            .filter(|(other, r)| from_node.contains(other) && r.contains(node))
            .map(|(other, _)| other.clone())
            .collect();
        circle.sort();
        out.push(circle);
    }
    out.sort();
    out
}

#[test]
fn no_circle_among_the_files_of_a_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for module in FOLDERS {
        let dir = src.join(module);
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let mut sources = Vec::new();
        for file in files {
            // Only the module's own files (not those of a folder below it).
            if file.parent() != Some(dir.as_path()) {
                continue;
            }
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a file name")
                .to_owned();
            if stem == "mod" {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            sources.push((stem, text));
        }
        assert!(sources.len() > 3, "{module}: {} files", sources.len());
        let mod_rs = std::fs::read_to_string(dir.join("mod.rs")).expect("mod.rs");
        let edges = file_imports(module, &mod_rs, &sources);
        let linked = edges.iter().filter(|(_, t)| !t.is_empty()).count();
        assert!(
            linked > 2,
            "{module}: the check found no imports: {edges:?}"
        );
        for circle in circles(&edges) {
            found.push(format!("src/{module}: {}", circle.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "files importing one another in a circle:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_file_check_sees_circles_through_paths_groups_and_reexports() {
    let sources = |files: &[(&str, &str)]| -> Vec<(String, String)> {
        files
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    let mod_rs = "mod a;\nmod b;\nmod c;\npub use c::{Thing, Other as O};\n";
    // a -> b by a path, b -> c by a group, c -> a through mod.rs's re-export.
    let circle = sources(&[
        ("a", "fn f(_: super::b::B) {}\n"),
        ("b", "use super::{c::C, Thing};\n"),
        ("c", "use crate::m::a::A;\n"),
    ]);
    let edges = file_imports("m", mod_rs, &circle);
    assert_eq!(circles(&edges), [["a", "b", "c"]]);
    // The same files with c's import of a only in its tests: no circle.
    let tested = sources(&[
        ("a", "fn f(_: super::b::B) {}\n"),
        ("b", "use super::{c::C, Thing};\n"),
        (
            "c",
            "fn g() {}\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n",
        ),
    ]);
    assert!(circles(&file_imports("m", mod_rs, &tested)).is_empty());
    // A re-exported item alone closes a circle too.
    let via_item = sources(&[("a", "fn f(_: super::O) {}\n"), ("c", "use super::a::A;\n")]);
    assert_eq!(circles(&file_imports("m", mod_rs, &via_item)), [["a", "c"]]);
    // Two circles apart, and a file outside both.
    let two = sources(&[
        ("a", "use super::b::B;\n"),
        ("b", "use super::a::A;\n"),
        ("c", "use super::{d::D, a::A};\n"),
        ("d", "use super::c::C;\n"),
        ("e", "use super::a::A;\n"),
    ]);
    assert_eq!(
        circles(&file_imports("m", "", &two)),
        [["a", "b"], ["c", "d"]]
    );
}

#[test]
fn the_check_sees_an_upward_import_and_ignores_tests_and_comments() {
    let upward = "use crate::index::Index;\nfn f() {}\n";
    assert_eq!(violations("frame", upward), ["frame -> index: upward"]);
    assert_eq!(
        violations("view", "fn f(_: crate::io::Compression) {}"),
        ["view -> io: side by side"]
    );
    assert_eq!(
        violations("frame", "fn f() -> crate::Result<()> { Ok(()) }"),
        Vec::<String>::new()
    );
    assert_eq!(
        violations("wire", "fn f() -> crate::Error { todo!() }"),
        ["wire -> error: upward"]
    );
    let in_test = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::cli::run;\n}\n";
    assert!(violations("frame", in_test).is_empty());
    let in_comment = "/// See [`crate::index::Index`].\nfn f() {}\n";
    assert!(violations("frame", in_comment).is_empty());
    assert_eq!(
        violations("frame", "use crate::Mystery;"),
        ["frame -> crate::Mystery: unknown (add it to ROOT_ITEMS)"]
    );
}

/// `unsafe` appears in two places only: the memory map (`src/io/mmap.rs`)
/// and the CPU kernels (`src/arch/`), where clippy requires a `// SAFETY:`
/// comment on every block.
#[test]
fn unsafe_only_in_the_map_and_the_kernels() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("src/") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let uses =
            code.contains("unsafe {") || code.contains("unsafe fn") || code.contains("unsafe impl");
        if uses {
            let rel = f.strip_prefix(root).expect("under the root");
            found.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    found.sort();
    assert!(found.iter().any(|f| f == "src/io/mmap.rs"), "{found:?}");
    for f in &found {
        assert!(
            f == "src/io/mmap.rs" || f.starts_with("src/arch/"),
            "`unsafe` outside src/io/mmap.rs and src/arch/: {f}"
        );
    }
}

//! The crate's layering, checked on its source: every module imports only
//! from the modules below it (the order of the crate documentation's
//! "Layers"), so that no import circle or upward import can come back.
//!
//! A reference is any `crate::<item>` path outside test code and comments;
//! the items re-exported at the crate root count as the module they come from.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, bottom first; modules on one line are side by side and may
/// not import each other.
const LAYERS: &[&[&str]] = &[
    &["arch", "deflate"],
    &["names"],
    &["wire"],
    &["error"],
    &["frame"],
    &["view", "io", "order"],
    &["index"],
    &["encode"],
    &["json"],
    &["batch", "dump"],
    &["cli"],
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

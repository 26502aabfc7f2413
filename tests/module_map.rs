//! docs/architecture.md's module map names every module of every crate, so a newcomer finds a
//! file from the map and a new file cannot be left out of it.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir` that are modules (unit-test files and fixtures excluded).
fn modules(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path: PathBuf = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if !rel.ends_with("tests.rs") && !rel.ends_with("fixtures.rs") {
                    out.push(rel);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The table under `### `heading`` in the map.
fn section<'a>(map: &'a str, heading: &str) -> &'a str {
    let start = map
        .find(&format!("### `{heading}`"))
        .unwrap_or_else(|| panic!("the module map has no section {heading}"));
    let rest = &map[start + 4..];
    &rest[..rest.find("\n### ").unwrap_or(rest.len())]
}

#[test]
fn the_module_map_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let map = &doc[doc
        .find("## 8. Module map")
        .expect("docs/architecture.md has a module map")..];
    let mut missing = Vec::new();
    let crates = [
        "stats", "api", "harness", "profile", "claims", "store", "github", "server", "agent",
    ];
    for (heading, dir) in crates
        .iter()
        .map(|c| (c.to_string(), root.join("crates").join(c).join("src")))
        .chain([("src/".to_owned(), root.join("src"))])
    {
        let table = section(map, &heading);
        for module in modules(&dir) {
            if !table.contains(&format!("| `{module}` |")) {
                missing.push(format!("{heading}: {module}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md's module map leaves out {missing:?}: add a line for each"
    );
}

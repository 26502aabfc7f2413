//! The house in figures (issue 46): the largest source file, import circles, test binaries,
//! hand-written test comparisons, domain modules that take the web server's state, files
//! outside the server's HTTP layer that import axum, server code that reads clap's structs
//! instead of its configuration, store methods whose SQL is a jump further than their `impl`,
//! and server files that call a forge's client past the forge seam. Each figure is printed, and may not grow
//! past where it stands now; the targets are the issue's. When a change improves one, lower its
//! ceiling here to the new figure, so the gain is kept.
//!
//! `cargo test --test integration house -- --nocapture` prints them.

use std::path::{Path, PathBuf};

/// Today's figures, the ceilings (and the targets beside them).
const LARGEST_FILE: usize = 600; // the target
const FILES_OVER_600: usize = 0; // the target
const TEST_BINARIES: usize = 7; // the target
const NEW_COMPARISON_BLOCKS: usize = 0; // the target is 3
const DOMAIN_MODULES_WITH_APP_STATE: usize = 0; // the target
const AXUM_OUTSIDE_HTTP: usize = 0; // the target: axum under the server's `http/` and in its `lib.rs` only
const CLAP_OUTSIDE_FLAGS: usize = 0; // the target: clap in the server's `flags.rs` and `runner_cli.rs` only
/// Store trait methods whose implementation runs no SQL and calls nothing in its own file: a
/// reader who jumps from the trait to the `impl` must jump again to find the SQL.
const STORE_FORWARDERS: usize = 2; // comparison creation (shared with webhooks), record_delivery
/// Server files that call a forge's client themselves instead of through the forge seam
/// (`forge.rs`), where what only GitHub has (check runs, commit ranges) lives too.
const FORGE_CALLS_OUTSIDE_SEAM: usize = 0; // the target

/// Where a forge's client may be named: the seam, what builds the clients, and GitHub's
/// check writer behind the seam.
const FORGE_CLIENT_HOMES: [&str; 4] = [
    "crates/server/src/forge.rs",
    "crates/server/src/config.rs",
    "crates/server/src/workers/mod.rs",
    "crates/server/src/commit_check.rs",
];

/// The domain modules that should take a narrow state, not the web server's.
const DOMAIN: [&str; 5] = [
    "audit.rs",
    "calibration.rs",
    "comparison_analysis.rs",
    "main_history.rs",
    "workers/reaper.rs",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The source directories: each crate's `src/` and the binary's.
fn source_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(root().join("src"));
    dirs.sort();
    dirs
}

/// Lines of a file before its unit tests.
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

/// The packages' test binaries: with `autotests = false` each `[[test]]`, otherwise each
/// `tests/*.rs` and `tests/*/main.rs` as cargo finds them.
fn test_binaries() -> Vec<String> {
    let mut packages = vec![root().to_path_buf()];
    packages.extend(
        std::fs::read_dir(root().join("crates"))
            .unwrap()
            .flatten()
            .map(|e| e.path()),
    );
    let mut out = Vec::new();
    for package in packages {
        let Ok(manifest) = std::fs::read_to_string(package.join("Cargo.toml")) else {
            continue;
        };
        let name = if package == root() {
            "benchgate".to_owned()
        } else {
            package.file_name().unwrap().to_string_lossy().into_owned()
        };
        let declared = manifest.matches("[[test]]").count();
        if manifest.contains("autotests = false") {
            out.extend((0..declared).map(|i| format!("{name} #{i}")));
            continue;
        }
        for entry in std::fs::read_dir(package.join("tests"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = entry.path();
            let is_test = path.extension().is_some_and(|e| e == "rs")
                || path.is_dir() && path.join("main.rs").is_file();
            if is_test {
                out.push(format!("{name}/{}", entry.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

/// Hand-written `NewComparison {` literals under test directories (a builder,
/// `NewComparison::new(…).pr(…)…`, says only what a test cares about).
fn new_comparison_blocks() -> Vec<(String, usize)> {
    let mut dirs = vec![root().join("tests")];
    dirs.extend(
        std::fs::read_dir(root().join("crates"))
            .unwrap()
            .flatten()
            .map(|e| e.path().join("tests")),
    );
    let mut out = Vec::new();
    for dir in dirs {
        // This file names the pattern it counts.
        for file in rust_files(&dir)
            .into_iter()
            .filter(|f| !f.ends_with("tests/house.rs"))
        {
            let text = std::fs::read_to_string(&file).unwrap();
            // Struct literals, not a function's return type.
            let n = text
                .match_indices("NewComparison {")
                .filter(|(i, _)| !text[..*i].ends_with("-> "))
                .count();
            if n > 0 {
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                out.push((rel, n));
            }
        }
    }
    out
}

/// The store's `impl … for Backend` methods that only forward to another file.
fn store_forwarders() -> Vec<String> {
    let store = root().join("crates/store/src");
    let mut files = rust_files(&store.join("queries"));
    files.push(store.join("sqlite/dialect.rs"));
    files.push(store.join("postgres/dialect.rs"));
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let local: Vec<&str> = text
            .split("fn ")
            .skip(1)
            .filter_map(|rest| rest.split(['(', '<']).next())
            .collect();
        let Some(start) = text.find("\nimpl crate::") else {
            continue;
        };
        let block = &text[start..start + text[start..].find("\n}\n").unwrap()];
        for method in block.split("\n    async fn ").skip(1) {
            let name = method.split('(').next().unwrap();
            let body = &method[method.find(" {\n").unwrap_or(0)..];
            // The migrator is the SQL of `migrate`.
            let runs_sql = body.contains("sqlx::query") || body.contains("migrator()");
            let calls_local = local
                .iter()
                .any(|f| body.contains(&format!(" {f}(")) || body.contains(&format!("({f}(")));
            if !runs_sql && !calls_local {
                out.push(format!(
                    "{}: {name}",
                    file.strip_prefix(&store).unwrap().display()
                ));
            }
        }
    }
    out
}

#[test]
fn the_house_does_not_get_worse() {
    let mut sizes: Vec<(usize, String)> = Vec::new();
    let mut axum = Vec::new();
    let mut clap = Vec::new();
    let mut forge_calls = Vec::new();
    for dir in source_dirs() {
        for file in rust_files(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            let rel = file.strip_prefix(root()).unwrap().display().to_string();
            if !rel.ends_with("tests.rs") {
                sizes.push((lines_before_tests(&text), rel.clone()));
            }
            let http_layer =
                rel.starts_with("crates/server/src/http/") || rel == "crates/server/src/lib.rs";
            if !http_layer && (text.contains("use axum") || text.contains("axum::")) {
                axum.push(rel.clone());
            }
            // The flags become a `ServerConfig`; the rest of the server reads that (`lib.rs`
            // re-exports the flags for `main`).
            let cli = [
                "crates/server/src/flags.rs",
                "crates/server/src/runner_cli.rs",
                "crates/server/src/lib.rs",
            ];
            let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
            let names_a_client = ["GitHubClient", "GitlabClient", ".github()"]
                .iter()
                .any(|k| code.contains(k));
            if rel.starts_with("crates/server/src/")
                && names_a_client
                && !FORGE_CLIENT_HOMES.contains(&rel.as_str())
            {
                forge_calls.push(rel.clone());
            }
            if rel.starts_with("crates/server/src/")
                && !cli.contains(&rel.as_str())
                && (code.contains("clap::")
                    || code.contains("ServeArgs")
                    || code.contains("GitHubArgs"))
            {
                clap.push(rel);
            }
        }
    }
    sizes.sort_by(|a, b| b.cmp(a));
    let over: Vec<&(usize, String)> = sizes.iter().filter(|(n, _)| *n > 600).collect();
    let binaries = test_binaries();
    let blocks = new_comparison_blocks();
    let block_count: usize = blocks.iter().map(|(_, n)| n).sum();
    let server = root().join("crates/server/src");
    let with_app_state: Vec<&str> = DOMAIN
        .iter()
        .copied()
        .filter(|m| {
            // A module is `name.rs` or a folder `name/` of files.
            let file = server.join(m);
            let folder = server.join(m.trim_end_matches(".rs"));
            assert!(
                file.is_file() || folder.is_dir(),
                "domain module {m} is gone: update DOMAIN"
            );
            let mut files = rust_files(&folder);
            files.push(file);
            files.iter().any(|f| {
                std::fs::read_to_string(f).is_ok_and(|t| {
                    t[..t.find("#[cfg(test)]").unwrap_or(t.len())].contains("AppState")
                })
            })
        })
        .collect();
    eprintln!(
        "house: largest non-test file {} lines ({}); {} files over 600 lines; {} test binaries; \
         {block_count} `NewComparison {{` blocks in tests; AppState in {:?}; axum imported outside \
         the HTTP layer in {:?}",
        sizes[0].0,
        sizes[0].1,
        over.len(),
        binaries.len(),
        with_app_state,
        axum
    );
    eprintln!("files over 600 lines: {over:?}");
    eprintln!("test binaries: {binaries:?}");
    eprintln!("NewComparison blocks: {blocks:?}");
    eprintln!("server files reading clap's structs outside flags.rs: {clap:?}");
    eprintln!("server files calling a forge's client outside the seam: {forge_calls:?}");
    let forwarders = store_forwarders();
    eprintln!("store methods forwarding to another file: {forwarders:?}");
    let worse: Vec<String> = [
        ("largest file", sizes[0].0, LARGEST_FILE),
        ("files over 600 lines", over.len(), FILES_OVER_600),
        ("test binaries", binaries.len(), TEST_BINARIES),
        (
            "NewComparison blocks in tests",
            block_count,
            NEW_COMPARISON_BLOCKS,
        ),
        (
            "domain modules taking AppState",
            with_app_state.len(),
            DOMAIN_MODULES_WITH_APP_STATE,
        ),
        (
            "files importing axum outside the HTTP layer",
            axum.len(),
            AXUM_OUTSIDE_HTTP,
        ),
        (
            "server files reading clap's structs outside flags.rs",
            clap.len(),
            CLAP_OUTSIDE_FLAGS,
        ),
        (
            "store methods forwarding to another file",
            forwarders.len(),
            STORE_FORWARDERS,
        ),
        (
            "server files calling a forge's client outside the seam",
            forge_calls.len(),
            FORGE_CALLS_OUTSIDE_SEAM,
        ),
    ]
    .iter()
    .filter(|(_, now, ceiling)| now > ceiling)
    .map(|(what, now, ceiling)| format!("{what}: {now}, above its ceiling {ceiling}"))
    .collect();
    assert!(
        worse.is_empty(),
        "the house got worse (tests/house.rs keeps the figures):\n{}",
        worse.join("\n")
    );
}

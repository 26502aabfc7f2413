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
        "stats", "api", "harness", "profile", "claims", "store", "github", "gitlab", "server",
        "agent",
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

/// A module's path in its crate from its file under `src/`: `lib.rs` and `main.rs` are the root
/// (""), `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`.
fn module_of(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs");
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !matches!(*p, "mod" | "lib" | "main"))
        .collect();
    parts.join("::")
}

/// The file's text before its unit tests: test modules may reach anywhere.
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at])
}

/// Every path a `use` tree names, its groups expanded: `a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d` and `a::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.trim_end_matches("::").to_owned()];
    };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    // Split at top-level commas only.
    let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .flat_map(|sub| {
            expand_use(sub).into_iter().map(move |p| {
                if p == "self" {
                    prefix.to_owned()
                } else if prefix.is_empty() {
                    p
                } else {
                    format!("{prefix}::{p}")
                }
            })
        })
        .collect()
}

/// The crate-relative paths a module's text names through `crate::`, `super::` or `self::`, in
/// `use` declarations (groups expanded) and inline, resolved to absolute segments.
fn named_paths(module: &str, text: &str) -> Vec<Vec<String>> {
    let mut raw: Vec<String> = Vec::new();
    // `use` declarations (a line that starts one; it may span lines until its `;`).
    let mut declaration: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut declaration {
            Some(d) => {
                d.push(' ');
                d.push_str(trimmed);
            }
            None => {
                let starts = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
                    .iter()
                    .find_map(|p| trimmed.strip_prefix(p));
                match starts {
                    Some(rest) => declaration = Some(rest.to_owned()),
                    None => continue,
                }
            }
        }
        if let Some(d) = &declaration
            && let Some(end) = d.find(';')
        {
            raw.extend(expand_use(&d[..end]));
            declaration = None;
        }
    }
    // Inline paths: `crate::a::b::f(…)`, outside comments (a doc link imports nothing).
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let text = code.as_str();
    for anchor in ["crate::", "super::"] {
        for (at, _) in text.match_indices(anchor) {
            let before = text[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = text[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            raw.push(path.trim_end_matches("::").to_owned());
        }
    }
    let here: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    raw.into_iter()
        .filter_map(|path| {
            let mut segments: Vec<&str> = path.split("::").collect();
            let mut base: Vec<String> = match segments.first() {
                Some(&"crate") => Vec::new(),
                Some(&"self") => here.clone(),
                Some(&"super") => {
                    let mut up = here.clone();
                    while segments.first() == Some(&"super") {
                        up.pop();
                        segments.remove(0);
                    }
                    segments.insert(0, "super");
                    up
                }
                _ => return None,
            };
            base.extend(segments[1..].iter().map(|s| (*s).to_owned()));
            Some(base)
        })
        .collect()
}

/// Import circles between modules of the crate under `src`: strongly connected groups of more
/// than one module, where a module naming its own ancestor or descendant does not count (a
/// parent declares its children; a child may read its parent's shared items).
fn circles(src: &Path) -> Vec<Vec<String>> {
    let files = modules(src);
    let names: Vec<String> = files.iter().map(|f| module_of(f)).collect();
    let known: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let related = |a: &str, b: &str| {
        a == b
            || a.is_empty()
            || b.is_empty()
            || a.starts_with(&format!("{b}::"))
            || b.starts_with(&format!("{a}::"))
    };
    let mut edges: std::collections::BTreeMap<usize, std::collections::BTreeSet<usize>> =
        Default::default();
    for (i, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        for path in named_paths(&names[i], without_tests(&text)) {
            // The longest prefix that is a module of this crate.
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|p| known.contains(p.as_str()));
            if let Some(target) = target
                && !related(&names[i], &target)
            {
                let j = names.iter().position(|n| *n == target).unwrap();
                edges.entry(i).or_default().insert(j);
            }
        }
    }
    // Tarjan's strongly connected components.
    struct Walk<'a> {
        edges: &'a std::collections::BTreeMap<usize, std::collections::BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            let targets: Vec<usize> = self
                .edges
                .get(&v)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            for w in targets {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.groups.push(group);
                }
            }
        }
    }
    let n = files.len();
    let mut walk = Walk {
        edges: &edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        groups: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.groups
        .into_iter()
        .map(|g| {
            let mut g: Vec<String> = g.into_iter().map(|i| files[i].clone()).collect();
            g.sort();
            g
        })
        .collect()
}

/// No two modules of a crate import each other, directly or round a longer circle: a circle
/// means neither can be read, changed or moved without the other (issue 46).
#[test]
fn no_module_imports_itself_round_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            for circle in circles(&src) {
                found.push(format!("{}: {}", src.display(), circle.join(" ↔ ")));
            }
        }
    }
    for circle in circles(&root.join("src")) {
        found.push(format!("src: {}", circle.join(" ↔ ")));
    }
    eprintln!("import circles: {}", found.len());
    assert!(
        found.is_empty(),
        "modules that import each other (break each by moving what both need to its own \
         module):\n{}",
        found.join("\n")
    );
}

/// The circle finder finds a planted circle and resolves `super::` and grouped `use`s.
#[test]
fn the_circle_finder_sees_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("module-circles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod tasks;\nmod metrics;\n").unwrap();
    std::fs::write(dir.join("tasks/mod.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(
        dir.join("tasks/a.rs"),
        "use super::{b::{X, Y}, Shared};\n/// Not an import: [`crate::lib_only`].\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tasks/b.rs"),
        "pub fn f() { crate::metrics::count(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("metrics.rs"),
        "use crate::tasks::a::Z;\n#[cfg(test)]\nmod tests { use crate::tasks::b; }\n",
    )
    .unwrap();
    assert_eq!(
        circles(&dir),
        vec![vec![
            "metrics.rs".to_owned(),
            "tasks/a.rs".into(),
            "tasks/b.rs".into()
        ]]
    );
    // Broken at one edge, no circle is left; a test module's imports do not count.
    std::fs::write(
        dir.join("metrics.rs"),
        "//! See [`crate::tasks::a`].\n#[cfg(test)]\nmod tests { use crate::tasks::a; }\n",
    )
    .unwrap();
    assert!(circles(&dir).is_empty());
    assert_eq!(
        expand_use("crate::{a::{b, c as d}, e}"),
        ["crate::a::b", "crate::a::c", "crate::e"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

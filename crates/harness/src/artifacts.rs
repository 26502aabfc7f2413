//! `[benchmark] artifacts`: what a side's build produced, by content. Two sides whose named
//! outputs are byte-identical run the same code, so comparing them measures only noise; the
//! comparison concludes "identical build" exactly instead (`compare` and the agent alike).

use std::io::Read;
use std::path::Path;

use benchgate_api::agent::IdenticalBuild;
use benchgate_api::paths::PathGlobs;
use sha2::{Digest, Sha256};

/// One matched file: its path relative to the work tree, its size and SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub path: String,
    pub bytes: u64,
    pub sha256: [u8; 32],
}

/// Why the outputs could not be read.
#[derive(Debug, thiserror::Error)]
#[error("artifacts of {dir}: {message}")]
pub struct ArtifactError {
    pub dir: String,
    pub message: String,
}

/// The regular files under `root` that `globs` match (relative paths, `/`-separated), sorted,
/// each hashed. Symbolic links are not followed and `.git` is skipped: neither is a build output.
pub fn digest(root: &Path, globs: &PathGlobs) -> Result<Vec<Artifact>, ArtifactError> {
    let mut out = Vec::new();
    walk(root, globs, |path, full| {
        let (bytes, sha256) = hash_file(full).map_err(|e| format!("{path}: {e}"))?;
        out.push(Artifact {
            path,
            bytes,
            sha256,
        });
        Ok(())
    })?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Calls `each` with the relative path (`/`-separated) and full path of every regular file
/// under `root` that `globs` match, in name order; `.git` and symbolic links are skipped.
fn walk(
    root: &Path,
    globs: &PathGlobs,
    mut each: impl FnMut(String, &Path) -> Result<(), String>,
) -> Result<(), ArtifactError> {
    let error = |message: String| ArtifactError {
        dir: root.display().to_string(),
        message,
    };
    let entries = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git");
    for entry in entries {
        let entry = entry.map_err(|e| error(e.to_string()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if globs.matches(&path) {
            each(path, entry.path()).map_err(error)?;
        }
    }
    Ok(())
}

/// Deletes what `globs` match under `root` before a build, so what matches after it is what
/// that build wrote: outputs of earlier builds in a reused work tree (a binary named by an
/// older dependency hash) would otherwise differ between the sides and hide an identical
/// build. Returns how many files went.
pub fn remove_before_build(root: &Path, globs: &PathGlobs) -> Result<usize, ArtifactError> {
    if globs.patterns().is_empty() {
        return Ok(0);
    }
    let mut found = Vec::new();
    walk(root, globs, |path, _| {
        found.push(path);
        Ok(())
    })?;
    for path in &found {
        std::fs::remove_file(root.join(path)).map_err(|e| ArtifactError {
            dir: root.display().to_string(),
            message: format!("cannot remove {path} before the build: {e}"),
        })?;
    }
    Ok(found.len())
}

fn hash_file(path: &Path) -> std::io::Result<(u64, [u8; 32])> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((bytes, hasher.finalize().into()))
}

/// `Some` when both sides have the same files (at least one) with the same contents; `None`
/// when anything differs or nothing matched (then the sides are measured as usual).
pub fn identical(base: &[Artifact], head: &[Artifact]) -> Option<IdenticalBuild> {
    if base.is_empty() || base != head {
        return None;
    }
    let mut whole = Sha256::new();
    for a in base {
        whole.update(a.path.as_bytes());
        whole.update([0u8]);
        whole.update(hex::encode(a.sha256).as_bytes());
        whole.update(b"\n");
    }
    Some(IdenticalBuild {
        files: base.iter().map(|a| a.path.clone()).collect(),
        bytes: base.iter().map(|a| a.bytes).sum(),
        sha256: hex::encode(whole.finalize()),
    })
}

/// Both work trees' outputs compared: `Ok(None)` when they differ or `globs` name nothing.
pub fn compare_sides(
    base: &Path,
    head: &Path,
    globs: &PathGlobs,
) -> Result<Option<IdenticalBuild>, ArtifactError> {
    if globs.patterns().is_empty() {
        return Ok(None);
    }
    Ok(identical(&digest(base, globs)?, &digest(head, globs)?))
}

/// What the logs say when the sides differ: how many files matched and how many differ.
pub fn difference(base: &[Artifact], head: &[Artifact]) -> String {
    if base.is_empty() && head.is_empty() {
        return "the artifacts globs matched no file on either side".to_owned();
    }
    let differing = base
        .iter()
        .filter(|a| !head.iter().any(|b| b == *a))
        .count()
        + head
            .iter()
            .filter(|b| !base.iter().any(|a| a.path == b.path))
            .count();
    format!(
        "{} of {} artifact files differ between the sides",
        differing,
        base.len().max(head.len())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    fn globs(p: &[&str]) -> PathGlobs {
        PathGlobs::try_from(p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn identical_outputs_conclude_and_any_byte_or_file_differing_does_not() {
        let g = globs(&["target/release/bench-*", "out/**"]);
        let base = tree(&[
            ("target/release/bench-1a", "ELF"),
            ("out/data/x.bin", "xx"),
            ("README.md", "base"),
        ]);
        let head = tree(&[
            ("target/release/bench-1a", "ELF"),
            ("out/data/x.bin", "xx"),
            ("README.md", "head differs, but is no artifact"),
        ]);
        let same = compare_sides(base.path(), head.path(), &g)
            .unwrap()
            .unwrap();
        assert_eq!(same.files, ["out/data/x.bin", "target/release/bench-1a"]);
        assert_eq!(same.bytes, 5);
        assert_eq!(same.sha256.len(), 64);
        assert!(
            same.describe()
                .starts_with("identical build: 2 files (0.0 MiB)")
        );

        let changed = tree(&[
            ("target/release/bench-1a", "ELF!"),
            ("out/data/x.bin", "xx"),
        ]);
        assert_eq!(
            compare_sides(base.path(), changed.path(), &g).unwrap(),
            None
        );
        let extra = tree(&[
            ("target/release/bench-1a", "ELF"),
            ("out/data/x.bin", "xx"),
            ("out/new.bin", ""),
        ]);
        assert_eq!(compare_sides(base.path(), extra.path(), &g).unwrap(), None);
        let (b, e) = (
            digest(base.path(), &g).unwrap(),
            digest(extra.path(), &g).unwrap(),
        );
        assert_eq!(
            difference(&b, &e),
            "1 of 3 artifact files differ between the sides"
        );
        // Globs that match nothing prove nothing: the sides are measured.
        let none = globs(&["target/debug/*"]);
        assert_eq!(
            compare_sides(base.path(), head.path(), &none).unwrap(),
            None
        );
        assert_eq!(
            compare_sides(base.path(), head.path(), &globs(&[])).unwrap(),
            None
        );
    }

    #[test]
    fn outputs_of_earlier_builds_are_removed_before_a_build() {
        let g = globs(&["target/release/deps/bench-????"]);
        let dir = tree(&[
            ("target/release/deps/bench-aaaa", "an older build's binary"),
            ("target/release/deps/bench-aaaa.d", "dep info: not matched"),
            ("src/lib.rs", "source"),
        ]);
        assert_eq!(remove_before_build(dir.path(), &g).unwrap(), 1);
        assert!(!dir.path().join("target/release/deps/bench-aaaa").exists());
        assert!(dir.path().join("target/release/deps/bench-aaaa.d").exists());
        assert!(dir.path().join("src/lib.rs").exists());
        assert_eq!(remove_before_build(dir.path(), &globs(&[])).unwrap(), 0);
    }
}

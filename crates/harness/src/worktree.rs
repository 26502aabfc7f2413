//! One git worktree per side, kept between calls so each side's build is incremental: switching
//! a worktree to another commit leaves its ignored build output (`target/`) in place.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use benchgate_api::Side;
use benchgate_api::paths::PathGlobs;

use crate::git::Git;

/// A git or build step that failed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error("{0:?} is not a revision of this repository")]
    UnknownRevision(String),
    #[error("cannot run the {side} build `{command}`: {source}")]
    BuildSpawn {
        side: &'static str,
        command: String,
        source: std::io::Error,
    },
    #[error("the {side} build `{command}` failed ({status}); last lines of its output:\n{tail}")]
    BuildFailed {
        side: &'static str,
        command: String,
        status: std::process::ExitStatus,
        tail: String,
    },
}

/// Where a head branched from a base branch that moved on since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchPoint {
    /// The newest commit both share (`git merge-base`).
    pub merge_base: String,
    /// The base branch's commits after it.
    pub base_ahead_by: u64,
}

/// The repository around a directory and where its benchmark worktrees live.
#[derive(Debug, Clone)]
pub struct Repository {
    /// The top level of the work tree the user is in.
    pub toplevel: PathBuf,
    /// `<git common dir>/benchgate-worktrees`: inside `.git`, so `git status` never shows it,
    /// and shared by every worktree of the repository.
    pub worktrees_dir: PathBuf,
}

impl Repository {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Self, WorktreeError> {
        let toplevel = git(dir, &["rev-parse", "--show-toplevel"])?;
        let common = git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )?;
        Ok(Repository {
            toplevel: PathBuf::from(toplevel),
            worktrees_dir: PathBuf::from(common).join("benchgate-worktrees"),
        })
    }

    /// The commit `rev` names (a branch, tag, `HEAD~2`, a sha).
    pub fn resolve(&self, rev: &str) -> Result<String, WorktreeError> {
        git(
            &self.toplevel,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .map_err(|_| WorktreeError::UnknownRevision(rev.to_owned()))
    }

    /// Where `head` branched from `base_rev` when `base_rev` names a branch (local or remote)
    /// that has moved on since: its merge base with `head` and the branch's commits after it.
    /// `None` for a commit, a tag, a branch that `head` contains, or unrelated histories.
    pub fn branch_point(
        &self,
        base_rev: &str,
        base: &str,
        head: &str,
    ) -> Result<Option<BranchPoint>, WorktreeError> {
        let full = git(
            &self.toplevel,
            &["rev-parse", "--symbolic-full-name", base_rev],
        )
        .unwrap_or_default();
        if !(full.starts_with("refs/heads/") || full.starts_with("refs/remotes/")) {
            return Ok(None);
        }
        let Ok(merge_base) = git(&self.toplevel, &["merge-base", base, head]) else {
            return Ok(None);
        };
        if merge_base == base {
            return Ok(None);
        }
        let since = git(
            &self.toplevel,
            &["rev-list", "--count", &format!("{merge_base}..{base}")],
        )?;
        Ok(Some(BranchPoint {
            merge_base,
            base_ahead_by: since.parse().unwrap_or(0),
        }))
    }

    /// The files that differ between two commits (a rename as both its names), as GitHub's
    /// "Files changed" lists a PR's from its merge base.
    pub fn changed_files(&self, base: &str, head: &str) -> Result<Vec<String>, WorktreeError> {
        let listed = run_git(
            &self.toplevel,
            &["diff", "--name-only", "-z", "--no-renames", base, head],
        )?;
        Ok(listed
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// The worktree of `side`, checked out at `sha` (detached), created on first use.
    pub fn checkout(&self, side: Side, sha: &str) -> Result<PathBuf, WorktreeError> {
        let path = self.worktrees_dir.join(side.as_str());
        let path_str = path.to_string_lossy().into_owned();
        if path.join(".git").exists() {
            git(&path, &["checkout", "--quiet", "--detach", "--force", sha])?;
        } else {
            // A worktree directory deleted by hand leaves a stale registration behind.
            git(&self.toplevel, &["worktree", "prune"])?;
            git(
                &self.toplevel,
                &[
                    "worktree", "add", "--quiet", "--detach", "--force", &path_str, sha,
                ],
            )?;
        }
        Ok(path)
    }
}

/// Runs `command` through `sh -c` in `dir` with the caller's environment (a build needs the
/// toolchain's variables; only benchmark runs are scrubbed). Output is kept for the error only.
pub fn build(dir: &Path, side: Side, command: &str) -> Result<(), WorktreeError> {
    use crate::capture::{BUILD_TAIL, failure_tail, tails_while};
    let spawn_err = |source| WorktreeError::BuildSpawn {
        side: side.as_str(),
        command: command.to_owned(),
        source,
    };
    let mut child = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_err)?;
    let (status, stdout, stderr) =
        tails_while(&mut child, BUILD_TAIL, |c| c.wait()).map_err(spawn_err)?;
    if status.success() {
        return Ok(());
    }
    Err(WorktreeError::BuildFailed {
        side: side.as_str(),
        command: command.to_owned(),
        status,
        tail: failure_tail(&stdout, &stderr, 20),
    })
}

/// The files of a suite's `bench_from_head` globs that the base side takes from head, so both
/// sides run head's benchmark code against their own library. Applied through git's index,
/// so the next forced checkout of the worktree undoes it (new files included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeadBenchmarks {
    /// Head's matching files that base lacks or has otherwise: (path, mode and blob id).
    pub from_head: Vec<(String, String)>,
    /// Base's matching files that head does not have.
    pub removed: Vec<String>,
    /// How many of `from_head` base lacks altogether.
    pub added: usize,
}

impl HeadBenchmarks {
    /// What the base side at `base_sha` must take from `head_sha` for `globs`, read from `git`,
    /// a repository holding both commits.
    pub fn plan(
        git: &Git,
        base_sha: &str,
        head_sha: &str,
        globs: &PathGlobs,
    ) -> Result<Self, WorktreeError> {
        if globs.patterns().is_empty() {
            return Ok(Self::default());
        }
        let base = matching_files(git, base_sha, globs)?;
        let head = matching_files(git, head_sha, globs)?;
        let from_head: Vec<(String, String)> = head
            .iter()
            .filter(|(path, id)| base.get(*path) != Some(id))
            .map(|(path, id)| (path.clone(), id.clone()))
            .collect();
        let added = from_head
            .iter()
            .filter(|(path, _)| !base.contains_key(path))
            .count();
        let removed = base
            .keys()
            .filter(|path| !head.contains_key(*path))
            .cloned()
            .collect();
        Ok(Self {
            from_head,
            removed,
            added,
        })
    }

    /// Base and head have the same matching files: nothing to take.
    pub fn is_empty(&self) -> bool {
        self.from_head.is_empty() && self.removed.is_empty()
    }

    /// One line per file taken or removed, for a build stamp: a later head with the same
    /// benchmark files keeps the base's build.
    pub fn key(&self) -> String {
        let mut key = String::new();
        for (path, id) in &self.from_head {
            key.push_str(&format!("{id} {path}\n"));
        }
        for path in &self.removed {
            key.push_str(&format!("- {path}\n"));
        }
        key
    }

    /// Puts head's files into the base tree `tree` and removes the ones head deleted, through
    /// `tree`'s git (whose work tree and index it names).
    pub fn apply(&self, tree: &Git, head_sha: &str) -> Result<(), WorktreeError> {
        let git = tree.clone().literal_pathspecs();
        let taken: Vec<&str> = self.from_head.iter().map(|(p, _)| p.as_str()).collect();
        for chunk in taken.chunks(200) {
            let mut args = vec!["checkout", "--quiet", head_sha, "--"];
            args.extend_from_slice(chunk);
            git.run(&args)?;
        }
        let removed: Vec<&str> = self.removed.iter().map(String::as_str).collect();
        for chunk in removed.chunks(200) {
            let mut args = vec!["rm", "--quiet", "--"];
            args.extend_from_slice(chunk);
            git.run(&args)?;
        }
        Ok(())
    }

    /// "3 files (1 new), 1 removed", for logs and reports.
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "the same on both sides".to_owned();
        }
        let n = self.from_head.len();
        let mut text = format!("{n} file{}", if n == 1 { "" } else { "s" });
        if self.added > 0 {
            text.push_str(&format!(" ({} new)", self.added));
        }
        if !self.removed.is_empty() {
            text.push_str(&format!(", {} removed", self.removed.len()));
        }
        text
    }
}

/// The files of commit `sha` that match `globs`: path to "mode blob-id".
fn matching_files(
    git: &Git,
    sha: &str,
    globs: &PathGlobs,
) -> Result<std::collections::BTreeMap<String, String>, WorktreeError> {
    // Untrimmed: a path may end in a space.
    let listing = git.output(&["ls-tree", "-r", "-z", "--full-tree", sha])?;
    Ok(listing
        .split('\0')
        .filter_map(|entry| {
            // `<mode> <type> <id>\t<path>`; submodules (type `commit`) are not files.
            let (meta, path) = entry.split_once('\t')?;
            let mut parts = meta.split(' ');
            let (mode, kind, id) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob" && globs.matches(path))
                .then(|| (path.to_owned(), format!("{mode} {id}")))
        })
        .collect())
}

fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    Ok(Git::discover(dir).run(args)?)
}

fn run_git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    Ok(Git::discover(dir).output(args)?)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs `script` with `sh -c` in `dir` and returns its trimmed stdout; panics on failure.
    pub(crate) fn sh(dir: &Path, script: &str) -> String {
        let out = Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    const COMMIT: &str = "git -c user.name=t -c user.email=t@t commit -qm";

    #[test]
    fn the_base_takes_heads_benchmark_files_and_a_checkout_undoes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        sh(
            repo,
            &format!(
                "git init -q && mkdir -p benches/data src && echo 1 > benches/a.rs && \
                 echo old > benches/gone.rs && echo same > benches/data/x.json && \
                 echo lib1 > src/lib.rs && git add . && {COMMIT} base"
            ),
        );
        let base = sh(repo, "git rev-parse HEAD");
        sh(
            repo,
            &format!(
                "git rm -q benches/gone.rs && echo 2 > benches/a.rs && echo new > 'benches/n*w.rs' && \
                 echo lib2 > src/lib.rs && git add . && {COMMIT} head"
            ),
        );
        let head = sh(repo, "git rev-parse HEAD");
        let globs = PathGlobs::try_from(vec!["benches/**".to_owned()]).unwrap();
        let taken = HeadBenchmarks::plan(&Git::discover(repo), &base, &head, &globs).unwrap();
        let paths: Vec<&str> = taken.from_head.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["benches/a.rs", "benches/n*w.rs"],
            "unchanged files are not taken"
        );
        assert_eq!(taken.removed, ["benches/gone.rs"]);
        assert_eq!(taken.summary(), "2 files (1 new), 1 removed");

        let repository = Repository::discover(repo).unwrap();
        let dir = repository.checkout(Side::Base, &base).unwrap();
        taken.apply(&Git::discover(&dir), &head).unwrap();
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).ok();
        assert_eq!(read("benches/a.rs").as_deref(), Some("2\n"));
        assert_eq!(read("benches/n*w.rs").as_deref(), Some("new\n"));
        assert_eq!(read("benches/gone.rs"), None);
        assert_eq!(
            read("src/lib.rs").as_deref(),
            Some("lib1\n"),
            "the library stays base's"
        );

        // The next job's checkout puts the base back as it was, new files removed.
        repository.checkout(Side::Base, &base).unwrap();
        assert_eq!(read("benches/a.rs").as_deref(), Some("1\n"));
        assert_eq!(read("benches/n*w.rs"), None);
        assert_eq!(read("benches/gone.rs").as_deref(), Some("old\n"));
        assert_eq!(sh(&dir, "git status --porcelain"), "");

        let none = HeadBenchmarks::plan(&Git::discover(repo), &base, &head, &PathGlobs::default())
            .unwrap();
        assert!(none.is_empty() && none.key().is_empty());
        let same = HeadBenchmarks::plan(&Git::discover(repo), &head, &head, &globs).unwrap();
        assert!(same.is_empty(), "{same:?}");
    }
}

//! git as benchgate runs it: never a program a repository or a checked-out tree names. Every
//! call turns off hooks and fsmonitor, ignores the `GIT_*` variables it inherited, and reads
//! its output into bounded buffers, so a tree that PR code wrote (a `.git` replaced by a
//! directory with hooks, alternates or a config of its own) cannot make git run anything or
//! grow the caller's memory. The agent also names the git dir, work tree and index of each
//! call ([`Git::bare`], [`Git::work_tree`]): it never looks for a repository inside a tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::capture::{Capture, Keep, drain};

/// The most of git's standard output kept: a file listing of a large repository fits.
const STDOUT_CAP: usize = 64 << 20;
/// The most of git's standard error kept, from its end.
const STDERR_CAP: usize = 16 << 10;

/// Settings given on every call, ahead of anything a config file says. `core.hooksPath` at
/// `/dev/null` finds no hook; `core.fsmonitor` would run a program; alternates, submodules and
/// file transport are not followed into other repositories.
const HARDENED: [&str; 10] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.sshCommand=false",
    "-c",
    "protocol.file.allow=user",
    "-c",
    "submodule.recurse=false",
];

/// Variables that would point git at another repository, index or object store than the one
/// the call names.
const INHERITED: [&str; 9] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
];

/// A git command that failed, could not start, or printed more than the caller keeps.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("`git {args}` failed: {stderr}")]
    Failed { args: String, stderr: String },
    #[error("`git {args}` printed {printed}, more than the {kept} kept")]
    TooLong {
        args: String,
        printed: String,
        kept: String,
    },
}

/// Where one git call looks: a git dir named outright, or the repository around a directory
/// (only for a user's own checkout, `benchgate compare`).
#[derive(Debug, Clone)]
pub struct Git {
    cwd: PathBuf,
    git_dir: Option<PathBuf>,
    work_tree: Option<PathBuf>,
    index: Option<PathBuf>,
    literal_pathspecs: bool,
}

impl Git {
    /// The repository containing `dir`, found as git finds it: for a user's own repository.
    pub fn discover(dir: &Path) -> Self {
        Git {
            cwd: dir.to_path_buf(),
            git_dir: None,
            work_tree: None,
            index: None,
            literal_pathspecs: false,
        }
    }

    /// The repository whose git dir is `git_dir` (a bare mirror), and nothing else.
    pub fn bare(git_dir: &Path) -> Self {
        Git {
            cwd: git_dir.to_path_buf(),
            git_dir: Some(git_dir.to_path_buf()),
            ..Git::discover(git_dir)
        }
    }

    /// The same repository writing files into `tree` and recording them in `index`: both
    /// named, so nothing inside `tree` (a `.git` of its own) is ever read.
    pub fn work_tree(mut self, tree: &Path, index: &Path) -> Self {
        self.work_tree = Some(tree.to_path_buf());
        self.index = Some(index.to_path_buf());
        self
    }

    /// Pathspecs taken literally: a file named `*.rs` is that file.
    pub fn literal_pathspecs(mut self) -> Self {
        self.literal_pathspecs = true;
        self
    }

    /// Runs `git ARGS` and returns its standard output, trimmed.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        self.output(args).map(|out| out.trim().to_owned())
    }

    /// Runs `git ARGS` and returns its standard output as it is (a path may end in a space).
    pub fn output(&self, args: &[&str]) -> Result<String, GitError> {
        let mut cmd = Command::new("git");
        cmd.args(HARDENED);
        if let Some(dir) = &self.git_dir {
            cmd.arg("--git-dir").arg(dir);
        }
        if let Some(tree) = &self.work_tree {
            cmd.arg("--work-tree").arg(tree);
        }
        cmd.args(args).current_dir(&self.cwd);
        for name in INHERITED {
            cmd.env_remove(name);
        }
        if let Some(index) = &self.index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if self.literal_pathspecs {
            cmd.env("GIT_LITERAL_PATHSPECS", "1");
        }
        // Never block on a prompt (the agent runs unattended) or take a lock it need not.
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let (out, err) = std::thread::scope(|scope| {
            let out =
                scope.spawn(|| stdout.map(|p| drain(p, Capture::new(STDOUT_CAP, Keep::Head))));
            let err =
                scope.spawn(|| stderr.map(|p| drain(p, Capture::new(STDERR_CAP, Keep::Tail))));
            (out.join(), err.join())
        });
        let status = child.wait().map_err(GitError::Spawn)?;
        let (out, err) = (
            out.ok().flatten().unwrap_or_default(),
            err.ok().flatten().unwrap_or_default(),
        );
        if !status.success() {
            return Err(GitError::Failed {
                args: args.join(" "),
                stderr: err.text().trim().to_owned(),
            });
        }
        if out.truncated() {
            return Err(GitError::TooLong {
                args: args.join(" "),
                printed: crate::disk::bytes(out.total),
                kept: crate::disk::bytes(STDOUT_CAP as u64),
            });
        }
        Ok(String::from_utf8_lossy(&out.bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worktree::tests::sh;

    /// A repository whose own hooks and fsmonitor leave a mark when git runs them.
    fn hooked_repo(dir: &Path) -> PathBuf {
        let repo = dir.join("repo");
        std::fs::create_dir(&repo).unwrap();
        let mark = dir.join("ran");
        sh(
            &repo,
            &format!(
                "git init -q && echo 1 > n && git add n && \
                 git -c user.name=t -c user.email=t@t commit -qm one && \
                 printf '#!/bin/sh\\necho hook >> {m}\\n' > .git/hooks/post-checkout && \
                 chmod +x .git/hooks/post-checkout && \
                 printf '#!/bin/sh\\necho fsmonitor >> {m}\\n' > .git/fsmon && chmod +x .git/fsmon && \
                 git config core.fsmonitor \"$PWD/.git/fsmon\"",
                m = mark.display()
            ),
        );
        repo
    }

    #[test]
    fn no_hook_or_fsmonitor_a_repository_names_is_run() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = hooked_repo(tmp.path());
        // The same checkout through plain git runs both: the repository is armed.
        sh(
            &repo,
            "git checkout -q --detach HEAD && git status --short >/dev/null",
        );
        assert!(
            tmp.path().join("ran").exists(),
            "the fixture's hook did not run"
        );
        std::fs::remove_file(tmp.path().join("ran")).unwrap();

        let git = Git::discover(&repo);
        git.run(&["checkout", "-q", "--detach", "HEAD"]).unwrap();
        git.run(&["status", "--short"]).unwrap();
        assert!(
            !tmp.path().join("ran").exists(),
            "git ran the repository's program"
        );
    }

    #[test]
    fn a_named_git_dir_never_reads_the_trees_own_git() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = hooked_repo(tmp.path());
        let mirror = tmp.path().join("mirror.git");
        sh(
            tmp.path(),
            &format!(
                "git clone -q --mirror {} {}",
                repo.display(),
                mirror.display()
            ),
        );
        let tree = tmp.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        // A tree that holds a `.git` of its own, as PR code could leave it.
        std::fs::create_dir(tree.join(".git")).unwrap();
        std::fs::write(tree.join(".git/HEAD"), "ref: refs/heads/evil\n").unwrap();
        let index = tmp.path().join("tree.index");
        let git = Git::bare(&mirror).work_tree(&tree, &index);
        let head = Git::bare(&mirror).run(&["rev-parse", "HEAD"]).unwrap();
        git.run(&["read-tree", "--reset", "-u", &head]).unwrap();
        assert_eq!(std::fs::read_to_string(tree.join("n")).unwrap(), "1\n");
        assert!(!tmp.path().join("ran").exists());
    }

    #[test]
    fn a_failing_command_says_what_it_ran() {
        let tmp = tempfile::tempdir().unwrap();
        let err = Git::discover(tmp.path())
            .run(&["no-such-command"])
            .unwrap_err();
        assert!(matches!(err, GitError::Failed { .. }), "{err}");
        assert!(err.to_string().contains("no-such-command"), "{err}");
    }
}

//! The demo's throwaway git repository: a base commit and a head commit whose benchmark runs
//! the built-in CPU-bound workload `factor` times longer.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use super::workload::Workload;

/// The repository and the two revisions to compare.
pub struct DemoRepo {
    pub path: PathBuf,
    pub base_sha: String,
    pub head_sha: String,
}

/// Creates the repository under `dir`: `bench.sh` runs `benchgate spin` with a count fixed in
/// each commit, so base and head differ only in how much work they do.
pub fn create(dir: &Path, workload: &Workload) -> anyhow::Result<DemoRepo> {
    let path = dir.join("repo");
    if path.exists() {
        std::fs::remove_dir_all(&path)
            .with_context(|| format!("removing the old demo repository {}", path.display()))?;
    }
    std::fs::create_dir_all(&path)
        .with_context(|| format!("creating the demo repository {}", path.display()))?;
    let exe = std::env::current_exe().context("locating the benchgate binary")?;

    git(&path, &["init", "--quiet", "--initial-branch=main"])?;
    write_bench(&path, &exe, workload.base_iterations)?;
    git(&path, &["add", "bench.sh"])?;
    git(
        &path,
        &["commit", "--quiet", "-m", "base: the workload as it is"],
    )?;
    let base_sha = git(&path, &["rev-parse", "HEAD"])?;
    write_bench(&path, &exe, workload.head_iterations)?;
    git(
        &path,
        &[
            "commit",
            "--quiet",
            "-am",
            "head: a change that does more work",
        ],
    )?;
    let head_sha = git(&path, &["rev-parse", "HEAD"])?;
    Ok(DemoRepo {
        path,
        base_sha,
        head_sha,
    })
}

fn write_bench(repo: &Path, exe: &Path, iterations: u64) -> anyhow::Result<()> {
    let script = format!(
        "#!/bin/sh\n# The benchmark: benchgate's built-in CPU-bound workload.\nexec '{}' spin --iterations {iterations}\n",
        exe.display()
    );
    std::fs::write(repo.join("bench.sh"), script).context("writing bench.sh")
}

/// Runs git in `repo` with a fixed identity (the machine may have none) and returns stdout.
fn git(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=benchgate demo",
            "-c",
            "user.email=demo@benchgate.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(repo)
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

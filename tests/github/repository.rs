//! The real git repository the fake GitHub answers commit questions from once a test serves one
//! ([`super::FakeGitHub::serve_repository`]): which shas exist, and `compare/{base}...{head}`
//! shaped like GitHub's recorded answer (tests/fixtures/github/rest/compare-commits.ahead.200.json).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::fixture;

/// What GitHub lists for a comparison asked without `per_page` or `page`: the newest 250.
pub(super) const UNPAGED_COMMITS: usize = 250;

/// Most files GitHub lists for a pull request.
pub(super) const MAX_PULL_FILES: usize = 3000;

/// The files of a pull request whose base branch is at `base`: from the merge base to `head`,
/// as GitHub's "Files changed" lists them; `None` when either is unknown.
pub(super) fn pull_files(repo: &Path, base: &str, head: &str) -> Option<Vec<Value>> {
    let merge_base = git(repo, &["merge-base", base, head])?;
    Some(files(repo, merge_base.trim(), head))
}

/// A comparison of two commits of the repository.
pub(super) struct Comparison {
    /// The top-level fields of GitHub's answer except `commits`.
    pub(super) head: Value,
    /// Every commit reachable from head and not from base, oldest first, as GitHub lists one.
    pub(super) commits: Vec<Value>,
}

/// `git` in `repo`; `None` when it fails (an unknown sha, no merge base).
fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("run git");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The full sha `name` names as GitHub reads a compare's base or head: a (short) sha, a branch
/// or a tag; not git's revision syntax (`HEAD~1`, `main@{1}`).
pub(super) fn resolve(repo: &Path, name: &str) -> Option<String> {
    let is_sha = (4..=40).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_hexdigit());
    let candidates = if is_sha {
        vec![format!("{name}^{{commit}}")]
    } else {
        vec![
            format!("refs/heads/{name}^{{commit}}"),
            format!("refs/tags/{name}^{{commit}}"),
        ]
    };
    candidates.iter().find_map(|c| {
        git(repo, &["rev-parse", "--verify", "--quiet", c]).map(|s| s.trim().to_owned())
    })
}

/// Whether `sha` (full) is a commit of the repository.
pub(super) fn has_commit(repo: &Path, sha: &str) -> bool {
    sha.len() == 40 && resolve(repo, sha).is_some_and(|full| full == sha)
}

/// `base...head` compared, or GitHub's 404 message when either is unknown or they share no
/// history.
pub(super) fn compare(
    repo: &Path,
    api: &str,
    full_name: &str,
    base_name: &str,
    head_name: &str,
) -> Result<Comparison, String> {
    let (Some(base), Some(head)) = (resolve(repo, base_name), resolve(repo, head_name)) else {
        return Err("Not Found".into());
    };
    let merge_base = git(repo, &["merge-base", &base, &head])
        .map(|s| s.trim().to_owned())
        .ok_or_else(|| format!("No common ancestor between {base_name} and {head_name}."))?;
    let counts = git(
        repo,
        &[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{base}...{head}"),
        ],
    )
    .expect("count commits");
    let (behind, ahead) = counts
        .trim()
        .split_once('\t')
        .map(|(b, a)| (b.parse::<u64>().unwrap(), a.parse::<u64>().unwrap()))
        .expect("left and right counts");
    let status = match (ahead, behind) {
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    let listed = git(
        repo,
        &[
            "rev-list",
            "--reverse",
            "--topo-order",
            &format!("{base}..{head}"),
        ],
    )
    .expect("list commits");
    let shas: Vec<&str> = listed.lines().collect();
    let commits = commits_json(repo, api, full_name, &shas);
    let template = fixture("rest/compare-commits.ahead.200.json");
    let web = format!("https://github.com/{full_name}");
    let mut head_fields = template;
    head_fields["url"] = json!(format!(
        "{api}/repos/{full_name}/compare/{base_name}...{head_name}"
    ));
    head_fields["html_url"] = json!(format!("{web}/compare/{base_name}...{head_name}"));
    head_fields["permalink_url"] = json!(format!("{web}/compare/{base}...{head}"));
    head_fields["diff_url"] = json!(format!("{web}/compare/{base_name}...{head_name}.diff"));
    head_fields["patch_url"] = json!(format!("{web}/compare/{base_name}...{head_name}.patch"));
    let base_commit = commits_json(repo, api, full_name, &[&base]).remove(0);
    head_fields["merge_base_commit"] = if merge_base == base {
        base_commit.clone()
    } else {
        commits_json(repo, api, full_name, &[&merge_base]).remove(0)
    };
    head_fields["base_commit"] = base_commit;
    head_fields["status"] = json!(status);
    head_fields["ahead_by"] = json!(ahead);
    head_fields["behind_by"] = json!(behind);
    head_fields["total_commits"] = json!(ahead);
    head_fields["files"] = json!(files(repo, &merge_base, &head));
    head_fields.as_object_mut().unwrap().remove("commits");
    Ok(Comparison {
        head: head_fields,
        commits,
    })
}

/// Commits as GitHub lists them, from the recorded one: sha, tree, message, people and parents
/// from git (one `git show` for all). `author` and `committer` (GitHub accounts) are null, as
/// GitHub answers for an email no account owns.
fn commits_json(repo: &Path, api: &str, full_name: &str, shas: &[&str]) -> Vec<Value> {
    if shas.is_empty() {
        return Vec::new();
    }
    let format =
        "--format=tformat:%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B%x1e";
    let mut args = vec!["show", "-s", "--no-color", format];
    args.extend_from_slice(shas);
    let shown = git(repo, &args).expect("show commits");
    let template = fixture("rest/compare-commits.ahead.200.json")["commits"][0].clone();
    let web = format!("https://github.com/{full_name}");
    let commit_url = |sha: &str| format!("{api}/repos/{full_name}/commits/{sha}");
    shown
        .split('\x1e')
        .map(|entry| entry.trim_start_matches('\n'))
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let f: Vec<&str> = entry.splitn(10, '\0').collect();
            let mut c = template.clone();
            c["sha"] = json!(f[0]);
            c["url"] = json!(commit_url(f[0]));
            c["html_url"] = json!(format!("{web}/commit/{}", f[0]));
            c["comments_url"] = json!(format!("{}/comments", commit_url(f[0])));
            c["commit"]["url"] = json!(format!("{api}/repos/{full_name}/git/commits/{}", f[0]));
            c["commit"]["tree"] = json!({
                "sha": f[1],
                "url": format!("{api}/repos/{full_name}/git/trees/{}", f[1]),
            });
            c["commit"]["author"] = json!({"name": f[3], "email": f[4], "date": f[5]});
            c["commit"]["committer"] = json!({"name": f[6], "email": f[7], "date": f[8]});
            // GitHub's message is git's without the newline git ends it with.
            c["commit"]["message"] = json!(f[9].trim_end_matches('\n'));
            c["author"] = Value::Null;
            c["committer"] = Value::Null;
            c["parents"] = json!(
                f[2].split_whitespace()
                    .map(|p| json!({"sha": p, "url": commit_url(p), "html_url": format!("{web}/commit/{p}")}))
                    .collect::<Vec<_>>()
            );
            c
        })
        .collect()
}

/// The files changed from the merge base to head: name, status and line counts as GitHub lists
/// them. `patch` and the blob links are left out: benchgate reads none of them.
fn files(repo: &Path, merge_base: &str, head: &str) -> Vec<Value> {
    let statuses = git(repo, &["diff", "--name-status", "-M", merge_base, head]).expect("diff");
    let counts = git(repo, &["diff", "--numstat", "-M", merge_base, head]).expect("numstat");
    statuses
        .lines()
        .zip(counts.lines())
        .map(|(status_line, count_line)| {
            let parts: Vec<&str> = status_line.split('\t').collect();
            let (status, filename, previous) = match parts[0].chars().next() {
                Some('A') => ("added", parts[1], None),
                Some('D') => ("removed", parts[1], None),
                Some('R') => ("renamed", parts[2], Some(parts[1])),
                _ => ("modified", parts[1], None),
            };
            // Binary files count `-`, which GitHub lists as 0 lines.
            let n = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
            let mut numbers = count_line.split('\t');
            let (additions, deletions) = (n(numbers.next()), n(numbers.next()));
            let mut file = json!({
                "filename": filename,
                "status": status,
                "additions": additions,
                "deletions": deletions,
                "changes": additions + deletions,
            });
            if let Some(previous) = previous {
                file["previous_filename"] = json!(previous);
            }
            file
        })
        .collect()
}

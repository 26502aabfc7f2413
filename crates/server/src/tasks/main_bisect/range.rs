//! The range a culprit search runs over: the first-parent chain from the bad commit back to the
//! good one, as the forge's compare lists it, each commit with the change its message names.

use benchgate_github::client::ComparedCommit;
use benchgate_stats::words::short_sha;
use benchgate_store::model::{Bisection, RangeCommit};

use super::super::{Context, TaskError};
use crate::forge::ForgeRepo;

/// The range's commits from the forge, good first: the first-parent chain from the bad commit back
/// to the good one. `Err` says why the range cannot be searched.
pub(super) async fn read_range(
    cx: &Context,
    search: &Bisection,
) -> Result<Result<Vec<RangeCommit>, String>, TaskError> {
    let repository = cx
        .store
        .repository(search.series.repository_id)
        .await?
        .ok_or_else(|| TaskError::Permanent("repository of a culprit search".into()))?;
    let forge = cx.forge(&super::super::RepoName::of(&repository))?;
    match forge
        .compare_commits(&search.good_sha, &search.bad_sha)
        .await
    {
        Ok(listed) => {
            let mut range = first_parent_range(&listed, &search.good_sha, &search.bad_sha);
            // Reports name a change `#N`, which on GitLab is an issue: there a commit is named
            // by its sha and title ("Merge branch 'x' into 'main'") alone.
            if repository.forge == benchgate_store::model::Forge::GitLab
                && let Ok(commits) = &mut range
            {
                commits.iter_mut().for_each(|c| c.pr = None);
            }
            Ok(range)
        }
        Err(e) if ForgeRepo::is_not_found(&e) => Ok(Err(format!(
            "{} does not know {} or {} in {}",
            match repository.forge {
                benchgate_store::model::Forge::GitHub => "GitHub",
                benchgate_store::model::Forge::GitLab => "GitLab",
            },
            short_sha(&search.good_sha),
            short_sha(&search.bad_sha),
            repository.full_name
        ))),
        Err(e) => Err(e.into()),
    }
}

/// The first-parent chain from `bad` back to `good` among the commits GitHub listed, good
/// first, each with the PR its message names.
pub fn first_parent_range(
    listed: &[ComparedCommit],
    good: &str,
    bad: &str,
) -> Result<Vec<RangeCommit>, String> {
    let by_sha = |sha: &str| listed.iter().find(|c| c.sha == sha);
    let mut chain = Vec::new();
    let mut at = bad;
    while at != good {
        let Some(commit) = by_sha(at) else {
            return Err(if chain.is_empty() {
                format!(
                    "{} is not after {} on the branch",
                    short_sha(bad),
                    short_sha(good)
                )
            } else {
                format!(
                    "{} is not a first-parent ancestor of {} within {} commits",
                    short_sha(good),
                    short_sha(bad),
                    listed.len()
                )
            });
        };
        chain.push(RangeCommit {
            sha: commit.sha.clone(),
            pr: super::super::merged_pr(&commit.message),
            title: commit.message.lines().next().unwrap_or_default().to_owned(),
        });
        let Some(parent) = commit.parents.first() else {
            return Err(format!(
                "{} has no parent before {}",
                short_sha(at),
                short_sha(good)
            ));
        };
        at = parent;
    }
    if chain.is_empty() {
        return Err("the good and the bad commit are the same".into());
    }
    chain.push(RangeCommit {
        sha: good.to_owned(),
        pr: None,
        title: String::new(),
    });
    chain.reverse();
    Ok(chain)
}

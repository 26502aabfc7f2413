//! Replies to mistaken commands: only someone allowed to run commands gets one, so a stranger
//! cannot make the App post their text, and the reply quotes the commenter's text so it stays
//! text (a backtick in it cannot end the code span and leave a live mention or link).

use super::{eventually, nothing_refused, repo_config, setup};

/// A command with a backtick in its argument: quoted in single backticks, the mention and the
/// link after it would be live in a comment the App signs.
const MISTAKEN: &str = "/rebench 1 x` @evil [click](http://phish.example) `";

#[tokio::test]
async fn a_strangers_mistaken_command_gets_no_reply_and_a_maintainers_is_quoted_safely() {
    let s = setup(Some(&repo_config(8)), None).await;
    s.github
        .set_permission("stranger", "collaborator-permission.read.200.json");
    s.github
        .set_permission("maintainer", "collaborator-permission.maintain.200.json");
    let c = s.comment(MISTAKEN, "stranger", "NONE", 9101);
    assert_eq!(s.deliver("issue_comment", "d-stranger", &c).await.0, 202);
    let c = s.comment(MISTAKEN, "maintainer", "MEMBER", 9102);
    assert_eq!(s.deliver("issue_comment", "d-maintainer", &c).await.0, 202);
    eventually(&s.github, "the reply to the maintainer", 60, || {
        s.github
            .comments()
            .iter()
            .any(|c| c.body.contains("<!-- benchgate:reply-9102 -->"))
    })
    .await;
    s.outbox_drained().await;

    let comments = s.github.comments();
    assert!(
        !comments.iter().any(|c| c.body.contains("reply-9101")),
        "the stranger got a reply: {comments:#?}"
    );
    let reply = comments
        .iter()
        .find(|c| c.body.contains("reply-9102"))
        .unwrap();
    assert!(
        reply.body.contains(
            "@maintainer line 1: `/rebench` does not take \
             `` 1 x` @evil [click](http://phish.example) ` ``; valid: "
        ),
        "{}",
        reply.body
    );
    nothing_refused(&s.github);
}

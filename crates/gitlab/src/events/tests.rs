//! Parsing real GitLab bodies (tests/fixtures, provenance in PROVENANCE.tsv) and the ways a
//! delivery is refused or ignored.

use serde_json::Value;

use super::*;

const MR_OPEN: &str = include_str!("../../tests/fixtures/merge_request_open.json");
const MR_UPDATE: &str = include_str!("../../tests/fixtures/merge_request_update_commits.json");
const NOTE: &str = include_str!("../../tests/fixtures/note_merge_request.json");
const PUSH: &str = include_str!("../../tests/fixtures/push.json");
const PIPELINE: &str = include_str!("../../tests/fixtures/pipeline_merge_request.json");

fn value(body: &str) -> Value {
    serde_json::from_str(body).unwrap()
}

/// `body` with the JSON pointer `at` set to `to`.
fn edited(body: &str, at: &str, to: Value) -> Vec<u8> {
    let mut v = value(body);
    *v.pointer_mut(at)
        .unwrap_or_else(|| panic!("{at} in the fixture")) = to;
    serde_json::to_vec(&v).unwrap()
}

fn parse(event: &str, body: &[u8]) -> GitlabEvent {
    parse_event(event, body).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_opened_merge_request_is_read_from_gitlabs_body() {
    let v = value(MR_OPEN);
    let GitlabEvent::MergeRequest(mr) = parse("Merge Request Hook", MR_OPEN.as_bytes()) else {
        panic!("not a merge request event");
    };
    assert_eq!(mr.action, MergeRequestAction::Open);
    assert_eq!(mr.project.id, v["project"]["id"].as_u64().unwrap());
    assert_eq!(
        mr.project.path,
        v["project"]["path_with_namespace"].as_str().unwrap()
    );
    assert_eq!(mr.iid, v["object_attributes"]["iid"].as_u64().unwrap());
    assert_eq!(
        mr.head_sha,
        v["object_attributes"]["last_commit"]["id"]
            .as_str()
            .unwrap()
    );
    assert_eq!(mr.user.id, v["user"]["id"].as_u64().unwrap());
    assert!(!mr.new_commits(), "an open is not an update");
}

#[test]
fn an_update_with_oldrev_pushed_commits_and_one_without_did_not() {
    let GitlabEvent::MergeRequest(mr) = parse("Merge Request Hook", MR_UPDATE.as_bytes()) else {
        panic!("not a merge request event");
    };
    assert_eq!(mr.action, MergeRequestAction::Update);
    assert!(mr.oldrev.is_some() && mr.new_commits(), "{mr:?}");
    assert_ne!(mr.oldrev.as_deref(), Some(mr.head_sha.as_str()));

    let mut v = value(MR_UPDATE);
    v["object_attributes"]
        .as_object_mut()
        .unwrap()
        .remove("oldrev");
    let GitlabEvent::MergeRequest(edit) =
        parse("Merge Request Hook", &serde_json::to_vec(&v).unwrap())
    else {
        panic!("not a merge request event");
    };
    assert!(!edit.new_commits(), "a title edit runs nothing");
}

#[test]
fn merge_close_and_reopen_are_read_and_approvals_are_ignored() {
    for (body, want) in [
        (
            include_str!("../../tests/fixtures/merge_request_merge.json"),
            MergeRequestAction::Merge,
        ),
        (
            include_str!("../../tests/fixtures/merge_request_close.json"),
            MergeRequestAction::Close,
        ),
        (
            include_str!("../../tests/fixtures/merge_request_reopen.json"),
            MergeRequestAction::Reopen,
        ),
    ] {
        let GitlabEvent::MergeRequest(mr) = parse("Merge Request Hook", body.as_bytes()) else {
            panic!("{want:?}");
        };
        assert_eq!(mr.action, want);
        assert_eq!(
            mr.iid,
            value(body)["object_attributes"]["iid"].as_u64().unwrap()
        );
    }
    let approved = edited(MR_OPEN, "/object_attributes/action", "approved".into());
    assert!(matches!(
        parse("Merge Request Hook", &approved),
        GitlabEvent::Ignored(i) if i.why.contains("action")
    ));
}

#[test]
fn a_note_on_a_merge_request_carries_its_author_and_the_merge_requests_head() {
    let v = value(NOTE);
    let GitlabEvent::MrNote(note) = parse("Note Hook", NOTE.as_bytes()) else {
        panic!("not a merge request note");
    };
    assert_eq!(note.body, v["object_attributes"]["note"].as_str().unwrap());
    assert_eq!(note.author.id, v["user"]["id"].as_u64().unwrap());
    assert_eq!(note.mr_iid, v["merge_request"]["iid"].as_u64().unwrap());
    assert_eq!(
        note.head_sha,
        v["merge_request"]["last_commit"]["id"].as_str().unwrap()
    );
    assert_eq!(note.note_id, v["object_attributes"]["id"].as_u64().unwrap());

    let on_issue = edited(NOTE, "/object_attributes/noteable_type", "Issue".into());
    assert!(matches!(
        parse("Note Hook", &on_issue),
        GitlabEvent::Ignored(i) if i.why.contains("other than a merge request")
    ));
    let mut edit = value(NOTE);
    edit["object_attributes"]["action"] = "update".into();
    assert!(matches!(
        parse("Note Hook", &serde_json::to_vec(&edit).unwrap()),
        GitlabEvent::Ignored(i) if i.why.contains("edited note")
    ));
}

#[test]
fn a_push_names_its_branch_and_commits_and_a_deleted_branch_is_ignored() {
    let v = value(PUSH);
    let GitlabEvent::Push(push) = parse("Push Hook", PUSH.as_bytes()) else {
        panic!("not a push");
    };
    let git_ref = v["ref"].as_str().unwrap();
    assert_eq!(
        Some(push.branch.as_str()),
        git_ref.strip_prefix("refs/heads/")
    );
    assert_eq!(push.after, v["after"].as_str().unwrap());
    assert_eq!(push.commits.len(), v["commits"].as_array().unwrap().len());
    assert!(push.total_commits >= push.commits.len() as u64);

    let zeros = "0000000000000000000000000000000000000000";
    let created = edited(PUSH, "/before", zeros.into());
    let GitlabEvent::Push(created) = parse("Push Hook", &created) else {
        panic!("not a push");
    };
    assert_eq!(created.before, None, "a new branch has no commit before");
    let deleted = edited(PUSH, "/after", zeros.into());
    assert!(matches!(
        parse("Push Hook", &deleted),
        GitlabEvent::Ignored(i) if i.why == "a deleted branch"
    ));
    let default = edited(PUSH, "/project/default_branch", push.branch.clone().into());
    let GitlabEvent::Push(on_default) = parse("Push Hook", &default) else {
        panic!("not a push");
    };
    assert!(on_default.is_default_branch());
    let other = edited(PUSH, "/project/default_branch", "not-this-one".into());
    let GitlabEvent::Push(elsewhere) = parse("Push Hook", &other) else {
        panic!("not a push");
    };
    assert!(!elsewhere.is_default_branch());
}

#[test]
fn a_merge_request_pipeline_names_its_merge_request() {
    let v = value(PIPELINE);
    let GitlabEvent::Pipeline(p) = parse("Pipeline Hook", PIPELINE.as_bytes()) else {
        panic!("not a pipeline");
    };
    assert_eq!(
        p.pipeline_id,
        v["object_attributes"]["id"].as_u64().unwrap()
    );
    assert_eq!(p.sha, v["object_attributes"]["sha"].as_str().unwrap());
    assert_eq!(p.mr_iid, v["merge_request"]["iid"].as_u64());
}

#[test]
fn a_body_of_another_hook_than_its_header_is_refused_and_unknown_hooks_are_ignored() {
    let err = parse_event("Merge Request Hook", NOTE.as_bytes()).unwrap_err();
    assert_eq!(err.path, "object_kind");
    assert!(err.message.contains("`note`"), "{err}");
    assert!(matches!(
        parse("Tag Push Hook", PUSH.as_bytes()),
        GitlabEvent::Ignored(_)
    ));
    assert!(matches!(
        parse("Issue Hook", b"not even json"),
        GitlabEvent::Ignored(_)
    ));
}

#[test]
fn a_missing_field_names_its_path() {
    let mut v = value(MR_OPEN);
    v["object_attributes"]
        .as_object_mut()
        .unwrap()
        .remove("last_commit");
    let err = parse_event("Merge Request Hook", &serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert_eq!(err.path, "object_attributes");
    assert!(err.message.contains("last_commit"), "{err}");
    let mut trailing = PUSH.as_bytes().to_vec();
    trailing.extend_from_slice(b"{}");
    let err = parse_event("Push Hook", &trailing).unwrap_err();
    assert_eq!(
        err.path, ".",
        "bytes after the JSON value are malformed too: {err}"
    );
    let err = parse_event("Push Hook", b"{\"object_kind\": \"push\", ").unwrap_err();
    assert_eq!(err.line, 1);
    assert!(!err.message.contains(" at line "), "{err}");
}

#[test]
fn a_delivery_is_verified_before_its_body_is_read() {
    let tokens = HookTokens::new(["s3cret"]);
    let headers = Headers {
        event: Some("Push Hook"),
        token: Some("wrong"),
        uuid: Some("4f2C5b34-0c9e-4a4e-9b1a-3f0d9e1c2b7a"),
        instance: Some("https://gitlab.example"),
    };
    assert_eq!(
        parse_delivery(&tokens, headers, b"garbage"),
        Err(DeliveryError::Token(TokenError::Mismatch))
    );
    let good = Headers {
        token: Some("s3cret"),
        ..headers
    };
    let delivery = parse_delivery(&tokens, good, PUSH.as_bytes()).unwrap();
    assert_eq!(
        delivery.uuid.as_deref(),
        Some("4f2c5b34-0c9e-4a4e-9b1a-3f0d9e1c2b7a")
    );
    assert_eq!(delivery.instance.as_deref(), Some("https://gitlab.example"));
    assert!(matches!(delivery.event, GitlabEvent::Push(_)));
    let bad_uuid = Headers {
        uuid: Some("'; drop table deliveries; --"),
        ..good
    };
    assert!(matches!(
        parse_delivery(&tokens, bad_uuid, PUSH.as_bytes()),
        Err(DeliveryError::BadUuid(_))
    ));
    let no_event = Headers {
        event: None,
        ..good
    };
    assert_eq!(
        parse_delivery(&tokens, no_event, PUSH.as_bytes()),
        Err(DeliveryError::NoEvent)
    );
}

#[test]
fn a_status_check_request_names_the_merge_request_its_head_and_the_check() {
    const BODY: &str = include_str!("../../tests/fixtures/status_check_request.json");
    let r = parse_status_check(BODY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.iid, 4);
    assert_eq!(r.head_sha, "141be9714669a4c1ccaa013c6a7f3e462ff2a40f");
    assert_eq!(r.check, Some((1, "QA".to_owned())));
    assert_eq!(
        r.project.full_name().as_deref(),
        Some("example.com/flightjs/Flight")
    );
    // The merge request hook's parser ignores it: it carries no action.
    assert!(matches!(
        parse("Merge Request Hook", BODY.as_bytes()),
        GitlabEvent::Ignored(_)
    ));
    let note = parse_status_check(NOTE.as_bytes()).unwrap_err();
    assert!(
        note.to_string()
            .contains("`note` where a status check carries `merge_request`"),
        "{note}"
    );
    let headless = edited(BODY, "/object_attributes/last_commit", Value::Null);
    assert!(parse_status_check(&headless).is_err());
}

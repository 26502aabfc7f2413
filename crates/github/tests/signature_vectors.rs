//! The published HMAC vectors (GitHub's docs and octokit's tests) in
//! tests/fixtures/signatures/hmac-vectors.json.

use benchgate_github::signature::{SignatureError, WebhookSecrets, sign_with};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    vectors: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    name: String,
    secret: String,
    payload: String,
    x_hub_signature_256: String,
}

fn vectors() -> Vec<Vector> {
    let text = include_str!("fixtures/signatures/hmac-vectors.json");
    serde_json::from_str::<Vectors>(text).unwrap().vectors
}

#[test]
fn published_vectors_verify() {
    let vectors = vectors();
    assert!(vectors.len() >= 2);
    for v in &vectors {
        let secrets = WebhookSecrets::new([&v.secret]).unwrap();
        assert_eq!(
            secrets.verify(Some(&v.x_hub_signature_256), v.payload.as_bytes()),
            Ok(()),
            "{}",
            v.name
        );
        assert_eq!(
            sign_with(v.secret.as_bytes(), v.payload.as_bytes()),
            v.x_hub_signature_256,
            "{}",
            v.name
        );
    }
}

#[test]
fn a_vector_under_the_other_vectors_secret_is_refused() {
    let vectors = vectors();
    let (a, b) = (&vectors[0], &vectors[1]);
    let secrets = WebhookSecrets::new([&b.secret]).unwrap();
    assert_eq!(
        secrets.verify(Some(&a.x_hub_signature_256), a.payload.as_bytes()),
        Err(SignatureError::Mismatch)
    );
    // Both accepted while rotating from one to the other.
    let rotating = WebhookSecrets::new([&b.secret, &a.secret]).unwrap();
    for v in &vectors {
        assert_eq!(
            rotating.verify(Some(&v.x_hub_signature_256), v.payload.as_bytes()),
            Ok(()),
            "{}",
            v.name
        );
    }
}

#[test]
fn the_legacy_sha1_header_value_is_not_accepted() {
    let secrets = WebhookSecrets::new(["mysecret"]).unwrap();
    assert_eq!(
        secrets.verify(
            Some("sha1=d03207e4b030cf234e3447bac4d93add4c6643d8"),
            br#"{"foo":"bar"}"#
        ),
        Err(SignatureError::WrongPrefix)
    );
}

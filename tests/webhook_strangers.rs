//! What a stranger can do to `/webhooks/github` before any signature is checked, against the
//! real binary: clients that claim large bodies and send nothing (slowloris) must not keep a
//! signed delivery out, and must be cut off once their bodies are overdue.

use std::time::Duration;

use crate::faults::unread_bytes;
use crate::github::fixture_path;
use crate::support::{http, spawn_server, wait_until};
use benchgate_github::signature::sign_with;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SECRET: &str = "strangers-secret";

/// Sixteen strangers, each claiming a body GitHub could send: 26,213,000 bytes, a 25,600 KiB
/// share of the budget, so that had the claims been charged any four of them would have left
/// no room at all in the 100 MiB budget.
const STRANGERS: usize = 16;
const CLAIMED: usize = 26_213_000;
const BUDGET_MIB: &str = "100";

/// Strangers' connections send a POST's headers claiming large bodies and then nothing. A
/// correctly signed real delivery sent while they wait is accepted (202): the budget is charged
/// for bytes received, not claimed. Each stranger is then answered 408 and closed once its
/// body is overdue (the request timeout is set far beyond the body deadline, so only that cuts
/// them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_strangers_claiming_large_bodies_do_not_keep_a_signed_delivery_out() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(
        &url,
        &[
            ("BENCHGATE_WEBHOOK_SECRET", SECRET),
            ("BENCHGATE_REQUEST_TIMEOUT", "600"),
            ("BENCHGATE_WEBHOOK_MEMORY_MIB", BUDGET_MIB),
        ],
    );
    let mut strangers = Vec::new();
    for i in 0..STRANGERS {
        let mut stranger = TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\n\
             X-GitHub-Delivery: stranger-{i}\r\nX-Hub-Signature-256: sha256=00\r\n\
             Content-Type: application/json\r\nContent-Length: {CLAIMED}\r\n\r\n"
        );
        stranger.write_all(head.as_bytes()).await.unwrap();
        strangers.push(stranger);
    }
    // The server has read every stranger's headers: its handlers are waiting for the bodies.
    let ends: Vec<_> = strangers.iter().map(|s| s.local_addr().unwrap()).collect();
    wait_until(
        "the server to read the strangers' headers",
        Duration::from_secs(30),
        async || match ends.iter().map(|&c| unread_bytes(c, server.addr)).sum() {
            0 => Ok(()),
            unread => Err(format!("{unread} bytes unread")),
        },
    )
    .await;

    let body = std::fs::read(fixture_path("webhooks/pull_request.opened.json")).unwrap();
    let answer = http()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "pull_request")
        .header("X-GitHub-Delivery", "signed-1")
        .header("X-Hub-Signature-256", sign_with(SECRET.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let text = answer.text().await.unwrap();
    assert_eq!(status, 202, "{text}");

    for (i, stranger) in strangers.iter_mut().enumerate() {
        let mut answer = Vec::new();
        let read = stranger.read_to_end(&mut answer);
        tokio::time::timeout(Duration::from_secs(120), read)
            .await
            .unwrap_or_else(|_| panic!("stranger {i} is still connected"))
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "stranger {i}: {answer}");
    }
}

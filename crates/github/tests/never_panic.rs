//! Everything a GitHub delivery or a PR thread can put in front of benchgate's parsers —
//! webhook payloads, slash commands, `.benchgate.toml` — answers with a value or an error,
//! never a panic: arbitrary text, and real inputs (tests/fixtures) truncated and mangled.

use std::path::Path;

use benchgate_github::{parse_command, parse_event, parse_repo_config};
use proptest::prelude::*;

const EVENTS: [&str; 8] = [
    "pull_request",
    "push",
    "merge_group",
    "issue_comment",
    "check_run",
    "check_suite",
    "installation",
    "ping",
];

/// The real webhook payloads kept as fixtures, with the event each was delivered as.
fn payloads() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/webhooks"
    ));
    let mut out = Vec::new();
    for dir in [root.to_path_buf(), root.join("real")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let event = name.split('.').next().unwrap().to_owned();
                out.push((event, std::fs::read(&path).unwrap()));
            }
        }
    }
    assert!(out.len() >= 10, "the real payloads are there");
    out
}

const CONFIG: &str = r#"[benchmark]
build = "cargo build --release"
run = "./target/release/bench-suite"
format = "criterion"
rounds = 10
warmup = 1
runner = "linux-x86-quiet"
paths = ["benches/**"]

[gate]
fail_on = "regression"
min_effect = "1%"
"#;

/// `text` with bytes cut out and others replaced, positions chosen by the strategy.
fn mangle(text: &[u8], cut: (usize, usize), flips: &[(usize, u8)]) -> Vec<u8> {
    let mut out = text.to_vec();
    for &(at, byte) in flips {
        if !out.is_empty() {
            let i = at % out.len();
            out[i] = byte;
        }
    }
    let (a, b) = (cut.0 % (out.len() + 1), cut.1 % (out.len() + 1));
    out.drain(a.min(b)..a.max(b));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn webhook_payloads_never_panic(
        which in any::<prop::sample::Index>(),
        cut in (any::<usize>(), any::<usize>()),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        event in prop::sample::select(EVENTS.to_vec()),
    ) {
        let payloads = payloads();
        let (real_event, body) = which.get(&payloads);
        let mangled = mangle(body, cut, &flips);
        let _ = parse_event(real_event, &mangled);
        let _ = parse_event(event, &mangled);
    }

    #[test]
    fn arbitrary_bytes_as_a_webhook_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..512),
        event in prop::sample::select(EVENTS.to_vec()),
    ) {
        let _ = parse_event(event, &body);
    }

    #[test]
    fn comment_bodies_never_panic(body in "\\PC{0,200}", prefix in prop::sample::select(vec![
        "/rebench", "/rebench ", "/rebench aa", "/benchgate ", "/benchgate accept ", "", "> /rebench",
    ])) {
        let _ = parse_command(&format!("{prefix}{body}"));
        let _ = parse_command(&format!("{body}\n{prefix}{body}"));
    }

    #[test]
    fn configs_never_panic(
        cut in (any::<usize>(), any::<usize>()),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        noise in "\\PC{0,80}",
    ) {
        let mangled = String::from_utf8_lossy(&mangle(CONFIG.as_bytes(), cut, &flips)).into_owned();
        let _ = parse_repo_config(&mangled);
        let _ = parse_repo_config(&format!("{CONFIG}{noise}"));
        let _ = parse_repo_config(&noise);
    }
}

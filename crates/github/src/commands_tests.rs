//! Table-driven tests: each row is a comment body as a person would write it.

use super::*;

fn rebench(n: u32) -> Option<Command> {
    Some(Command::Rebench { rounds: Some(n) })
}

#[test]
fn comments_that_parse() {
    let same = Some(Command::Rebench { rounds: None });
    let table: &[(&str, Option<Command>)] = &[
        ("", None),
        ("LGTM, thanks!", None),
        ("/rebench", same.clone()),
        ("/rebench\r\n", same.clone()),
        ("   /rebench", same.clone()),
        ("/REBENCH", same.clone()),
        ("/rebench 10", rebench(10)),
        ("/rebench   1  ", rebench(1)),
        ("/rebench 200", rebench(200)),
        ("/rebench aa", Some(Command::RebenchAa)),
        ("/rebench AA", Some(Command::RebenchAa)),
        ("Looks noisy.\n\n/rebench 20\n\nThanks", rebench(20)),
        ("/benchgate help", Some(Command::Help)),
        (
            "/benchgate accept expected: we trade speed for safety here",
            Some(Command::Accept {
                reason: "expected: we trade speed for safety here".into(),
            }),
        ),
        // Not at the start of a line.
        ("please /rebench", None),
        ("try `/rebench 10` next time", None),
        ("`/rebench`", None),
        // Not our word.
        ("/rebenchmark", None),
        ("/benchgates help", None),
        ("/rerun", None),
        // Quoted lines are someone else's words.
        ("> /rebench 10", None),
        ("  > /rebench", None),
        ("> /rebench\n\n/rebench 5", rebench(5)),
        // Fenced code blocks, backticks and tildes, longer fences, unclosed fences.
        ("```\n/rebench\n```", None),
        ("```text\n/rebench 5\n```\n/rebench 6", rebench(6)),
        ("````\n```\n/rebench\n````", None),
        ("~~~\n/rebench\n~~~", None),
        ("```\n/rebench\n", None),
        ("```\n/rebench\n~~~\n/rebench 3", None),
        // Indented code.
        ("    /rebench", None),
        ("\t/rebench", None),
    ];
    for (body, want) in table {
        assert_eq!(parse_command(body).as_ref(), Ok(want), "body: {body:?}");
    }
}

#[test]
fn comments_that_are_refused_with_a_reason() {
    let table: &[(&str, &[&str])] = &[
        (
            "/rebench\n/rebench 5",
            &["one command per comment", "line 1", "line 2"],
        ),
        (
            "/rebench 5\n\n/benchgate help",
            &["`/rebench` on line 1", "`/benchgate` on line 3"],
        ),
        ("/rebench 0", &["between 1 and 200"]),
        ("/rebench 201", &["between 1 and 200"]),
        ("/rebench -3", &["between 1 and 200"]),
        ("/rebench 99999999999999999999", &["between 1 and 200"]),
        (
            "/rebench lots",
            &["does not take `lots`", "`/rebench N`", "`/rebench aa`"],
        ),
        ("/rebench 5 aa", &["does not take `5 aa`"]),
        ("/rebench 2.5", &["does not take `2.5`"]),
        ("/benchgate", &["`/benchgate help`"]),
        ("/benchgate help me", &["does not take `help me`"]),
        ("/benchgate rebench", &["does not take `rebench`"]),
        ("/benchgate accept", &["needs a reason"]),
        ("/benchgate accept   ", &["needs a reason"]),
        ("hi\n/rebench x", &["line 2"]),
    ];
    for (body, needles) in table {
        let err = parse_command(body).expect_err(body).to_string();
        for needle in *needles {
            assert!(
                err.contains(needle),
                "body {body:?}: {err:?} lacks {needle:?}"
            );
        }
    }
}

/// The commenter's text in a reply is one code span that nothing in it can end: a backtick
/// would otherwise leave the mention and the link after it live in a comment the App signs.
#[test]
fn the_text_a_reply_quotes_cannot_leave_its_code_span() {
    let table: &[(&str, &str)] = &[
        (
            "/rebench 1 x` @evil [click](http://phish.example) `",
            "`` 1 x` @evil [click](http://phish.example) ` ``",
        ),
        ("/benchgate x`@evil`", "`` x`@evil` ``"),
        (
            "/benchgate ```` [x](http://phish)",
            "````` ```` [x](http://phish) `````",
        ),
        (
            "/benchgate claim `x` @evil",
            "``/benchgate claim `x` @evil``",
        ),
    ];
    for (body, quoted) in table {
        let err = parse_command(body).expect_err(body).to_string();
        assert!(
            err.contains(quoted),
            "body {body:?}: {err:?} lacks {quoted:?}"
        );
    }
}

#[test]
fn the_error_for_a_second_command_wins_over_nothing() {
    // A wrong command after a valid one is still reported (not silently run as the first).
    assert!(parse_command("/rebench\n/rebench nope").is_err());
}

#[test]
fn usage_lists_every_command() {
    for word in [
        "/rebench`",
        "/rebench N",
        "/rebench aa",
        "/benchgate accept REASON",
        "/benchgate unaccept",
        "/benchgate profile [BENCHMARK]",
        "/benchgate help",
    ] {
        assert!(USAGE.contains(word), "{word}");
    }
}

#[test]
fn unaccept_takes_no_argument_and_a_reason_is_bounded() {
    assert_eq!(
        parse_command("/benchgate unaccept").unwrap(),
        Some(Command::Unaccept)
    );
    assert!(parse_command("/benchgate unaccept now").is_err());
    let long = format!("/benchgate accept {}", "x".repeat(REASON_CHARS + 1));
    let err = parse_command(&long).unwrap_err().to_string();
    assert!(err.contains("keep it to 300"), "{err}");
}

#[test]
fn profile_takes_at_most_one_benchmark() {
    assert_eq!(
        parse_command("/benchgate profile").unwrap(),
        Some(Command::Profile { benchmark: None })
    );
    assert_eq!(
        parse_command("/benchgate profile parse/large").unwrap(),
        Some(Command::Profile {
            benchmark: Some("parse/large".into())
        })
    );
    let err = parse_command("/benchgate profile a b")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`/benchgate profile [BENCHMARK]`"), "{err}");
}

#[test]
fn a_claim_is_one_benchmark_and_one_change() {
    let claim = |line: &str| Some(Command::Claim { line: line.into() });
    assert_eq!(
        parse_command("/benchgate claim parse -20%").unwrap(),
        claim("/benchgate claim parse -20%")
    );
    // The word's case and spacing are the writer's; the line is stored as the command reads it.
    assert_eq!(
        parse_command("Measured on my laptop:\n/Benchgate CLAIM   parse/large   2x faster")
            .unwrap(),
        claim("/benchgate claim parse/large   2x faster")
    );
    for (body, needle) in [
        ("/benchgate claim", "needs a benchmark and a change"),
        ("/benchgate claim parse", "needs a benchmark and a change"),
        ("/benchgate claim parse fast", "signed percent"),
        (
            "/benchgate claim parse -20%\n/benchgate claim emit -5%",
            "one command per comment",
        ),
    ] {
        let err = parse_command(body).expect_err(body).to_string();
        assert!(err.contains(needle), "{body:?}: {err}");
    }
    assert!(USAGE.contains("/benchgate claim BENCHMARK CHANGE"));
}

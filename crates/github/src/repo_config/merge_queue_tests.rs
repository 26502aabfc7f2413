//! `[merge_queue]`: defaults, every value form, and errors that say where and what is valid.

use benchgate_api::agent::{MergeQueueMode, MergeQueueSettings, NoAnswerConclusion};

use super::*;

fn with_table(table: &str) -> Result<RepoConfig, ConfigError> {
    parse_repo_config(&format!("[benchmark]\nrun = \"x\"\n[merge_queue]\n{table}"))
}

#[test]
fn a_file_without_the_table_gets_the_wire_defaults() {
    let c = parse_repo_config("[benchmark]\nrun = \"x\"\n").unwrap();
    assert_eq!(c.merge_queue, MergeQueueConfig::default());
    assert_eq!(c.merge_queue.to_wire(), MergeQueueSettings::default());
    assert_eq!(with_table("").unwrap().merge_queue, c.merge_queue);
    let wire = c.merge_queue.to_wire();
    assert_eq!(
        (wire.mode, wire.deadline_minutes, wire.on_deadline),
        (MergeQueueMode::Reuse, 45, NoAnswerConclusion::Neutral)
    );
}

#[test]
fn every_mode_and_conclusion_is_read() {
    for mode in [
        MergeQueueMode::Reuse,
        MergeQueueMode::Measure,
        MergeQueueMode::Skip,
    ] {
        for on_deadline in [NoAnswerConclusion::Neutral, NoAnswerConclusion::Failure] {
            let table = format!(
                "mode = \"{}\"\non_deadline = \"{}\"\n",
                mode.as_str(),
                on_deadline.as_str()
            );
            let wire = with_table(&table).unwrap().merge_queue.to_wire();
            assert_eq!(
                (wire.mode, wire.on_deadline),
                (mode, on_deadline),
                "{table}"
            );
            assert_eq!(wire.deadline_minutes, 45, "{table}");
        }
    }
}

#[test]
fn deadlines_are_minutes_hours_or_a_number_of_minutes() {
    let table: &[(&str, u32)] = &[
        ("\"45m\"", 45),
        ("\" 90 m \"", 90),
        ("\"2h\"", 120),
        ("\"6h\"", 360),
        ("\"5m\"", 5),
        ("30", 30),
        ("360", 360),
    ];
    for (written, minutes) in table {
        let c = with_table(&format!("deadline = {written}\n"))
            .unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(c.merge_queue.deadline.minutes(), *minutes, "{written}");
        assert_eq!(c.merge_queue.to_wire().deadline_minutes, *minutes);
    }
}

#[test]
fn bad_values_name_line_column_field_and_choices() {
    let table: &[(&str, &str)] = &[
        (
            "mode = \"fast\"\n",
            ".benchgate.toml:4:8: `merge_queue.mode`: unknown variant `fast`, expected one of `reuse`, `measure`, `skip`",
        ),
        (
            "on_deadline = \"success\"\n",
            ".benchgate.toml:4:15: `merge_queue.on_deadline`: unknown variant `success`, expected `neutral` or `failure`",
        ),
        (
            "deadline = \"4m\"\n",
            ".benchgate.toml:4:12: `merge_queue.deadline`: deadline must be between 5 min and 6 h (GitHub's longest merge queue timeout), got \"4m\"",
        ),
        (
            "deadline = \"7h\"\n",
            ".benchgate.toml:4:12: `merge_queue.deadline`: deadline must be between 5 min and 6 h (GitHub's longest merge queue timeout), got \"7h\"",
        ),
        (
            "deadline = 0\n",
            ".benchgate.toml:4:12: `merge_queue.deadline`: deadline must be between 5 min and 6 h (GitHub's longest merge queue timeout), got 0",
        ),
        (
            "deadline = \"45 minutes\"\n",
            ".benchgate.toml:4:12: `merge_queue.deadline`: \"45 minutes\" is not a deadline: write minutes (\"45m\"), hours (\"2h\") or a number of minutes",
        ),
        (
            "deadline = 1.5\n",
            ".benchgate.toml:4:12: `merge_queue.deadline`: expected a deadline such as \"45m\", \"2h\" or a number of minutes",
        ),
        (
            "timeout = \"45m\"\n",
            ".benchgate.toml:4:1: `merge_queue.timeout`: unknown field `timeout`, expected one of `mode`, `deadline`, `on_deadline`",
        ),
    ];
    for (table, want) in table {
        let err = with_table(table).expect_err(table);
        assert_eq!(err.to_string(), *want, "{table}");
    }
}

#[test]
fn config_check_says_what_each_mode_does_and_when_it_gives_up() {
    let line = |table: &str| {
        let described = with_table(table).unwrap().describe();
        described
            .lines()
            .find(|l| l.starts_with("merge queue: "))
            .unwrap_or_else(|| panic!("{described}"))
            .to_owned()
    };
    assert_eq!(
        line(""),
        "merge queue: a group holding one PR whose comparison measured the same code (trees) restates its \
         verdict; otherwise the group's head is compared with its base. Undecided after 45 \
         min: neutral (the queue moves on)"
    );
    assert_eq!(
        line("mode = \"measure\"\ndeadline = \"2h\"\non_deadline = \"failure\"\n"),
        "merge queue: each group's head is compared with its base (mode = \"measure\"). \
         Undecided after 2 h: failure (the group leaves the queue)"
    );
    assert_eq!(
        line("mode = \"skip\"\n"),
        "merge queue: groups are not measured; their check succeeds at once (mode = \"skip\")"
    );
}

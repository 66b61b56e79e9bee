//! `agent-seer bless`: the oracle becomes the agent's calls (comments elsewhere kept), a
//! broken transcript's faults become the current findings, rejected calls are never blessed,
//! and a blessed trial passes.

use super::*;

/// A harness whose comments must survive, and an exact prompt policy the agent's call misses.
const HARNESS: &str = "# The tiny suite.\ntools: [tiny.tools.json]\ncapabilities: [../capabilities/tiny.yaml]\nthresholds: {pass: 0.99, min_gap: 0.3}\nscenarios:\n  # One scenario.\n  - id: square\n    turns:\n      - prompt: paint a square animal\n        workflow:\n          - tool: paint\n            arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n            quick_explanation: The square ratio the user asked for.\n            match: {ratio: exact, prompt: exact}\n        expected_response: Here is your square painting.\n  # Kept as is.\n  - id: other\n    turns:\n      - prompt: paint anything\n        workflow:\n          - tool: paint\n            arguments: {prompt: anything}\n";

fn tiny_project(transcripts: &[(&str, &str)]) -> tempfile::TempDir {
    let mut files = vec![
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", HARNESS),
    ];
    files.extend_from_slice(transcripts);
    project(&files)
}

#[test]
fn bless_rewrites_the_oracle_and_the_trial_then_passes() {
    let dir = tiny_project(&[(
        "transcripts/tiny/dog.yaml",
        "scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: a dog, model: m1, ratio: \"1:1\"}\n",
    )]);
    let before = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(before.status.code(), Some(1), "{}", stdout(&before));

    // A dry run with a change pending exits 1: a CI check that the suite is blessed.
    let dry = run_in(dir.path(), &["bless", "--dry-run"], None);
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    let harness = dir.path().join("harnesses/tiny.yaml");
    assert_eq!(
        std::fs::read_to_string(&harness).unwrap(),
        HARNESS,
        "a dry run writes nothing"
    );

    let o = run_in(dir.path(), &["bless"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("bless_oracle", stdout(&o));
    let after = std::fs::read_to_string(&harness).unwrap();
    for kept in [
        "# The tiny suite.",
        "  # One scenario.",
        "  # Kept as is.",
        "expected_response: Here is your square painting.",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    let again = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    let noop = run_in(dir.path(), &["bless"], None);
    assert!(
        stdout(&noop).contains("blessed 0 trial(s)"),
        "{}",
        stdout(&noop)
    );
    let dry = run_in(dir.path(), &["bless", "--dry-run"], None);
    assert_eq!(
        dry.status.code(),
        Some(0),
        "nothing pending: {}",
        stdout(&dry)
    );
}

/// Two steps, the first in its own key order and flow style, with a comment: blessing a
/// transcript that changes only the second leaves the first byte for byte (issue 18, item 15).
const TWO_STEPS: &str = "tools: [tiny.tools.json]\ncapabilities: [../capabilities/tiny.yaml]\nthresholds: {pass: 0.99, min_gap: 0.3}\nscenarios:\n  - id: two\n    turns:\n      - prompt: paint a cat, then a dog\n        workflow:\n          - arguments: { prompt: a cat,   model: m1 }   # spacing kept\n            tool: paint\n\n          - tool: paint\n            arguments: {prompt: a dog, model: m1}\n            match: {prompt: exact}\n";

#[test]
fn bless_keeps_the_steps_it_does_not_change() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TWO_STEPS),
        (
            "transcripts/tiny/wolf.yaml",
            "scenario: two\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1}\n  - tool: paint\n    arguments: {prompt: a wolf, model: m1}\n",
        ),
    ]);
    let o = run_in(dir.path(), &["bless"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let after = std::fs::read_to_string(dir.path().join("harnesses/tiny.yaml")).unwrap();
    assert!(after.contains("          - arguments: { prompt: a cat,   model: m1 }   # spacing kept\n            tool: paint\n\n"), "{after}");
    insta::assert_snapshot!(after, @r"
    tools: [tiny.tools.json]
    capabilities: [../capabilities/tiny.yaml]
    thresholds: {pass: 0.99, min_gap: 0.3}
    scenarios:
      - id: two
        turns:
          - prompt: paint a cat, then a dog
            workflow:
              - arguments: { prompt: a cat,   model: m1 }   # spacing kept
                tool: paint

              - tool: paint
                arguments:
                  model: m1
                  prompt: a wolf
                match:
                  prompt: exact
    ");
}

/// A harness kept as a symbolic link stays one: the file it points at is rewritten.
#[cfg(unix)]
#[test]
fn bless_writes_through_a_symlinked_harness() {
    let dir = tiny_project(&[(
        "transcripts/tiny/dog.yaml",
        "scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: a dog, model: m1, ratio: \"1:1\"}\n",
    )]);
    let harness = dir.path().join("harnesses/tiny.yaml");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::rename(&harness, shared.join("tiny.yaml")).unwrap();
    std::os::unix::fs::symlink("../shared/tiny.yaml", &harness).unwrap();
    let o = run_in(dir.path(), &["bless"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        std::fs::symlink_metadata(&harness)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the harness is no longer a link"
    );
    let target = std::fs::read_to_string(shared.join("tiny.yaml")).unwrap();
    assert!(target.contains("prompt: a dog"), "{target}");
    assert_eq!(
        run_in(dir.path(), &["check", "--quiet"], None)
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn rejected_calls_are_not_blessed() {
    let dir = tiny_project(&[(
        "transcripts/tiny/wide.yaml",
        "scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"16:9\"}\n",
    )]);
    let o = run_in(dir.path(), &["bless"], None);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("bless_refused", stdout(&o));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("harnesses/tiny.yaml")).unwrap(),
        HARNESS
    );
}

#[test]
fn a_broken_transcript_gets_its_current_faults() {
    let dir = tiny_project(&[(
        "transcripts/tiny/broken.yaml",
        "# Wrong ratio.\nscenario: square\nexpect: fail\nfaults:\n  - argument_name\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"4:3\"}\n",
    )]);
    let o = run_in(dir.path(), &["bless"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    insta::assert_snapshot!("bless_faults", stdout(&o));
    let again = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

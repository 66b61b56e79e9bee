//! The agent skill and plugin manifest stay true: the manifest names this crate and its
//! skill, the skill has the frontmatter agents read, every verb it recommends exists, and
//! every command it shows runs.

use super::readme::{commands_in, run_documented};
use super::*;

#[test]
fn plugin_manifest_matches_the_crate() {
    let text = std::fs::read_to_string(repo().join("plugin.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("plugin.json is JSON");
    assert_eq!(v["name"], "agent-seer");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["license"], "Apache-2.0");
    let skills = v["skills"].as_array().expect("skills");
    assert!(!skills.is_empty());
    for s in skills {
        let dir = repo().join(s.as_str().unwrap());
        assert!(
            dir.join("SKILL.md").is_file(),
            "{} has no SKILL.md",
            dir.display()
        );
    }
    // Every command the manifest advertises is a verb the binary has.
    let help = stdout(&run(&["--help"], None));
    for (verb, line) in v["commands"].as_object().unwrap() {
        assert!(
            help.contains(&format!("  {verb} ")),
            "no verb `{verb}` in --help"
        );
        assert!(
            line.as_str()
                .unwrap()
                .starts_with(&format!("agent-seer {verb}"))
        );
    }
}

#[test]
fn skill_has_frontmatter_and_real_verbs() {
    let text = std::fs::read_to_string(repo().join("skills/agent-seer/SKILL.md")).unwrap();
    let front = text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
        .map(|(f, _)| f)
        .expect("YAML frontmatter between --- lines");
    let meta: serde_json::Value = serde_saphyr::from_str(front).expect("frontmatter is YAML");
    assert_eq!(meta["name"], "agent-seer");
    let description = meta["description"].as_str().unwrap();
    assert!(
        (50..=1024).contains(&description.len()),
        "description length {}",
        description.len()
    );
    let help = stdout(&run(&["--help"], None));
    let verbs: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("`agent-seer "))
        .filter_map(|l| l.split("`agent-seer ").nth(1)?.split([' ', '`']).next())
        .collect();
    assert!(verbs.len() >= 8, "{verbs:?}");
    for verb in verbs {
        assert!(
            help.contains(&format!("  {verb} ")),
            "the skill recommends `{verb}`, which --help lacks"
        );
    }
}

#[test]
fn skill_commands_work() {
    let cmds = commands_in("skills/agent-seer/SKILL.md");
    assert!(cmds.len() >= 6, "found {cmds:?}");
    run_documented(cmds);
}

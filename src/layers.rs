//! The layer order of `src/`, checked: every module may import only the modules before it
//! in [`ORDER`], so there is no import cycle, and nothing imports the `runner`.
//!
//! The check reads the source (not the compiled crate): every `crate::<module>` path outside
//! comments and `#[cfg(test)]` modules counts as an import, including the braces of a grouped
//! `use`.

/// The layers, lowest first (the module map of DESIGN.md). The binary's `cli` is its own crate
/// target and comes after all of them.
pub(crate) const ORDER: &[&str] = &[
    "hash",
    "source",
    "pattern",
    "redact",
    "diff",
    "finding",
    "sql",
    "spec",
    "harness",
    "ingest",
    "stats",
    "lint",
    "audit",
    "flow",
    "score",
    "trajectory",
    "check",
    "bless",
    "bfcl",
    "llm",
    "judge",
    "generate",
    "mcp",
    "ground",
    "agent",
    "report",
    "runner",
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::ORDER;

    /// `(importing module, imported module, file:line)` for every cross-module import.
    fn imports() -> Vec<(String, String, String)> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let path_re = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
        let group_re = regex::Regex::new(r"crate::\{([^}]*)\}").unwrap();
        let mut out = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    if p.file_name().is_some_and(|n| n != "snapshots") {
                        stack.push(p);
                    }
                    continue;
                }
                let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
                let name = p.file_name().unwrap().to_string_lossy();
                if !rel.ends_with(".rs") || name == "tests.rs" {
                    continue;
                }
                let top = rel
                    .split('/')
                    .next()
                    .unwrap()
                    .trim_end_matches(".rs")
                    .to_owned();
                if matches!(top.as_str(), "lib" | "main" | "cli" | "layers") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                let code = without_test_modules(&text);
                for (i, line) in code.lines().enumerate() {
                    let line = code_of(line);
                    let mut names: Vec<String> = path_re
                        .captures_iter(line)
                        .map(|c| c[1].to_owned())
                        .collect();
                    for g in group_re.captures_iter(line) {
                        names.extend(
                            g[1].split(',')
                                .filter_map(|part| part.trim().split("::").next())
                                .filter(|m| !m.is_empty())
                                .map(str::to_owned),
                        );
                    }
                    for m in names {
                        let m = if m == "harness_files" {
                            "harness".to_owned()
                        } else {
                            m
                        };
                        if m != top {
                            out.push((top.clone(), m, format!("src/{rel}:{}", i + 1)));
                        }
                    }
                }
            }
        }
        out
    }

    /// The text with every `#[cfg(test)] mod … { … }` block (and `#[cfg(test)] mod …;` line)
    /// blanked, line count kept, so imports after a test module still count.
    fn without_test_modules(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("#[cfg(test)]") {
            out.push_str(&rest[..at]);
            let after = &rest[at..];
            let body_start = after.find(['{', ';']).unwrap_or(after.len());
            let end = if after[body_start..].starts_with('{') {
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, c) in after[body_start..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = body_start + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            } else {
                (body_start + 1).min(after.len())
            };
            out.extend(after[..end].chars().filter(|c| *c == '\n'));
            rest = &after[end..];
        }
        out.push_str(rest);
        out
    }

    /// A line without its `//` comment (a `//` inside a string literal is not one).
    fn code_of(line: &str) -> &str {
        let mut in_string = false;
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            match bytes[i] {
                b'"' if i == 0 || bytes[i - 1] != b'\\' => in_string = !in_string,
                b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
                _ => {}
            }
        }
        line
    }

    #[test]
    fn the_scan_sees_past_test_modules_and_urls() {
        let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\nuse crate::c; // crate::d\nconst U: &str = \"https://x\"; use crate::e;\n";
        let code = without_test_modules(text);
        let lines: Vec<&str> = code.lines().map(code_of).collect();
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[0], "use crate::a;");
        assert!(!code.contains("crate::b"));
        assert_eq!(lines[5], "use crate::c; ");
        assert!(lines[6].ends_with("use crate::e;"), "{}", lines[6]);
    }

    #[test]
    fn every_module_imports_only_the_layers_before_it() {
        let rank = |m: &str| ORDER.iter().position(|o| *o == m);
        let mut wrong = BTreeSet::new();
        let found = imports();
        assert!(
            found.len() > 50,
            "the scan found too few imports: {found:?}"
        );
        for (from, to, at) in &found {
            let (Some(f), Some(t)) = (rank(from), rank(to)) else {
                wrong.insert(format!("{at}: `{from}` or `{to}` is not in layers::ORDER"));
                continue;
            };
            if t >= f {
                wrong.insert(format!(
                    "{at}: `{from}` imports `{to}`, a later layer (an import cycle in the making)"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", Vec::from_iter(wrong).join("\n"));
    }

    #[test]
    fn every_layer_is_a_module() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for m in ORDER {
            assert!(
                src.join(format!("{m}.rs")).is_file() || src.join(m).join("mod.rs").is_file(),
                "{m}"
            );
        }
    }
}

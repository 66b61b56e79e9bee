//! The layer order of `src/`, checked: every module may import only the modules before it
//! in [`ORDER`], so there is no import cycle, and nothing imports the `runner`.
//!
//! The check reads the source (not the compiled crate): every `crate::<module>` path outside
//! comments and test code counts as an import, including the braces of a grouped `use`.

/// The layers, lowest first (the module map of DESIGN.md). The binary's `cli` is its own crate
/// target and comes after all of them.
pub(crate) const ORDER: &[&str] = &[
    "source", "diff", "finding", "spec", "harness", "stats", "lint", "flow", "score", "check",
    "bless", "bfcl", "llm", "judge", "generate", "mcp", "agent", "report", "runner",
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
                let code = text.split("#[cfg(test)]").next().unwrap();
                for (i, line) in code.lines().enumerate() {
                    let line = line.split("//").next().unwrap();
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

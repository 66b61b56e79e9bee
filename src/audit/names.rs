//! Fleet nomenclature: one concept under several parameter names across the servers audited
//! together (seed 000: Veo `model` vs Lyria `model_id`; `bucket` vs `gcs_bucket_uri` vs
//! `output_gcs_bucket`), which is where an agent that learned one server guesses wrong on the
//! next.
//!
//! Two names are one concept when they come from different servers, have the same JSON type,
//! similar names (edit distance, or a shared word such as `bucket`) and descriptions that
//! share content words. The proposed name is the one most tools use (a tie: the shortest).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::{AuditCode, AuditFinding, Server, params};
use crate::source::Location;

/// One concept and the names it goes by.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NameGroup {
    /// The name to use everywhere.
    pub proposed: String,
    /// The JSON type every use has.
    #[serde(rename = "type")]
    pub ty: String,
    /// Every use, by name then server and tool.
    pub uses: Vec<NameUse>,
}

impl NameGroup {
    /// The distinct names, the proposed one first.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = vec![&self.proposed];
        for u in &self.uses {
            if !v.contains(&u.name.as_str()) {
                v.push(&u.name);
            }
        }
        v
    }
}

/// One parameter under one of a concept's names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NameUse {
    /// The parameter's name.
    pub name: String,
    /// Its server.
    pub server: String,
    /// Its tool.
    pub tool: String,
    /// Its JSON pointer in the server's spec.
    pub pointer: String,
    /// Its line and column.
    pub location: Option<Location>,
}

const STOP: &[&str] = &[
    "the", "a", "an", "of", "to", "for", "in", "on", "and", "or", "is", "be", "if", "it", "by",
    "with", "as", "e", "g", "eg", "optional", "this", "that", "are", "will", "not", "from", "used",
    "use", "provided", "your", "name", "file", "files", "given",
];

fn words(s: &str) -> BTreeSet<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 1 && !STOP.contains(w))
        .map(|w| w.trim_end_matches('s').to_owned())
        .collect()
}

fn tokens(name: &str) -> BTreeSet<String> {
    name.to_lowercase()
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| match w {
            "dir" => "directory".to_owned(),
            "img" => "image".to_owned(),
            _ => w.to_owned(),
        })
        .collect()
}

/// The longest parameter name compared by spelling; longer ones (no real parameter name is)
/// are compared by their words only.
const MAX_SPELLED: usize = 256;

/// Whether two parameter names look like one concept's: nearly the same spelling, or the
/// same words once generic ones (`output`, `gcs`, `uri`, …) are set aside — `bucket`,
/// `gcs_bucket_uri` and `output_gcs_bucket` are one; `image_uri` and `first_image_uri` are not.
pub(super) fn similar_names(a: &str, b: &str) -> bool {
    // The edit distance costs the product of the lengths (two 100,000-character names took
    // 44 s, issue 32 item 9): it is asked only of names up to MAX_SPELLED characters, and only
    // when their lengths differ little enough to reach the bar at all.
    let (la, lb) = (a.chars().count(), b.chars().count());
    let (short, long) = (la.min(lb), la.max(lb));
    if long <= MAX_SPELLED
        && (long - short) as f64 <= 0.15 * long as f64
        && strsim::normalized_levenshtein(&a.to_lowercase(), &b.to_lowercase()) >= 0.85
    {
        return true;
    }
    const GENERIC: &[&str] = &[
        "output", "input", "uri", "uris", "url", "id", "ids", "name", "path", "type", "code",
        "gcs", "local", "file", "value",
    ];
    let key = |n: &str| -> BTreeSet<String> {
        tokens(n)
            .into_iter()
            .filter(|w| !GENERIC.contains(&w.as_str()))
            .collect()
    };
    let (ka, kb) = (key(a), key(b));
    !ka.is_empty() && ka == kb
}

fn similar_descriptions(a: &str, b: &str) -> bool {
    let (wa, wb) = (words(a), words(b));
    if wa.is_empty() || wb.is_empty() {
        return false;
    }
    let shared = wa.intersection(&wb).count();
    let smaller = wa.len().min(wb.len());
    shared >= 2 && shared * 3 >= smaller
}

struct Entry {
    server: usize,
    tool: String,
    name: String,
    ty: String,
    description: String,
    pointer: String,
    location: Option<Location>,
}

/// The concept groups of a fleet, and for each server the findings on its uses of a name
/// other than the proposed one.
pub(super) fn fleet(servers: &[Server]) -> (Vec<NameGroup>, BTreeMap<String, Vec<AuditFinding>>) {
    let mut entries = Vec::new();
    for (si, s) in servers.iter().enumerate() {
        for tool in s.tools.tools() {
            for p in params(s, tool) {
                let Some(ty) = p.schema.get("type").and_then(Value::as_str) else {
                    continue;
                };
                entries.push(Entry {
                    server: si,
                    tool: tool.name.clone(),
                    name: p.name.to_owned(),
                    ty: ty.to_owned(),
                    description: p
                        .schema
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    location: s.locate(&p.pointer),
                    pointer: p.pointer,
                });
            }
        }
    }
    // Union-find over distinct (name, type) keys, joined when two entries of different
    // servers and different names look alike.
    let mut keys: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e.name.clone(), e.ty.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    keys.sort();
    let index = |e: &Entry| {
        keys.binary_search(&(e.name.clone(), e.ty.clone()))
            .expect("every entry has a key")
    };
    let mut parent: Vec<usize> = (0..keys.len()).collect();
    // The tools each group's names are used in.
    let mut tools_of: Vec<BTreeSet<(usize, String)>> = vec![BTreeSet::new(); keys.len()];
    for e in &entries {
        tools_of[index(e)].insert((e.server, e.tool.clone()));
    }
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    // Entries come server by server: each is compared with the later servers' only, so one
    // server's audit makes no pairs at all (3,000 tools made 10^8, issue 32 item 9).
    let ends: Vec<usize> = (0..servers.len())
        .map(|si| entries.partition_point(|e| e.server <= si))
        .collect();
    for a in &entries {
        for b in &entries[ends[a.server]..] {
            if a.server == b.server || a.name == b.name || a.ty != b.ty {
                continue;
            }
            if similar_names(&a.name, &b.name)
                && similar_descriptions(&a.description, &b.description)
            {
                let (x, y) = (find(&mut parent, index(a)), find(&mut parent, index(b)));
                // Two parameters of one tool are two concepts (`first_image_uri` and
                // `last_image_uri`), so groups that hold both are never joined.
                if x != y && tools_of[x].is_disjoint(&tools_of[y]) {
                    parent[x] = y;
                    let moved = std::mem::take(&mut tools_of[x]);
                    tools_of[y].extend(moved);
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<&Entry>> = BTreeMap::new();
    for e in &entries {
        let root = find(&mut parent, index(e));
        groups.entry(root).or_default().push(e);
    }
    let mut out = Vec::new();
    let mut findings: BTreeMap<String, Vec<AuditFinding>> = BTreeMap::new();
    for members in groups.into_values() {
        let names: BTreeSet<&str> = members.iter().map(|e| e.name.as_str()).collect();
        let servers_in: BTreeSet<usize> = members.iter().map(|e| e.server).collect();
        if names.len() < 2 || servers_in.len() < 2 {
            continue;
        }
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &members {
            *count.entry(&e.name).or_insert(0) += 1;
        }
        let proposed = count
            .iter()
            .max_by(|a, b| {
                a.1.cmp(b.1)
                    .then(b.0.len().cmp(&a.0.len()))
                    .then(b.0.cmp(a.0))
            })
            .map(|(n, _)| (*n).to_owned())
            .unwrap_or_default();
        let mut uses: Vec<NameUse> = members
            .iter()
            .map(|e| NameUse {
                name: e.name.clone(),
                server: servers[e.server].name.clone(),
                tool: e.tool.clone(),
                pointer: e.pointer.clone(),
                location: e.location.clone(),
            })
            .collect();
        uses.sort_by(|a, b| (&a.name, &a.server, &a.tool).cmp(&(&b.name, &b.server, &b.tool)));
        let group = NameGroup {
            proposed: proposed.clone(),
            ty: members[0].ty.clone(),
            uses,
        };
        let summary = group
            .names()
            .iter()
            .map(|n| {
                let where_: BTreeSet<&str> = group
                    .uses
                    .iter()
                    .filter(|u| u.name == *n)
                    .map(|u| u.server.as_str())
                    .collect();
                format!(
                    "`{n}` ({})",
                    where_.into_iter().collect::<Vec<_>>().join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        // One finding per server and other name, at its first use.
        let mut seen = BTreeSet::new();
        for e in &members {
            if e.name == proposed || !seen.insert((e.server, e.name.clone())) {
                continue;
            }
            let s = &servers[e.server];
            let f = s
                .finding(AuditCode::FleetName, Some(&e.tool), Some(&e.name))
                .at(&e.pointer)
                .message(format!(
                    "one {} concept under {} names across the fleet: {summary}",
                    group.ty,
                    group.names().len()
                ))
                .fix(format!("rename `{}` to `{proposed}`", e.name))
                .done();
            findings.entry(s.name.clone()).or_default().push(f);
        }
        out.push(group);
    }
    out.sort_by(|a, b| a.proposed.cmp(&b.proposed));
    (out, findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case("model", "model_id", true)]
    #[case("bucket", "gcs_bucket_uri", true)]
    #[case("gcs_bucket_uri", "output_gcs_bucket", true)]
    #[case("output_filename", "output_directory", false)]
    #[case("prompt", "negative_prompt", false)]
    #[case("image_uri", "first_image_uri", false)]
    #[case("output_directory", "output_local_dir", true)]
    #[case("input_audio_uri", "input_video_uri", false)]
    fn names(#[case] a: &str, #[case] b: &str, #[case] want: bool) {
        assert_eq!(similar_names(a, b), want, "{a} {b}");
    }
}

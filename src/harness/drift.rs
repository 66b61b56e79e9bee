//! Spec drift against a harness: which scenarios a change between two `tools/list` captures
//! touches ([`touch`]; the changes themselves are [`crate::spec::diff`]'s).

use super::Harness;
use crate::spec::diff::Change;

/// Marks, on each change, the scenarios of `harnesses` whose oracle calls it touches: a call
/// of a removed or changed tool; for a parameter change, a call that passes the parameter
/// (or any call of the tool, when the parameter is newly required).
pub fn touch(changes: &mut [Change], harnesses: &[Harness]) {
    for c in changes.iter_mut() {
        for h in harnesses {
            for sc in &h.scenarios {
                for (t, turn) in sc.turns.iter().enumerate() {
                    for (s, step) in turn.workflow.iter().enumerate() {
                        if step.call.tool != c.tool {
                            continue;
                        }
                        let hit = match &c.param {
                            None => c.kind != "tool.description",
                            Some(p) => {
                                step.call.args().contains_key(p)
                                    || (c.breaking
                                        && matches!(c.kind, "param.added" | "param.required"))
                            }
                        };
                        if hit {
                            c.touches.push(format!(
                                "{}::{} (turn {}, step {})",
                                h.suite,
                                sc.id,
                                t + 1,
                                s + 1
                            ));
                        }
                    }
                }
            }
        }
    }
}

//! Whether Slurm should drain or resume this node, from the verdict and
//! the node's state as `scontrol show node` prints it. fabdiag drains
//! with a reason that starts `fabdiag:` and resumes only a node drained
//! with such a reason: a node an operator drained by hand for anything
//! else is never resumed, and never re-labelled. Pure: the binary runs
//! scontrol.

use crate::verdict::Verdict;

/// The prefix of every reason fabdiag gives.
pub const PREFIX: &str = "fabdiag:";

/// Slurm keeps reasons short in `sinfo -R`; longer ones are cut here.
const REASON_MAX: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeState {
    /// "IDLE+DRAIN", "MIXED", "DOWN+DRAIN", ...
    pub state: String,
    pub reason: Option<String>,
}

impl NodeState {
    pub fn drained(&self) -> bool {
        self.state.contains("DRAIN")
    }

    pub fn ours(&self) -> bool {
        self.reason.as_deref().is_some_and(|r| r.starts_with(PREFIX))
    }
}

/// `scontrol show node NAME`'s State= and Reason= (the reason without the
/// " [user@time]" Slurm adds); None if there is no State.
pub fn parse_show_node(text: &str) -> Option<NodeState> {
    let mut state = None;
    let mut reason = None;
    for line in text.lines().map(str::trim) {
        for tok in line.split_whitespace() {
            if let Some(s) = tok.strip_prefix("State=") {
                state = Some(s.to_string());
            }
        }
        if let Some(r) = line.strip_prefix("Reason=") {
            let r = match r.rfind(" [") {
                Some(i) if r.ends_with(']') => &r[..i],
                _ => r,
            };
            if !r.is_empty() && r != "(null)" {
                reason = Some(r.to_string());
            }
        }
    }
    Some(NodeState { state: state?, reason })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Drain(String),
    Resume,
    /// Nothing to do, and why.
    Leave(String),
}

/// The reason a drain gives: the prefix, then the summary's finding.
pub fn reason(summary: &str) -> String {
    let finding = summary.strip_prefix("fabdiag health: ").unwrap_or(summary);
    let mut r = format!("{PREFIX} {finding}");
    if r.len() > REASON_MAX {
        let mut cut = REASON_MAX - 3;
        while !r.is_char_boundary(cut) {
            cut -= 1;
        }
        r.truncate(cut);
        r.push_str("...");
    }
    r
}

pub fn decide(verdict: Verdict, summary: &str, node: &NodeState) -> Action {
    match verdict {
        Verdict::Critical if node.drained() && !node.ours() => Action::Leave(format!(
            "drained by someone else ({}): left as it is",
            node.reason.as_deref().unwrap_or("no reason")
        )),
        Verdict::Critical => {
            let r = reason(summary);
            if node.drained() && node.reason.as_deref() == Some(r.as_str()) {
                Action::Leave("already drained for this".into())
            } else {
                Action::Drain(r)
            }
        }
        Verdict::Ok if node.drained() && node.ours() => Action::Resume,
        Verdict::Ok if node.drained() => Action::Leave(format!(
            "drained by someone else ({}): not resumed",
            node.reason.as_deref().unwrap_or("no reason")
        )),
        Verdict::Ok => Action::Leave("not drained".into()),
        Verdict::Warning => Action::Leave("WARNING neither drains nor resumes".into()),
        Verdict::Unknown => Action::Leave("UNKNOWN neither drains nor resumes".into()),
    }
}

/// scontrol's arguments for an action (None: nothing to run).
pub fn scontrol_args(node: &str, action: &Action) -> Option<Vec<String>> {
    let base = ["update".to_string(), format!("nodename={node}")];
    match action {
        Action::Drain(r) => Some(
            base.into_iter()
                .chain(["state=drain".into(), format!("reason={r}")])
                .collect(),
        ),
        Action::Resume => Some(base.into_iter().chain(["state=resume".into()]).collect()),
        Action::Leave(_) => None,
    }
}

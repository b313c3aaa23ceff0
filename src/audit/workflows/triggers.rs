//! What starts a workflow, as far as the audit needs it: the release tags a push of a tag runs it
//! on, and the events that carry code or input from outside the repository.

use github_actions_models::workflow::event::{OptionalBody, TagFilters};
use github_actions_models::workflow::Workflow;

/// The events of a workflow that carry code or input from outside the repository.
pub(crate) fn risky_events(wf: &Workflow) -> Vec<String> {
    let ev = &wf.on.events;
    [
        ("pull_request_target", ev.pull_request_target.is_present()),
        ("workflow_run", ev.workflow_run.is_present()),
        ("issue_comment", ev.issue_comment.is_present()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| n.to_string())
    .collect()
}

/// The release tags a signing workflow runs on: the positive `on.push.tags` patterns (`!`
/// patterns only narrow them); `tags-ignore` means any tag not ignored, so any tag (`**`).
pub(crate) fn release_tag_patterns(wf: &Workflow) -> Vec<String> {
    let OptionalBody::Body(push) = &wf.on.events.push else {
        return Vec::new();
    };
    match &push.tag_filters {
        Some(TagFilters::Tags(tags)) => tags
            .iter()
            .filter(|t| !t.starts_with('!'))
            .cloned()
            .collect(),
        Some(TagFilters::TagsIgnore(_)) => vec!["**".into()],
        None => Vec::new(),
    }
}

/// Whether a push of a tag runs the workflow.
pub(crate) fn has_tag_trigger(wf: &Workflow) -> bool {
    matches!(&wf.on.events.push, OptionalBody::Body(p) if matches!(p.tag_filters, Some(TagFilters::Tags(_))))
}

/// Whether a job's `if:` admits only tag refs (or releases, whose ref is their tag). The
/// condition is parsed (zizmor's expression parser) and evaluated against every kind of run whose
/// ref is not a tag — pushes of branches (named like tags, too), pull requests, schedules,
/// dispatches — with whatever else it reads unknown: it admits only tags when it is false on
/// every one of them. A condition that does not parse admits anything (it is not a boundary).
/// No event that carries outside code or input (`pull_request_target`, `workflow_run`,
/// `issue_comment`) runs on a tag ref.
pub(crate) fn admits_only_tags(cond: &str) -> bool {
    let Some(text) = parse_condition(cond) else {
        return false;
    };
    let Ok(expr) = github_actions_expressions::Expr::parse(&text) else {
        return false;
    };
    NON_TAG_RUNS
        .iter()
        .all(|run| eval(&expr, run).truthy() == Some(false))
}

/// Whether a job's `if:` is false on every run of a tag (a push of one, a release, a dispatch
/// on one): a job that signs nightlies and never releases.
pub(crate) fn never_on_tags(cond: &str) -> bool {
    const TAG_RUNS: [Run<'static>; 3] = [
        Run {
            event_name: "push",
            r#ref: "refs/tags/v1.2.3",
            ref_name: "v1.2.3",
            ref_type: "tag",
        },
        Run {
            event_name: "release",
            r#ref: "refs/tags/v1.2.3",
            ref_name: "v1.2.3",
            ref_type: "tag",
        },
        Run {
            event_name: "workflow_dispatch",
            r#ref: "refs/tags/v1.2.3",
            ref_name: "v1.2.3",
            ref_type: "tag",
        },
    ];
    parse_condition(cond).is_some_and(|text| {
        github_actions_expressions::Expr::parse(&text).is_ok_and(|expr| {
            TAG_RUNS
                .iter()
                .all(|run| eval(&expr, run).truthy() == Some(false))
        })
    })
}

/// Whether an `if:` is false whatever the run (`false`, `${{ false }}`, `0 == 1`): the job or
/// step never runs.
pub(crate) fn never_true(cond: &github_actions_models::common::If) -> bool {
    use github_actions_models::common::If;
    match cond {
        If::Bool(b) => !b,
        // False with nothing of the run known (`false`, `false && …`, `!true`).
        If::Expr(e) => parse_condition(e).is_some_and(|text| {
            github_actions_expressions::Expr::parse(&text).is_ok_and(|expr| {
                let blind = Run {
                    event_name: UNKNOWN,
                    r#ref: UNKNOWN,
                    ref_name: UNKNOWN,
                    ref_type: UNKNOWN,
                };
                eval(&expr, &blind).truthy() == Some(false)
            })
        }),
    }
}

/// Whether a job's `if:` may be true on a run of `event` (on any ref): false only when it is
/// false on every one of them.
pub(crate) fn may_run_on(cond: &str, event: &str) -> bool {
    let Some(text) = parse_condition(cond) else {
        return true;
    };
    let Ok(expr) = github_actions_expressions::Expr::parse(&text) else {
        return true;
    };
    const REFS: [(&str, &str, &str); 3] = [
        ("refs/heads/main", "main", "branch"),
        ("refs/tags/v1.2.3", "v1.2.3", "tag"),
        ("refs/pull/1/merge", "1/merge", ""),
    ];
    REFS.iter().any(|(r, name, kind)| {
        let run = Run {
            event_name: event,
            r#ref: r,
            ref_name: name,
            ref_type: kind,
        };
        eval(&expr, &run).truthy() != Some(false)
    })
}

/// The expression of an `if:` (its `${{ }}` taken off, double quotes read as single), or
/// `None` when text stands beside an expression.
fn parse_condition(cond: &str) -> Option<String> {
    let trimmed = cond.trim();
    let inner = match trimmed.strip_prefix("${{") {
        Some(rest) => match rest.strip_suffix("}}") {
            Some(body) if !body.contains("${{") => body,
            _ => return None,
        },
        None if trimmed.contains("${{") => return None,
        None => trimmed,
    };
    Some(inner.replace('"', "'"))
}

/// A value of the run that is not known (`never_true` evaluates with nothing known).
const UNKNOWN: &str = "\u{0}unknown";

/// A run whose ref is not a tag, as the `github` context describes it.
struct Run<'a> {
    event_name: &'a str,
    r#ref: &'a str,
    ref_name: &'a str,
    ref_type: &'a str,
}

/// Every kind of run that is not of a tag: each event on a branch named like a tag, on a
/// branch whose name starts with `refs/tags/`, and on a pull request's merge ref.
const NON_TAG_RUNS: &[Run<'static>] = &{
    const EVENTS: [&str; 13] = [
        "push",
        "pull_request",
        "pull_request_target",
        "schedule",
        "workflow_dispatch",
        "workflow_run",
        "workflow_call",
        "issue_comment",
        "merge_group",
        "repository_dispatch",
        "create",
        "delete",
        "check_run",
    ];
    const REFS: [(&str, &str, &str); 4] = [
        ("refs/heads/main", "main", "branch"),
        ("refs/heads/v1.2.3", "v1.2.3", "branch"),
        ("refs/heads/refs/tags/v1.2.3", "refs/tags/v1.2.3", "branch"),
        ("refs/pull/1/merge", "1/merge", ""),
    ];
    let mut runs = [const {
        Run {
            event_name: "",
            r#ref: "",
            ref_name: "",
            ref_type: "",
        }
    }; 52];
    let mut i = 0;
    while i < 52 {
        let (r#ref, ref_name, ref_type) = REFS[i % 4];
        runs[i] = Run {
            event_name: EVENTS[i / 4],
            r#ref,
            ref_name,
            ref_type,
        };
        i += 1;
    }
    runs
};

/// A value of the expression language, or unknown (what the run does not fix).
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Known(github_actions_expressions::Evaluation),
    Unknown,
}

impl Value {
    /// The value as a condition: `None` when unknown.
    fn truthy(&self) -> Option<bool> {
        match self {
            Value::Known(e) => Some(e.as_boolean()),
            Value::Unknown => None,
        }
    }

    fn string(&self) -> Option<String> {
        match self {
            Value::Known(github_actions_expressions::Evaluation::String(s)) => Some(s.clone()),
            Value::Known(e) => Some(e.sema().to_string()),
            Value::Unknown => None,
        }
    }
}

fn known_bool(b: bool) -> Value {
    Value::Known(github_actions_expressions::Evaluation::Boolean(b))
}

/// Three-valued evaluation of `expr` on `run`: `&&`, `||` and `!` as the language defines them
/// (the first falsy or truthy operand), unknown wherever an operand decides and is unknown.
fn eval(expr: &github_actions_expressions::SpannedExpr<'_>, run: &Run) -> Value {
    use github_actions_expressions::call::Function;
    use github_actions_expressions::op::{BinOp, UnOp};
    use github_actions_expressions::{Evaluation, Expr};
    match &expr.inner {
        Expr::Literal(_) => expr.consteval().map_or(Value::Unknown, Value::Known),
        Expr::Context(ctx) => {
            let known = [
                ("github.event_name", run.event_name),
                ("github.ref", run.r#ref),
                ("github.ref_name", run.ref_name),
                ("github.ref_type", run.ref_type),
                ("env.GITHUB_REF", run.r#ref),
                ("env.GITHUB_REF_NAME", run.ref_name),
                ("env.GITHUB_REF_TYPE", run.ref_type),
                ("env.GITHUB_EVENT_NAME", run.event_name),
            ];
            known
                .iter()
                .find(|(pattern, _)| ctx.matches(*pattern))
                .filter(|(_, v)| *v != UNKNOWN)
                .map_or(Value::Unknown, |(_, v)| {
                    Value::Known(Evaluation::String((*v).to_string()))
                })
        }
        Expr::UnExpr {
            op: UnOp::Not,
            expr,
        } => match eval(expr, run).truthy() {
            Some(b) => known_bool(!b),
            None => Value::Unknown,
        },
        Expr::BinExpr(bin) => {
            let lhs = eval(&bin.lhs, run);
            match bin.op {
                BinOp::And => match lhs.truthy() {
                    Some(false) => lhs,
                    Some(true) => eval(&bin.rhs, run),
                    None => match eval(&bin.rhs, run).truthy() {
                        Some(false) => known_bool(false),
                        _ => Value::Unknown,
                    },
                },
                BinOp::Or => match lhs.truthy() {
                    Some(true) => lhs,
                    Some(false) => eval(&bin.rhs, run),
                    None => match eval(&bin.rhs, run).truthy() {
                        Some(true) => known_bool(true),
                        _ => Value::Unknown,
                    },
                },
                BinOp::Eq | BinOp::Neq => {
                    let rhs = eval(&bin.rhs, run);
                    match (&lhs, &rhs) {
                        (Value::Known(a), Value::Known(b)) => {
                            let same = a.sema() == b.sema();
                            known_bool(same == (bin.op == BinOp::Eq))
                        }
                        _ => Value::Unknown,
                    }
                }
                _ => Value::Unknown,
            }
        }
        Expr::Call(call) => {
            let args: Vec<Value> = call.args.iter().map(|a| eval(a, run)).collect();
            let strings = || -> Option<(String, String)> {
                Some((
                    args.first()?.string()?.to_lowercase(),
                    args.get(1)?.string()?.to_lowercase(),
                ))
            };
            match call.func {
                Function::StartsWith => {
                    strings().map_or(Value::Unknown, |(s, p)| known_bool(s.starts_with(&p)))
                }
                Function::EndsWith => {
                    strings().map_or(Value::Unknown, |(s, p)| known_bool(s.ends_with(&p)))
                }
                // A string haystack only (an array's is unknown here).
                Function::Contains => match args.first() {
                    Some(Value::Known(Evaluation::String(_))) => {
                        strings().map_or(Value::Unknown, |(s, p)| known_bool(s.contains(&p)))
                    }
                    _ => Value::Unknown,
                },
                _ => Value::Unknown,
            }
        }
        _ => Value::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::{admits_only_tags, never_on_tags};

    #[test]
    fn a_gate_false_on_every_tag_run_never_runs_on_tags() {
        for never in [
            "!(startsWith(github.ref, 'refs/tags/'))",
            "github.ref == 'refs/heads/main'",
            "github.event_name == 'schedule'",
            "github.ref_type == 'branch' && inputs.x",
        ] {
            assert!(never_on_tags(never), "{never}");
        }
        for may in [
            "startsWith(github.ref, 'refs/tags/')",
            "inputs.publish",
            "always()",
            "github.event_name != 'pull_request'",
            "${{ x }} y",
        ] {
            assert!(!never_on_tags(may), "{may}");
        }
    }

    #[test]
    fn only_a_gate_that_admits_nothing_but_tags_is_one() {
        for gate in [
            "startsWith(github.ref, 'refs/tags/')",
            "${{ startsWith(github.ref, 'refs/tags/v') }}",
            "github.ref_type == 'tag' && github.event_name != 'workflow_dispatch'",
            "github.ref_type == \"tag\"",
            "github.event_name == 'release'",
            "success() && startsWith(github.ref, 'refs/tags/') && inputs.x",
            "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/')",
            "STARTSWITH(github.ref, 'REFS/TAGS/')",
            "!cancelled() && github.ref_type == 'tag'",
        ] {
            assert!(admits_only_tags(gate), "{gate}");
        }
        for not in [
            "${{ !startsWith(github.ref, 'refs/tags/v') }}",
            "startsWith(github.ref, 'refs/tags/') || github.event_name == 'schedule'",
            "github.ref_type != 'tag'",
            "github.ref == 'refs/heads/main'",
            "always()",
            // Negations and comparisons a text search would misread.
            "!(startsWith(github.ref, 'refs/tags/'))",
            "startsWith(github.ref, 'refs/tags/') == false",
            "!contains(github.ref, 'refs/tags/')",
            // A branch can be named like a tag, or start with `refs/tags/`.
            "startsWith(github.ref_name, 'v')",
            "contains(github.ref, 'refs/tags/')",
            "endsWith(github.ref, '1.2.3')",
            // What the run does not fix is unknown, and may be true.
            "startsWith(github.ref, 'refs/tags/') || inputs.publish",
            "github.event.release.tag_name != ''",
            "${{ startsWith(github.ref, 'refs/tags/') }} && true",
            "startsWith(github.ref, 'refs/tags/'",
        ] {
            assert!(!admits_only_tags(not), "{not}");
        }
    }
}

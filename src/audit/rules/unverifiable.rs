//! `unverifiable`: something could not be read, so it is not assumed to be safe.

use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "unverifiable",
    severity: Severity::Medium,
    description: "A setting could not be read; it is not assumed to be safe",
    explanation: "a read failed (401/403/404/410, or a field GitHub withheld, such as `bypass_actors`). It names the endpoint and the permission GitHub asked for (`X-Accepted-GitHub-Permissions`)",
});

// Raised wherever a read fails or a value is decided at run time (`Finding::unverifiable`, at
// the severity of the check it stands for).

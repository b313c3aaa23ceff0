//! Online audits of repository settings (rulesets, environments, secrets).

//! Which secrets are signing keys: the names given with `--secret`, or by default names that look
//! like one.

/// The signing secrets: names given with `--secret`, or by default any name containing
/// `MINISIGN`, `SIGNING` or `_SECRET_KEY`.
#[derive(Clone, Debug, Default)]
pub struct SigningSecrets {
    pub explicit: Vec<String>,
}

impl SigningSecrets {
    pub fn is_signing(&self, name: &str) -> bool {
        if !self.explicit.is_empty() {
            return self.explicit.iter().any(|n| n.eq_ignore_ascii_case(name));
        }
        let upper = name.to_ascii_uppercase();
        upper.contains("MINISIGN") || upper.contains("SIGNING") || upper.contains("_SECRET_KEY")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_signing_secret_names() {
        let s = SigningSecrets::default();
        for yes in [
            "MINISIGN_SECRET_KEY",
            "minisign_password",
            "GPG_SIGNING_KEY",
            "RELEASE_SECRET_KEY",
        ] {
            assert!(s.is_signing(yes), "{yes}");
        }
        for no in ["GITHUB_TOKEN", "NPM_TOKEN", "SECRET"] {
            assert!(!s.is_signing(no), "{no}");
        }
        let only = SigningSecrets {
            explicit: vec!["RELEASE_KEY".into()],
        };
        assert!(only.is_signing("RELEASE_KEY") && !only.is_signing("MINISIGN_SECRET_KEY"));
    }
}

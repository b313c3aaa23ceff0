//! `warden audit --org ORG --inventory`: the organisation's signing keys as text (one block per
//! key), markdown (a table for an issue or a wiki page) and JSON (stable, documented in
//! docs/audit.md: it can be diffed between runs, and read back as a `--baseline`).

use std::io::{self, Write};

use super::Report;
use crate::audit::inventory::{Inventory, KeyEntry, SecretPlace, SigningUse};
use crate::markup::{markdown_cell, markdown_code, text_value};

impl Report for Inventory {
    fn text(&self, w: &mut dyn Write, color: bool) -> io::Result<()> {
        writeln!(
            w,
            "key inventory of {}: {} repositories, {} keys, {} releases read per repository",
            text_value(&self.organization),
            self.repositories.len(),
            self.keys.len(),
            self.releases
        )?;
        for k in &self.keys {
            writeln!(w)?;
            for (label, value) in key_lines(k) {
                writeln!(w, "{label:<14} {}", text_value(&value))?;
            }
        }
        if !self.unattributed.is_empty() {
            writeln!(w, "\nsigning secrets whose key is not known (no key named, committed or seen in releases):")?;
            for u in &self.unattributed {
                writeln!(w, "  {}", text_value(&job(u)))?;
            }
        }
        if !self.keys_not_fetched.is_empty() {
            writeln!(
                w,
                "\npublic keys not read (over the budget of 3 requests per repository; commit them in keys/ to have them read):"
            )?;
            for k in &self.keys_not_fetched {
                writeln!(w, "  {}", text_value(k))?;
            }
        }
        for (label, list) in [
            ("UNREADABLE", &self.unreadable),
            ("NOT STARTED", &self.not_started),
        ] {
            for u in list {
                writeln!(
                    w,
                    "{label} {}: {}",
                    text_value(&u.repository),
                    text_value(&u.reason)
                )?;
            }
        }
        writeln!(w)?;
        super::audit::findings_text(w, &self.report, color)
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "### Signing keys of {}\n\n{} repositories, {} keys, the latest {} releases of each read.\n",
            markdown_code(&self.organization),
            self.repositories.len(),
            self.keys.len(),
            self.releases
        )?;
        writeln!(w, "| key | committed in | signs with | stored | last release | state | blast radius |\n|---|---|---|---|---|---|---|")?;
        for k in &self.keys {
            // Each line of a cell escaped on its own, then joined by a line break.
            let cells: [Vec<String>; 7] = [
                vec![key_name(k)],
                k.committed
                    .iter()
                    .map(|c| format!("{} {} ({})", c.repository, c.path, c.key_id))
                    .collect(),
                k.signing_jobs.iter().map(job).collect(),
                k.secrets.iter().map(place).collect(),
                k.last_releases
                    .iter()
                    .map(|l| format!("{} {}", l.repository, l.tag))
                    .collect(),
                vec![state(k)],
                vec![k.blast_radius.join(", ")],
            ];
            let row: Vec<String> = cells
                .iter()
                .map(|lines| {
                    lines
                        .iter()
                        .map(|l| markdown_cell(l))
                        .collect::<Vec<_>>()
                        .join("<br>")
                })
                .collect();
            writeln!(w, "| {} |", row.join(" | "))?;
        }
        writeln!(w)?;
        super::audit::findings_markdown(w, &self.report)
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut doc = serde_json::to_value(self).map_err(io::Error::other)?;
        if let Some(map) = doc.as_object_mut() {
            map.insert(
                "failed".into(),
                serde_json::Value::Bool(self.exit_code() != 0),
            );
            map.insert("findings".into(), super::audit::v1_findings(&self.report));
        }
        super::write_json(w, &doc)
    }

    fn exit_code(&self) -> u8 {
        Inventory::exit_code(self)
    }
}

/// A key's name: its id, the other ids its bytes carry, or that only its id is known.
fn key_name(k: &KeyEntry) -> String {
    let mut s = format!("key {}", k.key_id);
    if !k.other_ids.is_empty() {
        s += &format!(
            " (also committed as {}: one key under several ids)",
            k.other_ids.join(", ")
        );
    }
    if k.public_key.is_none() {
        s += " (known by its id only: no committed key verifies its signatures)";
    }
    s
}

fn job(u: &SigningUse) -> String {
    let mut s = format!(
        "{} {} (job {}) reads {}",
        u.repository, u.workflow, u.job, u.secret
    );
    if let Some(e) = &u.environment {
        s += &format!(" in environment {e}");
    }
    if !u.basis.is_empty() {
        s += &format!(
            " [{}]",
            match u.basis {
                "named" => "the workflow names the key",
                "releases" => "the key signs this repository's releases",
                _ => "the one key this repository commits",
            }
        );
    }
    s
}

fn place(p: &SecretPlace) -> String {
    let readers = match p.readable_by.len() {
        0 => String::new(),
        1 => format!(", readable by {}", p.readable_by[0]),
        n => format!(
            ", readable by {n} repositories: {}",
            p.readable_by.join(", ")
        ),
    };
    match p.store {
        "environment" => format!(
            "{}: environment secret ({} of {}){readers}",
            p.name,
            p.environment.as_deref().unwrap_or("?"),
            p.repository.as_deref().unwrap_or("?")
        ),
        "repository" => format!(
            "{}: repository secret of {}{readers}",
            p.name,
            p.repository.as_deref().unwrap_or("?")
        ),
        "organization" => format!(
            "{}: organisation secret (visibility {}){readers}",
            p.name,
            p.visibility.as_deref().unwrap_or("unknown")
        ),
        _ => format!(
            "{}: not found among the secrets {} can read (or not readable with this token)",
            p.name,
            p.repository.as_deref().unwrap_or("?")
        ),
    }
}

fn state(k: &KeyEntry) -> String {
    let mut parts = Vec::new();
    if !k.state.revoked_in.is_empty() {
        parts.push(format!("revoked in {}", k.state.revoked_in.join(", ")));
    }
    if let Some(until) = &k.state.valid_until {
        parts.push(match k.state.validity {
            "expired" => format!("expired {until}"),
            "due" => format!("expires {until} (within 30 days)"),
            _ => format!("valid until {until}"),
        });
    }
    if let Some(to) = &k.state.rotated_to {
        parts.push(format!("rotated to {to}"));
    }
    if k.public_key.is_none() {
        parts.push("committed nowhere".into());
    }
    if parts.is_empty() {
        "in use".into()
    } else {
        parts.join("; ")
    }
}

/// The text block of one key.
fn key_lines(k: &KeyEntry) -> Vec<(&'static str, String)> {
    let mut lines = vec![("KEY", key_name(k))];
    if let Some(p) = &k.public_key {
        lines.push(("public key", p.clone()));
    }
    if let Some(f) = &k.fingerprint {
        lines.push(("fingerprint", f.clone()));
    }
    for c in &k.committed {
        lines.push((
            "committed in",
            format!("{} {} (as {})", c.repository, c.path, c.key_id),
        ));
    }
    for j in &k.signing_jobs {
        lines.push(("signs with", job(j)));
    }
    for s in &k.secrets {
        lines.push(("stored", place(s)));
    }
    for l in &k.last_releases {
        let how = if l.verified {
            ""
        } else {
            " (by id: not verified)"
        };
        lines.push(("last release", format!("{} {}{how}", l.repository, l.tag)));
    }
    lines.push(("state", state(k)));
    lines.push((
        "blast radius",
        if k.blast_radius.is_empty() {
            "no repository".into()
        } else {
            match k.blast_radius.len() {
                1 => format!("{} (1 repository)", k.blast_radius[0]),
                n => format!("{} ({n} repositories)", k.blast_radius.join(", ")),
            }
        },
    ));
    lines
}

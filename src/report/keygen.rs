//! `warden keygen`: the key id, where each half went, and how to store the secret half in the
//! GitHub environment that signs releases.

use std::io::{self, Write};

use super::Report;
use crate::markup::{markdown_code, text_value};
use crate::release::keygen::KeygenReport;

impl Report for KeygenReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let sk = text_value(&self.secret_key.display().to_string()).into_owned();
        let rev = text_value(&self.revocation.display().to_string()).into_owned();
        let protection = if self.encrypted {
            "encrypted"
        } else {
            "unencrypted"
        };
        writeln!(w, "key id      {}", self.key_id)?;
        writeln!(
            w,
            "public key  {}  (commit this file)",
            text_value(&self.public_key.display().to_string())
        )?;
        writeln!(
            w,
            "secret key  {sk}  ({protection}, mode 0600; never commit it)"
        )?;
        writeln!(
            w,
            "revocation  {rev}  (mode 0600; keep it offline with the backup: if the key is lost or stolen, `warden keys revoke {} --statement {rev}`)",
            self.key_id
        )?;
        writeln!(
            w,
            "\nStore the secret key in the GitHub environment that signs releases (e.g. \"release\"):"
        )?;
        writeln!(
            w,
            "  gh secret set MINISIGN_SECRET_KEY --env release < {sk}"
        )?;
        // The commands of docs/release.md's runbook: a password from a variable is piped as it is
        // (printf is a shell builtin: the password is on no process's command line).
        match (&self.password_env, self.encrypted) {
            (Some(var), true) => writeln!(
                w,
                "  printf '%s' \"${}\" | gh secret set MINISIGN_PASSWORD --env release",
                text_value(var)
            )?,
            (None, true) => writeln!(
                w,
                "  gh secret set MINISIGN_PASSWORD --env release   (it asks for the password)"
            )?,
            _ => {}
        }
        writeln!(
            w,
            "then remove the local copy once it is backed up offline."
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "### warden keygen: key {}\n\nPublic key {}; the secret key is not shown.",
            self.key_id,
            markdown_code(&self.public_key.display().to_string())
        )
    }

    fn exit_code(&self) -> u8 {
        0
    }
}

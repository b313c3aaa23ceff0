//! `warden keys revoke` and `keys list`, and `verify` honouring `keys/revoked/` (issue 25, first
//! part): a revoked key's signatures fail, naming when and why; the statement verifies with the
//! `minisign` CLI; a tampered statement is never ignored.

use std::path::Path;

use crate::common::*;

/// The key id `warden keys list` shows for the only trusted key of `dir/keys`.
fn only_key_id(dir: &Path) -> String {
    let out = run(warden(dir).args(["keys", "list", "--format", "json"])).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    doc["trusted"][0]["key_id"].as_str().unwrap().to_string()
}

#[test]
fn a_revoked_key_stops_working_and_the_statement_verifies_with_minisign() {
    let t = tempfile::tempdir().unwrap();
    let secret = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("keys")).unwrap();
    let (_, old_sk) = keypair(secret.path(), "old");
    let (_, new_sk) = keypair(secret.path(), "new");
    std::fs::copy(secret.path().join("old.pub"), t.path().join("keys/old.pub")).unwrap();
    let old = only_key_id(t.path());
    std::fs::copy(secret.path().join("new.pub"), t.path().join("keys/new.pub")).unwrap();
    write(&t.path().join("dist/app"), b"the release");
    write(&t.path().join("next/app"), b"the next release");
    run(warden(t.path())
        .args(["sign", "dist", "--tag", "v1", "--secret-key"])
        .arg(&old_sk))
    .expect(0);
    run(warden(t.path())
        .args(["sign", "next", "--tag", "v2", "--secret-key"])
        .arg(&new_sk))
    .expect(0);
    run(warden(t.path()).args(["verify", "dist"])).expect(0);

    // The id must be the key's: nothing written otherwise.
    let out = run(warden(t.path())
        .args([
            "keys",
            "revoke",
            "0000000000000000",
            "--reason",
            "leaked",
            "--secret-key",
        ])
        .arg(&old_sk))
    .expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: the secret key is key {old}, not 0000000000000000, and keys has no .pub file for it (a revocation by another key names a key of the folder): nothing revoked\n")
    );
    assert!(!t.path().join("keys/revoked").exists());

    let out = run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args([
            "keys",
            "revoke",
            &old,
            "--reason",
            "printed in a CI log",
            "--secret-key",
        ])
        .arg(&old_sk))
    .expect(0);
    assert_eq!(
        out.stdout,
        format!("revoked key {old}: keys/revoked/{old}.toml and keys/revoked/{old}.toml.minisig\nCommit both: `warden verify` with this keys folder refuses the key's signatures from now on.\n")
    );
    // Revoking twice is refused.
    run(warden(t.path())
        .args(["keys", "revoke", &old, "--reason", "again", "--secret-key"])
        .arg(&old_sk))
    .expect(2);

    let out = run(warden(t.path()).args(["keys", "list"])).expect(0);
    let new = out.stdout.lines().next().unwrap()[9..25].to_string();
    assert_eq!(
        out.stdout,
        format!("trusted  {new}  keys/new.pub\nrevoked  {old}  at 2025-12-02T03:00:10Z: printed in a CI log (signed by itself; keys/revoked/{old}.toml)\nkeys: 1 trusted, 1 revoked\n")
    );

    // `warden check` runs the same consistency check.
    let check = run(warden(t.path()).arg("check"));
    let keys_lines: Vec<&str> = check
        .stdout
        .lines()
        .filter(|l| l.contains("  keys  "))
        .collect();
    assert_eq!(
        keys_lines,
        [
            format!("ok    keys         keys/new.pub: minisign public key {new}"),
            format!("ok    keys         keys/old.pub: minisign public key {old}"),
            format!("ok    keys         keys/revoked/{old}.toml: key {old} revoked at 2025-12-02T03:00:10Z: printed in a CI log"),
        ]
    );

    // The old key's release fails, naming the revocation; the new key's still verifies.
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(1);
    let why = format!("signed by key {old}, revoked at 2025-12-02T03:00:10Z (printed in a CI log; keys/revoked/{old}.toml): not trusted");
    assert_eq!(
        out.stdout,
        format!(
            "FAIL  dist/SHA256SUMS  {why}\nFAIL  dist/app  {why}\n0 verified, 2 failed, 0 errors\n"
        )
    );
    run(warden(t.path()).args(["verify", "next"])).expect(0);
    // A user who pinned the old key's file sees the revocation only where told to look.
    std::fs::copy(
        secret.path().join("old.pub"),
        t.path().join("pinned-old.pub"),
    )
    .unwrap();
    run(warden(t.path()).args(["verify", "dist", "--public-key", "pinned-old.pub"])).expect(0);
    let out = run(warden(t.path()).args([
        "verify",
        "dist",
        "--public-key",
        "pinned-old.pub",
        "--revocations",
        "keys/revoked",
    ]))
    .expect(1);
    assert!(
        out.stdout
            .starts_with(&format!("FAIL  dist/SHA256SUMS  {why}\n")),
        "{}",
        out.stdout
    );
    let out = run(warden(t.path()).args(["verify", "dist", "--revocations", "nowhere"])).expect(2);
    assert_eq!(out.stderr, "warden: --revocations nowhere: not a folder\n");

    // The statement is a minisign-signed file: the CLI verifies it with the key it names.
    if let Some(minisign) = minisign() {
        let statement = t.path().join(format!("keys/revoked/{old}.toml"));
        let text = std::fs::read_to_string(&statement).unwrap();
        let public = text
            .lines()
            .find_map(|l| l.strip_prefix("public_key = \""))
            .unwrap()
            .trim_end_matches('"')
            .to_string();
        let checked = std::process::Command::new(minisign)
            .args(["-V", "-H", "-m"])
            .arg(&statement)
            .args(["-P", &public])
            .output()
            .unwrap();
        assert!(checked.status.success(), "{checked:?}");

        // A statement changed after signing is not ignored: list fails, verify refuses.
        std::fs::write(&statement, text.replace("printed in a CI log", "routine")).unwrap();
        let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
        assert_eq!(
            out.stdout,
            format!("FAIL     keys/revoked/{old}.toml.minisig: does not verify: the file's signature does not match its contents (altered file or signature)\nkeys: not usable until this is fixed\n")
        );
        let out = run(warden(t.path()).args(["verify", "next"])).expect(2);
        assert_eq!(
            out.stderr,
            format!("warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): keys/revoked/{old}.toml.minisig: does not verify: the file's signature does not match its contents (altered file or signature)\n")
        );
    }
}

/// A lost key: the statement `keygen` wrote beside it is installed with `--statement`, after it
/// is checked; a statement for another key is refused.
#[test]
fn the_statement_keygen_wrote_revokes_a_lost_key() {
    let t = tempfile::tempdir().unwrap();
    let secret = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("keys")).unwrap();
    let (pk, sk) = keypair(secret.path(), "lost");
    let (_, other_sk) = keypair(secret.path(), "other");
    std::fs::copy(&pk, t.path().join("keys/lost.pub")).unwrap();
    let id = only_key_id(t.path());
    let statement = format!("{}.revoke.toml", sk.display());
    let other = format!("{}.revoke.toml", other_sk.display());
    let out = run(warden(t.path()).args(["keys", "revoke", &id, "--statement", &other])).expect(2);
    assert!(
        out.stderr
            .ends_with(&format!(", not {id}: nothing installed\n")),
        "{}",
        out.stderr
    );
    // The secret key is gone: only the statement is left.
    std::fs::remove_file(&sk).unwrap();
    let out =
        run(warden(t.path()).args(["keys", "revoke", &id, "--statement", &statement])).expect(0);
    assert_eq!(
        out.stdout,
        format!("revoked key {id}: keys/revoked/{id}.toml and keys/revoked/{id}.toml.minisig\nCommit both: `warden verify` with this keys folder refuses the key's signatures from now on.\n")
    );
    let out = run(warden(t.path()).args(["keys", "list"])).expect(0);
    assert!(
        out.stdout.starts_with(&format!("revoked  {id}  at ")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(": revoked with the statement made when the key was generated (the key was lost or stolen) (signed by itself;"), "{}", out.stdout);
}

/// Rotation: the new key succeeds the old one, signed by both. A downstream user who pinned the
/// old public key follows the chain with `--follow-rotations`; a forked chain fails closed.
#[test]
fn a_pinned_old_key_follows_its_rotation_and_a_fork_fails() {
    let t = tempfile::tempdir().unwrap();
    let secret = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("keys")).unwrap();
    std::fs::create_dir_all(t.path().join("pinned")).unwrap();
    let (a_pk, a_sk) = keypair(secret.path(), "a");
    let (_, b_sk) = keypair(secret.path(), "b");
    let (_, c_sk) = keypair(secret.path(), "c");
    std::fs::copy(&a_pk, t.path().join("keys/a.pub")).unwrap();
    std::fs::copy(&a_pk, t.path().join("pinned/a.pub")).unwrap();
    let a = only_key_id(t.path());
    write(&t.path().join("v2/app"), b"release two");
    let out = run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args(["keys", "rotate", "--old-secret-key"])
        .arg(&a_sk)
        .arg("--new-secret-key")
        .arg(&b_sk))
    .expect(0);
    let b = out.stdout.split(" to ").nth(1).unwrap()[..16].to_string();
    assert_eq!(
        out.stdout,
        format!("rotated key {a} to {b}: keys/{b}.pub and keys/rotations/{a}-{b}.toml (signed by both keys)\nCommit keys/: users who pinned {a} follow it with `warden verify --public-key OLD.pub --follow-rotations`.\n")
    );
    let out = run(warden(t.path()).args(["keys", "list"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("trusted  {b}  keys/{b}.pub\ntrusted  {a}  keys/a.pub\nrotated  {a} -> {b}  at 2025-12-02T03:00:10Z (keys/rotations/{a}-{b}.toml)\nsigner   {b}, {a} are one signer: a key and its successors count once (keys/rotations/{a}-{b}.toml)\nkeys: 2 trusted, 0 revoked\n")
    );
    run(warden(t.path())
        .args(["sign", "v2", "--tag", "v2", "--secret-key"])
        .arg(&b_sk))
    .expect(0);
    // Pinned to the old key: not trusted, unless the chain is followed.
    let out =
        run(warden(t.path()).args(["verify", "v2", "--public-key", "pinned/a.pub"])).expect(1);
    assert!(
        out.stdout.contains(&format!(
            "signed by key {b}, which is not trusted (trusted: {a})"
        )),
        "{}",
        out.stdout
    );
    run(warden(t.path()).args([
        "verify",
        "v2",
        "--public-key",
        "pinned/a.pub",
        "--follow-rotations",
    ]))
    .expect(0);
    // Both signatures of the statement verify with the minisign CLI.
    if let Some(minisign) = minisign() {
        let statement = t.path().join(format!("keys/rotations/{a}-{b}.toml"));
        for (id, public) in [
            (&a, t.path().join("keys/a.pub")),
            (&b, t.path().join(format!("keys/{b}.pub"))),
        ] {
            let checked = std::process::Command::new(&minisign)
                .args(["-V", "-H", "-m"])
                .arg(&statement)
                .arg("-x")
                .arg(format!("{}.{id}.minisig", statement.display()))
                .arg("-p")
                .arg(&public)
                .output()
                .unwrap();
            assert!(checked.status.success(), "{checked:?}");
        }
    }
    // A second successor is refused by `keys rotate`…
    run(warden(t.path())
        .args(["keys", "rotate", "--old-secret-key"])
        .arg(&a_sk)
        .arg("--new-secret-key")
        .arg(&c_sk))
    .expect(2);
    // …and one made elsewhere and copied in forks the chain: verification fails closed.
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    run(warden(t.path())
        .args([
            "keys",
            "rotate",
            "--keys-dir",
            "elsewhere",
            "--old-secret-key",
        ])
        .arg(&a_sk)
        .arg("--new-secret-key")
        .arg(&c_sk))
    .expect(0);
    for entry in std::fs::read_dir(t.path().join("elsewhere/rotations")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(
            &p,
            t.path().join("keys/rotations").join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    let out = run(warden(t.path()).args([
        "verify",
        "v2",
        "--public-key",
        "pinned/a.pub",
        "--follow-rotations",
    ]))
    .expect(2);
    assert!(
        out.stderr
            .contains(&format!("key {a} has two successors (")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.ends_with("a forked chain is not followed\n"),
        "{}",
        out.stderr
    );
    // `keys list` names the fork (exit 1).
    let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
    let fork = out
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL "))
        .unwrap_or_default()
        .to_string();
    assert!(
        fork.starts_with(&format!("FAIL     keys/rotations/{a}-"))
            && fork.contains(&format!(".toml: key {a} has two successors ("))
            && fork.ends_with("a forked chain is not followed"),
        "{}",
        out.stdout
    );
}

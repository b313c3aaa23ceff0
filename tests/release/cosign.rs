//! Issue 25, second part: `keys/policy.toml` (threshold, `valid_until`, names), co-signatures
//! `SHA256SUMS.<KEYID>.minisig` made by `sign --cosign`, "K of N required signatures", and a
//! revocation by other keys needing the threshold. Each scenario asserts the whole output.

use std::path::{Path, PathBuf};

use release_warden::minisign::PublicKey;

use crate::common::*;

/// The id of the public key in `file`, as warden shows it.
fn id_of(file: &Path) -> String {
    PublicKey::from_file(file).unwrap().key_id.to_string()
}

/// A repository with three keys in `keys/` (alice, bob, carol) and their secret halves elsewhere.
struct Folder {
    repo: tempfile::TempDir,
    _secrets: tempfile::TempDir,
    /// (id, secret key) of alice, bob and carol.
    keys: Vec<(String, PathBuf)>,
}

impl Folder {
    fn new(policy: &str) -> Folder {
        let repo = tempfile::tempdir().unwrap();
        let secrets = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("keys")).unwrap();
        let mut keys = Vec::new();
        for name in ["alice", "bob", "carol"] {
            let (pk, sk) = keypair(secrets.path(), name);
            std::fs::copy(&pk, repo.path().join(format!("keys/{name}.pub"))).unwrap();
            keys.push((id_of(&pk), sk));
        }
        let policy = policy
            .replace("{A}", &keys[0].0)
            .replace("{B}", &keys[1].0)
            .replace("{C}", &keys[2].0);
        write(&repo.path().join("keys/policy.toml"), policy.as_bytes());
        write(&repo.path().join("dist/app"), b"the release");
        Folder {
            repo,
            _secrets: secrets,
            keys,
        }
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    fn id(&self, i: usize) -> &str {
        &self.keys[i].0
    }

    fn sign(&self, i: usize) -> Run {
        run(warden(self.dir())
            .args(["sign", "dist", "--tag", "v1", "--secret-key"])
            .arg(&self.keys[i].1))
    }

    fn cosign(&self, i: usize) -> Run {
        run(warden(self.dir())
            .args(["sign", "--cosign", "dist", "--secret-key"])
            .arg(&self.keys[i].1))
    }
}

const TWO_OF_THREE: &str = "threshold = 2\n\n[keys.{A}]\nname = \"Alice\"\nrole = \"release manager\"\n\n[keys.{B}]\nname = \"Bob\"\nvalid_until = 2099-12-31\n";

#[test]
fn a_threshold_of_two_needs_two_distinct_keys() {
    let f = Folder::new(TWO_OF_THREE);
    let (a, b, c) = (f.id(0), f.id(1), f.id(2));
    let out = run(warden(f.dir()).args(["keys", "list"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("trusted  {a}  keys/alice.pub  Alice, release manager\ntrusted  {b}  keys/bob.pub  Bob, until 2099-12-31\ntrusted  {c}  keys/carol.pub\npolicy   2 distinct signers must sign a release (keys/policy.toml)\nkeys: 3 trusted, 0 revoked\n")
    );

    // One signature is one of two.
    f.sign(0).expect(0);
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist/SHA256SUMS  1 of 2 required signatures (keys/policy.toml)\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n"
    );

    // Co-signing: the same key again, a key the folder does not trust, then bob.
    let out = f.cosign(0).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {a} signed dist/SHA256SUMS already: a second signature by one key counts once; nothing written\n")
    );
    let stranger = tempfile::tempdir().unwrap();
    let (spk, ssk) = keypair(stranger.path(), "stranger");
    let s = id_of(&spk);
    let out = run(warden(f.dir())
        .args(["sign", "--cosign", "dist", "--secret-key"])
        .arg(&ssk))
    .expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {s} is not a trusted key of the keys folder (trusted: {a}, {b}, {c}): add its .pub first; nothing written\n")
    );
    assert_eq!(
        std::fs::read_dir(f.dir().join("dist")).unwrap().count(),
        4,
        "nothing written by a refused co-signature"
    );
    let out = f.cosign(1).expect(0);
    assert_eq!(
        out.stdout,
        format!("co-signed dist/SHA256SUMS  -> dist/SHA256SUMS.{b}.minisig\nkey {b} (Bob): 2 of 2 required signatures\n")
    );
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist/SHA256SUMS  key {a} (keys/alice.pub)  co-signed by {b}  (2 of 2 required)  tag v1\nOK    dist/app  key {a} (keys/alice.pub)  tag v1\n2 verified, 0 failed, 0 errors\n")
    );
    let out = run(warden(f.dir()).args(["verify", "dist", "--format", "json"])).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        doc["results"][0]["signers"],
        serde_json::json!([
            {"key_id": a, "signature": "dist/SHA256SUMS.minisig", "name": "Alice", "counted": true},
            {"key_id": b, "signature": format!("dist/SHA256SUMS.{b}.minisig"), "name": "Bob", "counted": true},
        ])
    );
    assert_eq!(doc["results"][0]["required_signatures"], 2);

    // The co-signature is a plain minisign signature of SHA256SUMS.
    if let Some(minisign) = minisign() {
        let checked = std::process::Command::new(minisign)
            .current_dir(f.dir())
            .args(["-V", "-m", "dist/SHA256SUMS", "-x"])
            .arg(format!("dist/SHA256SUMS.{b}.minisig"))
            .args(["-p", "keys/bob.pub"])
            .output()
            .unwrap();
        assert!(checked.status.success(), "{checked:?}");
    }

    // The same key twice counts once: bob's co-signature replaced by a copy of alice's.
    let cosig = f.dir().join(format!("dist/SHA256SUMS.{b}.minisig"));
    let bobs = std::fs::read(&cosig).unwrap();
    std::fs::remove_file(&cosig).unwrap();
    std::fs::copy(
        f.dir().join("dist/SHA256SUMS.minisig"),
        f.dir().join(format!("dist/SHA256SUMS.{a}.minisig")),
    )
    .unwrap();
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  1 of 2 required signatures (keys/policy.toml); dist/SHA256SUMS.{a}.minisig not counted: the same key signed twice: counted once\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
    std::fs::remove_file(f.dir().join(format!("dist/SHA256SUMS.{a}.minisig"))).unwrap();

    // A co-signature renamed to another key's name fails the list.
    std::fs::write(f.dir().join(format!("dist/SHA256SUMS.{c}.minisig")), &bobs).unwrap();
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  dist/SHA256SUMS.{c}.minisig: named for key {c} but signed by key {b} (a renamed co-signature)\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
    std::fs::remove_file(f.dir().join(format!("dist/SHA256SUMS.{c}.minisig"))).unwrap();
    std::fs::write(&cosig, &bobs).unwrap();
    run(warden(f.dir()).args(["verify", "dist"])).expect(0);

    // A revoked co-signer fails the release, even with enough other signatures.
    f.cosign(2).expect(0);
    run(warden(f.dir())
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args([
            "keys",
            "revoke",
            c,
            "--reason",
            "laptop stolen",
            "--secret-key",
        ])
        .arg(&f.keys[2].1))
    .expect(0);
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  dist/SHA256SUMS.{c}.minisig: signed by key {c}, revoked at 2025-12-02T03:00:10Z (laptop stolen; keys/revoked/{c}.toml): not trusted\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
}

#[test]
fn a_key_past_valid_until_does_not_count() {
    let f = Folder::new("threshold = 2\n[keys.{B}]\nname = \"Bob\"\nvalid_until = 2020-01-01\n");
    let (a, b, c) = (f.id(0), f.id(1), f.id(2));
    f.sign(0).expect(0);
    let out = f.cosign(1).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {b} was trusted until 2020-01-01 (keys/policy.toml): it cannot co-sign; nothing written\n")
    );
    f.cosign(2).expect(0);
    run(warden(f.dir()).args(["verify", "dist"])).expect(0);
    // A file bob signed alone: the first signature is by a key past its end, so the file fails
    // on it (nothing beside it could stand in for it).
    write(&f.dir().join("solo/tool"), b"a tool");
    run(warden(f.dir())
        .args(["sign", "--no-checksums", "--secret-key"])
        .arg(&f.keys[1].1)
        .arg(f.dir().join("solo/tool")))
    .expect(0);
    let out = run(warden(f.dir()).args(["verify", "solo/tool"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  solo/tool  signed by key {b}, trusted until 2020-01-01 (keys/policy.toml): expired\n0 verified, 1 failed, 0 errors\n")
    );
    let out = run(warden(f.dir()).args(["keys", "list"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("trusted  {a}  keys/alice.pub\nexpired  {b}  keys/bob.pub  Bob, until 2020-01-01\ntrusted  {c}  keys/carol.pub\npolicy   2 distinct signers must sign a release (keys/policy.toml)\nkeys: 2 trusted, 1 expired, 0 revoked\n")
    );
}

#[test]
fn an_inconsistent_or_malformed_policy_is_named() {
    let f = Folder::new("threshold = 4\n[keys.0123456789ABCDEF]\nname = \"Dave\"\n");
    let out = run(warden(f.dir()).args(["keys", "list"])).expect(1);
    let (a, b, c) = (f.id(0), f.id(1), f.id(2));
    assert_eq!(
        out.stdout,
        format!("trusted  {a}  keys/alice.pub\ntrusted  {b}  keys/bob.pub\ntrusted  {c}  keys/carol.pub\npolicy   4 distinct signers must sign a release (keys/policy.toml)\nFAIL     keys/policy.toml names key 0123456789ABCDEF, which has no .pub file in the folder\nFAIL     keys/policy.toml: threshold 4 is above the 3 usable signers (trusted, not revoked, not expired; a key and its successors are one): no release can be signed\nkeys: not usable until these are fixed\n")
    );
    let out = run(warden(f.dir()).args(["check"]));
    assert!(
        out.stdout.contains(
            "keys/policy.toml names key 0123456789ABCDEF, which has no .pub file in the folder"
        ),
        "{}",
        out.all()
    );

    // Bad input: the file and the line, exit 2 from verify, nothing written.
    write(
        &f.dir().join("keys/policy.toml"),
        b"threshold = 2\n\n[keys.alice]\nname = \"Alice\"\n",
    );
    let out = run(warden(f.dir()).args(["verify", "dist"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): keys/policy.toml: line 3: [keys.alice]: not a key id (16 hex digits, as `warden keys list` shows)\n"
    );
    assert_eq!(std::fs::read_dir(f.dir().join("dist")).unwrap().count(), 1);
}

/// A key revoked by others (not itself) needs the threshold of other keys: the first holder
/// writes the statement, the second co-signs it; until then the folder does not load.
#[test]
fn a_revocation_by_other_keys_needs_the_threshold() {
    let f = Folder::new("threshold = 2\n");
    let (a, b, c) = (f.id(0), f.id(1), f.id(2));
    let revoke = |by: usize| {
        run(warden(f.dir())
            .env("SOURCE_DATE_EPOCH", "1764644410")
            .args([
                "keys",
                "revoke",
                c,
                "--reason",
                "carol left",
                "--secret-key",
            ])
            .arg(&f.keys[by].1))
    };
    let pending = format!("keys/revoked/{c}.toml: signed by 1 other key, and the policy asks for 2: another key holder adds a co-signature with `warden keys revoke {c} --secret-key THEIR_KEY`");
    let out = revoke(0).expect(0);
    assert_eq!(
        out.stdout,
        format!("revoked key {c}: keys/revoked/{c}.toml and keys/revoked/{c}.toml.minisig\nNot valid yet: {pending}. Do not commit it alone: until it is complete the keys folder does not load.\n")
    );
    let out = run(warden(f.dir()).args(["keys", "list"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL     {pending}\nkeys: not usable until this is fixed\n")
    );
    let out = revoke(0).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: keys/revoked/{c}.toml: key {a} signed this revocation already; another key holder must co-sign it\n")
    );
    let out = revoke(1).expect(0);
    assert_eq!(
        out.stdout,
        format!("revoked key {c}: keys/revoked/{c}.toml and keys/revoked/{c}.toml.{b}.minisig\nCommit both: `warden verify` with this keys folder refuses the key's signatures from now on.\n")
    );
    let out = run(warden(f.dir()).args(["keys", "list"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("trusted  {a}  keys/alice.pub\ntrusted  {b}  keys/bob.pub\nrevoked  {c}  at 2025-12-02T03:00:10Z: carol left (signed by key {a}; keys/revoked/{c}.toml)\npolicy   2 distinct signers must sign a release (keys/policy.toml)\nkeys: 2 trusted, 1 revoked\n")
    );
    revoke(2).expect(2);
}

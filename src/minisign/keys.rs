//! minisign key formats: key ids, public key boxes, secret keys (encrypted, unencrypted and
//! `minisign -G -W` keys with an all-zero checksum), and key generation.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use ed25519_dalek::{SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use crate::error::{Error, ParseError, Reason};
use crate::files::guarded::{self, SMALL_FILE_CAP};

const UNTRUSTED_PREFIX: &str = "untrusted comment: ";
const SIG_ALG_ED: [u8; 2] = *b"Ed";
const KDF_SCRYPT: [u8; 2] = *b"Sc";
const KDF_NONE: [u8; 2] = [0, 0];
const CHK_BLAKE2B: [u8; 2] = *b"B2";
const PUBLIC_KEY_BYTES: usize = 42;
const SECRET_KEY_BYTES: usize = 158;

/// The 8 random bytes shared by a key pair and every signature it makes. Compared as bytes,
/// shown as minisign 0.12 and the crate show it: the little-endian u64, 16 upper-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub [u8; 8]);

/// A key id in JSON: as it is shown (`8F457D1A3C3B50B5`).
pub(crate) fn serialize_key_id<S: serde::Serializer>(
    id: &KeyId,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(id)
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016X}", u64::from_le_bytes(self.0))
    }
}

impl KeyId {
    /// The id as shown (16 hex digits, either case); `None` for anything else.
    pub(crate) fn from_hex(text: &str) -> Option<KeyId> {
        if text.len() != 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(text, 16)
            .ok()
            .map(|v| KeyId(v.to_le_bytes()))
    }

    /// The id exactly as warden shows it (16 upper-case hex digits): how a file name or a saved
    /// report carries one.
    pub(crate) fn from_shown(text: &str) -> Option<KeyId> {
        KeyId::from_hex(text).filter(|k| k.to_string() == text)
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({self})")
    }
}

/// Splits a two-line minisign box into its comment and its base64 line, tolerating CRLF.
/// Returns 1-based line numbers with the errors.
fn split_box(text: &str, what: &str) -> Result<(String, String), ParseError> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let comment = lines
        .next()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| ParseError::at(1, format!("empty file, expected a minisign {what}")))?;
    let comment = comment.strip_prefix(UNTRUSTED_PREFIX).ok_or_else(|| {
        ParseError::at(
            1,
            format!("expected \"{UNTRUSTED_PREFIX}…\" (a minisign {what} box)"),
        )
    })?;
    let encoded = lines
        .next()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| ParseError::at(2, format!("missing: expected the base64 {what} line")))?;
    for (i, rest) in lines.enumerate() {
        if !rest.trim().is_empty() {
            return Err(ParseError::at(i + 3, "unexpected text after the key line"));
        }
    }
    Ok((comment.to_string(), encoded.to_string()))
}

/// A minisign public key: key id + Ed25519 public key. `parse` reads the `.pub` box;
/// `Display` writes it in the format of the minisign C tool.
///
/// Two public keys are equal when their Ed25519 keys are: the key id is an unsigned label that
/// anyone can put on a key pair of their own, so it finds a key and never proves one.
#[derive(Clone)]
pub struct PublicKey {
    pub key_id: KeyId,
    pub(crate) key: VerifyingKey,
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.key.as_bytes() == other.key.as_bytes()
    }
}

impl Eq for PublicKey {}

impl PublicKey {
    /// Parses a `.pub` file: `untrusted comment: …` then 56 base64 characters.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let (_, encoded) = split_box(text, "public key")?;
        Self::from_base64(&encoded).map_err(|m| ParseError::at(2, m))
    }

    /// Reads and parses a `.pub` file (at most 64 KiB, UTF-8); errors name the file and line.
    pub fn from_file(path: &Path) -> Result<Self, Error> {
        let text = guarded::read_small_file(path, SMALL_FILE_CAP, "a minisign public key")?;
        Self::parse(&text).map_err(|e| e.in_origin(path.display().to_string()))
    }

    /// Parses the base64 line alone (what `minisign -P` takes).
    pub(crate) fn from_base64(encoded: &str) -> Result<Self, Reason> {
        if encoded.len() != 56 {
            // The length alone says what was given instead; nothing of it is quoted.
            let hint = if encoded.len() == 212 {
                ": this is a secret key, not a public key (keep it out of the repository)"
            } else {
                ""
            };
            return Err(format!(
                "expected 56 base64 characters, found {}{hint}",
                encoded.chars().count()
            )
            .into());
        }
        let bytes = BASE64
            .decode(encoded)
            .map_err(|_| "expected 56 base64 characters: not valid base64".to_string())?;
        if bytes.len() != PUBLIC_KEY_BYTES {
            return Err(format!("decodes to {} bytes, expected 42", bytes.len()).into());
        }
        if bytes[..2] != SIG_ALG_ED {
            return Err("not an Ed25519 minisign public key (must start with \"RW\")".into());
        }
        let mut key_id = [0u8; 8];
        key_id.copy_from_slice(&bytes[2..10]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes[10..42]);
        let key = VerifyingKey::from_bytes(&key)
            .map_err(|_| "not a valid Ed25519 public key".to_string())?;
        Ok(PublicKey {
            key_id: KeyId(key_id),
            key,
        })
    }

    pub(crate) fn to_base64(&self) -> String {
        let mut bytes = Vec::with_capacity(PUBLIC_KEY_BYTES);
        bytes.extend_from_slice(&SIG_ALG_ED);
        bytes.extend_from_slice(&self.key_id.0);
        bytes.extend_from_slice(self.key.as_bytes());
        BASE64.encode(bytes)
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{UNTRUSTED_PREFIX}minisign public key {}", self.key_id)?;
        writeln!(f, "{}", self.to_base64())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({} {})", self.key_id, self.to_base64())
    }
}

/// The secret key text as stored (box or bare base64 line), before any decoding.
/// Wiped on drop; never printed.
pub struct SecretKeyText(Zeroizing<String>);

impl SecretKeyText {
    pub fn new(text: String) -> Self {
        SecretKeyText(Zeroizing::new(text))
    }
}

impl fmt::Debug for SecretKeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKeyText(<redacted>)")
    }
}

/// A password, wiped on drop, never printed.
pub struct Password(Zeroizing<String>);

impl Password {
    pub fn new(password: String) -> Self {
        Password(Zeroizing::new(password))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// For "type it again" prompts.
    pub fn matches(&self, other: &Password) -> bool {
        *self.0 == *other.0
    }

    /// The password without the line break a stored secret often ends with (`echo pw > file`);
    /// `None` when it ends with none.
    pub fn without_line_break(&self) -> Option<Password> {
        let trimmed = self
            .0
            .strip_suffix("\r\n")
            .or_else(|| self.0.strip_suffix('\n'))?;
        Some(Password::new(trimmed.to_string()))
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// What the secret key text holds, known before any password is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKeyProtection {
    Encrypted,
    Unencrypted,
}

/// A decoded, decrypted and checked minisign secret key, ready to sign.
/// The Ed25519 key is wiped on drop (ed25519-dalek `zeroize`); `Debug` shows only the key id.
pub struct SecretKey {
    pub(crate) key_id: KeyId,
    signing: SigningKey,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({} <redacted>)", self.key_id)
    }
}

/// The 158 decoded bytes, wiped on drop.
struct RawSecretKey(Zeroizing<Vec<u8>>);

impl RawSecretKey {
    /// Decodes the box or the bare base64 line. Error messages never quote the text: a base64
    /// decoder's "invalid byte X at offset N" would leak part of the key.
    fn decode(text: &SecretKeyText) -> Result<Self, ParseError> {
        let lines: Vec<(usize, &str)> = text
            .0
            .split('\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        let (line_no, encoded) =
            match lines.as_slice() {
                [] => return Err(ParseError::whole("empty: expected a minisign secret key")),
                [(_, first), rest @ ..] if first.starts_with("untrusted comment:") => match rest {
                    [] => {
                        return Err(ParseError::at(
                            2,
                            "missing: expected the base64 secret key line",
                        ))
                    }
                    [(n, encoded)] => (*n, *encoded),
                    [_, (n, _), ..] => {
                        return Err(ParseError::at(*n, "unexpected text after the key line"))
                    }
                },
                [(n, only)] => (*n, *only),
                [_, (n, _), ..] => return Err(ParseError::at(
                    *n,
                    "expected \"untrusted comment: …\" on the first line, or a single base64 line",
                )),
            };
        if encoded.len() != 212 {
            let what = if encoded.len() == 56 {
                "this is a public key, not a secret key"
            } else {
                "truncated or not a minisign secret key"
            };
            return Err(ParseError::at(
                line_no,
                format!(
                    "expected 212 base64 characters, found {} ({what})",
                    encoded.len()
                ),
            ));
        }
        let bytes = Zeroizing::new(BASE64.decode(encoded).map_err(|_| {
            ParseError::at(line_no, "expected 212 base64 characters: not valid base64")
        })?);
        if bytes.len() != SECRET_KEY_BYTES {
            return Err(ParseError::at(line_no, "does not decode to 158 bytes"));
        }
        let raw = RawSecretKey(bytes);
        if raw.sig_alg() != SIG_ALG_ED {
            return Err(ParseError::at(
                line_no,
                "not an Ed25519 minisign secret key",
            ));
        }
        if raw.0[4..6] != CHK_BLAKE2B {
            return Err(ParseError::at(
                line_no,
                "unsupported checksum algorithm (expected B2)",
            ));
        }
        if raw.kdf_alg() != KDF_SCRYPT && raw.kdf_alg() != KDF_NONE {
            return Err(ParseError::at(
                line_no,
                "unsupported key encryption (expected scrypt or none)",
            ));
        }
        Ok(raw)
    }

    fn sig_alg(&self) -> [u8; 2] {
        [self.0[0], self.0[1]]
    }
    fn kdf_alg(&self) -> [u8; 2] {
        [self.0[2], self.0[3]]
    }
    fn key_id(&self) -> KeyId {
        let mut id = [0u8; 8];
        id.copy_from_slice(&self.0[54..62]);
        KeyId(id)
    }
    fn checksum(&self) -> &[u8] {
        &self.0[126..158]
    }
    fn expected_checksum(&self) -> [u8; 32] {
        let mut h = Blake2b::<U32>::new();
        h.update(&self.0[0..2]);
        h.update(&self.0[54..126]);
        h.finalize().into()
    }
}

/// Whether the 212-character base64 line is a minisign secret key: encrypted, or unencrypted
/// and consistent (its public half derives from its seed).
pub(crate) fn secret_key_line(line: &str) -> Option<SecretKeyProtection> {
    let raw = RawSecretKey::decode(&SecretKeyText::new(line.to_string())).ok()?;
    if raw.kdf_alg() == KDF_SCRYPT {
        return Some(SecretKeyProtection::Encrypted);
    }
    let mut seed = Zeroizing::new([0u8; 32]);
    seed.copy_from_slice(&raw.0[62..94]);
    (SigningKey::from_bytes(&seed).verifying_key().as_bytes() == &raw.0[94..126])
        .then_some(SecretKeyProtection::Unencrypted)
}

/// Reads the protection of a secret key without a password, to decide whether to ask for one.
pub fn secret_key_protection(text: &SecretKeyText) -> Result<SecretKeyProtection, ParseError> {
    let raw = RawSecretKey::decode(text)?;
    Ok(if raw.kdf_alg() == KDF_SCRYPT {
        SecretKeyProtection::Encrypted
    } else {
        SecretKeyProtection::Unencrypted
    })
}

impl SecretKey {
    /// Decodes, decrypts (scrypt) and checks a secret key.
    ///
    /// Unencrypted keys are accepted with a valid checksum or with the all-zero checksum that
    /// `minisign -G -W` writes; in both cases the public half stored in the key must match the
    /// one derived from the seed, so a corrupted key is still caught.
    pub fn load(text: &SecretKeyText, password: Option<&Password>) -> Result<Self, ParseError> {
        let raw = RawSecretKey::decode(text)?;
        let raw = if raw.kdf_alg() == KDF_SCRYPT {
            let password = password.ok_or_else(|| {
                ParseError::whole("the secret key is encrypted: a password is needed")
            })?;
            decrypt(&raw, password)?
        } else {
            let checksum = raw.checksum();
            let zero = checksum.iter().all(|b| *b == 0);
            if !zero && checksum != raw.expected_checksum() {
                return Err(ParseError::whole(
                    "the secret key's checksum does not match: the key is corrupted",
                ));
            }
            raw
        };
        let mut seed = Zeroizing::new([0u8; 32]);
        seed.copy_from_slice(&raw.0[62..94]);
        let signing = SigningKey::from_bytes(&seed);
        if signing.verifying_key().as_bytes() != &raw.0[94..126] {
            return Err(ParseError::whole(
                "the secret key is corrupted: its public half does not match its seed",
            ));
        }
        Ok(SecretKey {
            key_id: raw.key_id(),
            signing,
        })
    }

    pub fn public_key(&self) -> PublicKey {
        PublicKey {
            key_id: self.key_id,
            key: self.signing.verifying_key(),
        }
    }

    pub(crate) fn signing_key(&self) -> &SigningKey {
        &self.signing
    }
}

/// Where the encrypted part of a secret key lives: key id, Ed25519 key, checksum.
const ENCRYPTED: std::ops::Range<usize> = 54..158;
/// The scrypt limits the minisign crate writes into the keys it encrypts (libsodium's
/// opslimit/memlimit, mapped to N = 2^15, r = 8, p = 1: 32 MiB, fast to decrypt in CI).
const OPSLIMIT: u64 = 1_048_576;
const MEMLIMIT: u64 = 33_554_432;
/// minisign's ceilings: N = 2^20 and 1 GiB. A key asking for more is refused, not tried.
const N_LOG2_MAX: u8 = 20;
const MEMLIMIT_MAX: u64 = 1_073_741_824;
/// At most twice the work of the minisign CLI's keys (N·r·p = 2^20·8·1).
const WORK_MAX: u64 = 1 << 24;

/// scrypt parameters from a key's libsodium opslimit/memlimit, as libsodium's `pickparams`
/// (and the minisign CLI and crate) choose them.
fn scrypt_params(opslimit: u64, memlimit: u64) -> Option<scrypt::Params> {
    // libsodium's own ceiling on opslimit; above it a forged key could ask for hours of work.
    if memlimit > MEMLIMIT_MAX || opslimit > u64::from(u32::MAX) {
        return None;
    }
    let opslimit = opslimit.max(32_768);
    let r = 8u32;
    let (maxn, p) = if opslimit < memlimit / 32 {
        (opslimit / (u64::from(r) * 4), None)
    } else {
        (memlimit / (u64::from(r) * 128), Some(()))
    };
    let mut n_log2 = 1u8;
    while n_log2 < 63 && (1u64 << n_log2) <= maxn / 2 {
        n_log2 += 1;
    }
    let p = match p {
        None => 1,
        Some(()) => {
            let maxrp = ((opslimit / 4) / (1u64 << n_log2)).min(0x3fff_ffff) as u32;
            maxrp / r
        }
    };
    // Work is N·r·p blocks: the minisign CLI's own keys need 2^23. A forged tiny memlimit with a
    // large opslimit would otherwise ask for p in the millions.
    let work = (1u64 << n_log2) * u64::from(r) * u64::from(p);
    if n_log2 > N_LOG2_MAX || work > WORK_MAX {
        return None;
    }
    scrypt::Params::new(n_log2, r, p, scrypt::Params::RECOMMENDED_LEN).ok()
}

impl RawSecretKey {
    /// XORs the key id, key and checksum with the scrypt stream of `password` and the key's salt
    /// and limits: decrypts an encrypted key, encrypts a decrypted one. The stream is wiped.
    fn apply_password(&mut self, password: &Password) -> Result<(), ParseError> {
        let le = |range: std::ops::Range<usize>| {
            u64::from_le_bytes(self.0[range].try_into().expect("8 bytes"))
        };
        let params = scrypt_params(le(38..46), le(46..54)).ok_or_else(|| {
            ParseError::whole(
                "the secret key's scrypt parameters are outside minisign's limits (N ≤ 2^20, 1 GiB, opslimit < 2^32, N·r·p ≤ 2^24)",
            )
        })?;
        let mut stream = Zeroizing::new([0u8; ENCRYPTED.end - ENCRYPTED.start]);
        scrypt::scrypt(
            password.expose().as_bytes(),
            &self.0[6..38],
            &params,
            &mut *stream,
        )
        .map_err(|_| ParseError::whole("the secret key could not be decrypted"))?;
        for (byte, s) in self.0[ENCRYPTED].iter_mut().zip(stream.iter()) {
            *byte ^= s;
        }
        Ok(())
    }
}

/// Decrypts into a new buffer (wiped on drop); the checksum tells a wrong password.
fn decrypt(raw: &RawSecretKey, password: &Password) -> Result<RawSecretKey, ParseError> {
    let mut plain = RawSecretKey(Zeroizing::new(raw.0.to_vec()));
    plain.apply_password(password)?;
    if plain.checksum() != plain.expected_checksum() {
        return Err(ParseError::whole(
            "wrong password for the secret key (or the key is corrupted)",
        ));
    }
    Ok(plain)
}

/// A freshly generated key pair in minisign text form.
pub(crate) struct GeneratedKeyPair {
    pub(crate) public: PublicKey,
    /// The secret key box, ready to write to a file with mode 0600.
    pub(crate) secret_box: Zeroizing<String>,
}

impl fmt::Debug for GeneratedKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GeneratedKeyPair({:?}, <redacted>)", self.public)
    }
}

/// Generates a key pair in a buffer that is wiped on drop. An encrypted key is the same key with
/// the minisign crate's scrypt limits, a random salt and the `Sc` marker, XORed with the scrypt
/// stream. The result is loaded back and checked before it is returned.
pub(crate) fn generate(password: Option<&Password>) -> Result<GeneratedKeyPair, ParseError> {
    let no_randomness = |_| ParseError::whole("no randomness available for key generation");
    let mut raw = RawSecretKey(Zeroizing::new(vec![0u8; SECRET_KEY_BYTES]));
    raw.0[0..2].copy_from_slice(&SIG_ALG_ED);
    raw.0[2..4].copy_from_slice(&KDF_NONE);
    raw.0[4..6].copy_from_slice(&CHK_BLAKE2B);
    getrandom::fill(&mut raw.0[54..94]).map_err(no_randomness)?;
    let mut seed = Zeroizing::new([0u8; 32]);
    seed.copy_from_slice(&raw.0[62..94]);
    let public = SigningKey::from_bytes(&seed).verifying_key();
    raw.0[94..126].copy_from_slice(public.as_bytes());
    let checksum = raw.expected_checksum();
    raw.0[126..158].copy_from_slice(&checksum);
    let kind = match password {
        Some(p) => {
            raw.0[2..4].copy_from_slice(&KDF_SCRYPT);
            getrandom::fill(&mut raw.0[6..38]).map_err(no_randomness)?;
            raw.0[38..46].copy_from_slice(&OPSLIMIT.to_le_bytes());
            raw.0[46..54].copy_from_slice(&MEMLIMIT.to_le_bytes());
            raw.apply_password(p)?;
            "encrypted"
        }
        None => "unencrypted",
    };
    let encoded = Zeroizing::new(BASE64.encode(&*raw.0));
    let secret_box = Zeroizing::new(format!(
        "{UNTRUSTED_PREFIX}minisign {kind} secret key\n{}\n",
        encoded.as_str()
    ));
    let key = SecretKey::load(&SecretKeyText::new(secret_box.to_string()), password)?;
    Ok(GeneratedKeyPair {
        public: key.public_key(),
        secret_box,
    })
}

/// Whether a file named `name` (a path or a file name) is a public key by its name, as a keys
/// folder holds them (`*.pub`): the one answer for every place that looks for keys (a folder on
/// disk, a repository's tree through the API, the inventory).
pub(crate) fn is_public_key_file(name: &str) -> bool {
    name.ends_with(".pub") && name.len() > ".pub".len() && !name.ends_with("/.pub")
}

/// `*.pub` files of a directory, sorted.
pub(crate) fn public_key_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| is_public_key_file(&n.to_string_lossy()))
                && !p.is_dir()
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ETHREX_PUB: &str = "untrusted comment: minisign public key E074BFD13AAB8A02\nRWQCiqs60b904PZll0gXEAbQlLwdt7MXuitSIt2425a59ULS0NHpArDL\n";

    #[test]
    fn ethrex_public_key_round_trips() {
        let pk = PublicKey::parse(ETHREX_PUB).unwrap();
        assert_eq!(pk.key_id.to_string(), "E074BFD13AAB8A02");
        assert_eq!(
            pk.key_id.0,
            [0x02, 0x8a, 0xab, 0x3a, 0xd1, 0xbf, 0x74, 0xe0]
        );
        assert_eq!(pk.to_string(), ETHREX_PUB);
        assert_eq!(PublicKey::parse(&pk.to_string()).unwrap(), pk);
    }

    #[test]
    fn public_key_accepts_crlf_and_rejects_trailing_space() {
        let crlf = ETHREX_PUB.replace('\n', "\r\n");
        assert!(PublicKey::parse(&crlf).is_ok());
        let spaced = ETHREX_PUB.replace("ArDL\n", "ArDL \n");
        let err = PublicKey::parse(&spaced).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(
            err.message.contains("expected 56 base64 characters"),
            "{err}"
        );
    }

    #[test]
    fn public_key_errors_name_the_line() {
        assert_eq!(PublicKey::parse("").unwrap_err().line, Some(1));
        assert_eq!(PublicKey::parse("hello\n").unwrap_err().line, Some(1));
        let truncated = "untrusted comment: x\nRWQCiqs60b904PZll0gXEAbQlLwdt7MXuitSIt2425a59U\n";
        let err = PublicKey::parse(truncated).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(
            err.message
                .contains("expected 56 base64 characters, found 46"),
            "{err}"
        );
    }

    #[test]
    fn key_id_is_zero_padded() {
        assert_eq!(
            KeyId([0x01, 0, 0, 0, 0, 0, 0, 0]).to_string(),
            "0000000000000001"
        );
    }

    #[test]
    fn generated_unencrypted_key_loads_from_box_and_bare_line() {
        let pair = generate(None).unwrap();
        let from_box =
            SecretKey::load(&SecretKeyText::new(pair.secret_box.to_string()), None).unwrap();
        assert_eq!(from_box.public_key(), pair.public);
        let bare = pair.secret_box.lines().nth(1).unwrap().to_string();
        let from_line = SecretKey::load(&SecretKeyText::new(format!("{bare}\n")), None).unwrap();
        assert_eq!(from_line.public_key(), pair.public);
    }

    #[test]
    fn encrypted_key_needs_the_right_password() {
        let pw = Password::new("correct horse".into());
        let pair = generate(Some(&pw)).unwrap();
        let text = SecretKeyText::new(pair.secret_box.to_string());
        assert_eq!(
            secret_key_protection(&text).unwrap(),
            SecretKeyProtection::Encrypted
        );
        assert!(SecretKey::load(&text, None).is_err());
        let wrong = SecretKey::load(&text, Some(&Password::new("nope".into()))).unwrap_err();
        assert!(wrong.message.contains("wrong password"), "{wrong}");
        let key = SecretKey::load(&text, Some(&pw)).unwrap();
        assert_eq!(key.public_key(), pair.public);
    }

    #[test]
    fn keys_encrypted_by_the_minisign_crate_load_and_ours_load_in_the_crate() {
        let theirs =
            minisign::KeyPair::generate_encrypted_keypair(Some("tr0ub4dor".into())).unwrap();
        let text = SecretKeyText::new(theirs.sk.to_box(None).unwrap().into_string());
        let key = SecretKey::load(&text, Some(&Password::new("tr0ub4dor".into()))).unwrap();
        assert_eq!(key.key_id.0.to_vec(), theirs.pk.keynum());
        assert_eq!(key.public_key().to_base64(), theirs.pk.to_base64());
        let wrong = SecretKey::load(&text, Some(&Password::new("tr0ub4dOr".into()))).unwrap_err();
        assert!(wrong.message.contains("wrong password"), "{wrong}");

        let ours = generate(Some(&Password::new("tr0ub4dor".into()))).unwrap();
        let crate_key = minisign::SecretKey::from_box(
            minisign::SecretKeyBox::from_string(&ours.secret_box).unwrap(),
            Some("tr0ub4dor".into()),
        )
        .unwrap();
        assert_eq!(crate_key.keynum(), ours.public.key_id.0);
    }

    #[test]
    fn scrypt_parameters_follow_libsodium() {
        let p = |ops, mem| scrypt_params(ops, mem).map(|p| (p.log_n(), p.r(), p.p()));
        // What the minisign crate writes, and what the minisign CLI writes (N = 2^20, 1 GiB).
        assert_eq!(p(1_048_576, 33_554_432), Some((15, 8, 1)));
        assert_eq!(p(33_554_432, 1_073_741_824), Some((20, 8, 1)));
        // Ops-bound: N from the opslimit; p grows when memory is the bound.
        assert_eq!(p(524_288, 1_073_741_824), Some((14, 8, 1)));
        assert_eq!(p(67_108_864, 33_554_432), Some((15, 8, 64)));
        // Beyond minisign's ceilings: refused rather than tried.
        assert_eq!(p(1 << 40, 2_147_483_648), None);
        assert_eq!(p(1 << 40, 1 << 40), None);
        assert_eq!(p(1 << 33, 33_554_432), None);
        // A tiny memlimit with a large opslimit: N = 2, p in the millions. Refused by work.
        assert_eq!(p(u64::from(u32::MAX), 0), None);
        assert_eq!(p(u64::from(u32::MAX), 1 << 20), None);
    }

    #[test]
    fn zero_checksum_key_like_minisign_w_loads_but_corruption_is_caught() {
        let pair = generate(None).unwrap();
        let bare = pair.secret_box.lines().nth(1).unwrap();
        let mut bytes = BASE64.decode(bare).unwrap();
        bytes[126..158].fill(0);
        let zeroed = BASE64.encode(&bytes);
        let key = SecretKey::load(&SecretKeyText::new(zeroed), None).unwrap();
        assert_eq!(key.public_key(), pair.public);
        bytes[70] ^= 1; // flip a seed bit: the stored public half no longer matches
        let err = SecretKey::load(&SecretKeyText::new(BASE64.encode(&bytes)), None).unwrap_err();
        assert!(err.message.contains("corrupted"), "{err}");
    }

    #[test]
    fn secret_key_errors_do_not_quote_the_key() {
        let pair = generate(None).unwrap();
        let bare = pair.secret_box.lines().nth(1).unwrap();
        let garbled = format!("{}!{}", &bare[..100], &bare[101..]);
        let err = SecretKey::load(&SecretKeyText::new(garbled.clone()), None).unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(&bare[..20]), "{shown}");
        assert!(!format!(
            "{:?}",
            SecretKey::load(&SecretKeyText::new(bare.into()), None).unwrap()
        )
        .contains(&bare[..20]));
    }
    /// Every 12-character window of `secret` (so no slice of it shows either).
    fn windows(secret: &str) -> Vec<&str> {
        (0..=secret.len().saturating_sub(12))
            .map(|i| &secret[i..i + 12])
            .collect()
    }

    #[test]
    fn no_debug_of_a_key_type_shows_key_bytes_or_the_password() {
        let password = Password::new("correct horse battery".into());
        let pair = generate(Some(&password)).unwrap();
        let encrypted_line = pair.secret_box.lines().nth(1).unwrap().to_string();
        // The decrypted key, as the minisign crate sees it: the seed at bytes 62..94.
        let decrypted = minisign::SecretKey::from_box(
            minisign::SecretKeyBox::from_string(&pair.secret_box).unwrap(),
            Some("correct horse battery".into()),
        )
        .unwrap()
        .to_bytes();
        let seed_hex: String = decrypted[62..94]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let seed_b64 = BASE64.encode(&decrypted[62..94]);
        let key = SecretKey::load(
            &SecretKeyText::new(pair.secret_box.to_string()),
            Some(&password),
        )
        .unwrap();
        let unencrypted = generate(None).unwrap();
        let shown = format!(
            "{pair:?} {pair:#?} {key:?} {key:#?} {password:?} {:?} {unencrypted:?}",
            SecretKeyText::new(pair.secret_box.to_string())
        );
        let mut secrets = windows(&encrypted_line);
        secrets.extend(windows(&seed_hex));
        let seed_hex_upper = seed_hex.to_uppercase();
        secrets.extend(windows(&seed_hex_upper));
        secrets.extend(windows(&seed_b64));
        // Characters 84..124 of an unencrypted key line encode only seed bytes; the rest of the
        // line also holds the key id and public key, which Debug may show.
        secrets.extend(windows(
            &unencrypted.secret_box.lines().nth(1).unwrap()[84..124],
        ));
        secrets.push("correct horse");
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret} shown in {shown}");
        }
        // What Debug does show: the key id, so a log still says which key was used.
        assert!(shown.contains(&key.key_id.to_string()), "{shown}");
    }
}

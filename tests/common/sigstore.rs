//! A test Sigstore instance shaped like GitHub's (issue 48): a Fulcio-like CA, a timestamp
//! authority, and the trusted root naming them, all made here with `rcgen` and the RustCrypto
//! `cms` types; bundles minted offline under it (certificate, DSSE signature, RFC 3161 token,
//! bundle, root: every byte made by code, never a hand-edited file). Bundles carry a release
//! attestation's or build provenance's statement and the certificate identity GitHub would give.

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos,
};
use const_oid::db::{rfc5911, rfc5912};
use der::asn1::{GeneralizedTime, ObjectIdentifier, OctetString, SetOfVec, Utf8StringRef};
use der::{Any, Decode, Encode, Sequence, Tag};
use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType, SigningKey,
    PKCS_ECDSA_P256_SHA256,
};
use serde_json::{json, Value};
use x509_cert::attr::Attribute;
use x509_cert::spki::AlgorithmIdentifierOwned;

/// id-ct-TSTInfo (RFC 3161).
const ID_CT_TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");

/// When every minted bundle says it was signed: 2025-06-01T12:00:00Z.
pub(crate) const SIGNED_AT: u64 = 1_748_779_200;

/// The identity of GitHub's release signer.
pub(crate) const RELEASE_SIGNER: &str = "https://dotcom.releases.github.com";

fn at(secs: u64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(secs as i64).unwrap()
}

fn ca_params(cn: &str) -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name
        .push(DnType::OrganizationName, "warden test");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    p.not_before = at(SIGNED_AT - 365 * 86400);
    p.not_after = at(SIGNED_AT + 365 * 86400);
    p
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).to_vec()
}

/// The certificate a bundle is signed with: its SAN URI and Fulcio's
/// `1.3.6.1.4.1.57264.1.<n>` claims.
pub(crate) struct Identity {
    pub(crate) san_uri: String,
    pub(crate) claims: Vec<(u64, String)>,
}

impl Identity {
    /// GitHub's release signer: no claims.
    pub(crate) fn release_signer() -> Identity {
        Identity {
            san_uri: RELEASE_SIGNER.into(),
            claims: Vec::new(),
        }
    }

    /// A run of `repo`'s workflow `path` on `git_ref` at `commit` (run `run`, attempt
    /// `attempt`), deployed to `environment` when given: the certificate GitHub's Fulcio issues
    /// to `actions/attest-build-provenance`.
    pub(crate) fn run(
        repo: &str,
        (path, git_ref, commit): (&str, &str, &str),
        (run, attempt): (u64, u32),
        environment: Option<&str>,
    ) -> Identity {
        let workflow = format!("https://github.com/{repo}/{path}@{git_ref}");
        let mut claims = vec![
            (8, "https://token.actions.githubusercontent.com".to_string()),
            (9, workflow.clone()),
            (10, commit.to_string()),
            (11, "github-hosted".into()),
            (12, format!("https://github.com/{repo}")),
            (13, commit.to_string()),
            (14, git_ref.to_string()),
            (18, workflow.clone()),
            (19, commit.to_string()),
            (20, "push".into()),
            (
                21,
                format!("https://github.com/{repo}/actions/runs/{run}/attempts/{attempt}"),
            ),
            (22, "private".into()),
        ];
        if let Some(e) = environment {
            claims.push((23, e.to_string()));
        }
        Identity {
            san_uri: workflow,
            claims,
        }
    }
}

/// A CA and a timestamp authority, and the root that trusts them.
pub(crate) struct TestPki {
    fulcio_root: Vec<u8>,
    fulcio: Issuer<'static, KeyPair>,
    tsa_root: Vec<u8>,
    tsa_leaf: Vec<u8>,
    tsa_key: KeyPair,
}

impl TestPki {
    pub(crate) fn new() -> TestPki {
        let fkey = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let fparams = ca_params("test fulcio root");
        let fulcio_root = fparams.self_signed(&fkey).unwrap().der().to_vec();
        let tkey = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let tparams = ca_params("test tsa root");
        let tsa_root = tparams.self_signed(&tkey).unwrap().der().to_vec();
        let tsa_issuer = Issuer::new(tparams, tkey);
        let tsa_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut leaf = ca_params("test tsa");
        leaf.is_ca = IsCa::NoCa;
        leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::TimeStamping];
        let tsa_leaf = leaf
            .signed_by(&tsa_key, &tsa_issuer)
            .unwrap()
            .der()
            .to_vec();
        TestPki {
            fulcio_root,
            fulcio: Issuer::new(fparams, fkey),
            tsa_root,
            tsa_leaf,
            tsa_key,
        }
    }

    /// The trusted root, in the JSON form GitHub publishes (`gh attestation trusted-root`),
    /// its authorities valid from `start` until `end` (RFC 3339; `None`: still valid).
    pub(crate) fn trusted_root(&self, (start, end): (&str, Option<&str>)) -> String {
        let valid_for = match end {
            Some(end) => json!({"start": start, "end": end}),
            None => json!({"start": start}),
        };
        json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [], "ctlogs": [],
            "certificateAuthorities": [{
                "subject": {"organization": "warden test", "commonName": "test fulcio root"},
                "uri": "https://fulcio.test",
                "certChain": {"certificates": [{"rawBytes": B64.encode(&self.fulcio_root)}]},
                "validFor": valid_for,
            }],
            "timestampAuthorities": [{
                "subject": {"organization": "warden test", "commonName": "test tsa"},
                "uri": "https://tsa.test",
                "certChain": {"certificates": [
                    {"rawBytes": B64.encode(&self.tsa_leaf)},
                    {"rawBytes": B64.encode(&self.tsa_root)}
                ]},
                "validFor": valid_for,
            }],
        })
        .to_string()
    }

    /// A leaf certificate for `key` with `id`'s SAN and claims, valid ten minutes around
    /// [`SIGNED_AT`].
    fn leaf(&self, key: &KeyPair, id: &Identity) -> Vec<u8> {
        let mut p = CertificateParams::default();
        p.distinguished_name = DistinguishedName::new();
        p.subject_alt_names = vec![SanType::URI(id.san_uri.clone().try_into().unwrap())];
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::CodeSigning];
        p.use_authority_key_identifier_extension = true;
        p.not_before = at(SIGNED_AT - 300);
        p.not_after = at(SIGNED_AT + 300);
        for (n, v) in &id.claims {
            let content = Utf8StringRef::new(v).unwrap().to_der().unwrap();
            p.custom_extensions.push(CustomExtension::from_oid_content(
                &[1, 3, 6, 1, 4, 1, 57264, 1, *n],
                content,
            ));
        }
        p.signed_by(key, &self.fulcio).unwrap().der().to_vec()
    }

    /// An RFC 3161 timestamp token over `signature`, at `time`.
    fn timestamp(&self, signature: &[u8], time: u64) -> Vec<u8> {
        let sha256_alg = AlgorithmIdentifierOwned {
            oid: rfc5912::ID_SHA_256,
            parameters: None,
        };
        let tst = TstInfo {
            version: 1,
            policy: ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.2"),
            message_imprint: MessageImprint {
                hash_algorithm: sha256_alg.clone(),
                hashed_message: OctetString::new(sha256(signature)).unwrap(),
            },
            serial_number: 1,
            gen_time: GeneralizedTime::from_unix_duration(std::time::Duration::from_secs(time))
                .unwrap(),
        }
        .to_der()
        .unwrap();
        let attr = |oid: ObjectIdentifier, value: Any| Attribute {
            oid,
            values: SetOfVec::try_from(vec![value]).unwrap(),
        };
        let signed_attrs = SetOfVec::try_from(vec![
            attr(
                rfc5911::ID_CONTENT_TYPE,
                Any::encode_from(&ID_CT_TST_INFO).unwrap(),
            ),
            attr(
                rfc5911::ID_MESSAGE_DIGEST,
                Any::encode_from(&OctetString::new(sha256(&tst)).unwrap()).unwrap(),
            ),
        ])
        .unwrap();
        // CMS signs the DER of the attributes as a SET OF.
        let sig = self.tsa_key.sign(&signed_attrs.to_der().unwrap()).unwrap();
        let leaf = x509_cert::Certificate::from_der(&self.tsa_leaf).unwrap();
        let signer = SignerInfo {
            version: CmsVersion::V1,
            sid: SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer: leaf.tbs_certificate.issuer.clone(),
                serial_number: leaf.tbs_certificate.serial_number.clone(),
            }),
            digest_alg: sha256_alg.clone(),
            signed_attrs: Some(signed_attrs),
            signature_algorithm: AlgorithmIdentifierOwned {
                oid: rfc5912::ECDSA_WITH_SHA_256,
                parameters: None,
            },
            signature: OctetString::new(sig).unwrap(),
            unsigned_attrs: None,
        };
        let signed_data = SignedData {
            version: CmsVersion::V3,
            digest_algorithms: SetOfVec::try_from(vec![sha256_alg]).unwrap(),
            encap_content_info: EncapsulatedContentInfo {
                econtent_type: ID_CT_TST_INFO,
                econtent: Some(Any::new(Tag::OctetString, tst).unwrap()),
            },
            certificates: None,
            crls: None,
            signer_infos: SignerInfos(SetOfVec::try_from(vec![signer]).unwrap()),
        };
        ContentInfo {
            content_type: rfc5911::ID_SIGNED_DATA,
            content: Any::encode_from(&signed_data).unwrap(),
        }
        .to_der()
        .unwrap()
    }

    /// A bundle (v0.3, GitHub's instance's shape: a certificate, one RFC 3161 timestamp, no
    /// transparency-log entry) of `statement`, signed as `id`; its JSON.
    pub(crate) fn mint(&self, statement: &Value, id: &Identity) -> String {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = self.leaf(&key, id);
        let payload = serde_json::to_vec(statement).unwrap();
        let payload_type = "application/vnd.in-toto+json";
        let sig = key
            .sign(&sigstore_types::pae(payload_type, &payload))
            .unwrap();
        let token = self.timestamp(&sig, SIGNED_AT);
        let envelope = sigstore_types::DsseEnvelope::new(
            payload_type,
            sigstore_types::PayloadBytes::new(payload),
            sigstore_types::DsseSignature::new(
                sigstore_types::SignatureBytes::new(sig),
                sigstore_types::KeyId::default(),
            ),
        );
        sigstore_bundle::BundleV03::with_certificate_and_dsse(
            sigstore_types::DerCertificate::new(cert),
            envelope,
        )
        .with_rfc3161_timestamp(sigstore_types::TimestampToken::new(token))
        .into_bundle()
        .to_json()
        .unwrap()
    }
}

#[derive(Sequence)]
struct MessageImprint {
    hash_algorithm: AlgorithmIdentifierOwned,
    hashed_message: OctetString,
}

/// TSTInfo with its required fields only (RFC 3161 §2.4.2).
#[derive(Sequence)]
struct TstInfo {
    version: u8,
    policy: ObjectIdentifier,
    message_imprint: MessageImprint,
    serial_number: u64,
    gen_time: GeneralizedTime,
}

fn subjects(assets: &[(&str, &[u8])]) -> Vec<Value> {
    assets
        .iter()
        .map(|(name, bytes)| {
            use sha2::Digest as _;
            json!({"name": name, "digest": {"sha256": format!("{:x}", sha2::Sha256::digest(bytes))}})
        })
        .collect()
}

/// GitHub's release attestation (`release/v0.2`) of release `tag` of `repo` at `commit`, with
/// the digests of `assets`.
pub(crate) fn release_statement(
    (repo, tag, commit): (&str, &str, &str),
    assets: &[(&str, &[u8])],
) -> Value {
    let purl = format!("pkg:github/{repo}@{tag}");
    let mut subject = vec![json!({"name": purl, "digest": {"sha1": commit}})];
    subject.extend(subjects(assets));
    json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subject,
        "predicateType": "https://in-toto.io/attestation/release/v0.2",
        "predicate": {"repository": repo, "tag": tag, "purl": purl, "repositoryId": "1", "ownerId": "1"},
    })
}

/// Build provenance (SLSA v1) of `assets`.
pub(crate) fn provenance_statement(assets: &[(&str, &[u8])]) -> Value {
    json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects(assets),
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {"buildDefinition": {"buildType": "https://actions.github.io/buildtypes/workflow/v1"}, "runDetails": {}},
    })
}

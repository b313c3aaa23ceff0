//! The crypto the Sigstore verifier runs on: `ring`, which warden already builds (through
//! rustls), behind `sigstore-crypto`'s provider trait. The crates' own default is `aws-lc-rs`, a
//! C and cmake build warden does not take on. Verification and hashing only.

use ring::{digest, signature};
use sigstore_crypto::{CryptoProvider, Error, HashContext, SigningScheme};
use sigstore_types::HashAlgorithm;

#[derive(Debug)]
struct RingProvider;

static RING: RingProvider = RingProvider;

/// Installs the provider, once per process (a second call finds it there). Without it the
/// verifier's first hash panics, so every verification goes through here first.
pub(crate) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = sigstore_crypto::install_default_provider(&RING);
    });
}

struct RingHash(digest::Context);

impl HashContext for RingHash {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data)
    }

    fn finalize(self: Box<Self>) -> Vec<u8> {
        self.0.finish().as_ref().to_vec()
    }
}

/// ring's verifier for a scheme; `None` for what ring has not (ML-DSA).
fn algorithm(scheme: SigningScheme) -> Option<&'static dyn signature::VerificationAlgorithm> {
    Some(match scheme {
        SigningScheme::EcdsaP256Sha256 => &signature::ECDSA_P256_SHA256_ASN1,
        SigningScheme::EcdsaP256Sha384 => &signature::ECDSA_P256_SHA384_ASN1,
        SigningScheme::EcdsaP384Sha256 => &signature::ECDSA_P384_SHA256_ASN1,
        SigningScheme::EcdsaP384Sha384 => &signature::ECDSA_P384_SHA384_ASN1,
        SigningScheme::Ed25519 => &signature::ED25519,
        SigningScheme::RsaPkcs1Sha256 => &signature::RSA_PKCS1_2048_8192_SHA256,
        SigningScheme::RsaPkcs1Sha384 => &signature::RSA_PKCS1_2048_8192_SHA384,
        SigningScheme::RsaPkcs1Sha512 => &signature::RSA_PKCS1_2048_8192_SHA512,
        SigningScheme::RsaPssSha256 => &signature::RSA_PSS_2048_8192_SHA256,
        SigningScheme::RsaPssSha384 => &signature::RSA_PSS_2048_8192_SHA384,
        SigningScheme::RsaPssSha512 => &signature::RSA_PSS_2048_8192_SHA512,
        _ => return None,
    })
}

impl CryptoProvider for RingProvider {
    fn hash(&self, algorithm: HashAlgorithm) -> sigstore_crypto::Result<Box<dyn HashContext>> {
        let a = match algorithm {
            HashAlgorithm::Sha2256 => &digest::SHA256,
            HashAlgorithm::Sha2384 => &digest::SHA384,
            HashAlgorithm::Sha2512 => &digest::SHA512,
            other => {
                return Err(Error::UnsupportedAlgorithm(format!(
                    "{other} digests are not computed here"
                )))
            }
        };
        Ok(Box::new(RingHash(digest::Context::new(a))))
    }

    fn verify_raw(
        &self,
        scheme: SigningScheme,
        spki_public_key: &[u8],
        data: &[u8],
        sig: &[u8],
    ) -> sigstore_crypto::Result<()> {
        let a = algorithm(scheme).ok_or_else(|| {
            Error::UnsupportedAlgorithm(format!(
                "{} signatures are not verified here",
                scheme.name()
            ))
        })?;
        signature::UnparsedPublicKey::new(a, spki_public_key)
            .verify(data, sig)
            .map_err(|_| Error::Verification(format!("{} signature invalid", scheme.name())))
    }

    /// ring verifies over messages, never over a digest: only a message-signature bundle
    /// (`cosign sign-blob`) needs this, and attestations are DSSE envelopes.
    fn verify_prehashed(
        &self,
        scheme: SigningScheme,
        _spki_public_key: &[u8],
        _digest: &[u8],
        _sig: &[u8],
    ) -> sigstore_crypto::Result<()> {
        Err(Error::UnsupportedAlgorithm(format!(
            "a {} signature over a digest (a message-signature bundle, not an attestation)",
            scheme.name()
        )))
    }
}

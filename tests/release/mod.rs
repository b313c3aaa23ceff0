//! keygen, sign and verify (folders and published releases), minisign interop, the Action's installer.

mod agreement;
mod attestations;
mod cosign;
mod foreign_release;
mod hosted_runner;
mod install_script;
mod keygen_secrets;
mod layouts;
mod lineage;
mod minisign_interop;
mod provenance;
mod revocation;
mod runbook;
mod sign_verify;
mod trust;
mod verify_release;

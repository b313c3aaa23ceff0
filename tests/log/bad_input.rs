//! Hostile logs and proofs.

use super::*;

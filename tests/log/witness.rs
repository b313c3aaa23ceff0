//! Witnesses.

use super::*;

//! Go interop.

use super::*;

//! `warden audit`: workflows offline, settings and releases against local servers, organisations,
//! baselines, the corpus.

mod api_faults;
mod baseline;
mod corpus;
mod fix;
mod fix_labelled;
mod inventory;
mod org;
mod releases;
mod settings;
mod workflows;

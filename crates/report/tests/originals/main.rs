//! The renderers against the originals' own documents, one test binary:
//! each module feeds a renderer the parameters and figures a document
//! shows and compares the result byte for byte with what the document
//! printed (the files under tests/golden are cut verbatim from them):
//! `tables` the bandwidth tools and usage texts, `latency` send_lat,
//! `atomic` atomic_bw, `traffic` gc-hosttraffictest.

mod atomic;
mod host_traffic;
mod latency;
mod tables;

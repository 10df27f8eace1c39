//! Integration tests of the simulated venues, one binary (one link step): each venue's REST shapes and
//! paging against the sample payloads, both WebSocket protocols end to end, and the faults.

mod clob_reads;
mod full_scale;
mod rest_a;
mod rest_b;
mod util;
mod ws_a;
mod ws_b;

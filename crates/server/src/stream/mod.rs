//! The live stream (`GET /v1/stream`, DESIGN §1): books, trades, opportunities, whales and the venues'
//! status pushed over a WebSocket as they happen.
//!
//! - [`protocol`]: what a client may send, the channels and their plans, and the envelope of every message.
//! - [`frames`]: the channel messages, rendered from bus events at this edge.
//! - [`session`]: one client's subscriptions, numbered messages and resume buffer.
//! - [`settings`]: the stream's settings, from the configuration.
//! - [`hub`]: the sessions, who follows what, and the delivery task fed by the bus.
//! - [`shared`]: sessions shared by the api processes, so a client resumes on another process.
//! - [`connection`]: one WebSocket: the ops it sends, the messages it gets, heartbeats and closing.
//!
//! The protocol, as users read it, is docs/live-stream.md.

pub mod connection;
pub mod frames;
pub mod hub;
pub mod protocol;
pub mod session;
pub mod settings;
pub mod shared;

pub use hub::Hub;
pub use protocol::Channel;
pub use settings::{PlanLimits, StreamSettings};

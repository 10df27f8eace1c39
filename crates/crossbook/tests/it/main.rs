//! The command line's integration tests, one binary: each module runs the real `crossbook` executable.

mod common;

mod banner;
mod cli;
mod crash;
mod export;
mod logs;
mod pairs;
mod roles;
mod simulate;

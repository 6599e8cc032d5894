//! Where an error was made, for envelope A's `stack`.
//!
//! An error answers long after it was made: `ResponseError::error_response` runs in actix's
//! response path, where a backtrace shows only the framework and the thread's start. So the
//! error records its origin when it is made: the source line always (`#[track_caller]` makes
//! that a constant, free in production), and the backtrace only when the app shows internals
//! (capturing one walks the stack, which production never pays for).

use std::backtrace::Backtrace;
use std::panic::Location;
use std::path::Path;
use std::sync::Arc;

use super::internals_shown;

/// The place an error was made, and outside production the backtrace there.
#[derive(Debug, Clone)]
pub struct Origin {
    at: &'static Location<'static>,
    /// Shared, not copied, when the error that holds it is cloned; resolved only when shown.
    backtrace: Option<Arc<Backtrace>>,
}

impl Origin {
    /// The caller's line. A `#[track_caller]` function calling this passes on its own
    /// caller's, so a `From` conversion marked so records the line of the `?` that made it.
    #[track_caller]
    pub fn here() -> Self {
        Self {
            at: Location::caller(),
            backtrace: internals_shown().then(|| Arc::new(Backtrace::force_capture())),
        }
    }

    /// `at <file>:<line>:<column>`, then the backtrace's frames in this workspace's code.
    pub fn stack(&self) -> String {
        let at = format!(
            "at {}:{}:{}",
            self.at.file(),
            self.at.line(),
            self.at.column()
        );
        match &self.backtrace {
            Some(backtrace) => {
                let frames = own_frames(&backtrace.to_string());
                if frames.is_empty() {
                    at
                } else {
                    format!("{at}\n{frames}")
                }
            }
            None => at,
        }
    }
}

/// The frames of a backtrace that are in this workspace's code, after the capture's own, with
/// paths from the workspace's root. A full async backtrace is hundreds of kilobytes of
/// framework generics; the frames a developer can act on are ours.
fn own_frames(backtrace: &str) -> String {
    const MAX_FRAMES: usize = 30;
    const MAX_LINE: usize = 300;
    let mut frames: Vec<Vec<&str>> = Vec::new();
    for line in backtrace.lines() {
        let starts_frame = line
            .trim_start()
            .split_once(": ")
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        match frames.last_mut() {
            Some(frame) if !starts_frame => frame.push(line),
            _ => frames.push(vec![line]),
        }
    }
    // The frames down to `Origin::here` are the capture itself.
    let capture = frames
        .iter()
        .rposition(|frame| frame.iter().any(|l| l.contains("Origin::here")))
        .map_or(0, |i| i + 1);
    // Rust source outside the toolchain and the registry (the C library's frames are not Rust).
    let ours = |frame: &&Vec<&str>| {
        frame.iter().any(|l| {
            l.trim_start().starts_with("at ")
                && l.contains(".rs:")
                && !l.contains("/rustc/")
                && !l.contains("/.cargo/")
                && !l.contains("/rustlib/")
        })
    };
    let root = workspace_root();
    frames[capture..]
        .iter()
        .filter(ours)
        .take(MAX_FRAMES)
        .flat_map(|frame| {
            frame.iter().map(|l| {
                l.replacen(&root, "", 1)
                    .chars()
                    .take(MAX_LINE)
                    .collect::<String>()
            })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `<root>/` of the workspace this crate was built in, as a backtrace names its files: the
/// frames then read `crates/…` and `services/…`, as `Location` does.
fn workspace_root() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(|root| format!("{}/", root.display()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_records_the_line_only() {
        let (origin, line) = (Origin::here(), line!());
        assert!(origin.backtrace.is_none());
        let stack = origin.stack();
        assert!(
            stack.starts_with(&format!("at {}:{line}:", file!())),
            "{stack}"
        );
        assert_eq!(stack.lines().count(), 1, "{stack}");
    }

    #[tokio::test]
    async fn outside_production_the_line_comes_first_then_our_frames() {
        let (origin, line) = super::super::scope(true, async { (Origin::here(), line!()) }).await;
        let stack = origin.stack();
        let here = format!("at {}:{line}:", file!());
        let mut lines = stack.lines();
        assert!(
            lines.next().is_some_and(|l| l.starts_with(&here)),
            "{stack}"
        );
        // The frame that called `here` is among the backtrace's (its path relative to the
        // working directory, as std prints it); the capture's own are not.
        let frame = format!("src/exposure/origin.rs:{line}:");
        assert!(lines.any(|l| l.contains(&frame)), "{stack}");
        assert!(!stack.contains("Origin::here"), "{stack}");
        assert!(!stack.contains(".cargo/registry"), "{stack}");
    }

    #[test]
    fn own_frames_keep_workspace_rust_from_its_root() {
        let root = workspace_root();
        let backtrace = format!(
            "   0: std::backtrace::Backtrace::force_capture\n\
             \x20            at /rustc/abc/library/std/src/backtrace.rs:310:13\n\
             \x20  1: envelope::exposure::origin::Origin::here\n\
             \x20            at {root}crates/envelope/src/exposure/origin.rs:31:49\n\
             \x20  2: auth_service::caller::resolve\n\
             \x20            at {root}services/auth-service/src/caller.rs:42:17\n\
             \x20  3: actix_web::handler::handler_service\n\
             \x20            at /root/.cargo/registry/src/actix-web/src/handler.rs:1:1\n\
             \x20  4: start_thread\n\
             \x20            at ./nptl/pthread_create.c:442:8"
        );
        assert_eq!(
            own_frames(&backtrace),
            "   2: auth_service::caller::resolve\n             at services/auth-service/src/caller.rs:42:17"
        );
    }
}
